package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.DoorbellRecord;
import nicsim.driver.Host;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A CQ's doorbell record whose consumer index claims more completions consumed than the adapter wrote, or is behind
 * the index it read before: what a killed program's memory reads as (zeros), or a stray write. The adapter must not
 * take it (its CQE writer would then see a full ring where software had room); it reports the record once and goes
 * on with the consumer index it knew.
 */
class CqRecordTest {
    static final String COUNTER = "Firmware.cq_records_malformed";

    @ParameterizedTest
    @ValueSource(ints = {0, 100})
    void aConsumerIndexPastTheWrittenOrBehindIsReportedOnceAndChangesNothing(int recorded) {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        Host host = p.world.host(0);
        CompletionQueue small = p.a.ctx.createCq(3); // a ring of 4
        QueuePair qp = p.overflowSendCq(small);
        assertEquals(4, p.await(small, 4).size());
        for (int i = 0; i < 4; i++) write(p, qp, 4 + i); // the 5th finds the ring full by the adapter's count
        assertEquals(4, p.await(small, 4).size(), "a good record: the adapter read the consumer index 4");
        assertEquals(0, p.world.sim.counters().get(COUNTER));
        small.reqNotify(false); // the arm tells the CQE writer the consumer index, 8

        byte[] ci = new byte[4];
        BigEndian.put32(ci, 0, recorded);
        host.memory.write(small.doorbellRecord() + DoorbellRecord.CQ_CI, ci); // the program is killed, or a stray
        write(p, qp, 8); // 8 written, 4 known consumed: the adapter reads the record
        p.world.runFor(50_000_000); // no poll meanwhile: a poll would write the record anew
        List<WorkCompletion> wcs = small.poll(64);
        assertEquals(1, wcs.size(), "the record changed nothing: the writer still has room");
        assertEquals(WcStatus.SUCCESS, wcs.get(0).status());
        assertEquals(1, p.world.sim.counters().get(COUNTER));

        List<String> told = host.adapter.errors().stream().map(Object::toString)
                .filter(e -> e.startsWith("MALFORMED_CQ_DBREC")).toList();
        assertEquals(1, told.size(), "told once: " + host.adapter.errors());
        assertTrue(told.get(0).contains(String.format("on cqn 0x%x: the doorbell record's consumer index (at 0x%x) "
                + "is 0x%x, but 0x8 CQEs are written and 0x4 consumed", small.handle(), small.doorbellRecord(),
                recorded)), told.get(0));
        assertTrue(host.adapter.errors().stream().noneMatch(e -> e.toString().startsWith("CQ ")),
                "no CQ overrun: " + host.adapter.errors());
    }

    @Test
    void aConsumerIndexBehindAtAResizeMovesNoCompletionAlreadyPolled() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        Host host = p.world.host(0);
        CompletionQueue cq = p.a.ctx.createCq(15); // a ring of 16
        QueuePair qp = p.overflowSendCq(cq);
        assertEquals(4, p.await(cq, 4).size()); // overflowSendCq's own 4
        for (int i = 0; i < 16; i++) write(p, qp, 100 + i);
        p.world.runFor(200_000_000L); // the ring is full by the adapter's count
        List<Long> ids = new ArrayList<>();
        for (WorkCompletion wc : cq.poll(5)) ids.add(wc.wrId());
        write(p, qp, 116); // the adapter reads the record for room: 5 consumed
        p.world.runFor(50_000_000L);
        assertEquals(0, p.world.sim.counters().get(COUNTER));

        // resize publishes the index (5), then, before the adapter reads it, the record reads as zeros: a killed
        // program, or a stray write
        long dbrec = cq.doorbellRecord() + DoorbellRecord.CQ_CI;
        p.world.sim.schedule(p.world.now() + 1, () -> host.memory.write(dbrec, new byte[4]));
        cq.resize(31);
        p.world.runFor(50_000_000L); // the moved completions land
        for (WorkCompletion wc : cq.poll(64)) ids.add(wc.wrId());
        List<Long> want = new ArrayList<>();
        for (long i = 100; i <= 116; i++) want.add(i);
        assertEquals(want, ids, "each completion once, in order");
        assertEquals(1, p.world.sim.counters().get(COUNTER));
        assertTrue(host.adapter.errors().stream().anyMatch(e -> e.toString().startsWith("MALFORMED_CQ_DBREC")),
                "told: " + host.adapter.errors());
    }

    private static void write(Pair p, QueuePair qp, long id) {
        qp.postSend(new SendWr().wrId(id).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
    }
}
