package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import nicsim.verbs.Errno;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Garbage on the simulator's socket, and verbs with bad arguments, from a client that speaks the
 * protocol by hand: each gets a clear error (an errno, or EPROTO and the connection closed), and the
 * simulator goes on serving everyone else.
 */
class WireFuzzTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-fuzz").start(Served.cluster()); }

    @AfterEach
    void stopServing() throws Exception { assertTrue(served.stop(), "the simulator's loop ended"); }

    /** A client of the protocol: requests in, status and reply body out. */
    private final class Client implements AutoCloseable {
        final SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(served.socket));

        Client() throws Exception {}

        /**
         * Sends {@code op} with {@code body}; returns {status, body...} or null if the simulator closed the connection.
         */
        ByteBuffer call(int op, ByteBuffer body) throws Exception {
            ByteBuffer req = ByteBuffer.allocate(8 + body.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            req.putInt(4 + body.remaining()).putInt(op).put(body).flip();
            while (req.hasRemaining()) ch.write(req);
            return reply();
        }

        ByteBuffer reply() throws Exception {
            ByteBuffer head = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            while (head.hasRemaining()) if (ch.read(head) < 0) return null;
            ByteBuffer r = ByteBuffer.allocate(head.getInt(0)).order(ByteOrder.LITTLE_ENDIAN);
            while (r.hasRemaining()) if (ch.read(r) < 0) return null;
            return r.flip();
        }

        int hello(int node) throws Exception {
            byte[] name = "fuzz".getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = le(28 + name.length).putInt(Wire.VERSION).putInt(node)
                    .putInt((int) ProcessHandle.current().pid()).putInt(-1 /* no socket of a C program's */)
                    .putInt(-1 /* nor command file */).putInt(name.length).put(name).putInt(0 /* flags */);
            return call(Wire.Op.HELLO.code(), b.flip()).getInt(0);
        }

        @Override public void close() throws Exception { ch.close(); }
    }

    private static ByteBuffer le(int n) { return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN); }

    private static ByteBuffer ints(int... v) {
        ByteBuffer b = le(4 * v.length);
        for (int x : v) b.putInt(x);
        return b.flip();
    }

    @Test
    void badVerbsGetTheirErrnoAndChangeNothing() throws Exception {
        try (Client c = new Client()) {
            assertEquals(0, c.hello(0));
            assertEquals(Errno.EINVAL, c.call(Wire.Op.DEALLOC_PD.code(), ints(77)).getInt(0),
                    "a handle that is not this program's");
            ByteBuffer pd = c.call(Wire.Op.ALLOC_PD.code(), ints());
            assertEquals(0, pd.getInt(0));
            int pdh = pd.getInt(4);
            ByteBuffer qp = le(60).putInt(pdh).putInt(Wire.NONE).putInt(2);
            for (int v : new int[]{99, 99, -1, 16, 16, 1, 1, 0, 0}) qp.putInt(v);
            qp.putInt(0).putLong(0); // not DC
            assertEquals(Errno.EINVAL, c.call(Wire.Op.CREATE_QP.code(), qp.flip()).getInt(0), "no such CQs");
            qp.clear().putInt(pdh).putInt(Wire.NONE).putInt(77); // a QP type libibverbs does not have
            for (int v : new int[]{99, 99, -1, 16, 16, 1, 1, 0, 0}) qp.putInt(v);
            qp.putInt(0).putLong(0);
            assertEquals(Errno.EINVAL, c.call(Wire.Op.CREATE_QP.code(), qp.flip()).getInt(0), "qp_type 77");
            qp.clear().putInt(pdh).putInt(Wire.NONE).putInt(0xff); // IBV_QPT_DRIVER with a DC type mlx5dv does not have
            for (int v : new int[]{99, 99, -1, 16, 16, 1, 1, 0, 0}) qp.putInt(v);
            qp.putInt(5).putLong(0);
            assertEquals(Errno.EINVAL, c.call(Wire.Op.CREATE_QP.code(), qp.flip()).getInt(0), "dc_type 5");
            // a modify counts a field only under its mask bit: garbage elsewhere (an unset cur_qp_state) is ignored
            ByteBuffer cq = c.call(Wire.Op.CREATE_CQ.code(), le(8).putInt(16).putInt(Wire.NONE).flip());
            assertEquals(0, cq.getInt(0));
            int cqh = cq.getInt(4);
            qp.clear().putInt(pdh).putInt(Wire.NONE).putInt(2);
            for (int v : new int[]{cqh, cqh, Wire.NONE, 16, 16, 1, 1, 0, 0}) qp.putInt(v);
            qp.putInt(0).putLong(0);
            ByteBuffer made = c.call(Wire.Op.CREATE_QP.code(), qp.flip());
            assertEquals(0, made.getInt(0));
            int mask = 1 | 1 << 4 | 1 << 5 | 1 << 3; // STATE, PKEY_INDEX, PORT, ACCESS_FLAGS
            ByteBuffer mod = le(100).putInt(made.getInt(4)).putInt(mask).putInt(1 /* INIT */)
                    .putInt(0x0d0a0b05 /* garbage */);
            // field 7 is port_num; field 0, path_mtu, gets garbage
            for (int i = 0; i < 21; i++) mod.putInt(i == 7 ? 1 : i == 0 ? 0xffff : 0);
            assertEquals(0, c.call(Wire.Op.MODIFY_QP.code(), mod.flip()).getInt(0),
                    "fields outside the mask are ignored");
            mod.clear().putInt(made.getInt(4)).putInt(mask | 1 << 1 /* CUR_STATE */).putInt(1).putInt(0x0d0a0b05);
            for (int i = 0; i < 21; i++) mod.putInt(i == 7 ? 1 : 0);
            assertEquals(Errno.EINVAL, c.call(Wire.Op.MODIFY_QP.code(), mod.flip()).getInt(0),
                    "a cur_qp_state that is no state, under its bit");
            assertEquals(Errno.EINVAL, c.call(Wire.Op.POLL_CQ.code(), ints(pdh, 4)).getInt(0), "a PD is not a CQ");
            ByteBuffer mr = le(32).putInt(pdh).putLong(0x1000).putLong(0).putLong(0x1000).putInt(0);
            assertEquals(Errno.EINVAL, c.call(Wire.Op.REG_MR.code(), mr.flip()).getInt(0), "an empty MR");
            assertEquals(Errno.EBUSY, c.call(Wire.Op.DEALLOC_PD.code(), ints(pdh)).getInt(0), "a PD with a QP");
            assertEquals(0, c.call(Wire.Op.DESTROY_QP.code(), ints(made.getInt(4))).getInt(0));
            assertEquals(0, c.call(Wire.Op.DEALLOC_PD.code(), ints(pdh)).getInt(0));
            assertEquals(Errno.EINVAL, c.call(Wire.Op.DEALLOC_PD.code(), ints(pdh)).getInt(0), "destroyed already");
        }
        try (Client c = new Client()) {
            assertEquals(Errno.ENODEV, c.hello(7), "a node the cluster lacks");
        }
    }

    @Test
    void garbageClosesOnlyItsOwnConnection() throws Exception {
        Random r = new Random(3);
        for (int round = 0; round < 40; round++) {
            try (Client c = new Client()) {
                if (round % 2 == 0) assertEquals(0, c.hello(round % 2));
                ByteBuffer reply;
                switch (round % 4) {
                    case 0 -> reply = c.call(200 + r.nextInt(1000), ints(r.nextInt())); // an op that does not exist
                    case 1 -> reply = c.call(Wire.Op.QUERY_DEVICE.code(), ints()); // a verb before HELLO
                    case 2 -> { // a verb cut short (one that has fields)
                        Wire.Op op;
                        do op = Wire.Op.values()[r.nextInt(Wire.Op.values().length)];
                        while (op == Wire.Op.ALLOC_PD || op == Wire.Op.QUERY_DEVICE || op == Wire.Op.TIME
                                || op == Wire.Op.OPEN_XRCD); // these have no fields
                        reply = c.call(op.code(), le(r.nextInt(3)).flip());
                    }
                    default -> { // a length no message has
                        ByteBuffer bad = le(8).putInt(-5).putInt(Wire.Op.ALLOC_PD.code()).flip();
                        while (bad.hasRemaining()) c.ch.write(bad);
                        reply = c.reply();
                    }
                }
                if (reply != null) assertNotEquals(0, reply.getInt(0), "round " + round + ": an error, not success");
            }
        }
        // the simulator still serves: a well-behaved client
        try (Client c = new Client()) {
            assertEquals(0, c.hello(1));
            assertEquals(0, c.call(Wire.Op.ALLOC_PD.code(), ints()).getInt(0));
        }
        assertTrue(served.log().contains("broke the protocol"), served.log());
    }
}
