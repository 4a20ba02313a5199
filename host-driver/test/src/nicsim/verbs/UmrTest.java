package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import nicsim.abi.ServiceType;
import nicsim.abi.WqeFormat;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * Indirect mkeys (UMR, docs/sources.md#umr): a list of pieces or an interleaved layout made one
 * zero-based region by a work request, walked by the MttWalker piece by piece; used locally (lkey in
 * an SGE) and remotely (rkey), byte for byte; each failure names its check and the piece.
 */
class UmrTest {
    static final class Pair {
        final World w = new World(2, Profiles.load("cx-gen3x16"), 5, Faults.NONE);
        final Context ca = new Device(w.host(0)).open(), cb = new Device(w.host(1)).open();
        final ProtectionDomain apd = ca.allocPd(), bpd = cb.allocPd();
        final CompletionQueue acq = ca.createCq(64), bcq = cb.createCq(64);
        final QueuePair a = apd.createQp(new QpInitAttr().sendCq(acq).recvCq(acq).maxSendWr(16).maxRecvWr(16));
        final QueuePair b = bpd.createQp(new QpInitAttr().sendCq(bcq).recvCq(bcq).maxSendWr(16).maxRecvWr(16));

        Pair() {
            Connect.up(a, Connect.ALL_REMOTE, Connect.Dest.of(cb, b, 3), Mtu.MTU_1024, 1);
            Connect.up(b, Connect.ALL_REMOTE, Connect.Dest.of(ca, a, 1), Mtu.MTU_1024, 3);
        }

        List<WorkCompletion> await(CompletionQueue cq, int n) {
            List<WorkCompletion> got = Completions.await(w, cq, n);
            assertEquals(n, got.size(), "completions");
            return got;
        }

        /** Posts {@code wr} on {@code qp} and returns its completion, which must be the UMR's. */
        WorkCompletion umr(QueuePair qp, CompletionQueue cq, SendWr wr) {
            qp.postSend(wr.sendFlags(SendFlags.SIGNALED));
            return await(cq, 1).get(0);
        }
    }

    static byte[] pattern(int seed, int len) {
        byte[] x = new byte[len];
        for (int i = 0; i < len; i++) x[i] = (byte) (seed * 13 + i * 7 + 3);
        return x;
    }

    /**
     * Three pieces of two MRs made one region: a remote WRITE and READ through its rkey, a SEND gathered through its
     * lkey.
     */
    @Test
    void listOfPiecesIsOneRegionLocallyAndRemotely() {
        Pair p = new Pair();
        HostBuffer x = new ProcessMemory(p.w.host(1)).alloc(16384), y = new ProcessMemory(p.w.host(1)).alloc(8192);
        MemoryRegion xm = p.bpd.regMr(x, Connect.ALL_REMOTE), ym = p.bpd.regMr(y, Connect.ALL_REMOTE);
        Mkey m = p.bpd.createIndirectMkey(4);
        // region: x[100, 5100) then y[3000, 6000) then x[9000, 9500): 8500 bytes
        WorkCompletion umr = p.umr(p.b, p.bcq, new SendWr().wrId(9).mrList(m, Connect.ALL_REMOTE,
                new Sge(x.addr() + 100, 5000, xm.lkey()), new Sge(y.addr() + 3000, 3000, ym.lkey()),
                new Sge(x.addr() + 9000, 500, xm.lkey())));
        assertEquals(WcStatus.SUCCESS, umr.status(), umr.toString());
        assertEquals(WcOpcode.DRIVER1, umr.opcode(), "MLX5DV_WC_UMR");
        HostBuffer src = new ProcessMemory(p.w.host(0)).alloc(16384);
        MemoryRegion sm = p.apd.regMr(src, Connect.ALL_REMOTE);
        byte[] data = pattern(1, 8500);
        src.write(0, data);
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE).remoteAddr(0).rkey(m.rkey())
                .sgList(new Sge(src.addr(), 8500, sm.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertArrayEquals(Arrays.copyOfRange(data, 0, 5000), x.read(100, 5000));
        assertArrayEquals(Arrays.copyOfRange(data, 5000, 8000), y.read(3000, 3000));
        assertArrayEquals(Arrays.copyOfRange(data, 8000, 8500), x.read(9000, 500));
        // READ 3000 bytes from the middle of the region (crossing from the first piece into the second)
        p.a.postSend(Wrs.signaled(2, WrOpcode.RDMA_READ).remoteAddr(4000).rkey(m.rkey())
                .sgList(new Sge(src.addr() + 10000, 3000, sm.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertArrayEquals(Arrays.copyOfRange(data, 4000, 7000), src.read(10000, 3000));
        // B SENDs the whole region gathered through the lkey; A receives it into one buffer
        p.a.postRecv(new RecvWr().wrId(7).sgList(new Sge(src.addr(), 8500, sm.lkey())));
        src.write(0, new byte[8500]);
        p.b.postSend(Wrs.signaled(3, WrOpcode.SEND).sgList(new Sge(0, 8500, m.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.bcq, 1).get(0).status());
        WorkCompletion got = p.await(p.acq, 1).get(0);
        assertEquals(8500, got.byteLen());
        assertArrayEquals(data, src.read(0, 8500));
        assertTrue(p.w.sim.counters().get("Firmware.umr_layouts") == 1);
    }

    /**
     * An interleaved layout is a matrix column: column 2 (16 bytes) of a 64-row matrix of 80-byte
     * rows. A SEND gathers the column through the mkey; the receiver scatters it into a column of
     * its own matrix through another. Every other byte of both matrices is untouched.
     */
    @Test
    void interleavedLayoutGathersAndScattersAColumn() {
        Pair p = new Pair();
        int rows = 64, rowBytes = 80, col = 32, colBytes = 16;
        HostBuffer ma = new ProcessMemory(p.w.host(0)).alloc(rows * rowBytes),
                mb = new ProcessMemory(p.w.host(1)).alloc(rows * rowBytes);
        MemoryRegion mam = p.apd.regMr(ma, Connect.ALL_REMOTE), mbm = p.bpd.regMr(mb, Connect.ALL_REMOTE);
        byte[] matrix = pattern(2, rows * rowBytes);
        ma.write(0, matrix);
        Mkey ka = p.apd.createIndirectMkey(2), kb = p.bpd.createIndirectMkey(2);
        assertEquals(WcStatus.SUCCESS, p.umr(p.a, p.acq, new SendWr().mrInterleaved(ka, AccessFlags.LOCAL_WRITE, rows,
                new MrInterleaved(ma.addr() + col, colBytes, rowBytes - colBytes, mam.lkey()))).status());
        assertEquals(WcStatus.SUCCESS, p.umr(p.b, p.bcq, new SendWr().mrInterleaved(kb, AccessFlags.LOCAL_WRITE, rows,
                new MrInterleaved(mb.addr() + col, colBytes, rowBytes - colBytes, mbm.lkey()))).status());
        p.b.postRecv(new RecvWr().wrId(5).sgList(new Sge(0, rows * colBytes, kb.lkey())));
        p.a.postSend(Wrs.signaled(6, WrOpcode.SEND).sgList(new Sge(0, rows * colBytes, ka.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        WorkCompletion r = p.await(p.bcq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        assertEquals(rows * colBytes, r.byteLen());
        byte[] after = mb.read(0, rows * rowBytes);
        for (int row = 0; row < rows; row++)
            for (int c = 0; c < rowBytes; c++) {
                int at = row * rowBytes + c;
                byte want = c >= col && c < col + colBytes ? matrix[at] : 0;
                assertEquals(want, after[at], "row " + row + " byte " + c);
            }
    }

    /** A raw layout UMR (opmod 2) of {@code m} on B's QP: start and length given, as the kernel's IB_WR_REG_MR is. */
    static WorkCompletion umrAt(Pair p, Mkey m, long start, long length, WqeFormat.Klm... entries) {
        byte[] wqe = WqeFormat.encode(WqeFormat.SendWqe.layout(0, p.b.qpNum(), WqeFormat.CQ_UPDATE, m.lkey(),
                new WqeFormat.MkeyLayout(Connect.ALL_REMOTE, 0, List.of(entries), start, length)), ServiceType.RC);
        p.b.postRawWqe(9, wqe);
        return p.await(p.bcq, 1).get(0);
    }

    /** A WRITE of {@code len} bytes by A at {@code va} under {@code rkey}: its status. */
    static WcStatus write(Pair p, HostBuffer src, MemoryRegion sm, int rkey, long va, int len) {
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE).remoteAddr(va)
                .rkey(rkey).sgList(new Sge(src.addr(), len, sm.lkey())));
        return p.await(p.acq, 1).get(0).status();
    }

    /**
     * A layout with a start address (xprtrdma's iova: an xid in the top 32 bits): VA v is byte
     * v - start of the pieces; a WRITE a byte below start, or a byte past the length (shorter than the
     * pieces), is refused; a length past the pieces fails the UMR.
     */
    @Test
    void layoutWithAStartAddressAnswersFromStartToLength() {
        long start = 0xa5a5_0001_0000_0200L;
        int length = 6000;
        // the bytes moved, then each refusal on a pair of its own (it leaves both QPs in error): VA and length of a
        // WRITE, or -1 for a UMR whose length is past its pieces
        for (long[] out : new long[][] {{0, 0}, {start - 1, 1}, {start + length - 19, 20}, {0, 8}, {-1, -1}}) {
            Pair p = new Pair();
            HostBuffer x = new ProcessMemory(p.w.host(1)).alloc(16384);
            HostBuffer src = new ProcessMemory(p.w.host(0)).alloc(8192);
            MemoryRegion xm = p.bpd.regMr(x, Connect.ALL_REMOTE), sm = p.apd.regMr(src, Connect.ALL_REMOTE);
            Mkey m = p.bpd.createIndirectMkey(2);
            if (out[1] < 0) {
                WorkCompletion bad = umrAt(p, m, start, 6501, new WqeFormat.Klm(x.addr() + 100, 5000, xm.lkey(), 0),
                        new WqeFormat.Klm(x.addr() + 9000, 1500, xm.lkey(), 0));
                assertEquals(WcStatus.MW_BIND_ERR, bad.status(), bad.toString());
                assertTrue(bad.toString().contains("length past its entries"), bad.toString());
                continue;
            }
            // x[100, 5100) then x[9000, 10500): 6500 bytes of pieces, of which the key covers 6000
            WorkCompletion umr = umrAt(p, m, start, length, new WqeFormat.Klm(x.addr() + 100, 5000, xm.lkey(), 0),
                    new WqeFormat.Klm(x.addr() + 9000, 1500, xm.lkey(), 0));
            assertEquals(WcStatus.SUCCESS, umr.status(), umr.toString());
            if (out[1] != 0) { // below start, past the length, or at VA 0 (the key is not zero based)
                assertEquals(WcStatus.REM_ACCESS_ERR, write(p, src, sm, m.rkey(), out[0], (int) out[1]), "WRITE at 0x"
                        + Long.toHexString(out[0]));
                assertArrayEquals(new byte[16384], x.read(0, 16384), "nothing written");
                continue;
            }
            byte[] data = pattern(5, length);
            src.write(0, data);
            assertEquals(WcStatus.SUCCESS, write(p, src, sm, m.rkey(), start, length));
            assertArrayEquals(Arrays.copyOfRange(data, 0, 5000), x.read(100, 5000));
            assertArrayEquals(Arrays.copyOfRange(data, 5000, 6000), x.read(9000, 1000));
            assertArrayEquals(new byte[500], x.read(10000, 500), "the pieces' bytes past the key's length");
            // a READ of the last 100 bytes, by their VA
            p.a.postSend(Wrs.signaled(2, WrOpcode.RDMA_READ)
                    .remoteAddr(start + 5900).rkey(m.rkey()).sgList(new Sge(src.addr() + 7000, 100, sm.lkey())));
            assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
            assertArrayEquals(Arrays.copyOfRange(data, 5900, 6000), src.read(7000, 100));
        }
    }

    /** Failures: a piece without the right, a UMR on a key in use, invalidate and lay out again, an mkey too small. */
    @Test
    void failuresNameTheCheckAndThePiece() {
        Pair p = new Pair();
        HostBuffer x = new ProcessMemory(p.w.host(1)).alloc(8192);
        MemoryRegion rw = p.bpd.regMr(x.addr(), 4096, Connect.ALL_REMOTE);
        MemoryRegion ro = p.bpd.regMr(x.addr() + 4096, 4096, AccessFlags.LOCAL_WRITE);
        Mkey m = p.bpd.createIndirectMkey(3);
        assertEquals(WcStatus.SUCCESS, p.umr(p.b, p.bcq, new SendWr().mrList(m, Connect.ALL_REMOTE,
                new Sge(x.addr(), 4096, rw.lkey()), new Sge(x.addr() + 4096, 4096, ro.lkey()))).status());
        // a remote WRITE into the second piece, whose MR has no REMOTE_WRITE: NAK remote access
        HostBuffer src = new ProcessMemory(p.w.host(0)).alloc(8192);
        MemoryRegion sm = p.apd.regMr(src, Connect.ALL_REMOTE);
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE).remoteAddr(4000).rkey(m.rkey())
                .sgList(new Sge(src.addr(), 200, sm.lkey())));
        assertEquals(WcStatus.REM_ACCESS_ERR, p.await(p.acq, 1).get(0).status());
        // locally: a piece fails its access check, and the error completion names the piece
        Pair q = new Pair();
        HostBuffer y = new ProcessMemory(q.w.host(0)).alloc(8192);
        MemoryRegion a1 = q.apd.regMr(y.addr(), 4096, Connect.ALL_REMOTE), a2 = q.apd.regMr(y.addr() + 4096, 4096, 0);
        Mkey k = q.apd.createIndirectMkey(2);
        assertEquals(WcStatus.SUCCESS, q.umr(q.a, q.acq, new SendWr().mrList(k, Connect.ALL_REMOTE,
                new Sge(y.addr(), 4096, a1.lkey()), new Sge(y.addr() + 4096, 4096, a2.lkey()))).status());
        HostBuffer dst = new ProcessMemory(q.w.host(1)).alloc(8192);
        MemoryRegion dm = q.bpd.regMr(dst, Connect.ALL_REMOTE);
        dst.write(0, pattern(3, 8192));
        // a READ into the region: its second piece's MR lacks LOCAL_WRITE
        q.a.postSend(Wrs.signaled(2, WrOpcode.RDMA_READ).remoteAddr(dst.addr()).rkey(dm.rkey())
                .sgList(new Sge(0, 8192, k.lkey())));
        WorkCompletion bad = q.await(q.acq, 1).get(0);
        assertEquals(WcStatus.LOC_PROT_ERR, bad.status(), bad.toString());
        assertTrue(bad.toString().contains("access rights missing in entry 1 of the indirect mkey"), bad.toString());

        // a UMR on an mkey already laid out is refused until it is invalidated
        Pair r = new Pair();
        HostBuffer z = new ProcessMemory(r.w.host(0)).alloc(4096);
        MemoryRegion zm = r.apd.regMr(z, Connect.ALL_REMOTE);
        Mkey n = r.apd.createIndirectMkey(2);
        assertEquals(WcStatus.SUCCESS, r.umr(r.a, r.acq, new SendWr().mrList(n, AccessFlags.LOCAL_WRITE,
                new Sge(z.addr(), 100, zm.lkey()))).status());
        WorkCompletion again = r.umr(r.a, r.acq, new SendWr().mrList(n, AccessFlags.LOCAL_WRITE,
                new Sge(z.addr(), 200, zm.lkey())));
        assertEquals(WcStatus.MW_BIND_ERR, again.status());
        assertTrue(again.toString().contains("invalidate it"), again.toString());
    }

    /**
     * LOCAL_INV frees the key for a new layout; the post-time checks refuse what mlx5dv refuses; LANai has no indirect
     * mkeys.
     */
    @Test
    void invalidateThenRelayoutAndRefusals() {
        Pair p = new Pair();
        HostBuffer z = new ProcessMemory(p.w.host(0)).alloc(4096);
        MemoryRegion zm = p.apd.regMr(z, Connect.ALL_REMOTE);
        z.write(0, pattern(4, 4096));
        Mkey n = p.apd.createIndirectMkey(2);
        assertEquals(WcStatus.SUCCESS, p.umr(p.a, p.acq, new SendWr().mrList(n, AccessFlags.LOCAL_WRITE,
                new Sge(z.addr(), 100, zm.lkey()))).status());
        p.a.postSend(new SendWr().wrId(4).opcode(WrOpcode.LOCAL_INV).invalidateRkey(n.lkey())
                .sendFlags(SendFlags.SIGNALED));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertEquals(WcStatus.SUCCESS, p.umr(p.a, p.acq, new SendWr().mrList(n, AccessFlags.LOCAL_WRITE,
                new Sge(z.addr() + 1000, 50, zm.lkey()), new Sge(z.addr() + 10, 50, zm.lkey()))).status());
        // the new layout: a SEND of the region's 100 bytes to B
        HostBuffer in = new ProcessMemory(p.w.host(1)).alloc(4096);
        MemoryRegion im = p.bpd.regMr(in, Connect.ALL_REMOTE);
        p.b.postRecv(new RecvWr().wrId(1).sgList(new Sge(in.addr(), 4096, im.lkey())));
        p.a.postSend(Wrs.signaled(5, WrOpcode.SEND).sgList(new Sge(0, 100, n.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertEquals(100, p.await(p.bcq, 1).get(0).byteLen());
        byte[] want = new byte[100];
        System.arraycopy(pattern(4, 4096), 1000, want, 0, 50);
        System.arraycopy(pattern(4, 4096), 10, want, 50, 50);
        assertArrayEquals(want, in.read(0, 100));
        // refused at post, the queue as it was: too many entries (interleaved takes one more), a UD QP
        VerbsException e = assertThrows(VerbsException.class, () -> p.a.postSend(new SendWr().mrInterleaved(n, 0, 4,
                new MrInterleaved(z.addr(), 8, 8, zm.lkey()), new MrInterleaved(z.addr() + 8, 8, 8, zm.lkey()))));
        assertEquals(Errno.ENOMEM, e.errno());
        assertTrue(e.getMessage().contains("repeat block"), e.getMessage());
        // more entries than one WQE holds: refused when posted, and the request before it in the list still goes
        Mkey big = p.apd.createIndirectMkey(100);
        Sge[] many = new Sge[62];
        for (int k = 0; k < many.length; k++) many[k] = new Sge(z.addr() + k, 1, zm.lkey());
        VerbsException tooMany = assertThrows(VerbsException.class, () -> p.a.postSend(
                new SendWr().wrId(8).opcode(WrOpcode.LOCAL_INV).invalidateRkey(n.lkey()).sendFlags(SendFlags.SIGNALED),
                new SendWr().mrList(big, AccessFlags.LOCAL_WRITE, many)));
        assertEquals(Errno.ENOMEM, tooMany.errno());
        assertEquals(1, tooMany.badWrIndex(), "the second request");
        assertTrue(tooMany.getMessage().contains("at most 61"), tooMany.getMessage());
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status(), "the first one was posted and ran");
        // a profile without indirect mkeys
        World lanai = new World(1, Profiles.load("lanai72"), 1, Faults.NONE);
        ProtectionDomain lpd = new Device(lanai.host(0)).open().allocPd();
        assertEquals(Errno.EOPNOTSUPP, assertThrows(VerbsException.class, () -> lpd.createIndirectMkey(4)).errno());
    }
}
