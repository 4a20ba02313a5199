package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.firmware.Resources;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
            return Completions.await(w, cq, n);
        }

        long counter(String name) { return w.sim.counters().get(name); }
    }

    /** What host {@code h}'s adapter counted of {@code mr}'s paging (its `rdma statistic mr` row). */
    static Resources.MrRow paging(World w, int h, MemoryRegion mr) {
        return Resources.of(w.host(h).firmware).mrs().stream().filter(r -> r.key() == (mr.lkey() & 0xFFFF_FFFFL))
                .findFirst().orElseThrow(() -> new AssertionError("no MR 0x" + Integer.toHexString(mr.lkey())));
    }

    static byte[] pattern(int seed, int len) {
        byte[] x = new byte[len];
        for (int i = 0; i < len; i++) x[i] = (byte) (seed * 7 + i * 11 + 1);
        return x;
    }

    /**
     * A WRITE into an on-demand region: each page faults once (RNR while it comes in); a second WRITE finds them all
     * in.
     */
    @Test
    void writeIntoAnOnDemandRegionFaultsEachPageOnce() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.abuf.write(0, pattern(1, LEN));
        long t0 = p.w.now();
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE).remoteAddr(p.bbuf.addr()).rkey(dst.rkey())
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
        p.a.postSend(Wrs.signaled(2, WrOpcode.RDMA_WRITE).remoteAddr(p.bbuf.addr()).rkey(dst.rkey())
                .sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        long warm = p.w.now() - t0;
        assertArrayEquals(pattern(2, LEN), p.bbuf.read(0, LEN));
        assertEquals(faults, p.counter("Firmware.odp_page_faults"), "warm: no new faults");
        // each fault counted to the MR it was in: all the destination's, none the source's
        assertEquals(faults, paging(p.w, 1, dst).pageFaults(), paging(p.w, 1, dst).toString());
        assertEquals(0, paging(p.w, 0, src).pageFaults());
        assertTrue(cold > warm + 5_000_000, "first touch " + cold + " ps, warm " + warm + " ps");
        // fault latency: each fault waited at least one page's host.odp.fault.cost
        long resolved = p.counter("Firmware.odp_faults_resolved");
        assertEquals(faults, resolved, "every fault resolved");
        long waited = p.counter("Firmware.odp_fault_wait_ps");
        assertTrue(waited >= resolved * 5_000_000L, "fault latency " + waited);
    }

    /**
     * SENDs and a READ from and into on-demand regions on the requester's side: the WQE waits for each page, in
     * order.
     */
    @Test
    void requesterBuffersOnDemand() {
        Pair p = new Pair(Faults.NONE);
        p.w.sim.trace().enable("wqe");
        MemoryRegion src = p.apd.regMr(p.abuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        MemoryRegion rcv = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE);
        p.abuf.write(0, pattern(3, LEN));
        for (int i = 0; i < 4; i++)
            p.b.postRecv(new RecvWr().wrId(10 + i).sgList(new Sge(p.bbuf.addr() + i * 16384L, 16384, rcv.lkey())));
        for (int i = 0; i < 4; i++)
            p.a.postSend(Wrs.signaled(i, WrOpcode.SEND)
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
        // each WQE's timeline shows its wait: a page_fault stage, then pages_in, on the MttWalker's and the
        // firmware's tracks
        long faulted = p.w.sim.trace().entries().stream().filter(e -> e.stage().equals("page_fault")).count();
        long in = p.w.sim.trace().entries().stream().filter(e -> e.stage().equals("pages_in")).count();
        assertTrue(faulted >= 4 && faulted == in, faulted + " page_fault, " + in + " pages_in");
    }

    /**
     * Receive buffers on demand: each SEND packet whose buffer page is missing is answered RNR while
     * the page comes in, then sent again from that packet; a READ's responses into an on-demand
     * buffer are asked for again from the one that faulted. Completions in order, bytes right.
     */
    @Test
    void receiveBuffersAndReadResponsesOnDemand() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        MemoryRegion rcv = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        // the sender's pages come in by prefetch, so every fault below is the receiver's
        p.apd.adviseMr(AdviseAdvice.PREFETCH, 0, new Sge(p.abuf.addr(), LEN, src.lkey()));
        p.w.runFor(500_000_000L);
        p.abuf.write(0, pattern(8, LEN));
        for (int i = 0; i < 4; i++)
            p.b.postRecv(new RecvWr().wrId(10 + i).sgList(new Sge(p.bbuf.addr() + i * 16384L, 16384, rcv.lkey())));
        for (int i = 0; i < 4; i++)
            p.a.postSend(Wrs.signaled(i, WrOpcode.SEND)
                    .sgList(new Sge(p.abuf.addr() + i * 16384L, 16384, src.lkey())));
        List<WorkCompletion> got = p.await(p.bcq, 4);
        for (int i = 0; i < 4; i++) {
            assertEquals(WcStatus.SUCCESS, got.get(i).status(), got.toString());
            assertEquals(10 + i, got.get(i).wrId(), "each message in its own receive, in order");
            assertEquals(16384, got.get(i).byteLen());
        }
        for (WorkCompletion wc : p.await(p.acq, 4)) assertEquals(WcStatus.SUCCESS, wc.status());
        assertArrayEquals(pattern(8, LEN), p.bbuf.read(0, LEN));
        assertEquals(16, p.w.host(1).driver().pageFaults(), "each receive page brought in once");
        assertTrue(p.counter("Firmware.odp_rnr_sent") >= 4, "the receiver asked the sender to wait");

        // the other way: READ the receiver's (now present) pages back into the sender's buffer, evicted first
        assertEquals(1, new ProcessMemory(p.w.host(0)).evict(p.abuf.addr(), LEN));
        p.w.runFor(10_000_000L);
        p.bbuf.write(0, pattern(9, LEN));
        long before = p.w.host(0).driver().pageFaults();
        p.a.postSend(Wrs.signaled(7, WrOpcode.RDMA_READ).remoteAddr(p.bbuf.addr()).rkey(rcv.rkey())
                .sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
        WorkCompletion read = p.await(p.acq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, read.status(), read.toString());
        assertArrayEquals(pattern(9, LEN), p.abuf.read(0, LEN));
        assertEquals(16, p.w.host(0).driver().pageFaults() - before, "the READ's local pages brought in once each");
    }

    /**
     * Sixteen READs in flight into one on-demand buffer (as perftest's read test posts them): each waits for the
     * pages, none is lost.
     */
    @Test
    void manyReadsInFlightIntoOneOnDemandBuffer() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion dst = p.apd.regMr(p.abuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        MemoryRegion src = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE);
        p.bbuf.write(0, pattern(11, 16384));
        for (int i = 0; i < 16; i++)
            p.a.postSend(Wrs.signaled(i, WrOpcode.RDMA_READ).remoteAddr(p.bbuf.addr()).rkey(src.rkey())
                    .sgList(new Sge(p.abuf.addr(), 16384, dst.lkey())));
        List<WorkCompletion> done = p.await(p.acq, 16);
        for (int i = 0; i < 16; i++) {
            assertEquals(WcStatus.SUCCESS, done.get(i).status(), done.get(i).toString());
            assertEquals(i, done.get(i).wrId());
        }
        assertArrayEquals(pattern(11, 16384), p.abuf.read(0, 16384));
        assertEquals(4, p.w.host(0).driver().pageFaults(), "each page brought in once");
    }

    /**
     * UD: a datagram whose receive buffer page is missing is lost (UD cannot ask again), its WQE kept; the page comes
     * in for the next.
     */
    @Test
    void udReceiveIntoAnOnDemandBufferDropsThenLands() {
        nicsim.verbs.Pair p = new nicsim.verbs.Pair("cx-gen3x16", QpType.UD, 8192).upUd(Mtu.MTU_2048);
        MemoryRegion rmr = p.b.pd.regMr(p.b.buf, AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND);
        p.b.qp.postRecv(new RecvWr().wrId(5).sgList(new Sge(p.b.buf.addr(), 4096, rmr.lkey())));
        AddressHandle ah = p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()));
        List<WorkCompletion> got = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            p.a.buf.write(0, pattern(20 + i, 2000));
            p.a.qp.postSend(Wrs.signaled(i, WrOpcode.SEND).ah(ah).remoteQpn(p.b.qp.qpNum())
                    .remoteQkey(Connect.QKEY).sgList(new Sge(p.a.buf.addr(), 2000, p.a.mr.lkey())));
            assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status(), "a UD send completes when sent");
            p.world.runFor(200_000_000L);
            got.addAll(p.b.cq.poll(4));
        }
        assertEquals(1, got.size(), "the first datagram was lost: " + got);
        assertEquals(5, got.get(0).wrId(), "into the WQE the lost one did not consume");
        assertEquals(WcStatus.SUCCESS, got.get(0).status());
        assertArrayEquals(pattern(21, 2000), p.b.buf.read(40, 2000));
        assertEquals(1, p.world.sim.counters().get("Firmware.odp_receives_dropped"));
        assertEquals(1, p.world.host(1).driver().pageFaults(), "the one page the datagram needs came in");
        assertEquals(OdpCaps.NICSIM, p.a.ctx.queryDevice().odpCaps());
        assertTrue(p.a.ctx.queryDevice().odpCaps().supported());
    }

    /** A profile without on-demand paging reports no ODP capability and refuses ON_DEMAND MRs, naming the flag. */
    @Test
    void profileWithoutOdpRefusesOnDemandMrs() {
        World w = new World(1, Profiles.load("lanai72"), 1, Faults.NONE);
        Context c = new Device(w.host(0)).open();
        assertEquals(OdpCaps.NONE, c.queryDevice().odpCaps());
        HostBuffer buf = new ProcessMemory(w.host(0)).alloc(4096);
        VerbsException e = assertThrows(VerbsException.class,
                () -> c.allocPd().regMr(buf, AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND));
        assertEquals(Errno.EOPNOTSUPP, e.errno());
        assertTrue(e.getMessage().contains("ON_DEMAND"), e.getMessage());
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
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE).remoteAddr(p.bbuf.addr()).rkey(dst.rkey())
                .sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertArrayEquals(pattern(5, LEN), p.bbuf.read(0, LEN));
        assertEquals(0, p.counter("Firmware.odp_page_faults"));
        assertEquals(0, p.counter("Firmware.odp_rnr_sent"));
        assertEquals(new Resources.MrRow(dst.lkey() & 0xFFFF_FFFFL, paging(p.w, 1, dst).pd(), p.bbuf.addr(), LEN, 0, 0,
                1), paging(p.w, 1, dst), "one prefetch of the MR, no fault");
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.bpd.adviseMr(AdviseAdvice.PREFETCH, 2, new Sge(p.bbuf.addr(), 8, dst.lkey()))).errno(),
                "a flag that is not FLUSH");
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.bpd.adviseMr(AdviseAdvice.PREFETCH, 0)).errno(), "no SGE");
    }

    /** With FLUSH, adviseMr returns once the pages are in: the WRITE right after it takes no fault. */
    @Test
    void aFlushedPrefetchReturnsWithThePagesIn() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        Sge all = new Sge(p.bbuf.addr(), LEN, dst.lkey());
        p.bpd.adviseMr(AdviseAdvice.PREFETCH_WRITE, ProtectionDomain.ADVISE_MR_FLAG_FLUSH, all);
        assertEquals(16, p.w.host(1).driver().pageFaults(), "every page in when it returned");
        p.abuf.write(0, pattern(6, LEN));
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE).remoteAddr(p.bbuf.addr()).rkey(dst.rkey())
                .sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertArrayEquals(pattern(6, LEN), p.bbuf.read(0, LEN));
        assertEquals(0, p.counter("Firmware.odp_page_faults"));
    }

    /**
     * Pages the OS takes away are invalidated in the adapter first: the next WRITE faults them back in, and only
     * them.
     */
    @Test
    void evictedPagesFaultBackIn() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        for (int round = 0; round < 2; round++) {
            if (round == 1) {
                long before = p.w.host(1).driver().pageFaults();
                assertEquals(1, new ProcessMemory(p.w.host(1)).evict(p.bbuf.addr() + 4 * 4096, 3 * 4096),
                        "one on-demand MR over the range");
                p.w.runFor(10_000_000L); // the adapter rewrites the MR's entries
                assertEquals(before, p.w.host(1).driver().pageFaults());
            }
            long faultsBefore = p.w.host(1).driver().pageFaults();
            p.abuf.write(0, pattern(6 + round, LEN));
            p.a.postSend(Wrs.signaled(round, WrOpcode.RDMA_WRITE).remoteAddr(p.bbuf.addr())
                    .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr(), LEN, src.lkey())));
            assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
            assertArrayEquals(pattern(6 + round, LEN), p.bbuf.read(0, LEN));
            long brought = p.w.host(1).driver().pageFaults() - faultsBefore;
            assertEquals(round == 0 ? 16 : 3, brought, "round " + round + ": pages brought in");
        }
        assertEquals(1, p.counter("Firmware.odp_invalidations"));
        assertEquals(1, paging(p.w, 1, dst).pageInvalidations(), "the MR's pages were invalidated once");
    }

    /** Over a lossy fabric, faults and RNR waits and retransmissions together still land every byte once. */
    @Test
    void lossyFabric() {
        Pair p = new Pair(Faults.parse("drop=0.03,dup=0.02,reorder=0.02"));
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND);
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.abuf.write(0, pattern(4, LEN));
        for (int i = 0; i < 8; i++)
            p.a.postSend(Wrs.signaled(i, WrOpcode.RDMA_WRITE).remoteAddr(p.bbuf.addr() + i * 8192L)
                    .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr() + i * 8192L, 8192, src.lkey())));
        List<WorkCompletion> done = p.await(p.acq, 8);
        for (WorkCompletion wc : done) assertEquals(WcStatus.SUCCESS, wc.status(), done.toString());
        assertArrayEquals(pattern(4, LEN), p.bbuf.read(0, LEN));
        assertTrue(p.counter("Firmware.odp_page_faults") >= 16, "both sides' pages faulted");
    }

    /**
     * An atomic into an on-demand region: the target page faults, the responder answers RNR, and the
     * retry finds the page in and is executed once (it used to fault again forever).
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void atomicsIntoAnOnDemandRegionFaultThenComplete(boolean localOnDemand) {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE | (localOnDemand ? AccessFlags.ON_DEMAND : 0));
        MemoryRegion dst = p.bpd.regMr(p.bbuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.a.postSend(Wrs.signaled(1, WrOpcode.ATOMIC_FETCH_AND_ADD).remoteAddr(p.bbuf.addr() + 8192)
                .rkey(dst.rkey()).compareAdd(5).sgList(new Sge(p.abuf.addr(), 8, src.lkey())));
        p.a.postSend(Wrs.signaled(2, WrOpcode.ATOMIC_CMP_AND_SWP).remoteAddr(p.bbuf.addr() + 8192)
                .rkey(dst.rkey()).compareAdd(5).swap(9).sgList(new Sge(p.abuf.addr() + 8, 8, src.lkey())));
        List<WorkCompletion> wc = p.await(p.acq, 2);
        assertEquals(2, wc.size(), "both atomics completed");
        for (WorkCompletion w : wc) assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
        assertEquals(9, p.bbuf.read(8192, 1)[0], "added 5 to 0, then swapped 5 for 9");
        assertEquals(5, p.abuf.read(8, 1)[0], "the compare-and-swap saw the add's 5");
        assertTrue(p.counter("Firmware.odp_page_faults") >= 1, "the page faulted first");
    }

    /** An atomic on an on-demand region of just its 8 bytes, into a local one of 8 (pyverbs' test_odp_rc_atomic_*). */
    @Test
    void atomicsOnEightByteOnDemandRegions() {
        Pair p = new Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf.addr() + 4096, 8, AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND);
        MemoryRegion dst = p.bpd.regMr(p.bbuf.addr() + 4096, 8, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.bbuf.write(4096, new byte[]{1, 1, 1, 1, 1, 1, 1, 1});
        p.a.postSend(Wrs.signaled(1, WrOpcode.ATOMIC_CMP_AND_SWP).remoteAddr(p.bbuf.addr() + 4096)
                .rkey(dst.rkey()).compareAdd(0x0101010101010101L).swap(0)
                .sgList(new Sge(p.abuf.addr() + 4096, 8, src.lkey())));
        List<WorkCompletion> wc = p.await(p.acq, 1);
        assertEquals(1, wc.size(), "the atomic completed");
        assertEquals(WcStatus.SUCCESS, wc.get(0).status(), wc.toString());
        assertArrayEquals(new byte[8], p.bbuf.read(4096, 8), "swapped in 0");
        assertArrayEquals(new byte[]{1, 1, 1, 1, 1, 1, 1, 1}, p.abuf.read(4096, 8), "the original value came back");
    }
}
