package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * On-demand paging (docs/sources.md#on-demand-paging): an MR registered with ON_DEMAND has its pages
 * not present; the adapter's first access to each faults (the MttWalker reports PAGE_FAULT), the
 * host's handler brings the page in, and the access is tried again: a requester's WQE waits, a
 * responder answers RNR NAK. Nothing completes early and the bytes are right.
 */
class OdpTest {
    static final int LEN = 64 * 1024;

    static final class Pair {
        final World w;
        final QueuePair a, b;
        final CompletionQueue acq, bcq;
        final ProtectionDomain apd, bpd;
        final HostBuffer abuf, bbuf;

        Pair(Faults faults) {
            w = new World(2, Profiles.load("cx-gen3x16"), 9, faults);
            Context ca = new Device(w.host(0)).open(), cb = new Device(w.host(1)).open();
            apd = ca.allocPd();
            bpd = cb.allocPd();
            acq = ca.createCq(64);
            bcq = cb.createCq(64);
            a = apd.createQp(new QpInitAttr().sendCq(acq).recvCq(acq).maxSendWr(16));
            b = bpd.createQp(new QpInitAttr().sendCq(bcq).recvCq(bcq).maxRecvWr(16));
            Connect.up(a, Connect.ALL_REMOTE, Connect.Dest.of(cb, b, 3), Mtu.MTU_4096, 1);
            Connect.up(b, Connect.ALL_REMOTE, Connect.Dest.of(ca, a, 1), Mtu.MTU_4096, 3);
            abuf = new ProcessMemory(w.host(0)).alloc(LEN);
            bbuf = new ProcessMemory(w.host(1)).alloc(LEN);
        }

        List<WorkCompletion> await(CompletionQueue cq, int n) {
            List<WorkCompletion> got = new ArrayList<>();
            w.runUntil(() -> { got.addAll(cq.poll(n - got.size())); return got.size() >= n; }, 1_000_000_000_000L);
            return got;
        }

        long counter(String name) { return w.sim.counters().get(name); }
    }

    static byte[] pattern(int seed, int len) {
        byte[] x = new byte[len];
        for (int i = 0; i < len; i++) x[i] = (byte) (seed * 7 + i * 11 + 1);
        return x;
    }

    /** A WRITE into an on-demand region: each page faults once (RNR while it comes in); a second WRITE finds them all in. */
    @Test
    void writeIntoAnOnDemandRegionFaultsEachPageOnce() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.abuf.write(0, pattern(1, LEN));
        long t0 = p.w.now();
        p.a.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).remoteAddr(p.bbuf.addr()).rkey(dst.rkey())
                .sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
        WorkCompletion first = p.await(p.acq, 1).get(0);
        long cold = p.w.now() - t0;
        assertEquals(WcStatus.SUCCESS, first.status(), first.toString());
        assertArrayEquals(pattern(1, LEN), p.bbuf.read(0, LEN));
        long faults = p.counter("Firmware.odp_page_faults");
        assertTrue(faults >= 1, "the first touch faulted");
        assertTrue(p.counter("Firmware.odp_rnr_sent") >= 1, "the responder asked the requester to wait");
        p.abuf.write(0, pattern(2, LEN));
        t0 = p.w.now();
        p.a.postSend(new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).remoteAddr(p.bbuf.addr()).rkey(dst.rkey())
                .sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        long warm = p.w.now() - t0;
        assertArrayEquals(pattern(2, LEN), p.bbuf.read(0, LEN));
        assertEquals(faults, p.counter("Firmware.odp_page_faults"), "warm: no new faults");
        assertTrue(cold > warm + 5_000_000, "first touch " + cold + " ps, warm " + warm + " ps");
    }

    /** SENDs and a READ from and into on-demand regions on the requester's side: the WQE waits for each page, in order. */
    @Test
    void requesterBuffersOnDemand() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        MemoryRegion rcv = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE);
        p.abuf.write(0, pattern(3, LEN));
        for (int i = 0; i < 4; i++)
            p.b.postRecv(new RecvWr().wrId(10 + i).sgList(new Sge(p.bbuf.addr() + i * 16384L, 16384, rcv.lkey())));
        for (int i = 0; i < 4; i++)
            p.a.postSend(new SendWr().wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sgList(new Sge(p.abuf.addr() + i * 16384L, 16384, src.lkey())));
        List<WorkCompletion> sent = p.await(p.acq, 4);
        for (int i = 0; i < 4; i++) {
            assertEquals(WcStatus.SUCCESS, sent.get(i).status(), sent.toString());
            assertEquals(i, sent.get(i).wrId(), "in order");
        }
        List<WorkCompletion> got = p.await(p.bcq, 4);
        for (WorkCompletion wc : got) assertEquals(WcStatus.SUCCESS, wc.status());
        assertArrayEquals(pattern(3, LEN), p.bbuf.read(0, LEN));
        assertTrue(p.counter("Firmware.odp_page_faults") >= 4, "each page of the source faulted once");
    }

    /** adviseMr brings the pages in ahead: the WRITE that follows takes no fault and no RNR wait. */
    @Test
    void prefetchedPagesDoNotFault() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.bpd.adviseMr(AdviseAdvice.PREFETCH_WRITE, 0, new Sge(p.bbuf.addr(), LEN, dst.lkey()));
        p.w.runFor(500_000_000L); // the host's handler brings them in meanwhile
        assertEquals(16, p.w.host(1).driver().pageFaults(), "every page brought in by the prefetch");
        p.abuf.write(0, pattern(5, LEN));
        p.a.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).remoteAddr(p.bbuf.addr()).rkey(dst.rkey())
                .sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertArrayEquals(pattern(5, LEN), p.bbuf.read(0, LEN));
        assertEquals(0, p.counter("Firmware.odp_page_faults"));
        assertEquals(0, p.counter("Firmware.odp_rnr_sent"));
        assertEquals(Errno.EOPNOTSUPP, assertThrows(VerbsException.class,
                () -> p.bpd.adviseMr(AdviseAdvice.PREFETCH, 1, new Sge(p.bbuf.addr(), 8, dst.lkey()))).errno(), "FLUSH");
    }

    /** Pages the OS takes away are invalidated in the adapter first: the next WRITE faults them back in, and only them. */
    @Test
    void evictedPagesFaultBackIn() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        for (int round = 0; round < 2; round++) {
            if (round == 1) {
                long before = p.w.host(1).driver().pageFaults();
                assertEquals(1, new ProcessMemory(p.w.host(1)).evict(p.bbuf.addr() + 4 * 4096, 3 * 4096), "one on-demand MR over the range");
                p.w.runFor(10_000_000L); // the adapter rewrites the MR's entries
                assertEquals(before, p.w.host(1).driver().pageFaults());
            }
            long faultsBefore = p.w.host(1).driver().pageFaults();
            p.abuf.write(0, pattern(6 + round, LEN));
            p.a.postSend(new SendWr().wrId(round).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).remoteAddr(p.bbuf.addr())
                    .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
            assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
            assertArrayEquals(pattern(6 + round, LEN), p.bbuf.read(0, LEN));
            long brought = p.w.host(1).driver().pageFaults() - faultsBefore;
            assertEquals(round == 0 ? 16 : 3, brought, "round " + round + ": pages brought in");
        }
        assertEquals(1, p.counter("Firmware.odp_invalidations"));
    }

    /** Over a lossy fabric, faults and RNR waits and retransmissions together still land every byte once. */
    @Test
    void lossyFabric() {
        Pair p = new Pair(Faults.parse("drop=0.03,dup=0.02,reorder=0.02"));
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.abuf.write(0, pattern(4, LEN));
        for (int i = 0; i < 8; i++)
            p.a.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).remoteAddr(p.bbuf.addr() + i * 8192L)
                    .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr() + i * 8192L, 8192, src.lkey())));
        List<WorkCompletion> done = p.await(p.acq, 8);
        for (WorkCompletion wc : done) assertEquals(WcStatus.SUCCESS, wc.status(), done.toString());
        assertArrayEquals(pattern(4, LEN), p.bbuf.read(0, LEN));
        assertTrue(p.counter("Firmware.odp_page_faults") >= 16, "both sides' pages faulted");
    }
}
