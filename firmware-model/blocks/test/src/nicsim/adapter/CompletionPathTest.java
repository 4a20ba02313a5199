package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.Cqe64;
import nicsim.abi.WqeLayout;
import nicsim.adapter.stim.NopFirmware;
import nicsim.adapter.stim.SendQueueHost;
import nicsim.profile.Profiles;
import nicsim.sim.Trace;
import org.junit.jupiter.api.Test;

/** Doorbell -> WQE fetch -> NOP execution -> CQE in the host ring -> MSI-X, end to end over PCI. */
class CompletionPathTest {
    static final long QP = 0x21, CQ = 0x9, SQ_RING = 0x80_0000, CQ_RING = 0x90_0000;
    static final int VECTOR = 5;

    static SendQueueHost host(String profile) {
        // a CQ of 8 entries
        return new SendQueueHost(Profiles.load(profile), QP, 3, SQ_RING, 6, 2, CQ, CQ_RING, 3, VECTOR);
    }

    @Test
    void signaledNopsCompleteAndTheHostPollsThemAcrossRingWraps() {
        SendQueueHost h = host("cx-gen3x16");
        List<Cqe64.View> all = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            for (int i = 0; i < 6; i++) h.postNop(true);
            h.ringDoorbell();
            h.run();
            all.addAll(h.pollCq());
            h.armCq(false); // tells the adapter how far software has consumed
            h.run();
        }
        assertEquals(24, all.size(), "errors: " + h.adapter.errors());
        for (int i = 0; i < 24; i++) {
            Cqe64.View v = all.get(i);
            assertEquals(Cqe64.REQ, v.opcode());
            assertEquals(QP, v.qpn());
            assertEquals(WqeLayout.OP_NOP, v.wqeOpcode());
            assertEquals(i, v.wqeCounter(), "CQE " + i);
        }
        assertTrue(h.adapter.errors().isEmpty(), h.adapter.errors().toString());
        assertEquals(24, h.adapter.cqeWriter().cqesWritten());
    }

    @Test
    void aCompletedWqesTimelineEndsWithItsCqeInHostMemory() {
        SendQueueHost h = host("cx-gen3x16");
        h.sim.trace().enable("wqe");
        h.postNop(true);
        h.postNop(true);
        h.ringDoorbell();
        h.run();
        for (int i = 0; i < 2; i++) {
            List<Trace.Entry> es = h.sim.trace().entries(String.format("qp0x%x/wqe%d", QP, i));
            assertEquals(List.of("doorbell_decoded", "fetch_issued", "delivered", "cqe_stamped", "cqe_written"),
                    es.stream().map(Trace.Entry::stage).toList());
            for (int k = 1; k < es.size(); k++)
                assertTrue(es.get(k - 1).timePicos() <= es.get(k).timePicos(), es.toString());
        }
    }

    @Test
    void unsignaledNopsAndUnexecutedOpcodesWriteNothing() {
        SendQueueHost h = host("lanai72");
        h.postNop(false);
        h.post(WqeLayout.OP_RDMA_WRITE, 1, Cqe64.CQ_UPDATE); // the transports are not built: not executed
        h.postNop(true);
        h.ringDoorbell();
        h.run();
        List<Cqe64.View> cqes = h.pollCq();
        assertEquals(1, cqes.size());
        assertEquals(2, cqes.get(0).wqeCounter()); // NOP at 0, the WRITE (DS 3 = 48 B, 1 WQEBB) at 1, NOP at 2
        assertEquals(1, h.sim.counters().get("Adapter.wqes_not_executed"));
    }

    @Test
    void anArmedCqInterruptsOnceAndOnlyAfterItsCqeIsInMemory() {
        SendQueueHost h = host("cx-gen3x16");
        boolean[] entryThere = {false};
        h.interruptHook = () -> entryThere[0] = !h.pollCq().isEmpty();
        h.armCq(false);
        h.postNop(true);
        h.postNop(true);
        h.ringDoorbell();
        h.run();
        assertEquals(List.of(VECTOR), h.interrupts(), "one event per arm");
        assertTrue(entryThere[0], "the CQE was readable when the interrupt arrived");
        // without re-arming, more completions raise no interrupt
        h.postNop(true);
        h.ringDoorbell();
        h.run();
        assertEquals(1, h.interrupts().size());
    }

    @Test
    void malformedWqesCompleteWithLocQpOpErrAndSayWhy() {
        SendQueueHost h = host("cx-gen3x16");
        byte[] badOpcode = new byte[64];
        System.arraycopy(WqeLayout.ctrl(0x3f, 0, QP, 1), 0, badOpcode, 0, 8);          // caught by the WqeFetcher
        h.postRaw(badOpcode);
        h.ringDoorbell();
        h.run();
        List<Cqe64.View> c = h.pollCq();
        assertEquals(1, c.size());
        assertEquals(Cqe64.REQ_ERR, c.get(0).opcode());
        assertEquals(Cqe64.SYNDROME_LOC_QP_OP_ERR, c.get(0).syndrome());
        assertEquals(WqePorts.WqeError.Code.BAD_OPCODE.ordinal(), c.get(0).vendorSyndrome());
        assertEquals(0, c.get(0).wqeCounter());
    }

    @Test
    void aWqeWhoseSegmentsDoNotParseCompletesInErrorToo() {
        SendQueueHost h = host("lanai72");
        byte[] noRaddr = new byte[64];
        // a WRITE of only a ctrl segment
        System.arraycopy(WqeLayout.ctrl(WqeLayout.OP_RDMA_WRITE, 0, QP, 1), 0, noRaddr, 0, 8);
        h.postRaw(noRaddr);
        h.ringDoorbell();
        h.run();
        List<Cqe64.View> c = h.pollCq();
        assertEquals(1, c.size());
        assertEquals(Cqe64.SYNDROME_LOC_QP_OP_ERR, c.get(0).syndrome());
        assertEquals(NopFirmware.VENDOR_SYNDROME_SEGMENTS, c.get(0).vendorSyndrome());
        assertTrue(h.adapter.errors().get(0).toString().contains("remote address"), h.adapter.errors().toString());
    }

    @Test
    void aCqThatSoftwareDoesNotDrainOverflowsAndIsReported() {
        SendQueueHost h = host("cx-gen3x16");
        for (int i = 0; i < 10; i++) h.postNop(true); // 10 completions into 8 entries, nothing consumed
        h.ringDoorbell();
        h.run();
        assertEquals(8, h.adapter.cqeWriter().cqesWritten());
        assertTrue(h.adapter.errors().stream()
                        .anyMatch(e -> e instanceof CqePorts.CqError c && c.reason() == CqePorts.CqError.Code.OVERFLOW),
                h.adapter.errors().toString());
    }

    /**
     * A completion on the CqeWriter's input stays there till the writer takes it, whatever comes for its
     * CQ meanwhile (software's consumer index, a destroy): the stream's contract, which rsockets' teardown
     * once broke (VALID_DROPPED on io_cqe). Each delay puts the update on another edge of the offer.
     */
    @Test
    void aCompletionOfferedStaysOfferedWhenItsCqsConsumerIndexOrDestroyComes() {
        for (int delay = 0; delay < 8; delay++) {
            SendQueueHost h = host("cx-gen3x16");
            h.run();
            long period = h.adapter.core().periodPicos();
            for (int i = 0; i < 4; i++) h.adapter.postCqe(CQ, new long[8], false); // more than the writer takes at once
            h.sim.scheduleIn(delay * period, () -> h.adapter.cqConsumerIndex(CQ, 2));
            h.sim.scheduleIn((delay + 1) * period, () -> h.adapter.destroyCq(CQ));
            h.run();
            assertTrue(h.sim.contractViolations().isEmpty(), "delay " + delay + ": " + h.sim.contractViolations());
        }
    }
}
