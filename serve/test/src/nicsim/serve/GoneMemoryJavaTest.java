package nicsim.serve;

import static nicsim.serve.RawWire.call;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Java driver's twin of {@link GoneMemoryTest}: a program on the Java driver whose memory the kernel finds
 * released (it was killed: Linux removes its memory before its files close) is let go at serve's next look, as the
 * close of its files would let it go, rather than have its queues run on zeros (a killed sender's RDMA WRITEs
 * carrying zeros to its peer) until its sockets' ends reach serve. Here its socket is the test's: it never closes
 * by itself.
 */
class GoneMemoryJavaTest {
    private Served served;
    private Process child;

    @AfterEach
    void stop() throws Exception {
        if (child != null) child.destroyForcibly();
        if (served != null) assertTrue(served.stop(), "the simulator's loop ended");
    }

    @Test
    void aProgramWhoseMemoryIsReleasedIsLetGoWhileItsSocketIsOpen() throws Exception {
        served = new Served("gone-java").start(Served.cluster());
        child = new ProcessBuilder("sleep", "600").start(); // the program: its memory is ours to read
        int pid = (int) child.pid();
        Path stat = Path.of("/proc/" + pid + "/stat"); // its maps settle once it sleeps (exec and ld.so done)
        assertTrue(Programs.waitUntil(() -> readQuietly(stat).contains("(sleep) S "), 10), "sleep sleeps");
        long va = stack(pid); // the start of sleep's stack: writable, as an MR must be
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(served.socket))) {
            call(ch, Wire.Op.HELLO, new Wire.Out(new WireLayout.HelloRequest(Wire.VERSION, 0, pid, -1, -1))
                    .string("writer").put(new WireLayout.OpenArgument(0)));
            int pd = call(ch, Wire.Op.ALLOC_PD, new Wire.Out()).getInt();
            ByteBuffer mr = call(ch, Wire.Op.REG_MR, new Wire.Out(new WireLayout.RegMrRequest(pd, va, 4096, va,
                    1 | 2))); // LOCAL_WRITE, REMOTE_WRITE
            mr.getInt();
            int lkey = mr.getInt(), rkey = mr.getInt();
            int cq = call(ch, Wire.Op.CREATE_CQ, new Wire.Out(new WireLayout.CreateCqRequest(16, Wire.NONE))).getInt();
            ByteBuffer made = call(ch, Wire.Op.CREATE_QP, new Wire.Out(new WireLayout.CreateQpRequest(pd, Wire.NONE,
                    2 /* RC */, cq, cq, Wire.NONE, 16, 16, 1, 1, 0, false, 0, 0)));
            int qp = made.getInt(), qpn = made.getInt();
            ByteBuffer port = call(ch, Wire.Op.QUERY_PORT, new Wire.Out(new WireLayout.QueryPortRequest(1)));
            int lid = port.getInt(24); // state, max_mtu, active_mtu, gid_tbl_len, port_cap_flags, max_msg_sz, lid
            // connected to itself: INIT, RTR, RTS
            modify(ch, qp, 1 | 1 << 3 | 1 << 4 | 1 << 5, attr(1, 0, 0, 0, 2, 0, 0, 0, 0, 0));
            modify(ch, qp, 1 | 1 << 7 | 1 << 8 | 1 << 12 | 1 << 15 | 1 << 17 | 1 << 20,
                    attr(2, 3, qpn, 0, 0, 1, 12, lid, 0, 0));
            modify(ch, qp, 1 | 1 << 9 | 1 << 10 | 1 << 11 | 1 << 13 | 1 << 16, attr(3, 0, 0, 1, 0, 0, 0, 0, 14, 7));

            write(ch, qp, va, lkey, va + 2048, rkey);
            ByteBuffer wc = call(ch, Wire.Op.POLL_CQ, new Wire.Out(new WireLayout.PollCqRequest(cq, 1)));
            assertEquals(1, wc.getInt(), "a completion");
            wc.getLong();
            assertEquals(0, wc.getInt(), "the live program's WRITE succeeds");
            assertEquals(1, served.server.attached(), "a live program is not let go");

            child.destroyForcibly().waitFor(); // its memory is released; its socket (ours) stays open
            write(ch, qp, va, lkey, va + 2048, rkey); // the adapter reads its memory: the kernel moves nothing
            boolean let = Programs.waitUntil(() -> served.server.attached() == 0, 30);
            String log = served.log();
            assertTrue(let, "let go while its socket is open:\n" + log);
            assertTrue(log.contains("writer (pid " + pid + ") on node 0 exited (its memory is gone)"), log);
            assertEquals(-1, readQuietly(ch), "its connection is closed:\n" + log);
        }
        String log = served.log();
        assertEquals(1, log.lines().filter(l -> l.contains("(pid " + pid + ")") && l.contains("exited")).count(),
                "its session ended once:\n" + log);
        assertFalse(log.contains("a new program") || log.contains("serving failed"), log);
    }

    /** struct ibv_qp_attr with the fields a connection takes (the rest 0). */
    private static WireLayout.QpAttr attr(int state, int mtu, int destQpn, int rdAtomic, int access,
                                          int destRdAtomic, int rnrTimer, int dlid, int timeout, int retry) {
        return new WireLayout.QpAttr(state, 0, mtu, 0, 0, 0, destQpn, access, 0, 1, rdAtomic, destRdAtomic, rnrTimer,
                timeout, retry, retry, false, dlid, 0, 0, 0, false, 1);
    }

    private static void modify(SocketChannel ch, int qp, int mask, WireLayout.QpAttr a) throws Exception {
        call(ch, Wire.Op.MODIFY_QP, new Wire.Out(new WireLayout.ModifyQpRequest(qp, mask, a)));
    }

    /** Posts a signaled RDMA WRITE of 64 bytes from {@code from} to {@code to}. */
    private static void write(SocketChannel ch, int qp, long from, int lkey, long to, int rkey) throws Exception {
        call(ch, Wire.Op.POST_SEND, new Wire.Out(new WireLayout.PostRequest(qp, 1))
                .put(new WireLayout.SendWr(7, 0 /* RDMA_WRITE */, 2 /* SIGNALED */, 0, to, rkey, 0, 0, Wire.NONE, 0,
                        0, 0, 0, Wire.NONE, 0, 0))
                .u32(1).put(new WireLayout.Sge(from, 64, lkey))
                .put(new WireLayout.Umr(Wire.NONE, 0, 0, 0)) // no memory layout
                .put(new WireLayout.WindowBind(Wire.NONE, 0, Wire.NONE, 0, 0, 0))); // no window bound
    }

    /** What a read of the connection gives: -1 once serve closed it. */
    private static int readQuietly(SocketChannel ch) {
        try {
            return ch.read(ByteBuffer.allocate(1));
        } catch (IOException e) {
            return -1;
        }
    }

    /** File {@code p}'s text, or empty once it is gone. */
    private static String readQuietly(Path p) {
        try {
            return Files.readString(p).strip();
        } catch (IOException e) {
            return "";
        }
    }

    /** The start of process {@code pid}'s stack mapping. */
    private static long stack(int pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/maps")))
            if (line.endsWith("[stack]")) return Long.parseUnsignedLong(line.substring(0, line.indexOf('-')), 16);
        throw new AssertionError("no stack in process " + pid);
    }
}
