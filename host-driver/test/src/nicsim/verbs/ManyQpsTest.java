package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * More QPs than the WqeFetcher has slots: send-queue contexts are evicted and loaded back from host
 * memory on demand, and every QP's data still arrives.
 */
class ManyQpsTest {
    @Test
    void threeHundredQpsShareSixtyFourFetcherSlots() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        Context ca = new Device(w.host(0)).open(), cb = new Device(w.host(1)).open();
        ProtectionDomain pa = ca.allocPd(), pb = cb.allocPd();
        CompletionQueue qa = ca.createCq(4096), qb = cb.createCq(4096);
        HostBuffer ba = new ProcessMemory(w.host(0)).alloc(1 << 20), bb = new ProcessMemory(w.host(1)).alloc(1 << 20);
        MemoryRegion ma = pa.regMr(ba, Connect.ALL_REMOTE), mb = pb.regMr(bb, Connect.ALL_REMOTE);
        int n = 300;
        List<QueuePair> as = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            QueuePair a = pa.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(qa).recvCq(qa).maxSendWr(4));
            QueuePair b = pb.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(qb).recvCq(qb).maxSendWr(4));
            Connect.up(a, Connect.ALL_REMOTE, Connect.Dest.of(cb, b, i), Mtu.MTU_4096, i);
            Connect.up(b, Connect.ALL_REMOTE, Connect.Dest.of(ca, a, i), Mtu.MTU_4096, i);
            as.add(a);
        }
        byte[] data = new byte[n * 1024];
        new Random(3).nextBytes(data);
        ba.write(0, data);
        for (int round = 0; round < 2; round++)
            for (int i = 0; i < n; i++)
                as.get(i).postSend(Wrs.signaled(i, WrOpcode.RDMA_WRITE)
                        .sgList(new Sge(ba.addr() + 1024L * i, 1024, ma.lkey()))
                        .remoteAddr(bb.addr() + 1024L * i).rkey(mb.rkey()));
        List<WorkCompletion> got = new ArrayList<>();
        try {
            w.runUntil(() -> { got.addAll(qa.poll(64)); return got.size() >= 2 * n; }, 1_000_000_000_000L);
        } catch (IllegalStateException e) {
            throw new AssertionError(got.size() + " completions; " + w.sim.counters().snapshot() + " errors "
                    + w.host(0).adapter.errors(), e);
        }
        for (WorkCompletion wc : got) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertArrayEquals(data, bb.read(0, data.length));
        long misses = w.sim.counters().get("Firmware.sq_context_misses");
        assertTrue(misses >= n - 64, "context misses: " + misses);
        assertTrue(w.sim.counters().get("Firmware.sq_context_evictions") > 0);
    }
}
