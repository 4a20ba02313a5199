package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * More MRs than the MttWalker's table holds: mkey contexts are loaded on demand, and every key still checks and
 * translates.
 */
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
        new Random(9).nextBytes(data);
        p.a.buf.write(0, data);
        for (int i = 0; i < n; i++) {
            int k = (i * 7) % n; // a scattered order: consecutive WRs hit different table entries
            p.a.qp.postSend(Wrs.signaled(k, WrOpcode.RDMA_WRITE)
                    .sgList(new Sge(p.a.buf.addr() + 512L * k, 512, ra.get(k).lkey()))
                    .remoteAddr(p.b.buf.addr() + 512L * k).rkey(rb.get(k).rkey()));
            if (i % 32 == 31)
                for (WorkCompletion wc : p.await(p.a.cq, 32))
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        }
        for (WorkCompletion wc : p.await(p.a.cq, n % 32)) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertArrayEquals(data, p.b.buf.read(0, data.length));
        assertTrue(p.world.sim.counters().get("Firmware.mkey_context_misses") > n, "misses on both sides");
        // a key that does not exist still fails its check, even though the walker's entry holds another key
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 8, ra.get(0).lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(rb.get(5).rkey() ^ 0x40));
        assertEquals(WcStatus.REM_ACCESS_ERR, p.await(p.a.cq, 1).get(0).status());
    }

    /**
     * Registering and deregistering, again and again, more pages in all than the translation table
     * has rows (a serve's programs one after another): rows of a deregistered MR are reused, never
     * its MTT indices, so a later MR translates to its own pages and not to a stale cached one.
     */
    @Test
    void deregisteredRowsAreReusedWithoutStaleTranslations() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16).up(Mtu.MTU_4096);
        long span = 64L << 20; // 16384 pages a registration: 70 of them pass the table's 2^20 rows
        ProcessMemory mem = new ProcessMemory(p.world.host(1));
        HostBuffer[] bufs = {mem.alloc(span), mem.alloc(span)}; // registrations alternate between two buffers
        int writes = 0;
        for (int i = 0; i < 70; i++) {
            HostBuffer mine = bufs[i % 2], other = bufs[1 - i % 2];
            MemoryRegion mr = p.b.pd.regMr(mine.addr(), span, Connect.ALL_REMOTE);
            if (i % 5 == 0) { // the walker caches its entries; the next registration reuses their rows
                p.a.buf.write(0, new byte[]{(byte) (i + 1)});
                p.a.qp.postSend(Wrs.signaled(i, WrOpcode.RDMA_WRITE)
                        .sgList(new Sge(p.a.buf.addr(), 1, p.a.mr.lkey()))
                        .remoteAddr(mine.addr() + 4096).rkey(mr.rkey()));
                assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status(), "write " + i);
                assertEquals(i + 1, mine.read(4096, 1)[0], "registration " + i + " translated to its own buffer");
                assertNotEquals(i + 1, other.read(4096, 1)[0], "and not to the other one");
                writes++;
            }
            mr.close();
        }
        assertEquals(14, writes);
    }
}
