package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;

/**
 * Malformed traffic for {@link ChaosTest}, each piece on a connection of its own: requests cut short,
 * lengths no message has, ops that do not exist, bytes that are no request at all, a connection that
 * sends half a request and closes, and verbs of every op with random handles and fields after a good
 * HELLO. Whatever serve answers must come within seconds (or the connection be closed): it never
 * stops answering.
 */
final class ChaosWire {
    private final Path socket;
    private final int pid;
    private int sent;

    /** Traffic to {@code socket}, its HELLOs naming process {@code pid} (whose memory a random verb may name). */
    ChaosWire(Path socket, int pid) {
        this.socket = socket;
        this.pid = pid;
    }

    /** Malformed messages sent since the last call. */
    int sent() {
        int n = sent;
        sent = 0;
        return n;
    }

    /** Sends {@code n} pieces of garbage chosen by {@code r}. */
    void storm(Random r, int n) throws Exception {
        for (int i = 0; i < n; i++) one(r);
    }

    private void one(Random r) throws Exception {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            sent++;
            switch (r.nextInt(7)) {
                case 0 -> { // a request cut short: its header promises more than comes, then the end
                    write(ch, le(12).putInt(4 + 40).putInt(Wire.Op.HELLO.code()).putInt(Wire.VERSION).flip());
                }
                case 1 -> { // a length no message has: EPROTO, or the connection closed
                    int len = r.nextBoolean() ? -1 - r.nextInt(100) : Wire.MAX_MESSAGE + 1 + r.nextInt(1000);
                    write(ch, le(8).putInt(len).putInt(Wire.Op.ALLOC_PD.code()).flip());
                    ByteBuffer reply = reply(ch, 10_000);
                    if (reply != null) assertNotEquals(0, reply.getInt(0), "length " + len + ": an error");
                }
                case 2 -> { // bytes that are no request
                    byte[] junk = new byte[1 + r.nextInt(64)];
                    r.nextBytes(junk);
                    write(ch, ByteBuffer.wrap(junk));
                }
                case 3 -> { // an op that does not exist, after a good HELLO
                    hello(ch, r.nextInt(2));
                    ByteBuffer reply = call(ch, 200 + r.nextInt(100_000), ints(r.nextInt()), 10_000);
                    if (reply != null) assertNotEquals(0, reply.getInt(0), "an unknown op: an error");
                }
                case 4 -> { // half a request, then gone
                    hello(ch, r.nextInt(2));
                    write(ch, le(10).putInt(4 + 64).putInt(Wire.Op.CREATE_QP.code()).putShort((short) 7).flip());
                }
                case 5 -> { // a first request of another kind with fields at random (a session that never was...)
                    Wire.Op op = new Wire.Op[]{Wire.Op.EVENTS, Wire.Op.CHANNEL, Wire.Op.JOIN, Wire.Op.CM_CMD,
                        Wire.Op.CM_EVENTS, Wire.Op.PCI_OPEN, Wire.Op.UCTX_OPEN}[r.nextInt(7)];
                    call(ch, op.code(), random(r), 2_000);
                }
                default -> { // verbs of any op with handles and fields at random, after a good HELLO
                    hello(ch, r.nextInt(2));
                    for (int k = 0; k < 1 + r.nextInt(8); k++) {
                        Wire.Op op = Wire.Op.values()[r.nextInt(Wire.Op.values().length)];
                        if (op == Wire.Op.PCI_OPEN || op == Wire.Op.UCTX_OPEN) continue; // a node's adapter taken
                        // a verb that waits (a blocking poll, WAIT) may be answered only later: not waited for
                        if (call(ch, op.code(), random(r), 2_000) == null) break;
                    }
                }
            }
        }
    }

    /** 0..24 random 32-bit fields, small numbers (handles that may exist) more often than not. */
    private static ByteBuffer random(Random r) {
        int n = r.nextInt(25);
        ByteBuffer b = le(4 * n);
        for (int i = 0; i < n; i++) b.putInt(r.nextBoolean() ? r.nextInt(8) : r.nextInt());
        return b.flip();
    }

    private void hello(SocketChannel ch, int node) throws Exception {
        byte[] name = "chaos".getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = le(28 + name.length).putInt(Wire.VERSION).putInt(node).putInt(pid).putInt(-1).putInt(-1)
                .putInt(name.length).put(name).putInt(0);
        ByteBuffer reply = call(ch, Wire.Op.HELLO.code(), b.flip(), 10_000);
        assertNotNull(reply, "serve answers a good HELLO");
        assertEquals(0, reply.getInt(0), "HELLO to node " + node);
    }

    /** Sends {@code op} with {@code body}; its reply ({status, body...}), or null if none came within the time. */
    private static ByteBuffer call(SocketChannel ch, int op, ByteBuffer body, long millis) throws Exception {
        write(ch, le(8 + body.remaining()).putInt(4 + body.remaining()).putInt(op).put(body).flip());
        return reply(ch, millis);
    }

    private static void write(SocketChannel ch, ByteBuffer b) throws Exception {
        try {
            while (b.hasRemaining()) ch.write(b);
        } catch (IOException closed) { // serve closed the connection on what came before: its right
        }
    }

    /** A whole reply within {@code millis}, or null (none yet, or the connection closed). */
    private static ByteBuffer reply(SocketChannel ch, long millis) throws Exception {
        ch.configureBlocking(false);
        try {
            long end = System.nanoTime() + millis * 1_000_000;
            ByteBuffer head = le(4);
            if (!fill(ch, head, end)) return null;
            int len = head.getInt(0);
            if (len < 4 || len > Wire.MAX_MESSAGE) fail("a reply of length " + len);
            ByteBuffer r = le(len);
            if (!fill(ch, r, end)) return null;
            return r.flip();
        } finally {
            ch.configureBlocking(true);
        }
    }

    private static boolean fill(SocketChannel ch, ByteBuffer b, long end) throws Exception {
        while (b.hasRemaining()) {
            int n;
            try {
                n = ch.read(b);
            } catch (IOException reset) {
                return false;
            }
            if (n < 0) return false;
            if (n == 0) {
                if (System.nanoTime() > end) return false;
                Thread.sleep(2);
            }
        }
        return true;
    }

    private static ByteBuffer le(int n) { return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN); }

    private static ByteBuffer ints(int... v) {
        ByteBuffer b = le(4 * v.length);
        for (int x : v) b.putInt(x);
        return b.flip();
    }
}
