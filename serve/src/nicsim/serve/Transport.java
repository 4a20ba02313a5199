package nicsim.serve;

import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ConcurrentModificationException;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BiConsumer;

/**
 * The simulator's side of its Unix domain socket: every connection of every attached program,
 * served by one selector thread that reads whole messages and queues them for the simulation's
 * thread ({@link #inbox}). Writes never block the simulation: what the socket does not take at
 * once waits in the connection's backlog for the selector thread to send, so a program that stops
 * reading (its completion channel, its replies) stalls nobody; past {@link #MAX_BACKLOG} bytes it
 * is disconnected.
 */
final class Transport implements AutoCloseable {
    /** Bytes a program may leave unread before it is cut off. */
    static final int MAX_BACKLOG = 64 << 20;

    /**
     * A message from a connection; a null op means the connection ended (a null body) or broke the framing (the body
     * says how).
     */
    record Request(Connection from, Wire.Op op, int rawOp, byte[] body) {}

    private final ServerSocketChannel listener;
    private final Selector selector;
    private final BlockingQueue<Request> inbox;
    private final PrintStream log;
    private final ConcurrentLinkedQueue<Connection> wantWrite = new ConcurrentLinkedQueue<>();
    private final Set<Connection> open = ConcurrentHashMap.newKeySet();
    private final Thread thread;
    private volatile boolean closed;
    /** Connections so far: each one's id names it in a recording (serve --record). */
    private int connections;
    /**
     * Told of every message sent, before it goes (null: nobody): serve --record keeps what each connection
     * was answered, a replay compares its answers with those.
     */
    volatile BiConsumer<Connection, ByteBuffer> sent;

    /** One socket of a program: its requests come in whole; its replies and events go out in order. */
    final class Connection {
        /** Null for a connection a replay made: no program is there, what it is sent goes only to {@link #sent}. */
        private final SocketChannel channel;
        /** This connection's number, in the order the server met them (a replay's are the recording's). */
        final int id;
        private final ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        private ByteBuffer body;
        private final ArrayDeque<ByteBuffer> backlog = new ArrayDeque<>();
        private long backlogBytes;
        private boolean gone;
        /** Nothing more will be sent: once the backlog is out, the program reads the end of the file. */
        private boolean ending;
        /**
         * Its program was let go as it exited (its memory gone) and serve closed it: what it sent before it died,
         * and its end, go nowhere (serve's thread only).
         */
        boolean fenced;

        private Connection(SocketChannel channel, int id) {
            this.channel = channel;
            this.id = id;
        }

        /**
         * Sends {@code b} after what went before; never blocks. A connection already gone drops it
         * (its end is queued behind); one whose backlog passed {@link #MAX_BACKLOG} is closed.
         */
        void send(ByteBuffer b) {
            var tap = sent;
            if (tap != null) tap.accept(this, b);
            if (channel == null) return;
            synchronized (this) {
                if (gone || ending) return; // ended: nothing more is written here
                try {
                    if (backlog.isEmpty()) channel.write(b);
                } catch (IOException e) { // the program is gone: its end comes through the selector
                    gone = true;
                    return;
                }
                if (!b.hasRemaining()) return;
                backlog.add(b);
                backlogBytes += b.remaining();
                if (backlogBytes > MAX_BACKLOG) {
                    log.println("nicsim serve: a program left " + backlogBytes
                            + " bytes unread on its socket; disconnected");
                    gone = true;
                    closeQuietly();
                    return;
                }
            }
            wantWrite.add(this);
            selector.wakeup();
        }

        /**
         * Ends what the simulator sends here, as the kernel closes an event file under its reader: what was
         * sent is still read first, then the program's read returns 0 (the end of the file). Its requests, if
         * any, still come in. A replay's connection has nothing to end.
         */
        void endWrites() {
            if (channel == null) return;
            synchronized (this) {
                if (gone || ending) return;
                ending = true;
                if (backlog.isEmpty()) shutdownOutput();
            }
        }

        private void shutdownOutput() {
            try {
                channel.shutdownOutput();
            } catch (IOException e) { // the program is gone: its end comes through the selector
                gone = true;
            }
        }

        /** Moves what the socket takes now from the backlog; true when it is empty. */
        private synchronized boolean flush() {
            try {
                while (!backlog.isEmpty()) {
                    ByteBuffer b = backlog.peek();
                    int n = channel.write(b);
                    backlogBytes -= n;
                    if (b.hasRemaining()) return false;
                    backlog.poll();
                }
                if (ending) shutdownOutput();
            } catch (IOException e) {
                gone = true;
                backlog.clear();
            }
            return true;
        }

        void close() {
            synchronized (this) { gone = true; }
            open.remove(this);
            closeQuietly();
        }

        private void closeQuietly() {
            if (channel == null) return;
            try { channel.close(); } catch (IOException ignored) { }
        }
    }

    /** A transport with no socket, for a replay: its connections are made by {@link #replayed}. */
    Transport(PrintStream log) {
        this.inbox = null;
        this.log = log;
        listener = null;
        selector = null;
        thread = null;
    }

    /** A connection of a replay, numbered {@code id} as in the recording: what it is sent goes to {@link #sent}. */
    Connection replayed(int id) { return new Connection(null, id); }

    /** Connections open now (accepted, and neither ended by their program nor closed by the simulator). */
    int connections() { return open.size(); }

    Transport(Path socket, BlockingQueue<Request> inbox, PrintStream log) throws IOException {
        this.inbox = inbox;
        this.log = log;
        listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
        listener.configureBlocking(false);
        selector = Selector.open();
        listener.register(selector, SelectionKey.OP_ACCEPT);
        thread = new Thread(this::loop, "nicsim-serve-io");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (!closed) {
                selector.select();
                for (Connection c; (c = wantWrite.poll()) != null; ) {
                    SelectionKey k = c.channel.keyFor(selector);
                    if (k != null && k.isValid() && !c.flush()) k.interestOps(k.interestOps() | SelectionKey.OP_WRITE);
                }
                for (var it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey k = it.next();
                    it.remove();
                    try {
                        if (!k.isValid()) continue;
                        if (k.isAcceptable()) accept();
                        else {
                            Connection c = (Connection) k.attachment();
                            if (k.isWritable() && c.flush()) k.interestOps(SelectionKey.OP_READ);
                            if (k.isValid() && k.isReadable()) read(k, c);
                        }
                    } catch (CancelledKeyException e) {
                        // the connection closed under us (its program gone, or serve closing it): its end is already in
                        // the inbox
                    }
                }
            }
        } catch (IOException | ClosedSelectorException | ConcurrentModificationException e) {
            // closing: close() releases the selector's keys under this loop
            if (!closed) log.println("nicsim serve: the socket loop stopped: " + e);
        }
    }

    private void accept() throws IOException {
        SocketChannel ch = listener.accept();
        if (ch == null) return;
        ch.configureBlocking(false);
        Connection c = new Connection(ch, ++connections);
        open.add(c);
        ch.register(selector, SelectionKey.OP_READ, c);
    }

    /**
     * Reads what is there; each whole message goes to the inbox. The connection's end (or broken framing) goes there
     * last.
     */
    private void read(SelectionKey k, Connection c) {
        try {
            while (true) {
                if (c.body == null) {
                    if (c.channel.read(c.head) < 0) { ended(k, c, null, 0); return; }
                    if (c.head.hasRemaining()) return;
                    int len = c.head.getInt(0), op = c.head.getInt(4);
                    if (len < 4 || len > Wire.MAX_MESSAGE) {
                        ended(k, c, "length " + Integer.toUnsignedString(len), op);
                        return;
                    }
                    c.body = ByteBuffer.allocate(len - 4);
                }
                if (c.body.hasRemaining() && c.channel.read(c.body) < 0) { ended(k, c, null, 0); return; }
                if (c.body.hasRemaining()) return;
                int op = c.head.getInt(4);
                inbox.add(new Request(c, Wire.Op.of(op), op, c.body.array()));
                c.head.clear();
                c.body = null;
            }
        } catch (IOException e) { // the program is gone
            ended(k, c, null, 0);
        }
    }

    private void ended(SelectionKey k, Connection c, String broken, int op) {
        k.cancel();
        open.remove(c);
        inbox.add(new Request(c, null, op, broken == null ? null : broken.getBytes()));
    }

    @Override public void close() {
        closed = true;
        for (Connection c : open) c.close();
        if (selector == null) return; // a replay's: no socket
        try {
            selector.close();
            listener.close();
        } catch (IOException ignored) { // closing anyway
        }
    }
}
