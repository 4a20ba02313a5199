package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import nicsim.abi.DoorbellRecord;
import nicsim.driver.Host;
import org.junit.jupiter.api.Test;

/**
 * A receive queue's doorbell record whose counter is more than a ring ahead of the WQEs the adapter took: what a
 * killed program's memory reads as (zeros) while its queues still run. The adapter must not walk round the 16-bit
 * counter flushing some 65,000 WQEs that were never posted; it reports the record once and goes on with the queue
 * as it was.
 */
class RecvRecordTest {
    static final String COUNTER = "Firmware.recv_records_malformed";

    @Test
    void aRecordFarAheadIsReportedOnceAndFlushesOnlyWhatWasPosted() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        Host host = p.world.host(1);
        for (long id = 10; id < 14; id++) p.b.qp.postRecv(recv(p, id));
        for (long id = 0; id < 2; id++)
            p.a.qp.postSend(Wrs.signaled(id, WrOpcode.SEND).sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())));
        p.await(p.a.cq, 2);
        assertEquals(List.of(10L, 11L), ids(p.await(p.b.cq, 2)));

        zeroRecord(p, host); // the program is killed: its memory reads as zeros
        p.b.qp.modify(new QpAttr().qpState(QpState.ERR), QpAttrMask.STATE);
        List<WorkCompletion> flushed = p.await(p.b.cq, 2);
        assertEquals(List.of(12L, 13L), ids(flushed), "the two posted and not used, no more");
        for (WorkCompletion w : flushed) assertEquals(WcStatus.WR_FLUSH_ERR, w.status());
        p.world.runFor(50_000_000);
        assertTrue(p.b.cq.poll(64).isEmpty(), "nothing else flushed");
        assertEquals(1, p.world.sim.counters().get(COUNTER));

        p.b.qp.postRecv(recv(p, 14));
        zeroRecord(p, host); // overwritten again before the adapter reads it: WQE 14 is not seen
        p.world.runFor(50_000_000);
        assertTrue(p.b.cq.poll(64).isEmpty(), "a malformed record changes nothing");
        assertEquals(2, p.world.sim.counters().get(COUNTER), "each counted");

        p.b.qp.postRecv(recv(p, 15)); // a good record again: the queue goes on from where it was
        assertEquals(List.of(14L, 15L), ids(p.await(p.b.cq, 2)));

        List<String> told = host.adapter.errors().stream().map(Object::toString)
                .filter(e -> e.startsWith("MALFORMED_RECV_DBREC")).toList();
        assertEquals(1, told.size(), "told once a queue: " + host.adapter.errors());
        assertTrue(told.get(0).contains(String.format("on qpn 0x%x", p.b.qp.qpNum())), told.get(0));
        assertTrue(told.get(0).contains("receive counter (at 0x" + Long.toHexString(p.b.qp.doorbellRecord())
                + ") is 0x0, but 0x"), told.get(0));
        assertTrue(host.adapter.errors().stream().noneMatch(e -> e.toString().startsWith("CQ ")),
                "no CQ overrun: " + host.adapter.errors());
    }

    private static RecvWr recv(Pair p, long id) {
        return new RecvWr().wrId(id).sgList(new Sge(p.b.buf.addr(), 64, p.b.mr.lkey()));
    }

    private static void zeroRecord(Pair p, Host host) {
        host.memory.write(p.b.qp.doorbellRecord() + DoorbellRecord.RECV, new byte[4]);
    }

    private static List<Long> ids(List<WorkCompletion> wcs) { return wcs.stream().map(WorkCompletion::wrId).toList(); }
}
