package nicsim.cosim.serve;

import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import nicsim.driver.World;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * Serves simulated adapters to unmodified libibverbs programs: each program's nicsim provider
 * connects to a Unix domain socket, says which node it runs on, and sends its verbs; the simulator
 * runs them on that node's adapter and answers.
 *
 * <p><b>Threads.</b> A thread per connection reads whole requests and queues them; the simulation
 * and every object in it belong to the one thread that calls {@link #run}, which takes the
 * requests in turn and writes the replies.
 *
 * <p><b>Time.</b> Simulated time moves only while every attached program waits on it: blocked in a
 * poll that found nothing or in a wait for a completion event. Then the simulation runs, event by
 * event, until one of those waits is answered or nothing is left to happen; a program busy
 * between two verbs holds time still, so where its next verb lands in simulated time does not
 * depend on how the OS scheduled it. The same programs, arguments and seed therefore give the same
 * simulated run. One exception keeps two programs that wait on each other outside verbs (over
 * their own TCP connection, say) from stalling: a program that has made no request for
 * {@code graceMillis} of wall time counts as waiting; each time that lets time move is counted
 * ({@link #graceAdvances}) and printed, since such a run may differ from one run to the next.
 * When nothing is left to happen, a poll that still finds nothing is answered empty after
 * {@link #IDLE_MILLIS}, so a program can look at its other queues.
 */
public final class Server implements AutoCloseable {
    /** Wall time a program may spend between verbs before it counts as waiting. */
    public static final long DEFAULT_GRACE_MILLIS = 200;
    /** Wall time an empty poll is held, with nothing left to simulate, before it is answered empty. */
    static final long IDLE_MILLIS = 2;

    private final World world;
    private final Path socket;
    private final long graceMillis;
    private final PrintStream log;
    private final ServerSocketChannel listener;
    private final BlockingQueue<Request> inbox = new LinkedBlockingQueue<>();
    private final Map<Connection, Session> sessions = new LinkedHashMap<>();
    /** Each node's XRC domains that programs share through files. */
    private final Map<Integer, XrcDomains> domains = new java.util.HashMap<>();
    private final List<String> ended = new ArrayList<>();
    private int nextSession = 1;
    private long graceAdvances, requests, protocolErrors, advances, emptyAnswers;
    private volatile boolean closed;

    /** One program's socket; its replies are written by the simulator's thread only. */
    private final class Connection {
        final SocketChannel channel;
        long lastRequestNanos = System.nanoTime();
        /** Since its last request, a wall time and its process's CPU time then (-1: not looked yet), to tell spinning from sleeping. */
        long watchWall = -1, watchCpu;

        Connection(SocketChannel channel) { this.channel = channel; }

        void reply(ByteBuffer b) {
            try {
                while (b.hasRemaining()) channel.write(b);
            } catch (IOException e) { // the program is gone: its disconnect is queued behind
            }
        }

        void close() {
            try { channel.close(); } catch (IOException ignored) { }
        }
    }

    /** A request from a connection; a null op means the connection ended. */
    private record Request(Connection from, Wire.Op op, int rawOp, byte[] body) {}

    public Server(World world, Path socket, long graceMillis, PrintStream log) throws IOException {
        this.world = world;
        this.socket = socket;
        this.graceMillis = graceMillis;
        this.log = log;
        Files.createDirectories(socket.toAbsolutePath().getParent());
        if (Files.exists(socket)) {
            try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                throw new IllegalArgumentException("a simulator already serves " + socket + " (stop it, or give --socket another path)");
            } catch (IOException stale) {
                Files.delete(socket);
            }
        }
        for (var h : world.hosts()) Sysfs.write(Attach.sysfsRoot(socket, h.index), h);
        listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
        Thread accept = new Thread(this::acceptLoop, "nicsim-serve-accept");
        accept.setDaemon(true);
        accept.start();
    }

    public Path socket() { return socket; }
    public World world() { return world; }
    /** Times simulated time moved because a program had been away from verbs for the grace time. */
    public long graceAdvances() { return graceAdvances; }
    /** Programs attached now. */
    public synchronized int attached() { return sessions.size(); }

    private void acceptLoop() {
        while (!closed) {
            try {
                Connection c = new Connection(listener.accept());
                Thread t = new Thread(() -> readLoop(c), "nicsim-serve-conn");
                t.setDaemon(true);
                t.start();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closed) log.println("nicsim serve: accept failed: " + e.getMessage());
            }
        }
    }

    private void readLoop(Connection c) {
        ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (true) {
                head.clear();
                if (!fill(c.channel, head)) break;
                int len = head.getInt(0), op = head.getInt(4);
                if (len < 4 || len > Wire.MAX_MESSAGE) {
                    inbox.add(new Request(c, null, op, ("length " + Integer.toUnsignedString(len)).getBytes()));
                    return;
                }
                ByteBuffer body = ByteBuffer.allocate(len - 4);
                if (!fill(c.channel, body)) break;
                inbox.add(new Request(c, Wire.Op.of(op), op, body.array()));
            }
        } catch (IOException e) { // the program is gone
        }
        inbox.add(new Request(c, null, 0, null));
    }

    private static boolean fill(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) if (ch.read(b) < 0) return false;
        return true;
    }

    /** Serves until {@code stop} holds (looked at between requests). */
    public void run(BooleanSupplier stop) {
        while (!stop.getAsBoolean() && !closed) {
            Request r;
            try {
                r = inbox.poll(sessions.isEmpty() ? 50 : IDLE_MILLIS, TimeUnit.MILLISECONDS); // with programs attached, look often
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                if (r != null) serve(r);
                else advance(true);
            } catch (RuntimeException e) { // the model itself broke: say so, and let every program go with EIO
                failure = e;
                log.println("nicsim serve: the simulation failed at " + world.now() + " ps: " + e);
                for (Map.Entry<Connection, Session> s : List.copyOf(sessions.entrySet())) {
                    if (s.getValue().waiting() != null) s.getKey().reply(new Wire.Out().u32(0).finish(Errno.EIO));
                    s.getKey().close();
                }
                return;
            }
        }
    }

    private RuntimeException failure;

    /** Why the simulation stopped serving, or null if it did not fail. */
    public RuntimeException failure() { return failure; }

    private boolean anyWaiting() {
        for (Session s : sessions.values()) if (s.waiting() != null) return true;
        return false;
    }

    private void serve(Request r) {
        Connection c = r.from();
        c.lastRequestNanos = System.nanoTime();
        c.watchWall = -1;
        Session s = sessions.get(c);
        if (r.op() == null) {
            if (r.body() != null) protocolError(c, s, "op " + r.rawOp() + ": " + new String(r.body()));
            else end(c, s, "exited");
            return;
        }
        requests++;
        Wire.In in = new Wire.In(r.body());
        try {
            if (s == null && r.op() == Wire.Op.EVENTS) {
                eventStream(c, in);
            } else if (s == null) {
                hello(c, r.op(), in);
            } else {
                Wire.Out out = s.handle(r.op(), in);
                if (out != null) c.reply(out.finish(0));
            }
        } catch (Wire.Malformed e) {
            protocolError(c, s, r.op() + ": " + e.getMessage());
            return;
        } catch (Session.Refused e) {
            c.reply(new Wire.Out().u32(e.badIndex).finish(e.errno));
        } catch (VerbsException e) {
            c.reply(new Wire.Out().u32(0).finish(e.errno()));
        } catch (IOException e) {
            c.reply(new Wire.Out().finish(Errno.EACCES));
            log.println("nicsim serve: cannot reach the program's memory: " + e.getMessage());
        } catch (IllegalArgumentException e) { // a value no verb takes (an enum's number, say): named in the log
            c.reply(new Wire.Out().u32(0).finish(Errno.EINVAL));
            log.println("nicsim serve: " + r.op() + " from " + (s == null ? "a new program" : describe(s)) + " refused: " + e.getMessage());
        } catch (RuntimeException e) {
            // the model refused something the verbs checks let through: the program sees EIO, the run goes on
            c.reply(new Wire.Out().u32(0).finish(Errno.EIO));
            log.println("nicsim serve: " + r.op() + " from " + (s == null ? "a new program" : describe(s)) + " failed: " + e);
        }
        advance(false);
    }

    private void hello(Connection c, Wire.Op op, Wire.In in) throws IOException {
        if (op != Wire.Op.HELLO) throw new Wire.Malformed("the first request must be HELLO, not " + op);
        int version = in.u32("version"), node = in.u32("node"), pid = in.u32("pid");
        String program = in.string("program");
        if (version != Wire.VERSION) throw new Wire.Malformed("protocol version " + version + ", the simulator speaks " + Wire.VERSION);
        if (node < 0 || node >= world.hosts().size())
            throw new VerbsException(Errno.ENODEV, "node " + node + " does not exist (nodes 0.." + (world.hosts().size() - 1) + ")");
        Session s = new Session(nextSession++, world.host(node), pid, program, domains.computeIfAbsent(node, n -> new XrcDomains(world.host(n))));
        synchronized (this) { sessions.put(c, s); }
        log.printf("nicsim serve: %s attached to node %d%n", describe(s), node);
        c.reply(new Wire.Out().u32(s.id).finish(0));
    }

    /** A program's second connection, which carries its asynchronous events: it names its session and process, and gets no reply. */
    private void eventStream(Connection c, Wire.In in) {
        int id = in.u32("session"), pid = in.u32("pid");
        for (Session s : sessions.values())
            if (s.id == id && s.pid == pid) {
                s.eventsTo(c::reply);
                return;
            }
        throw new Wire.Malformed("EVENTS for session " + id + " of process " + pid + ", which is not attached");
    }

    private static String describe(Session s) { return Path.of(s.program).getFileName() + " (pid " + s.pid + ")"; }

    private void protocolError(Connection c, Session s, String why) {
        protocolErrors++;
        c.reply(new Wire.Out().u32(0).finish(Errno.EPROTO));
        log.println("nicsim serve: " + (s == null ? "a program" : describe(s)) + " broke the protocol (" + why + "); disconnected");
        end(c, s, "disconnected for breaking the protocol");
    }

    /** A program left: everything it had in the adapter is released, and the others go on. */
    private void end(Connection c, Session s, String how) {
        c.close();
        if (s == null) return;
        synchronized (this) { sessions.remove(c); }
        s.eventsTo(null);
        try {
            s.close();
        } catch (RuntimeException e) {
            log.println("nicsim serve: releasing " + describe(s) + "'s objects: " + e);
        }
        String mem = s.memoryFailures();
        String line = String.format("%s on node %d %s after %d requests%s", describe(s), s.host.index, how, s.requests,
                mem == null ? "" : "; DMA to its memory refused " + mem);
        ended.add(line);
        log.println("nicsim serve: " + line);
        if (!s.traffic.isEmpty()) s.traffic.print(log, describe(s) + "'s queue pairs");
        for (String e : s.errors) log.println("  error completion given to it: " + e);
        if (s.errorCompletions > s.errors.size()) log.println("  and " + (s.errorCompletions - s.errors.size()) + " more error completions");
        advance(false);
    }

    /**
     * Answers the waits the simulation has met; when every program waits, runs the simulation
     * until another can be answered or nothing is left to happen. With {@code quiet} (no request
     * came for a while), empty polls are answered empty once nothing is left to happen.
     */
    private void advance(boolean quiet) {
        answerSatisfied(false);
        if (sessions.isEmpty()) return;
        boolean waiting = anyWaiting();
        long now = System.nanoTime();
        boolean graced = false;
        boolean allSpinning = true;
        java.util.Map<Session, Long> spinners = new java.util.HashMap<>(); // each with its memory's writes so far
        for (Map.Entry<Connection, Session> e : sessions.entrySet()) {
            if (e.getValue().waiting() != null) continue;
            if (spinning(e.getKey(), e.getValue(), now)) { // waits on memory the simulation writes
                spinners.put(e.getValue(), e.getValue().memoryWrites());
                continue;
            }
            allSpinning = false;
            if (now - e.getKey().lastRequestNanos < graceMillis * 1_000_000L) return; // a program is busy: time holds
            graced = true;
        }
        if (!waiting && allSpinning) { // every program spins on its memory (ib_write_lat): run until the adapter writes there
            boolean moved = false;
            while (!spunOn(spinners) && !world.sim.idle()) { world.sim.step(); moved = true; }
            if (moved) advances++;
            answerSatisfied(false);
            return;
        }
        if (!waiting) { // every program is away from verbs (blocked reading its async file, say): time moves a little
            awayStep();
            return;
        }
        // every program waits: clock readings first, at this moment, before anything moves
        boolean clocks = false;
        for (Map.Entry<Connection, Session> e : sessions.entrySet())
            if (e.getValue().readingClock()) { e.getKey().reply(e.getValue().answerClock().finish(0)); clocks = true; }
        if (clocks) return;
        boolean moved = false;
        while (!anySatisfied() && !spunOn(spinners) && !world.sim.idle()) {
            world.sim.step();
            moved = true;
        }
        if (moved && graced) graceAdvances++;
        if (moved) advances++;
        answerSatisfied(quiet && world.sim.idle());
    }

    /** Whether the adapter wrote into the memory of a program spinning on it, since {@code spinners} was taken. */
    private static boolean spunOn(java.util.Map<Session, Long> spinners) {
        for (Map.Entry<Session, Long> e : spinners.entrySet()) if (e.getKey().memoryWrites() != e.getValue()) return true;
        return false;
    }

    /** Wall time a program must spin, out of verbs, before it counts as waiting on memory. */
    static final long SPIN_NANOS = 2_000_000;

    /**
     * Whether a program away from verbs is spinning: it burned at least 3/4 of the last
     * {@link #SPIN_NANOS} of wall time on a CPU (/proc/&lt;pid&gt;/schedstat) without a request. A
     * program that polls its memory for the peer's RDMA WRITE (ib_write_lat) does that, and can go
     * on only once the simulation moves; one blocked on a socket sleeps, and one the OS has
     * descheduled gets no CPU, so neither looks like this.
     */
    private boolean spinning(Connection c, Session s, long now) {
        if (now - c.lastRequestNanos < SPIN_NANOS) return false;
        long cpu = s.cpuNanos();
        if (cpu < 0) return false;
        if (c.watchWall < 0) {
            c.watchWall = now;
            c.watchCpu = cpu;
            return false;
        }
        long wall = now - c.watchWall;
        if (wall < SPIN_NANOS) return false;
        boolean spins = (cpu - c.watchCpu) * 4 >= wall * 3;
        c.watchWall = now;
        c.watchCpu = cpu;
        return spins;
    }

    /** Simulated time a step moves by while every program is away from verbs (then the serve loop looks at its sockets again). */
    static final long AWAY_STEP_PICOS = 1_000_000_000L;

    /** Runs the simulation up to {@link #AWAY_STEP_PICOS} on, or until it has nothing to do, and hands over the events that came. */
    private void awayStep() {
        if (world.sim.idle()) return;
        long until = world.now() + AWAY_STEP_PICOS;
        while (!world.sim.idle() && world.sim.nextEventTime() <= until) world.sim.step();
        graceAdvances++;
        answerSatisfied(false);
    }

    private boolean anySatisfied() {
        for (Session s : sessions.values()) if (s.waitSatisfied()) return true;
        return false;
    }

    private void answerSatisfied(boolean giveUp) {
        for (Session s : sessions.values()) s.deliverEvents();
        for (Map.Entry<Connection, Session> e : sessions.entrySet()) {
            boolean satisfied = e.getValue().waitSatisfied();
            Wire.Out out = e.getValue().waiting() != null ? e.getValue().answerWait(giveUp) : null;
            if (out == null) continue;
            if (!satisfied) emptyAnswers++;
            e.getKey().reply(out.finish(0));
        }
    }

    /** What the run did: the programs, and the simulated time and traffic. */
    public void summary(PrintStream out) {
        out.printf("nicsim serve: simulated %.3f us; %d requests, %d times the programs waited on the simulation, %d polls answered empty%s%n",
                world.now() / 1e6, requests, advances, emptyAnswers,
                protocolErrors == 0 ? "" : "; " + protocolErrors + " protocol errors");
        for (String e : ended) out.println("  " + e);
        for (Session s : sessions.values()) out.println("  " + describe(s) + " on node " + s.host.index + " still attached");
        if (graceAdvances > 0)
            out.printf("  simulated time moved %d times while a program was away from verbs for %d ms: this run may not repeat exactly%n",
                    graceAdvances, graceMillis);
        var c = world.sim.counters();
        out.printf("  fabric: %d packets, %d bytes; adapters: %d packets out, %d in, %d retransmitted; DMA %d bytes read, %d written%n",
                c.get("Fabric.packets"), c.get("Fabric.bytes"), c.get("Firmware.packets_out"), c.get("Firmware.packets_in"),
                c.get("Firmware.retransmits"), c.get("Firmware.dma_read_bytes"), c.get("Firmware.dma_write_bytes"));
        StringBuilder trouble = new StringBuilder();
        for (var e : c.snapshot("Firmware.").entrySet())
            if (e.getValue() > 0 && e.getKey().matches(".*(dropped|no_qp|naks|errors|flushed|mismatch|lost|overflows|gaps|duplicates|ignored).*"))
                trouble.append(' ').append(e.getKey().substring("Firmware.".length())).append('=').append(e.getValue());
        if (trouble.length() > 0) out.println("  adapters also counted:" + trouble);
    }

    @Override public void close() {
        closed = true;
        try { listener.close(); } catch (IOException ignored) { }
        for (Map.Entry<Connection, Session> e : List.copyOf(sessions.entrySet())) end(e.getKey(), e.getValue(), "was detached when the simulator stopped");
        try {
            Files.deleteIfExists(socket);
            Sysfs.remove(socket.toAbsolutePath().getParent().resolve("sysfs"));
        } catch (IOException e) {
            log.println("nicsim serve: cleaning up " + socket.getParent() + ": " + e.getMessage());
        }
    }
}
