package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * A striding receive queue (seed: streaming receive; mlx5's multi-packet RQ): messages fill one
 * receive WQE one after another, each taking only its own 64-byte strides (the 40-byte GRH space,
 * then the payload); one completion per message says where it went; a message that no longer fits
 * makes a filler use up the WQE, which is then released, and goes to the next WQE.
 */
class StridingRqTest {
    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (seed * 29 + i * 3 + 1);
        return b;
    }

    @Test
    void messagesShareAWqeStrideByStrideAndAFillerReleasesIt() {
        QpInitAttr init = Pair.defaults().stridingRq(6, 4); // 16 strides of 64 B: 1 KiB per receive WQE
        Pair p = new Pair(Profiles.load("cx-gen3x16"), QpType.UD, 1 << 16, Faults.NONE, 1, init).upUd(Mtu.MTU_2048);
        for (int k = 0; k < 2; k++)
            p.b.qp.postRecv(new RecvWr().wrId(100 + k)
                    .sgList(new Sge(p.b.buf.addr() + 4096L * k, 1024, p.b.mr.lkey())));
        AddressHandle ah = p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()));
        int[] sizes = {24, 100, 200, 300, 150}; // strides with the GRH: 1, 3, 4, 6 (14 of 16), then 3, which do not fit
        for (int i = 0; i < sizes.length; i++) {
            p.a.buf.write(2048L * i, pattern(sizes[i], i));
            p.a.qp.postSend(Wrs.signaled(i, WrOpcode.SEND).ah(ah).remoteQpn(p.b.qp.qpNum())
                    .remoteQkey(Connect.QKEY).sgList(new Sge(p.a.buf.addr() + 2048L * i, sizes[i], p.a.mr.lkey())));
        }
        assertEquals(5, p.await(p.a.cq, 5).size());
        List<WorkCompletion> wcs = p.await(p.b.cq, 6);
        assertEquals(6, wcs.size(), wcs.toString());
        int[] strideAt = {0, 1, 4, 8};
        for (int i = 0; i < 4; i++) {
            WorkCompletion wc = wcs.get(i);
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(100, wc.wrId(), "message " + i + " is in the first WQE");
            assertEquals(strideAt[i], wc.strideOffset(), "message " + i);
            assertEquals(40 + sizes[i], wc.byteLen());
            assertEquals(0, wc.wcFlags() & (WcFlags.STRIDE_FILLER | WcFlags.STRIDE_BUFFER_CONSUMED));
            assertArrayEquals(pattern(sizes[i], i), p.b.buf.read(64L * strideAt[i] + 40, sizes[i]),
                    "message " + i + " at its strides");
        }
        WorkCompletion filler = wcs.get(4);
        assertEquals(100, filler.wrId());
        assertEquals(14, filler.strideOffset(), "the filler uses up strides 14 and 15");
        int both = WcFlags.STRIDE_FILLER | WcFlags.STRIDE_BUFFER_CONSUMED;
        assertEquals(both, filler.wcFlags() & both);
        assertEquals(0, filler.byteLen());
        WorkCompletion last = wcs.get(5);
        assertEquals(101, last.wrId(), "the message that did not fit went to the next WQE");
        assertEquals(0, last.strideOffset());
        assertArrayEquals(pattern(150, 4), p.b.buf.read(4096 + 40, 150));
        assertEquals(1, p.world.sim.counters().get("Firmware.stride_fillers"));
        // the first WQE was released: a third can be posted in its place, and the ring goes on
        p.b.qp.postRecv(new RecvWr().wrId(102).sgList(new Sge(p.b.buf.addr() + 8192, 1024, p.b.mr.lkey())));
    }

    @Test
    void aStridingQueueRefusesWhatItCannotTake() {
        Pair p = new Pair(Profiles.load("cx-gen3x16"), QpType.UD, 1 << 16, Faults.NONE, 1,
                Pair.defaults().stridingRq(6, 4)).upUd(Mtu.MTU_2048);
        VerbsException small = assertThrows(VerbsException.class,
                () -> p.b.qp.postRecv(new RecvWr().wrId(1).sgList(new Sge(p.b.buf.addr(), 512, p.b.mr.lkey()))));
        assertEquals(Errno.EINVAL, small.errno(), small.getMessage());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.a.pd.createQp(Pair.defaults().qpType(QpType.RC).sendCq(p.a.cq).recvCq(p.a.cq)
                        .stridingRq(6, 4))).errno(), "UD only");
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                () -> p.a.pd.createQp(Pair.defaults().qpType(QpType.UD).sendCq(p.a.cq).recvCq(p.a.cq)
                        .stridingRq(5, 4))).errno(), "strides of 64 B or more");
    }
}
