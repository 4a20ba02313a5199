package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** ibv_rereg_mr from Java: a region takes new access, translation or PD and keeps its keys, as on a ConnectX. */
class ReregTest {
    private static WcStatus write(Pair p, long to, int rkey) {
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey())).remoteAddr(to).rkey(rkey));
        return p.await(p.a.cq, 1).get(0).status();
    }

    @Test
    void aRegionChangesAccessAndTranslationUnderTheSameKey() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16).up(Mtu.MTU_1024);
        MemoryRegion mr = p.b.pd.regMr(p.b.buf.addr(), 4096, AccessFlags.LOCAL_WRITE);
        int rkey = mr.rkey();
        p.a.buf.write(0, new byte[]{7, 7, 7, 7});
        assertEquals(WcStatus.REM_ACCESS_ERR, write(p, p.b.buf.addr(), rkey), "no remote write yet");
        Pair fresh = new Pair("cx-gen3x16", QpType.RC, 1 << 16).up(Mtu.MTU_1024);
        MemoryRegion r = fresh.b.pd.regMr(fresh.b.buf.addr(), 4096, AccessFlags.LOCAL_WRITE);
        r.rereg(MemoryRegion.REREG_CHANGE_ACCESS, null, 0, 0, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        fresh.a.buf.write(0, new byte[]{7, 7, 7, 7});
        assertEquals(WcStatus.SUCCESS, write(fresh, fresh.b.buf.addr() + 100, r.rkey()));
        assertEquals(7, fresh.b.buf.read(100, 1)[0]);
        int key = r.rkey();
        r.rereg(MemoryRegion.REREG_CHANGE_TRANSLATION, null, fresh.b.buf.addr() + 8192, 4096, 0);
        assertEquals(key, r.rkey(), "the key stays");
        assertEquals(fresh.b.buf.addr() + 8192, r.addr());
        assertEquals(WcStatus.SUCCESS, write(fresh, fresh.b.buf.addr() + 8192, key),
                "the new translation takes the WRITE");
        assertEquals(7, fresh.b.buf.read(8192, 1)[0]);
        VerbsException e = assertThrows(VerbsException.class,
                () -> r.rereg(MemoryRegion.REREG_CHANGE_ACCESS, null, 0, 0, AccessFlags.REMOTE_WRITE));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals(WcStatus.SUCCESS, write(fresh, fresh.b.buf.addr() + 8192, key),
                "a refused change leaves the region as it was");
        ProtectionDomain other = fresh.b.ctx.allocPd();
        r.rereg(MemoryRegion.REREG_CHANGE_PD, other, 0, 0, 0);
        assertSame(other, r.pd());
        assertTrue(other.hasChildren(), "the region is the other PD's now");
    }
}
