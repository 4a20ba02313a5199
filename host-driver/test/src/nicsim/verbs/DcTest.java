package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * DC transport (docs/sources.md#dc-transport: DCI, DCT, DC key, connect per work request,
 * CNAK, pools): initiators on node 0 reach targets on the other nodes, each request naming its target.
 */
class DcTest {
    static final long KEY = 0x1234_5678_9abc_def0L;
    static final int SLOT = 1 << 17;

    /** A DC target on a node: its context, SRQ with posted receives, CQ, and a buffer open to remote access. */
    static final class Target {
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final SharedReceiveQueue srq;
        final QueuePair dct;
        final HostBuffer buf;
        final MemoryRegion mr;
        final int lid;

        Target(World w, int node, long key, int receives) {
            ctx = new Device(w.host(node)).open();
            pd = ctx.allocPd();
            cq = ctx.createCq(512);
            srq = pd.createSrq(new SrqInitAttr().maxWr(Math.max(1, receives)).maxSge(1));
            buf = new ProcessMemory(w.host(node)).alloc((long) SLOT * 8);
            mr = pd.regMr(buf, Connect.ALL_REMOTE);
            for (int i = 0; i < receives; i++) {
                long slot = buf.addr() + (long) SLOT * (4 + i % 4);
                srq.postRecv(new RecvWr().wrId(i).sgList(new Sge(slot, SLOT, mr.lkey())));
            }
            dct = pd.createQp(new QpInitAttr().qpType(QpType.DRIVER).dcType(DcType.DCT).dctAccessKey(key)
                    .srq(srq).recvCq(cq).sendCq(cq));
            Connect.dc(dct, Connect.ALL_REMOTE, Mtu.MTU_1024, 0);
            lid = ctx.queryPort(1).lid();
        }
    }

    /** Node 0's side: a context, PD, CQ, buffer and as many DCIs as asked. */
    static final class Setup {
        final World w;
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final HostBuffer buf;
        final MemoryRegion mr;
        final List<QueuePair> dcis = new ArrayList<>();
        final List<Target> targets = new ArrayList<>();

        Setup(Profile profile, Faults faults, int targets, int dcis, int receives) {
            w = new World(1 + targets, profile, 11, faults);
            ctx = new Device(w.host(0)).open();
            pd = ctx.allocPd();
            cq = ctx.createCq(1024);
            buf = new ProcessMemory(w.host(0)).alloc((long) SLOT * 8);
            mr = pd.regMr(buf, Connect.ALL_REMOTE);
            for (int i = 0; i < dcis; i++) {
                QueuePair q = pd.createQp(new QpInitAttr().qpType(QpType.DRIVER).dcType(DcType.DCI).sendCq(cq)
                        .maxSendWr(64).maxSendSge(1));
                Connect.dc(q, 0, Mtu.MTU_1024, 1000 * (i + 1));
                this.dcis.add(q);
            }
            for (int t = 0; t < targets; t++) this.targets.add(new Target(w, 1 + t, KEY, receives));
        }

        Setup(int targets, int receives) { this(Profiles.load("cx-gen3x16"), Faults.NONE, targets, 1, receives); }

        AddressHandle ah(Target t) { return pd.createAh(new AhAttr().dlid(t.lid)); }

        SendWr to(Target t, long key) {
            return new SendWr().sendFlags(SendFlags.SIGNALED).dcAddr(ah(t), t.dct.qpNum(), key);
        }

        /** An RDMA WRITE of LEN bytes from node 0's buffer at OFF to the target's at OFF, under KEY. */
        SendWr write(Target t, long key, long wrId, long off, int len) {
            return to(t, key).wrId(wrId).opcode(WrOpcode.RDMA_WRITE).remoteAddr(t.buf.addr() + off).rkey(t.mr.rkey())
                    .sgList(new Sge(buf.addr() + off, len, mr.lkey()));
        }

        List<WorkCompletion> await(CompletionQueue q, int n) {
            return Completions.await(w, q, n);
        }

        long counter(String name) { return w.sim.counters().get(name); }
    }

    static byte[] pattern(int seed, int len) {
        byte[] b = new byte[len];
        for (int k = 0; k < len; k++) b[k] = (byte) (seed * 131 + k * 7 + 3);
        return b;
    }

    static void assertOk(List<WorkCompletion> wcs, int n) {
        assertEquals(n, wcs.size(), wcs.toString());
        for (WorkCompletion wc : wcs) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
    }

    /** WRITE, READ, SEND and both atomics over one DCI, byte for byte, on one connection. */
    @Test
    void everyOperationOverOneConnection() {
        Setup s = new Setup(1, 2);
        Target t = s.targets.get(0);
        QueuePair dci = s.dcis.get(0);
        byte[] big = pattern(1, 65536 + 333);
        s.buf.write(0, big);
        t.buf.write(SLOT, pattern(2, 5000));
        // atomics see memory as 64-bit words in the host's byte order
        t.buf.write(2L * SLOT, new byte[]{5, 0, 0, 0, 0, 0, 0, 0});
        long word = t.buf.addr() + 2L * SLOT;
        dci.postSend(s.to(t, KEY).wrId(1).opcode(WrOpcode.RDMA_WRITE).remoteAddr(t.buf.addr()).rkey(t.mr.rkey())
                        .sgList(new Sge(s.buf.addr(), big.length, s.mr.lkey())),
                s.to(t, KEY).wrId(2).opcode(WrOpcode.RDMA_READ).remoteAddr(t.buf.addr() + SLOT).rkey(t.mr.rkey())
                        .sgList(new Sge(s.buf.addr() + SLOT, 5000, s.mr.lkey())),
                s.to(t, KEY).wrId(3).opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).remoteAddr(word).rkey(t.mr.rkey())
                        .compareAdd(10)
                        .sgList(new Sge(s.buf.addr() + 2L * SLOT, 8, s.mr.lkey())),
                s.to(t, KEY).wrId(4).opcode(WrOpcode.ATOMIC_CMP_AND_SWP).remoteAddr(word).rkey(t.mr.rkey())
                        .compareAdd(15).swap(99)
                        .sgList(new Sge(s.buf.addr() + 2L * SLOT + 8, 8, s.mr.lkey())),
                s.to(t, KEY).wrId(5).opcode(WrOpcode.SEND_WITH_IMM).immData(0x77)
                        .sgList(new Sge(s.buf.addr() + 100, 3000, s.mr.lkey())));
        List<WorkCompletion> done = s.await(s.cq, 5);
        assertOk(done, 5);
        for (int i = 0; i < 5; i++) assertEquals(i + 1, done.get(i).wrId(), "in order");
        assertArrayEquals(big, t.buf.read(0, big.length), "WRITE landed");
        assertArrayEquals(pattern(2, 5000), s.buf.read(SLOT, 5000), "READ came back");
        assertEquals(5, s.buf.read(2L * SLOT, 1)[0], "fetch-and-add returned the old value");
        assertEquals(15, s.buf.read(2L * SLOT + 8, 1)[0], "compare-and-swap returned the value it compared");
        assertEquals(99, t.buf.read(2L * SLOT, 1)[0], "15 == 15: swapped in 99");
        List<WorkCompletion> recv = s.await(t.cq, 1);
        assertOk(recv, 1);
        assertEquals(WcOpcode.RECV, recv.get(0).opcode());
        assertEquals(3000, recv.get(0).byteLen());
        assertEquals(0x77, recv.get(0).immData());
        assertEquals(t.dct.qpNum(), recv.get(0).qpNum(), "the completion names the DCT");
        assertArrayEquals(Arrays.copyOfRange(big, 100, 3100), t.buf.read(4L * SLOT, 3000),
                "SEND placed in the SRQ's buffer");
        assertEquals(1, s.counter("Firmware.dc_connects"), "one connection served all five");
        assertEquals(0, s.counter("Firmware.dc_reconnects"));
    }

    /** A DCI alternating between targets connects once per change of target and reuses the connection within a run. */
    @Test
    void switchingTargetsReconnectsOncePerChange() {
        Setup s = new Setup(2, 0);
        QueuePair dci = s.dcis.get(0);
        int[] plan = {0, 0, 0, 1, 1, 0, 1, 1, 1, 0};
        int changes = 0;
        for (int i = 0; i < plan.length; i++) {
            if (i > 0 && plan[i] != plan[i - 1]) changes++;
            Target t = s.targets.get(plan[i]);
            s.buf.write((long) i * 1024, pattern(i, 1000));
            dci.postSend(s.write(t, KEY, i, (long) i * 1024, 1000));
        }
        assertOk(s.await(s.cq, plan.length), plan.length);
        for (int i = 0; i < plan.length; i++) {
            Target t = s.targets.get(plan[i]);
            assertArrayEquals(pattern(i, 1000), t.buf.read((long) i * 1024, 1000),
                    "write " + i + " at target " + plan[i]);
            byte[] atOther = s.targets.get(1 - plan[i]).buf.read((long) i * 1024, 1000);
            assertFalse(Arrays.equals(pattern(i, 1000), atOther), "not at the other");
        }
        assertEquals(changes + 1, s.counter("Firmware.dc_connects"));
        assertEquals(changes, s.counter("Firmware.dc_reconnects"));
        assertEquals(changes, s.counter("Firmware.dc_disconnects"), "each change closed the connection before");
    }

    /** A DCI that names a target under the wrong key is refused: REM_ACCESS_ERR, nothing written, the DCT serves on. */
    @Test
    void wrongKeyIsRefusedAndTheTargetGoesOn() {
        Setup s = new Setup(Profiles.load("cx-gen3x16"), Faults.NONE, 1, 2, 0);
        Target t = s.targets.get(0);
        s.buf.write(0, pattern(9, 512));
        QueuePair bad = s.dcis.get(0), good = s.dcis.get(1);
        bad.postSend(s.write(t, KEY ^ 1, 1, 0, 512), s.write(t, KEY ^ 1, 2, 0, 512));
        List<WorkCompletion> wcs = s.await(s.cq, 2);
        assertEquals(WcStatus.REM_ACCESS_ERR, wcs.get(0).status(), wcs.toString());
        assertTrue(wcs.get(0).syndrome().contains("wrong DC access key"), wcs.get(0).syndrome());
        assertEquals(WcStatus.WR_FLUSH_ERR, wcs.get(1).status());
        assertEquals(QpState.ERR, bad.state());
        assertArrayEquals(new byte[512], t.buf.read(0, 512), "nothing written under the wrong key");
        assertTrue(s.counter("Firmware.dc_key_violations") >= 1);
        good.postSend(s.write(t, KEY, 3, 0, 512));
        assertOk(s.await(s.cq, 1), 1);
        assertArrayEquals(pattern(9, 512), t.buf.read(0, 512));
        assertEquals(QpState.RTR, t.dct.state(), "the target is untouched");
    }

    /**
     * A bad rkey over DC fails like RC (REM_ACCESS_ERR, the DCI in ERR); the target's responder is freed and it serves
     * the next DCI.
     */
    @Test
    void remoteAccessErrorAsOnRc() {
        Setup s = new Setup(Profiles.load("cx-gen3x16").with("dc.dcr.pool", "1"), Faults.NONE, 1, 2, 0);
        Target t = s.targets.get(0);
        s.buf.write(0, pattern(4, 64));
        s.dcis.get(0).postSend(s.write(t, KEY, 1, 0, 64).rkey(t.mr.rkey() + 0x100));
        List<WorkCompletion> wcs = s.await(s.cq, 1);
        assertEquals(WcStatus.REM_ACCESS_ERR, wcs.get(0).status(), wcs.toString());
        assertEquals(QpState.ERR, s.dcis.get(0).state());
        s.dcis.get(1).postSend(s.write(t, KEY, 2, 0, 64));
        assertOk(s.await(s.cq, 1), 1);
        assertEquals(0, s.counter("Firmware.dc_cnaks"),
                "the failed connection's responder went back to the pool (one DCR)");
        assertArrayEquals(pattern(4, 64), t.buf.read(0, 64));
    }

    /**
     * With one responder, a second initiator gets CNAKs until the first one's idle timeout frees it; then both are
     * served.
     */
    @Test
    void exhaustedPoolAnswersCnakAndTheInitiatorRetries() {
        Setup s = new Setup(Profiles.load("cx-gen3x16").with("dc.dcr.pool", "1"), Faults.NONE, 1, 2, 0);
        Target t = s.targets.get(0);
        for (int d = 0; d < 2; d++) {
            s.buf.write((long) d * 4096, pattern(d, 4000));
            s.dcis.get(d).postSend(s.write(t, KEY, d, (long) d * 4096, 4000));
        }
        assertOk(s.await(s.cq, 2), 2);
        for (int d = 0; d < 2; d++) assertArrayEquals(pattern(d, 4000), t.buf.read((long) d * 4096, 4000), "DCI " + d);
        assertTrue(s.counter("Firmware.dc_cnaks") >= 1, "the second initiator was refused at first");
        assertEquals(s.counter("Firmware.dc_cnaks"), s.counter("Firmware.dc_cnaks_sent"));
        assertTrue(s.counter("Firmware.dc_idle_disconnects") >= 1, "the first let go when idle");
        long cnaks = s.counter("Firmware.dc_cnaks");
        assertEquals(2 + cnaks, s.counter("Firmware.dc_dcrs_given") + cnaks, "every connect got a responder or a CNAK");
    }

    /** A connection left idle is closed; the next request to the same target connects again. */
    @Test
    void idleConnectionIsClosedAndReopened() {
        Setup s = new Setup(1, 0);
        Target t = s.targets.get(0);
        QueuePair dci = s.dcis.get(0);
        dci.postSend(s.write(t, KEY, 1, 0, 8));
        assertOk(s.await(s.cq, 1), 1);
        s.w.runFor(Profiles.load("cx-gen3x16").picos("dc.idle.timeout") * 2);
        assertEquals(1, s.counter("Firmware.dc_idle_disconnects"));
        dci.postSend(s.write(t, KEY, 2, 0, 8));
        assertOk(s.await(s.cq, 1), 1);
        assertEquals(2, s.counter("Firmware.dc_connects"));
        assertEquals(1, s.counter("Firmware.dc_reconnects"));
    }

    /**
     * A full handshake waits a round trip for the connect's ACK before data; a half handshake does not. Same bytes
     * either way.
     */
    @Test
    void fullHandshakeCostsARoundTrip() {
        long[] took = new long[2];
        for (int mode = 0; mode < 2; mode++) {
            String handshake = mode == 0 ? "\"half\"" : "\"full\"";
            Setup s = new Setup(Profiles.load("cx-gen3x16").with("dc.handshake", handshake), Faults.NONE, 1, 1, 0);
            Target t = s.targets.get(0);
            s.buf.write(0, pattern(3, 8));
            long t0 = s.w.now();
            s.dcis.get(0).postSend(s.write(t, KEY, 1, 0, 8));
            assertOk(s.await(s.cq, 1), 1);
            took[mode] = s.w.now() - t0;
            assertArrayEquals(pattern(3, 8), t.buf.read(0, 8));
        }
        // the connect and its ACK each cross the switch
        long switchTwice = 2 * Profiles.load("cx-gen3x16").picos("switch.latency");
        assertTrue(took[1] >= took[0] + switchTwice,
                "full " + took[1] + " ps vs half " + took[0] + " ps: at least a round trip more");
    }

    /** Over a fabric that drops, duplicates and reorders, requests to two targets all complete, byte for byte. */
    @Test
    void lossyFabric() {
        Setup s = new Setup(Profiles.load("cx-gen3x16"), Faults.parse("drop=0.03,dup=0.01,reorder=0.02"), 2, 2, 0);
        int n = 40;
        for (int i = 0; i < n; i++) {
            Target t = s.targets.get(i / 3 % 2);
            QueuePair dci = s.dcis.get(i % 2);
            s.buf.write((long) i * 4096, pattern(i, 3000));
            dci.postSend(s.write(t, KEY, i, (long) i * 4096, 3000));
        }
        assertOk(s.await(s.cq, n), n);
        for (int i = 0; i < n; i++)
            assertArrayEquals(pattern(i, 3000), s.targets.get(i / 3 % 2).buf.read((long) i * 4096, 3000), "write " + i);
        assertTrue(s.counter("Firmware.retransmits") > 0, "the faults were felt");
    }

    /** What the verbs library refuses, with EINVAL and nothing posted. */
    @Test
    void misuseIsRefused() {
        Setup s = new Setup(1, 1);
        Target t = s.targets.get(0);
        QueuePair dci = s.dcis.get(0);
        Sge eight = new Sge(s.buf.addr(), 8, s.mr.lkey());
        VerbsException e = assertThrows(VerbsException.class,
                () -> dci.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sgList(eight)));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("dcAddr"), e.getMessage());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> dci.postRecv(new RecvWr().sgList(eight))).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> t.dct.postSend(s.to(t, KEY).sgList(eight))).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> s.pd.createQp(new QpInitAttr().qpType(QpType.DRIVER).sendCq(s.cq).recvCq(s.cq))).errno(),
                "DRIVER without a DC half");
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> t.pd.createQp(new QpInitAttr().qpType(QpType.DRIVER).dcType(DcType.DCT).recvCq(t.cq))).errno(),
                "a DCT without an SRQ");
        s.w.runFor(10_000_000);
        assertTrue(s.cq.poll(1).isEmpty(), "nothing was posted");
        assertEquals(0, s.counter("Firmware.dc_connects"));
    }

    /** The LANai profiles have no DC: creating a DC QP is refused by the adapter, naming it. */
    @Test
    void profileWithoutDcRefusesIt() {
        World w = new World(1, Profiles.load("lanai43"), 1, Faults.NONE);
        Context ctx = new Device(w.host(0)).open();
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue cq = ctx.createCq(16);
        VerbsException e = assertThrows(VerbsException.class,
                () -> pd.createQp(new QpInitAttr().qpType(QpType.DRIVER).dcType(DcType.DCI).sendCq(cq)));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("DC transport is not offered"), e.getMessage());
    }
}
