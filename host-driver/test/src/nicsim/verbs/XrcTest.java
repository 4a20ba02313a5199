package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * XRC: one initiator QP on node 0 reaches every XRC SRQ of an XRC
 * domain on node 1 through one target QP; each SRQ belongs to another "process" (its own context,
 * PD, CQ and buffer), takes the messages that name it and completes them to its own CQ.
 */
class XrcTest {
    static final int SLOT = 4096;

    /** A process on node 1: a context, PD, CQ, an XRC SRQ of the shared domain, and a buffer its receives land in. */
    static final class Proc {
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final SharedReceiveQueue srq;
        final HostBuffer buf;
        final MemoryRegion mr;

        Proc(World w, Xrcd xrcd, int slots) {
            ctx = new Device(w.host(1)).open();
            pd = ctx.allocPd();
            cq = ctx.createCq(256);
            srq = pd.createSrq(new SrqInitAttr().srqType(SrqType.XRC).xrcd(xrcd).cq(cq).maxWr(slots).maxSge(1));
            buf = new ProcessMemory(w.host(1)).alloc((long) SLOT * slots);
            mr = pd.regMr(buf, Connect.ALL_REMOTE);
            for (int i = 0; i < slots; i++)
                srq.postRecv(new RecvWr().wrId(i).sgList(new Sge(buf.addr() + (long) SLOT * i, SLOT, mr.lkey())));
        }
    }

    static final class Setup {
        final World w;
        final Context ictx;
        final ProtectionDomain ipd;
        final CompletionQueue icq;
        final QueuePair ini;
        final HostBuffer ibuf;
        final MemoryRegion imr;
        final Xrcd xrcd;
        final List<Proc> procs = new ArrayList<>();
        final Context tctx;
        final QueuePair tgt;

        Setup(int processes, int slots, Faults faults) {
            w = new World(2, Profiles.load("cx-gen3x16"), 7, faults);
            ictx = new Device(w.host(0)).open();
            ipd = ictx.allocPd();
            icq = ictx.createCq(512);
            ini = ipd.createQp(new QpInitAttr().qpType(QpType.XRC_SEND).sendCq(icq).maxSendWr(128).maxSendSge(1));
            ibuf = new ProcessMemory(w.host(0)).alloc(1 << 20);
            imr = ipd.regMr(ibuf, Connect.ALL_REMOTE);
            tctx = new Device(w.host(1)).open();
            xrcd = tctx.openXrcd();
            for (int i = 0; i < processes; i++) procs.add(new Proc(w, xrcd, slots));
            tgt = tctx.createQp(new QpInitAttr().qpType(QpType.XRC_RECV).xrcd(xrcd));
            Connect.up(ini, Connect.ALL_REMOTE, Connect.Dest.of(tctx, tgt, 200), Mtu.MTU_1024, 100);
            Connect.up(tgt, Connect.ALL_REMOTE, Connect.Dest.of(ictx, ini, 100), Mtu.MTU_1024, 200);
        }

        /**
         * SENDs message {@code i} ({@code len} bytes of its own pattern, from its own place) to XRC SRQ {@code srqn}.
         */
        void send(int i, int len, int srqn) {
            ibuf.write((long) SLOT * i, pattern(i, len));
            ini.postSend(Wrs.signaled(i, WrOpcode.SEND).xrcRemoteSrqNum(srqn)
                    .sgList(new Sge(ibuf.addr() + (long) SLOT * i, len, imr.lkey())));
        }

        List<WorkCompletion> await(CompletionQueue cq, int n) {
            return Completions.await(w, cq, n);
        }
    }

    static byte[] pattern(int i, int len) {
        byte[] b = new byte[len];
        for (int k = 0; k < len; k++) b[k] = (byte) (i * 31 + k * 7 + 1);
        return b;
    }

    /**
     * Messages to p SRQs over one connection land in their own SRQ's buffers, in order, and complete to their own CQs.
     */
    static void servesEverySrq(Setup s, int n) {
        int p = s.procs.size();
        for (int i = 0; i < n; i++) s.send(i, 100 + 997 * i % 3000, s.procs.get(i % p).srq.srqNum());
        List<WorkCompletion> sent = s.await(s.icq, n);
        assertEquals(n, sent.size(), sent.toString());
        for (WorkCompletion wc : sent) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        for (int k = 0; k < p; k++) {
            Proc pr = s.procs.get(k);
            int mine = (n - k + p - 1) / p;
            List<WorkCompletion> got = s.await(pr.cq, mine);
            assertEquals(mine, got.size(), "process " + k + ": " + got);
            for (int j = 0; j < mine; j++) {
                int i = k + j * p, len = 100 + 997 * i % 3000;
                WorkCompletion wc = got.get(j);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(WcOpcode.RECV, wc.opcode());
                assertEquals(j, wc.wrId(), "the SRQ's WQEs are taken in order");
                assertEquals(len, wc.byteLen());
                assertEquals(s.tgt.qpNum(), wc.qpNum(), "the completion names the target QP");
                assertArrayEquals(pattern(i, len), pr.buf.read((long) SLOT * j, len),
                        "message " + i + " in process " + k + "'s buffer");
            }
            assertTrue(pr.cq.poll(1).isEmpty(), "nothing else came to process " + k);
        }
    }

    @Test
    void oneConnectionServesEverySrqOfTheDomain() {
        servesEverySrq(new Setup(3, 8, Faults.NONE), 18);
    }

    @Test
    void overALossyFabricEveryMessageStillLandsOnceAndInOrder() {
        Setup s = new Setup(2, 40, Faults.parse("drop=0.03,dup=0.01,reorder=0.02"));
        servesEverySrq(s, 60);
        assertTrue(s.w.sim.counters().get("Fabric.dropped") > 0, "packets were lost");
        assertTrue(s.w.sim.counters().get("Firmware.retransmits") > 0, "and sent again");
    }

    /**
     * A SEND through XRC into receive buffers of an on-demand region: the first packet finds the
     * page missing, the target answers RNR and gives the WQE back to the SRQ the request names (an
     * XRC target has no receive queue of its own: it once went to none, and the receive was lost).
     */
    @Test
    void aReceiveIntoAnOnDemandBufferFaultsInAndIsNotLost() {
        Setup s = new Setup(1, 2, Faults.NONE);
        Proc p = s.procs.get(0);
        s.send(9, 8, p.srq.srqNum()); // the two pinned receives go first
        s.send(9, 8, p.srq.srqNum());
        assertEquals(2, s.await(p.cq, 2).size());
        s.await(s.icq, 2);
        HostBuffer lazy = new ProcessMemory(s.w.host(1)).alloc(4 * SLOT);
        MemoryRegion odp = p.pd.regMr(lazy, AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND);
        for (int i = 0; i < 2; i++)
            p.srq.postRecv(new RecvWr().wrId(i).sgList(new Sge(lazy.addr() + (long) SLOT * i, SLOT, odp.lkey())));
        s.send(0, 3000, p.srq.srqNum());
        s.send(1, 200, p.srq.srqNum());
        for (WorkCompletion wc : s.await(s.icq, 2)) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        List<WorkCompletion> got = s.await(p.cq, 2);
        assertEquals(List.of(0L, 1L), got.stream().map(WorkCompletion::wrId).toList(), "both WQEs, in order");
        assertArrayEquals(pattern(0, 3000), lazy.read(0, 3000));
        assertArrayEquals(pattern(1, 200), lazy.read(SLOT, 200));
        assertTrue(s.w.sim.counters().get("Firmware.odp_rnr_sent") > 0, "the first touch faulted");
    }

    @Test
    void rdmaThroughXrcChecksKeysAgainstTheNamedSrqsPd() {
        Setup s = new Setup(2, 2, Faults.NONE);
        Proc p0 = s.procs.get(0), p1 = s.procs.get(1);
        byte[] data = pattern(5, 3000);
        s.ibuf.write(0, data);
        // a WRITE naming process 1's SRQ reaches process 1's MR
        s.ini.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE).xrcRemoteSrqNum(p1.srq.srqNum())
                .sgList(new Sge(s.ibuf.addr(), data.length, s.imr.lkey()))
                .remoteAddr(p1.buf.addr() + 100).rkey(p1.mr.rkey()));
        // and a READ back
        s.ini.postSend(Wrs.signaled(2, WrOpcode.RDMA_READ).xrcRemoteSrqNum(p1.srq.srqNum())
                .sgList(new Sge(s.ibuf.addr() + 8192, data.length, s.imr.lkey()))
                .remoteAddr(p1.buf.addr() + 100).rkey(p1.mr.rkey()));
        List<WorkCompletion> wcs = s.await(s.icq, 2);
        assertEquals(List.of(WcStatus.SUCCESS, WcStatus.SUCCESS), wcs.stream().map(WorkCompletion::status).toList(),
                wcs.toString());
        assertArrayEquals(data, p1.buf.read(100, data.length));
        assertArrayEquals(data, s.ibuf.read(8192, data.length));
        // naming process 0's SRQ, process 1's rkey is of another PD: remote access error, nothing written
        byte[] before = p1.buf.read(8000, 64);
        s.ini.postSend(Wrs.signaled(3, WrOpcode.RDMA_WRITE).xrcRemoteSrqNum(p0.srq.srqNum())
                .sgList(new Sge(s.ibuf.addr(), 64, s.imr.lkey())).remoteAddr(p1.buf.addr() + 8000).rkey(p1.mr.rkey()));
        WorkCompletion bad = s.await(s.icq, 1).get(0);
        assertEquals(WcStatus.REM_ACCESS_ERR, bad.status(), bad.toString());
        assertArrayEquals(before, p1.buf.read(8000, 64));
    }

    @Test
    void anSrqOutsideTheTargetsDomainIsRefusedAndNothingIsWritten() {
        Setup s = new Setup(1, 4, Faults.NONE);
        Xrcd other = s.procs.get(0).ctx.openXrcd();
        Proc stranger = new Proc(s.w, other, 4);
        byte[] before = stranger.buf.read(0, 256);
        s.send(0, 256, stranger.srq.srqNum());
        WorkCompletion wc = s.await(s.icq, 1).get(0);
        assertEquals(WcStatus.REM_INV_REQ_ERR, wc.status(), wc.toString());
        assertArrayEquals(before, stranger.buf.read(0, 256), "nothing reached the stranger's buffer");
        s.w.runFor(10_000_000L);
        assertTrue(stranger.cq.poll(4).isEmpty(), "and its receive was not consumed");
        Optional<AsyncEvent> e = s.tctx.pollAsyncEvent();
        assertTrue(e.isPresent() && e.get().type() == EventType.QP_REQ_ERR,
                "the target QP reports the invalid request: " + e);
        assertEquals(QpState.ERR, s.tgt.query().qpState());
        // a number that is no SRQ at all is refused the same way (on a fresh connection)
        Setup t = new Setup(1, 4, Faults.NONE);
        t.send(0, 64, 0xABCD);
        assertEquals(WcStatus.REM_INV_REQ_ERR, t.await(t.icq, 1).get(0).status());
    }

    @Test
    void whatXrcQpsLackIsRefusedWithItsErrno() {
        Setup s = new Setup(1, 2, Faults.NONE);
        Proc p = s.procs.get(0);
        VerbsException busy = assertThrows(VerbsException.class, s.xrcd::close);
        assertEquals(Errno.EBUSY, busy.errno(), busy.getMessage());
        assertFalse(s.xrcd.isClosed(), "a refused close leaves the domain open");
        assertEquals(Errno.EINVAL,
                assertThrows(VerbsException.class, () -> s.ini.postRecv(new RecvWr().wrId(1))).errno());
        assertEquals(Errno.EINVAL,
                assertThrows(VerbsException.class, () -> s.tgt.postSend(new SendWr().wrId(1))).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.pd.createQp(new QpInitAttr().qpType(QpType.XRC_RECV).xrcd(s.xrcd))).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.ctx.createQp(new QpInitAttr().qpType(QpType.XRC_RECV))).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.ctx.createQp(new QpInitAttr().qpType(QpType.RC))).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.pd.createSrq(new SrqInitAttr().srqType(SrqType.XRC).cq(p.cq).maxWr(2).maxSge(1))).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.pd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(p.cq).recvCq(p.cq).srq(p.srq))).errno(),
                "an XRC SRQ is not attached to a QP");
        // once its users are gone, the domain closes
        s.tgt.close();
        for (Proc q : s.procs) q.srq.close();
        s.xrcd.close();
        assertTrue(s.xrcd.isClosed());
    }
}
