package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import nicsim.abi.HostOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** RC through the whole stack: verbs, driver, PCI, adapter blocks, firmware, fabric; bytes checked on both hosts. */
class RcDataPathTest {
    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @ParameterizedTest
    @ValueSource(strings = {"cx-gen3x16", "lanai43", "lanai72"})
    void writeLandsByteForByteAndCompletes(String profile) {
        Pair p = new Pair(profile, QpType.RC, 64 * 1024).up(Mtu.MTU_1024);
        byte[] data = random(10_000, 1);
        p.a.buf.write(0, data);
        p.a.qp.postSend(Wrs.signaled(7, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), data.length, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 100).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 1);
        assertEquals(WcStatus.SUCCESS, wc.get(0).status(), wc.toString());
        assertEquals(7, wc.get(0).wrId());
        assertEquals(WcOpcode.RDMA_WRITE, wc.get(0).opcode());
        assertArrayEquals(data, p.b.buf.read(100, data.length));
        assertArrayEquals(new byte[100], p.b.buf.read(0, 100), "bytes before the target untouched");
    }

    @Test
    void sendMatchesAReceiveAndReportsLengthAndImmediate() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 64 * 1024).up(Mtu.MTU_1024);
        byte[] data = random(3000, 2);
        p.a.buf.write(0, data);
        p.b.qp.postRecv(new RecvWr().wrId(55).sgList(new Sge(p.b.buf.addr() + 8192, 4096, p.b.mr.lkey())));
        p.a.qp.postSend(new SendWr().wrId(9).opcode(WrOpcode.SEND_WITH_IMM).immData(0x1234abcd)
                .sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(p.a.buf.addr(), 1000, p.a.mr.lkey()),
                        new Sge(p.a.buf.addr() + 1000, 2000, p.a.mr.lkey())));
        WorkCompletion r = p.await(p.b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        assertEquals(55, r.wrId());
        assertEquals(WcOpcode.RECV, r.opcode());
        assertEquals(3000, r.byteLen());
        assertEquals(0x1234abcd, r.immData());
        assertEquals(WcFlags.WITH_IMM, r.wcFlags() & WcFlags.WITH_IMM);
        assertArrayEquals(data, p.b.buf.read(8192, 3000));
        WorkCompletion s = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, s.status());
        assertEquals(WcOpcode.SEND, s.opcode());
    }

    @Test
    void readFetchesRemoteBytes() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 64 * 1024).up(Mtu.MTU_4096);
        byte[] data = random(20_000, 3);
        p.b.buf.write(4096, data);
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_READ)
                .sgList(new Sge(p.a.buf.addr() + 10, data.length, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 4096).rkey(p.b.mr.rkey()));
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(WcOpcode.RDMA_READ, wc.opcode());
        assertEquals(data.length, wc.byteLen());
        assertArrayEquals(data, p.a.buf.read(10, data.length));
    }

    @Test
    void atomicsReturnTheOriginalValue() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        p.b.buf.write(64, le(40));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.ATOMIC_FETCH_AND_ADD).compareAdd(2)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())).remoteAddr(p.b.buf.addr() + 64).rkey(p.b.mr.rkey()));
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.ATOMIC_CMP_AND_SWP).compareAdd(42).swap(7)
                .sgList(new Sge(p.a.buf.addr() + 8, 8, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 64).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 2);
        assertEquals(WcOpcode.FETCH_ADD, wc.get(0).opcode(), wc.toString());
        assertEquals(WcOpcode.COMP_SWAP, wc.get(1).opcode());
        assertEquals(40, HostOrder.get64(p.a.buf.read(0, 8), 0),
                "fetch-and-add: the original value, in the host's byte order");
        assertEquals(42, HostOrder.get64(p.a.buf.read(8, 8), 0), "compare-and-swap: the original value");
        assertEquals(7, HostOrder.get64(p.b.buf.read(64, 8), 0), "42 == 42: swapped in 7");
    }

    /**
     * Atomics on 64-bit words wider than a byte (qperf's ver_rc_fetch_add and ver_rc_compare_swap):
     * the remote word is read and written in the host's byte order, and so is the value returned.
     */
    @Test
    void atomicsWorkOnWordsInTheHostsByteOrder() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        p.b.buf.write(64, le(0x0123456789abcdefL));
        p.b.buf.write(72, le(0xffffffffL));
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.ATOMIC_CMP_AND_SWP)
                .compareAdd(0x0123456789abcdefL).swap(0xfedcba9876543210L)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey())).remoteAddr(p.b.buf.addr() + 64).rkey(p.b.mr.rkey()));
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.ATOMIC_FETCH_AND_ADD).compareAdd(1)
                .sgList(new Sge(p.a.buf.addr() + 8, 8, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 72).rkey(p.b.mr.rkey()));
        for (WorkCompletion wc : p.await(p.a.cq, 2)) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertArrayEquals(le(0x0123456789abcdefL), p.a.buf.read(0, 8),
                "the compared value came back as the host stores it");
        assertArrayEquals(le(0xfedcba9876543210L), p.b.buf.read(64, 8), "and the swap value was stored so");
        assertArrayEquals(le(0xffffffffL), p.a.buf.read(8, 8));
        assertArrayEquals(le(0x100000000L), p.b.buf.read(72, 8), "the add carried into the word's upper half");
    }

    private static byte[] le(long v) {
        byte[] b = new byte[8];
        HostOrder.put64(b, 0, v);
        return b;
    }

    /**
     * A READ or an atomic right behind a WRITE to the same bytes sees the WRITE: the responder
     * executes requests in order and its reads do not pass its own writes to host memory.
     */
    @Test
    void aReadOrAtomicBehindAWriteSeesIt() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 1 << 16).up(Mtu.MTU_1024);
        byte[] data = new byte[3000];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 7 + 1);
        p.a.buf.write(0, data);
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), data.length, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 104).rkey(p.b.mr.rkey()));
        p.a.qp.postSend(Wrs.signaled(2, WrOpcode.RDMA_READ)
                .sgList(new Sge(p.a.buf.addr() + 8192, data.length, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 104).rkey(p.b.mr.rkey()));
        // the atomic adds to 8 bytes the WRITE has just written
        p.a.qp.postSend(Wrs.signaled(3, WrOpcode.ATOMIC_FETCH_AND_ADD)
                .sgList(new Sge(p.a.buf.addr() + 16384, 8, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr() + 104 + 2048).rkey(p.b.mr.rkey()).compareAdd(1));
        List<WorkCompletion> wcs = p.await(p.a.cq, 3);
        assertEquals(3, wcs.size(), wcs.toString());
        for (WorkCompletion wc : wcs) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertArrayEquals(data, p.a.buf.read(8192, data.length), "the READ returned what the WRITE wrote");
        assertArrayEquals(Arrays.copyOfRange(data, 2048, 2056), p.a.buf.read(16384, 8),
                "the atomic's original value is the WRITE's");
    }
}
