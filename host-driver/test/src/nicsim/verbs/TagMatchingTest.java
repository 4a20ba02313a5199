package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * Tag matching (docs/sources.md#tag-matching): an RC QP on node 1 takes its receives from a
 * tag-matching SRQ; node 0 SENDs tagged messages. The adapter matches each EAGER message's tag
 * against the SRQ's list in posting order and places the payload without its header in the
 * tagged buffer; what no tag takes goes whole to an ordinary buffer, for software.
 */
class TagMatchingTest {
    static final int SLOT = 8192;

    static final class Setup {
        final World w;
        final QueuePair tx, rx;
        final CompletionQueue txCq, tmCq;
        final SharedReceiveQueue srq;
        final HostBuffer out, in;
        final MemoryRegion outMr, inMr;

        Setup(Faults faults, int maxTags) {
            w = new World(2, Profiles.load("cx-gen3x16"), 3, faults);
            Context a = new Device(w.host(0)).open(), b = new Device(w.host(1)).open();
            ProtectionDomain pa = a.allocPd(), pb = b.allocPd();
            txCq = a.createCq(256);
            tmCq = b.createCq(256);
            CompletionQueue rxCq = b.createCq(16);
            srq = pb.createSrq(new SrqInitAttr().srqType(SrqType.TM).tmMaxNumTags(maxTags).tmMaxOps(8).cq(tmCq)
                    .maxWr(16).maxSge(1));
            tx = pa.createQp(new QpInitAttr().sendCq(txCq).recvCq(txCq).maxSendWr(64).maxInlineData(64));
            rx = pb.createQp(new QpInitAttr().sendCq(rxCq).recvCq(rxCq).srq(srq));
            Connect.up(tx, Connect.ALL_REMOTE, Connect.Dest.of(b, rx, 50), Mtu.MTU_1024, 10);
            Connect.up(rx, Connect.ALL_REMOTE, Connect.Dest.of(a, tx, 10), Mtu.MTU_1024, 50);
            out = new ProcessMemory(w.host(0)).alloc(SLOT * 16L);
            in = new ProcessMemory(w.host(1)).alloc(SLOT * 32L);
            outMr = pa.regMr(out, Connect.ALL_REMOTE);
            inMr = pb.regMr(in, Connect.ALL_REMOTE);
        }

        Setup() { this(Faults.NONE, 64); }

        /** Posts ordinary (unexpected-message) buffers 16..16+n. */
        void ordinary(int n) {
            for (int i = 0; i < n; i++) {
                long at = in.addr() + (long) SLOT * (16 + i);
                srq.postRecv(new RecvWr().wrId(1000 + i).sgList(new Sge(at, SLOT, inMr.lkey())));
            }
        }

        /** A tagged buffer in slot {@code slot} for {@code tag} under {@code mask}; returns the op (its handle set). */
        OpsWr add(int slot, long tag, long mask, int unexpectedCnt) {
            OpsWr op = new OpsWr().wrId(500 + slot).opcode(OpsWrOpcode.TAG_ADD).flags(OpsWr.SIGNALED).recvWrId(slot)
                    .tag(tag).mask(mask)
                    .unexpectedCnt(unexpectedCnt).sgList(new Sge(in.addr() + (long) SLOT * slot, SLOT, inMr.lkey()));
            srq.postSrqOps(op);
            return op;
        }

        /** SENDs {@code header} followed by {@code body} from out-slot {@code slot}. */
        void send(int slot, byte[] header, byte[] body) {
            byte[] msg = new byte[header.length + body.length];
            System.arraycopy(header, 0, msg, 0, header.length);
            System.arraycopy(body, 0, msg, header.length, body.length);
            out.write((long) SLOT * slot, msg);
            tx.postSend(Wrs.signaled(slot, WrOpcode.SEND)
                    .sgList(new Sge(out.addr() + (long) SLOT * slot, msg.length, outMr.lkey())));
        }

        List<WorkCompletion> await(CompletionQueue cq, int n) {
            return Completions.await(w, cq, n);
        }

        long counter(String name) { return w.sim.counters().get(name); }
    }

    static byte[] body(int seed, int len) {
        byte[] b = new byte[len];
        for (int k = 0; k < len; k++) b[k] = (byte) (seed * 29 + k * 3 + 5);
        return b;
    }

    @Test
    void eagerMessagesTakeTaggedBuffersInPostingOrder() {
        Setup s = new Setup();
        s.ordinary(2);
        s.add(0, 5, -1L, 0);
        s.add(1, 5, -1L, 0);
        s.add(2, 0x100, 0xF00, 0);
        List<WorkCompletion> adds = s.await(s.tmCq, 3);
        for (WorkCompletion wc : adds) {
            assertEquals(WcOpcode.TM_ADD, wc.opcode(), wc.toString());
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(0, wc.wcFlags() & WcFlags.TM_SYNC_REQ, "in sync");
        }
        s.send(0, TmInfo.pack(TmhOp.EAGER, 5, 0x11), body(0, 100));
        s.send(1, TmInfo.pack(TmhOp.EAGER, 5, 0x22), body(1, 200));
        s.send(2, TmInfo.pack(TmhOp.EAGER, 0x1AB, 0x33), body(2, 300));
        List<WorkCompletion> got = s.await(s.tmCq, 3);
        int[] lens = {100, 200, 300};
        long[] tags = {5, 5, 0x1AB};
        for (int i = 0; i < 3; i++) {
            WorkCompletion wc = got.get(i);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(WcOpcode.TM_RECV, wc.opcode());
            assertEquals(i, wc.wrId(), "the tagged buffer's recv_wr_id, in posting order");
            assertEquals(WcFlags.TM_MATCH | WcFlags.TM_DATA_VALID, wc.wcFlags());
            assertEquals(lens[i], wc.byteLen(), "the payload, without the 16-byte header");
            assertEquals(tags[i], wc.tmTag());
            assertEquals(0x11 * (i + 1), wc.tmPriv());
            assertArrayEquals(body(i, lens[i]), s.in.read((long) SLOT * i, lens[i]),
                    "payload at the start of tagged buffer " + i);
        }
        assertEquals(3, s.counter("Firmware.tm_matched"));
        assertEquals(0, s.srq.taggedBuffers());
        assertTrue(s.tmCq.poll(1).isEmpty(), "the ordinary buffers were not used");
    }

    @Test
    void unexpectedAndUntaggedMessagesGoWholeToOrdinaryBuffers() {
        Setup s = new Setup();
        s.ordinary(3);
        byte[] eager = TmInfo.pack(TmhOp.EAGER, 9, 0x44), noTag = TmInfo.pack(TmhOp.NO_TAG, 0, 0);
        s.send(0, eager, body(0, 64));
        s.send(1, noTag, body(1, 32));
        List<WorkCompletion> got = s.await(s.tmCq, 2);
        // as mlx5 reports it: TM_RECV with neither MATCH nor DATA_VALID, and no tag (software reads the header)
        assertEquals(WcOpcode.TM_RECV, got.get(0).opcode(), "no tagged buffer: unexpected, for software");
        assertEquals(0, got.get(0).wcFlags() & (WcFlags.TM_MATCH | WcFlags.TM_DATA_VALID), got.get(0).toString());
        assertEquals(0, got.get(0).tmTag());
        assertEquals(1000, got.get(0).wrId());
        assertEquals(16 + 64, got.get(0).byteLen(), "the whole message, header included");
        assertArrayEquals(eager, s.in.read(SLOT * 16L, 16));
        assertArrayEquals(body(0, 64), s.in.read(SLOT * 16L + 16, 64));
        assertEquals(WcOpcode.TM_NO_TAG, got.get(1).opcode());
        assertEquals(1001, got.get(1).wrId());
        assertEquals(1, s.counter("Firmware.tm_unexpected"), "NO_TAG is not unexpected");
        // software has not yet reported the unexpected message: a tag it adds now is not matched by the adapter
        OpsWr stale = s.add(0, 9, -1L, 0);
        WorkCompletion add = s.await(s.tmCq, 1).get(0);
        assertEquals(WcFlags.TM_SYNC_REQ, add.wcFlags() & WcFlags.TM_SYNC_REQ, "the completion asks for a sync");
        s.send(2, eager, body(2, 64));
        WorkCompletion next = s.await(s.tmCq, 1).get(0);
        assertEquals(0, next.wcFlags() & WcFlags.TM_MATCH, "the stale tag did not take it: " + next);
        assertEquals(1002, next.wrId(), "an ordinary buffer did: " + next);
        // in sync again (two unexpected so far): a new tag is matched
        s.srq.postSrqOps(new OpsWr().wrId(77).opcode(OpsWrOpcode.TAG_DEL).flags(OpsWr.SIGNALED).handle(stale.handle())
                .unexpectedCnt(2));
        assertEquals(WcOpcode.TM_DEL, s.await(s.tmCq, 1).get(0).opcode());
        s.add(1, 9, -1L, 2);
        assertEquals(0, s.await(s.tmCq, 1).get(0).wcFlags() & WcFlags.TM_SYNC_REQ, "in sync");
        s.send(3, eager, body(3, 64));
        WorkCompletion m = s.await(s.tmCq, 1).get(0);
        assertEquals(WcOpcode.TM_RECV, m.opcode(), m.toString());
        assertEquals(1, m.wrId());
        assertArrayEquals(body(3, 64), s.in.read(SLOT, 64));
    }

    @Test
    void aLongMessageReportsTheMatchThenTheData() {
        Setup s = new Setup();
        s.add(4, 0xABCDEF, -1L, 0);
        s.await(s.tmCq, 1);
        s.send(0, TmInfo.pack(TmhOp.EAGER, 0xABCDEF, 7), body(9, 5000));
        List<WorkCompletion> got = s.await(s.tmCq, 2);
        assertEquals(WcFlags.TM_MATCH, got.get(0).wcFlags(), "the match first: " + got);
        assertEquals(4, got.get(0).wrId());
        assertEquals(WcFlags.TM_DATA_VALID, got.get(1).wcFlags(), "then the data: " + got);
        assertEquals(4, got.get(1).wrId());
        assertEquals(5000, got.get(1).byteLen());
        assertArrayEquals(body(9, 5000), s.in.read(SLOT * 4L, 5000));
    }

    @Test
    void deletingATakenBufferFailsWithTmErr() {
        Setup s = new Setup();
        s.ordinary(1);
        OpsWr a = s.add(0, 1, -1L, 0), b = s.add(1, 2, -1L, 0);
        s.await(s.tmCq, 2);
        s.send(0, TmInfo.pack(TmhOp.EAGER, 1, 0), body(0, 10));
        assertEquals(WcOpcode.TM_RECV, s.await(s.tmCq, 1).get(0).opcode());
        // a taken tag: fails, and completes though unsignaled; a deleted one, unsignaled: no completion
        s.srq.postSrqOps(new OpsWr().wrId(90).opcode(OpsWrOpcode.TAG_DEL).handle(a.handle()),
                new OpsWr().wrId(91).opcode(OpsWrOpcode.TAG_DEL).handle(b.handle()));
        List<WorkCompletion> got = s.await(s.tmCq, 1);
        assertEquals(WcStatus.TM_ERR, got.get(0).status(), got.toString());
        assertEquals(90, got.get(0).wrId());
        assertTrue(got.get(0).syndrome().contains("a message took the tagged buffer first"), got.get(0).syndrome());
        s.send(1, TmInfo.pack(TmhOp.EAGER, 2, 0), body(1, 10));
        WorkCompletion unexpected = s.await(s.tmCq, 1).get(0);
        assertEquals(WcOpcode.TM_RECV, unexpected.opcode(), "tag 2's buffer was deleted: unexpected");
        assertEquals(0, unexpected.wcFlags() & WcFlags.TM_MATCH, "tag 2's buffer was deleted: unexpected");
        assertTrue(s.tmCq.poll(1).isEmpty());
    }

    @Test
    void overALossyFabricEveryTaggedMessageLandsOnce() {
        Setup s = new Setup(Faults.parse("drop=0.03,dup=0.02,reorder=0.02"), 64);
        int n = 12;
        for (int i = 0; i < n; i++) {
            s.add(i, 100 + i, -1L, 0);
            s.await(s.tmCq, 1); // at most tmMaxOps signaled operations may be outstanding
        }
        for (int i = 0; i < n; i++) s.send(i, TmInfo.pack(TmhOp.EAGER, 100 + (n - 1 - i), i), body(i, 700 + 300 * i));
        int completions = 0; // a message of more than one packet completes twice: the match, then the data
        for (int i = 0; i < n; i++) completions += 16 + 700 + 300 * i > 1024 ? 2 : 1;
        List<WorkCompletion> got = new ArrayList<>();
        for (WorkCompletion wc : s.await(s.tmCq, completions))
            if ((wc.wcFlags() & WcFlags.TM_DATA_VALID) != 0) got.add(wc);
        assertEquals(n, got.size(), got.toString());
        for (int i = 0; i < n; i++) {
            int slot = n - 1 - i;
            assertArrayEquals(body(i, 700 + 300 * i), s.in.read((long) SLOT * slot, 700 + 300 * i),
                    "message " + i + " in buffer " + slot);
        }
        assertTrue(s.counter("Firmware.retransmits") > 0, "the faults were felt");
    }

    /**
     * Rendezvous: the sender SENDs only the headers naming its buffer; the adapter that matches the
     * tag READs the data into the tagged buffer itself and SENDs FIN back, which the sender receives.
     */
    @Test
    void rendezvousIsReadByTheAdapterAndFinished() { rendezvous(Faults.NONE); }

    @Test
    void rendezvousOverALossyFabric() { rendezvous(Faults.parse("drop=0.05,dup=0.02,reorder=0.02")); }

    void rendezvous(Faults faults) {
        Setup s = new Setup(faults, 64);
        // for the FIN
        s.tx.postRecv(new RecvWr().wrId(42).sgList(new Sge(s.out.addr() + SLOT * 15L, SLOT, s.outMr.lkey())));
        s.add(3, 0x77, -1L, 0);
        s.await(s.tmCq, 1);
        byte[] data = body(5, 6000);
        s.out.write(SLOT * 8L, data);
        byte[] rndv = TmInfo.pack(TmhOp.RNDV, 0x77, 0x99, s.out.addr() + SLOT * 8L, s.outMr.rkey(), data.length);
        s.send(0, rndv, new byte[0]);
        List<WorkCompletion> got = s.await(s.tmCq, 2);
        assertEquals(WcOpcode.TM_RECV, got.get(0).opcode(), got.toString());
        assertEquals(WcFlags.TM_MATCH, got.get(0).wcFlags(), "matched: " + got);
        assertEquals(3, got.get(0).wrId());
        assertEquals(0x77, got.get(0).tmTag());
        assertEquals(0x99, got.get(0).tmPriv());
        assertEquals(WcFlags.TM_DATA_VALID, got.get(1).wcFlags(), "then read: " + got);
        assertEquals(data.length, got.get(1).byteLen());
        assertArrayEquals(data, s.in.read(SLOT * 3L, data.length),
                "the adapter read the sender's buffer into the tagged one");
        List<WorkCompletion> sender = s.await(s.txCq, 2);
        WorkCompletion fin = sender.stream().filter(wc -> wc.wrId() == 42).findFirst()
                .orElseThrow(() -> new AssertionError(sender.toString()));
        assertEquals(WcOpcode.RECV, fin.opcode());
        assertEquals(32, fin.byteLen(), "FIN: the TMH and RVH again");
        byte[] finBytes = s.out.read(SLOT * 15L, 32);
        assertEquals(TmhOp.FIN.value(), finBytes[0]);
        assertArrayEquals(Arrays.copyOfRange(rndv, 1, 32), Arrays.copyOfRange(finBytes, 1, 32),
                "the request's headers, opcode FIN");
        assertEquals(1, s.counter("Firmware.tm_rendezvous"));
        assertEquals(0, s.counter("Firmware.cqes_lost"));
    }

    /**
     * A rendezvous whose RVH names a buffer the sender's rkey does not open: the tagged buffer completes
     * REM_ACCESS_ERR.
     */
    @Test
    void rendezvousWithABadRkeyFailsTheTaggedBuffer() {
        Setup s = new Setup();
        s.add(2, 0x66, -1L, 0);
        s.await(s.tmCq, 1);
        s.send(0, TmInfo.pack(TmhOp.RNDV, 0x66, 0, s.out.addr(), s.outMr.rkey() ^ 0x100, 4000), new byte[0]);
        List<WorkCompletion> got = s.await(s.tmCq, 2);
        assertEquals(WcFlags.TM_MATCH, got.get(0).wcFlags(), got.toString());
        assertEquals(WcStatus.REM_ACCESS_ERR, got.get(1).status(), got.toString());
        assertEquals(2, got.get(1).wrId(), "the tagged buffer's recv_wr_id");
        assertEquals(0, s.srq.taggedBuffers());
        assertEquals(0, got.get(1).tmTag(), "no tag on an error");
        assertEquals(QpState.ERR, s.rx.state(), "the READ's failure took the QP to ERR, as on RC");
    }

    /** A tagged buffer too small for the rendezvous data gets the headers, and software is told to finish it. */
    @Test
    void rendezvousIntoTooSmallABufferIsIncomplete() {
        Setup s = new Setup();
        OpsWr small = new OpsWr().wrId(1).opcode(OpsWrOpcode.TAG_ADD).flags(OpsWr.SIGNALED).recvWrId(6).tag(0x55)
                .mask(-1L)
                .sgList(new Sge(s.in.addr() + SLOT * 6L, 100, s.inMr.lkey()));
        s.srq.postSrqOps(small);
        s.await(s.tmCq, 1);
        byte[] rndv = TmInfo.pack(TmhOp.RNDV, 0x55, 1, s.out.addr(), s.outMr.rkey(), 5000);
        s.send(0, rndv, new byte[0]);
        WorkCompletion wc = s.await(s.tmCq, 1).get(0);
        assertEquals(WcStatus.TM_RNDV_INCOMPLETE, wc.status(), wc.toString());
        assertEquals(6, wc.wrId());
        assertTrue(wc.syndrome().contains("longer than the tagged buffer"), wc.syndrome());
        assertArrayEquals(Arrays.copyOf(rndv, 32), s.in.read(SLOT * 6L, 32), "the headers, for software");
        assertEquals(0, s.counter("Firmware.tm_rendezvous"));
        assertEquals(QpState.RTS, s.rx.state(), "nothing failed: software goes on");
    }

    @Test
    void misuseIsRefused() {
        Setup s = new Setup(Faults.NONE, 2);
        s.add(0, 1, -1L, 0);
        s.add(1, 2, -1L, 0);
        VerbsException full = assertThrows(VerbsException.class, () -> s.add(2, 3, -1L, 0));
        assertEquals(Errno.ENOMEM, full.errno(), full.getMessage());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> s.srq.postSrqOps(new OpsWr().opcode(OpsWrOpcode.TAG_ADD))).errno(), "TAG_ADD without a buffer");
        World lanai = new World(1, Profiles.load("lanai43"), 1, Faults.NONE);
        Context c = new Device(lanai.host(0)).open();
        ProtectionDomain pd = c.allocPd();
        CompletionQueue cq = c.createCq(4);
        VerbsException e = assertThrows(VerbsException.class,
                () -> pd.createSrq(new SrqInitAttr().srqType(SrqType.TM).tmMaxNumTags(4).tmMaxOps(4).cq(cq)
                        .maxWr(4).maxSge(1)));
        assertTrue(e.getMessage().contains("tag matching is not offered"), e.getMessage());
    }
}
