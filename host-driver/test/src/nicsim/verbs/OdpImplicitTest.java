package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.fabric.Faults;
import org.junit.jupiter.api.Test;

/**
 * Implicit on-demand paging (ibv_reg_mr of the whole address space with IBV_ACCESS_ON_DEMAND): one
 * key reaches any buffer; each 2 MB page the adapter touches faults once and is named to the
 * driver's handler by its address, which maps it; a page nothing is mapped at fails the access.
 */
class OdpImplicitTest {
    /** Two buffers far apart, written and sent through one implicit rkey and one implicit lkey. */
    @Test
    void oneKeyReachesBuffersAnywhereAndEachPageFaultsOnce() {
        OdpTest.Pair p = new OdpTest.Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMrImplicit(AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND);
        MemoryRegion dst = p.bpd.regMrImplicit(Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        assertTrue(dst.implicit());
        assertEquals(MemoryRegion.IMPLICIT_LENGTH, dst.length());
        HostBuffer far = new ProcessMemory(p.w.host(1)).alloc(3 << 21); // a buffer in other 2 MB pages
        long farAt = far.addr() + (2 << 21) + 100;
        p.abuf.write(0, OdpTest.pattern(5, 8192));
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .remoteAddr(p.bbuf.addr())
                .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr(), 8192, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        p.a.postSend(Wrs.signaled(2, WrOpcode.RDMA_WRITE)
                .remoteAddr(farAt)
                .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr() + 4096, 4096, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertArrayEquals(OdpTest.pattern(5, 8192), p.bbuf.read(0, 8192), "the first buffer, byte for byte");
        byte[] tail = new byte[4096];
        System.arraycopy(OdpTest.pattern(5, 8192), 4096, tail, 0, 4096);
        assertArrayEquals(tail, far.read(farAt - far.addr(), 4096), "the far one too");
        long faults = p.counter("Firmware.odp_page_faults");
        assertTrue(faults >= 3, "the source's page, and each destination page, faulted: " + faults);
        p.a.postSend(Wrs.signaled(3, WrOpcode.RDMA_WRITE)
                .remoteAddr(farAt + 8)
                .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr(), 64, src.lkey())));
        assertEquals(WcStatus.SUCCESS, p.await(p.acq, 1).get(0).status());
        assertEquals(faults, p.counter("Firmware.odp_page_faults"), "pages touched before are in: no new fault");
    }

    /** A WRITE to an address where nothing is mapped: the responder's page fault finds nothing, the access fails. */
    @Test
    void aPageNothingIsMappedAtFailsTheAccess() {
        OdpTest.Pair p = new OdpTest.Pair(Faults.NONE);
        MemoryRegion src = p.apd.regMr(p.abuf, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = p.bpd.regMrImplicit(Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        p.a.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .remoteAddr(0x1000_0000L)
                .rkey(dst.rkey()).sgList(new Sge(p.abuf.addr(), 64, src.lkey())));
        WorkCompletion c = p.await(p.acq, 1).get(0);
        assertEquals(WcStatus.REM_ACCESS_ERR, c.status(), c.toString());
        assertTrue(p.bpd.ctx.driver.implicitMisses() >= 1, "the handler found nothing mapped there");
    }

    @Test
    void withoutOnDemandItIsEinvalAndReregIsRefused() {
        OdpTest.Pair p = new OdpTest.Pair(Faults.NONE);
        VerbsException e = assertThrows(VerbsException.class, () -> p.bpd.regMrImplicit(AccessFlags.LOCAL_WRITE));
        assertEquals(Errno.EINVAL, e.errno());
        MemoryRegion mr = p.bpd.regMrImplicit(AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND);
        e = assertThrows(VerbsException.class, () -> mr.rereg(MemoryRegion.REREG_CHANGE_ACCESS, null, 0, 0,
                AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue((p.bpd.ctx.queryDevice().odpCaps().generalCaps() & OdpCaps.SUPPORT_IMPLICIT) != 0);
        mr.close();
    }
}
