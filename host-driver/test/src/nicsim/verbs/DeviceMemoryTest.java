package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import nicsim.abi.HostOrder;
import org.junit.jupiter.api.Test;

/**
 * Device memory (ibv_alloc_dm, ibv_reg_dm_mr): the adapter's on-chip memory, written and read by
 * the host through BAR0 and reached by RDMA at SRAM timing: a READ of it skips the PCIe round trip
 * a READ of host memory pays at the responder.
 */
class DeviceMemoryTest {
    private static long readTime(Pair p, long remote, int rkey) {
        long t0 = p.world.now();
        p.a.qp.postSend(Wrs.signaled(9, WrOpcode.RDMA_READ)
                .sgList(new Sge(p.a.buf.addr() + 8192, 256, p.a.mr.lkey())).remoteAddr(remote).rkey(rkey));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
        return p.world.now() - t0;
    }

    @Test
    void deviceMemoryTakesRdmaAtSramTiming() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16).up(Mtu.MTU_1024);
        long max = p.b.ctx.queryDevice().maxDmSize();
        assertTrue(max >= 4096, "the profile offers device memory: " + max);
        DeviceMemory dm = p.b.ctx.allocDm(4096, 6);
        byte[] pattern = new byte[256];
        for (int i = 0; i < pattern.length; i++) pattern[i] = (byte) (i * 3 + 1);
        dm.memcpyToDm(512, pattern);
        assertArrayEquals(pattern, dm.memcpyFromDm(512, 256), "the host reads back what it wrote through BAR0");
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> dm.memcpyToDm(3, new byte[4])).errno(),
                "offsets are 4-byte aligned");
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> dm.memcpyFromDm(4092, 8)).errno(),
                "past the allocation");
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.b.pd.regDmMr(dm, 0, 4096, AccessFlags.LOCAL_WRITE)).errno(),
                "a region over device memory is zero-based");
        MemoryRegion mr = p.b.pd.regDmMr(dm, 0, 4096, AccessFlags.ZERO_BASED | Connect.ALL_REMOTE);
        // a READ of device memory (zero-based: iova 512) against a READ of host memory
        p.b.buf.write(512, pattern);
        // each once first: translations cached, so the second READs differ only in where they read
        readTime(p, 512, mr.rkey());
        readTime(p, p.b.buf.addr() + 512, p.b.mr.rkey());
        long fromDm = readTime(p, 512, mr.rkey());
        assertArrayEquals(pattern, p.a.buf.read(8192, 256), "the READ returned the device memory's bytes");
        long fromHost = readTime(p, p.b.buf.addr() + 512, p.b.mr.rkey());
        var prof = p.world.host(0).profile;
        long readTrip = 2 * prof.picos("pci.link.latency") + prof.picos("host.memory.read.latency");
        assertTrue(fromDm + readTrip * 9 / 10 < fromHost, "device memory spares the responder's PCIe read ("
                + readTrip + " ps): " + fromDm + " ps against " + fromHost + " ps");
        // a WRITE and an atomic into it
        p.a.buf.write(0, new byte[]{9, 8, 7, 6});
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                        .sgList(new Sge(p.a.buf.addr(), 4, p.a.mr.lkey())).remoteAddr(1024).rkey(mr.rkey()),
                Wrs.signaled(2, WrOpcode.ATOMIC_FETCH_AND_ADD).compareAdd(5)
                        .sgList(new Sge(p.a.buf.addr() + 64, 8, p.a.mr.lkey())).remoteAddr(2048).rkey(mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 2);
        for (WorkCompletion w : wc) assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
        assertArrayEquals(new byte[]{9, 8, 7, 6}, dm.memcpyFromDm(1024, 4));
        assertEquals(5, HostOrder.get64(dm.memcpyFromDm(2048, 8), 0), "the atomic added in device memory");
        assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, dm::close).errno(), "a region holds it");
        mr.close();
        dm.close();
        assertTrue(dm.isClosed());
        DeviceMemory all = p.b.ctx.allocDm(max, 0);
        assertEquals(Errno.ENOMEM, assertThrows(VerbsException.class, () -> p.b.ctx.allocDm(64, 0)).errno(),
                "all of it is taken");
        all.close();
    }
}
