package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * A program's requests to serve written by hand on a socket of the test's own, for tests that must hold a
 * connection open or close it at a chosen point (EndOrderTest, GoneMemoryJavaTest).
 */
final class RawWire {
    private RawWire() {}

    /** Sends {@code op} with {@code body}, reading no reply. */
    static void send(SocketChannel ch, Wire.Op op, Wire.Out body) throws Exception {
        ByteBuffer b = body.finish(op.code()); // a request is framed as a reply, its op where the status goes
        while (b.hasRemaining()) ch.write(b);
    }

    /** Sends {@code op} and reads its reply, which must succeed; the reply's body. */
    static ByteBuffer call(SocketChannel ch, Wire.Op op, Wire.Out body) throws Exception {
        send(ch, op, body);
        ByteBuffer head = read(ch, 8);
        int len = head.getInt(), status = head.getInt();
        ByteBuffer rest = read(ch, len - 4);
        assertEquals(0, status, op + " answered status " + status);
        return rest;
    }

    private static ByteBuffer read(SocketChannel ch, int n) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) assertTrue(ch.read(b) >= 0, "serve closed the connection");
        return b.flip();
    }
}
