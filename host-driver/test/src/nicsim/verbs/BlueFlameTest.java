package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import nicsim.abi.WqeLayout;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * BlueFlame (docs/sources.md#mlx5-doorbells step 5): a one-WQEBB WQE written whole with its doorbell is taken from
 * the adapter's BlueFlame buffer, so its fetch costs no PCIe read; a WQE rung with a plain doorbell
 * is read from the ring; a BlueFlame line written through a page that does not own the queue is
 * never used.
 */
class BlueFlameTest {
    static long skipped(Pair p) { return p.world.sim.counters().get("Adapter.blueflame_fetches_skipped"); }

    /** Time from posting one 64-byte WRITE to its completion. */
    static long writeTime(Profile profile) {
        Pair p = new Pair(profile, QpType.RC, 4096, Faults.NONE, 1, Pair.defaults()).up(Mtu.MTU_1024);
        p.a.buf.write(0, new byte[]{9, 8, 7});
        long t0 = p.world.now();
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 64, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 1);
        assertEquals(WcStatus.SUCCESS, wc.get(0).status());
        assertArrayEquals(new byte[]{9, 8, 7}, p.b.buf.read(0, 3));
        return p.world.now() - t0;
    }

    @Test
    void aBlueFlameWqeSavesThePcieReadOfItsFetch() {
        Profile cx = Profiles.load("cx-gen3x16");
        long withBf = writeTime(cx), without = writeTime(cx.with("wqe.bf.buffer.entries", "0"));
        // a PCIe read round trip: the request's and the completion's link latency at the least
        long roundTrip = 2 * cx.picos("pci.link.latency");
        assertTrue(without - withBf >= roundTrip, "with BlueFlame " + withBf + " ps, without " + without + " ps");
    }

    @Test
    void onlyALoneWqeRungByBlueFlameSkipsTheRingRead() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        assertEquals(256, p.a.ctx.driver.caps().bfSize(), "half of a 512-byte BlueFlame register");
        SendWr w = new SendWr().opcode(WrOpcode.RDMA_WRITE).sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()).sendFlags(SendFlags.SIGNALED);
        p.a.qp.postSend(w.wrId(1));
        p.await(p.a.cq, 1);
        assertEquals(1, skipped(p), "one WQE, written whole with its doorbell");
        // 64 inline bytes after the ctrl and remote-address segments: a WQE of two WQEBBs, written whole too
        byte[] inline = new byte[64];
        new Random(5).nextBytes(inline);
        p.a.buf.write(64, inline);
        p.a.qp.postSend(new SendWr().wrId(4).opcode(WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr() + 64, 64, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 64).rkey(p.b.mr.rkey()).sendFlags(SendFlags.SIGNALED | SendFlags.INLINE));
        p.await(p.a.cq, 1);
        assertEquals(2, skipped(p), "a lone two-WQEBB WQE, within bfSize, written whole with its doorbell");
        assertArrayEquals(inline, p.b.buf.read(64, 64), "the inline bytes came from the BlueFlame write");
        p.a.qp.postSend(w.wrId(2), new SendWr().wrId(3).opcode(WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()).sendFlags(SendFlags.SIGNALED));
        p.await(p.a.cq, 2);
        assertEquals(2, skipped(p), "two WQEs rung by one plain doorbell are read from the ring");
    }

    @Test
    void aBlueFlameLineThroughAForeignPageIsNotUsed() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        Context other = new Device(p.world.host(0)).open();
        var driver = p.a.ctx.driver();
        // the next two WQEBBs of A's send queue, forged as NOPs through the other context's page
        for (int i = 0; i < 2; i++) { // a fresh queue: its next WQEBBs are 0 and 1
            byte[] forged = Arrays.copyOf(WqeLayout.ctrl(WqeLayout.OP_NOP, i, p.a.qp.qpNum(), 1), 64);
            driver.mmio(driver.sendDoorbell(other.uar), forged);
        }
        p.world.runFor(10_000_000);
        assertTrue(p.world.sim.counters().get("DoorbellDecoder.rejected_not_owner") >= 2, "the decoder refuses them");
        // two real WRITEs rung together: their fetch covers exactly the forged lines' addresses
        p.a.buf.write(0, new byte[]{5, 6});
        SendWr w = new SendWr().opcode(WrOpcode.RDMA_WRITE).sgList(new Sge(p.a.buf.addr(), 2, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()).sendFlags(SendFlags.SIGNALED);
        p.a.qp.postSend(w.wrId(1), new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), 2, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 8).rkey(p.b.mr.rkey()).sendFlags(SendFlags.SIGNALED));
        for (WorkCompletion wc : p.await(p.a.cq, 2)) {
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(WcOpcode.RDMA_WRITE, wc.opcode(), "the real WQEs ran, not the forged NOPs");
        }
        assertArrayEquals(new byte[]{5, 6}, p.b.buf.read(0, 2));
        assertArrayEquals(new byte[]{5, 6}, p.b.buf.read(8, 2));
        assertEquals(0, skipped(p));
    }
}
