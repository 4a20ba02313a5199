package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Memory windows: BIND_MW, remote access through the window's rkey, LOCAL_INV and SEND_WITH_INV. */
class MemoryWindowTest {
    /** B binds a type-2 window over [4096, 8192) of its buffer; A writes through it. */
    private static int bind(Pair p, MemoryWindow mw, MemoryRegion mr, long off, long len, int access) {
        int rkey = mw.nextRkey();
        p.b.qp.postSend(new SendWr().wrId(90).sendFlags(SendFlags.SIGNALED)
                .bindMw(mw, rkey, mr, mr.addr() + off, len, access));
        WorkCompletion wc = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(WcOpcode.BIND_MW, wc.opcode());
        assertEquals(rkey, mw.rkey(), "the window took its new rkey");
        return rkey;
    }

    private static MemoryRegion bindable(Pair p) {
        return p.b.pd.regMr(p.b.buf, Connect.ALL_REMOTE | AccessFlags.MW_BIND);
    }

    private static WorkCompletion write(Pair p, long remoteAddr, int rkey, int len) {
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), len, p.a.mr.lkey())).remoteAddr(remoteAddr).rkey(rkey));
        return p.await(p.a.cq, 1).get(0);
    }

    @Test
    void aBoundWindowGrantsExactlyItsRange() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 16384).up(Mtu.MTU_1024);
        MemoryRegion mr = bindable(p);
        MemoryWindow mw = p.b.pd.allocMw(MwType.TYPE_2);
        int rkey = bind(p, mw, mr, 4096, 4096, AccessFlags.REMOTE_WRITE);
        byte[] data = new byte[100];
        Arrays.fill(data, (byte) 7);
        p.a.buf.write(0, data);
        assertEquals(WcStatus.SUCCESS, write(p, p.b.buf.addr() + 5000, rkey, 100).status());
        assertArrayEquals(data, p.b.buf.read(5000, 100));
        WorkCompletion outside = write(p, p.b.buf.addr() + 8150, rkey, 100);
        assertEquals(WcStatus.REM_ACCESS_ERR, outside.status(), "past the window's end");
    }

    @Test
    void aType1WindowRebindsInPlaceAndCannotBeInvalidated() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 16384).up(Mtu.MTU_1024);
        MemoryRegion mr = bindable(p);
        MemoryWindow mw = p.b.pd.allocMw(MwType.TYPE_1);
        int first = bind(p, mw, mr, 0, 4096, AccessFlags.REMOTE_WRITE);
        p.a.buf.write(0, new byte[]{1, 2, 3, 4});
        assertEquals(WcStatus.SUCCESS, write(p, p.b.buf.addr() + 16, first, 4).status());
        // a type-1 window is VALID from allocation and rebinds while bound (a type-2 one must be FREE first)
        int second = bind(p, mw, mr, 8192, 4096, AccessFlags.REMOTE_WRITE);
        assertNotEquals(first, second);
        assertEquals(WcStatus.SUCCESS, write(p, p.b.buf.addr() + 8192, second, 4).status());
        assertArrayEquals(new byte[]{1, 2, 3, 4}, p.b.buf.read(8192, 4));
        p.b.qp.postSend(new SendWr().wrId(92).opcode(WrOpcode.LOCAL_INV).invalidateRkey(second)
                .sendFlags(SendFlags.SIGNALED));
        WorkCompletion inv = p.await(p.b.cq, 1).get(0);
        assertNotEquals(WcStatus.SUCCESS, inv.status(), inv.toString());
        assertTrue(inv.syndrome().contains("type-1"), inv.syndrome());
    }

    @Test
    void aZeroBasedType1BindIsMwBindErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 16384).up(Mtu.MTU_1024);
        MemoryWindow mw = p.b.pd.allocMw(MwType.TYPE_1);
        p.b.qp.postSend(new SendWr().wrId(93).sendFlags(SendFlags.SIGNALED).bindMw(mw, mw.nextRkey(), bindable(p),
                p.b.buf.addr(), 4096, AccessFlags.REMOTE_WRITE | AccessFlags.ZERO_BASED));
        WorkCompletion wc = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.MW_BIND_ERR, wc.status(), wc.toString());
        assertTrue(wc.syndrome().contains("zero-based"), wc.syndrome());
    }

    @Test
    void localInvalidateRevokesTheWindow() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 16384).up(Mtu.MTU_1024);
        MemoryWindow mw = p.b.pd.allocMw(MwType.TYPE_2);
        int rkey = bind(p, mw, bindable(p), 0, 8192, AccessFlags.REMOTE_WRITE);
        p.b.qp.postSend(new SendWr().wrId(91).opcode(WrOpcode.LOCAL_INV).invalidateRkey(rkey)
                .sendFlags(SendFlags.SIGNALED));
        WorkCompletion inv = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, inv.status(), inv.toString());
        assertEquals(WcOpcode.LOCAL_INV, inv.opcode());
        assertEquals(WcStatus.REM_ACCESS_ERR, write(p, p.b.buf.addr(), rkey, 8).status());
    }

    @Test
    void sendWithInvalidateRevokesItAtTheResponder() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 16384).up(Mtu.MTU_1024);
        MemoryWindow mw = p.b.pd.allocMw(MwType.TYPE_2);
        int rkey = bind(p, mw, bindable(p), 0, 8192, AccessFlags.REMOTE_WRITE);
        p.b.qp.postRecv(new RecvWr().wrId(5).sgList(new Sge(p.b.buf.addr() + 12000, 64, p.b.mr.lkey())));
        p.a.qp.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND_WITH_INV).invalidateRkey(rkey)
                .sendFlags(SendFlags.SIGNALED).sgList(new Sge(p.a.buf.addr(), 16, p.a.mr.lkey())));
        WorkCompletion r = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        assertEquals(WcFlags.WITH_INV, r.wcFlags() & WcFlags.WITH_INV);
        assertEquals(rkey, r.immData(), "the invalidated rkey is reported");
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
        assertEquals(WcStatus.REM_ACCESS_ERR, write(p, p.b.buf.addr(), rkey, 8).status());
    }

    @Test
    void bindingOverAnMrWithoutMwBindIsMwBindErr() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 16384).up(Mtu.MTU_1024);
        MemoryWindow mw = p.b.pd.allocMw(MwType.TYPE_2);
        p.b.qp.postSend(new SendWr().wrId(3).sendFlags(SendFlags.SIGNALED)
                .bindMw(mw, mw.nextRkey(), p.b.mr, p.b.mr.addr(), 64, AccessFlags.REMOTE_READ));
        WorkCompletion wc = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.MW_BIND_ERR, wc.status(), wc.toString());
        assertTrue(wc.syndrome().contains("MW_BIND"), wc.syndrome());
        assertEquals(QpState.ERR, p.b.qp.query().qpState());
    }

    @Test
    void anMrWithABoundWindowCannotBeDeregistered() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 16384).up(Mtu.MTU_1024);
        MemoryRegion mr = bindable(p);
        bind(p, p.b.pd.allocMw(MwType.TYPE_2), mr, 0, 64, AccessFlags.REMOTE_READ);
        VerbsException e = assertThrows(VerbsException.class, mr::close);
        assertEquals(Errno.EBUSY, e.errno());
        List<WorkCompletion> none = p.a.cq.poll(1);
        assertTrue(none.isEmpty());
    }
}
