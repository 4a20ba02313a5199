package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import nicsim.sim.Trace;
import org.junit.jupiter.api.Test;

/**
 * Completion timestamps (ibv_wc_read_completion_ts): the core clock cycle the adapter wrote the
 * CQE, the same instant the timeline marks as the WQE's "cqe_stamped" stage, to the cycle.
 */
class TimestampTest {
    @Test
    void aCompletionsTimestampIsTheTimelinesStampToTheCycle() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16).up(Mtu.MTU_1024);
        p.world.sim.trace().enable("wqe");
        long period = p.world.host(0).profile.periodPicos("core.clock");
        long before = p.world.now() / period;
        for (int i = 0; i < 3; i++)
            p.a.qp.postSend(Wrs.signaled(i, WrOpcode.RDMA_WRITE)
                    .sgList(new Sge(p.a.buf.addr(), 4096 * (i + 1), p.a.mr.lkey()))
                    .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wcs = p.await(p.a.cq, 3);
        p.world.runFor(1_000_000); // the last write's completion is traced a moment after its bytes are there to poll
        long last = before;
        for (int i = 0; i < 3; i++) {
            WorkCompletion wc = wcs.get(i);
            String txn = p.world.host(0).adapter.wqeTxn(p.a.qp.qpNum(), i);
            Map<String, Long> at = p.world.sim.trace().entries(txn).stream()
                    .collect(Collectors.toMap(Trace.Entry::stage, Trace.Entry::timePicos, (x, y) -> x));
            assertEquals(at.get("cqe_stamped"), wc.timestamp() * period,
                    "WQE " + i + ": its timestamp is the timeline's, to the cycle");
            assertTrue(at.get("cqe_stamped") <= at.get("cqe_written"),
                    "stamped as the write left, written when it landed");
            assertTrue(wc.timestamp() > last, "later completions, later stamps: " + wcs);
            last = wc.timestamp();
        }
        assertTrue(last * period <= p.world.now(), "no stamp in the future");
    }
}
