package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** More MRs than the MttWalker's table holds: mkey contexts are loaded on demand, and every key still checks and translates. */
class ManyMrsTest {
    @Test
    void threeThousandMrsThroughAThousandEntryTable() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 3000 * 512).up(Mtu.MTU_4096);
        int n = 3000;
        List<MemoryRegion> ra = new ArrayList<>(), rb = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ra.add(p.a.pd.regMr(p.a.buf.addr() + 512L * i, 512, Connect.ALL_REMOTE));
            rb.add(p.b.pd.regMr(p.b.buf.addr() + 512L * i, 512, Connect.ALL_REMOTE));
        }
        byte[] data = new byte[n * 512];
        new java.util.Random(9).nextBytes(data);
        p.a.buf.write(0, data);
        for (int i = 0; i < n; i++) {
            int k = (i * 7) % n; // a scattered order: consecutive WRs hit different table entries
            p.a.qp.postSend(new SendWr().wrId(k).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sgList(new Sge(p.a.buf.addr() + 512L * k, 512, ra.get(k).lkey())).remoteAddr(p.b.buf.addr() + 512L * k).rkey(rb.get(k).rkey()));
            if (i % 32 == 31) for (WorkCompletion wc : p.await(p.a.cq, 32)) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        }
        for (WorkCompletion wc : p.await(p.a.cq, n % 32)) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertArrayEquals(data, p.b.buf.read(0, data.length));
        assertTrue(p.world.sim.counters().get("Firmware.mkey_context_misses") > n, "misses on both sides");
        // a key that does not exist still fails its check, even though the walker's entry holds another key
        p.a.qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(p.a.buf.addr(), 8, ra.get(0).lkey())).remoteAddr(p.b.buf.addr()).rkey(rb.get(5).rkey() ^ 0x40));
        assertEquals(WcStatus.REM_ACCESS_ERR, p.await(p.a.cq, 1).get(0).status());
    }
}
