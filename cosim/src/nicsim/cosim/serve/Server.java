package nicsim.cosim.serve;

import java.io.IOException;
import java.io.PrintStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import nicsim.cosim.serve.Transport.Connection;
import nicsim.cosim.serve.Transport.Request;
import nicsim.driver.World;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * Serves simulated adapters to unmodified libibverbs programs: each program's nicsim provider
 * connects to a Unix domain socket, says which node it runs on, and sends its verbs; the simulator
 * runs them on that node's adapter and answers. A program has one connection per device context,
 * plus one for its async event file and one per completion channel, which the simulator writes
 * as the kernel writes those files.
 *
 * <p><b>Threads.</b> {@link Transport}'s thread reads whole requests and queues them; the
 * simulation and every object in it belong to the one thread that calls {@link #run}, which takes
 * the requests in turn, answers them, and lets {@link Pacer} decide when simulated time moves.
 */
public final class Server implements AutoCloseable {
    /** Wall time a program whose threads /proc cannot show may spend between verbs before it counts as waiting. */
    public static final long DEFAULT_GRACE_MILLIS = 200;
    /** Wall time the loop waits for a request before looking at the programs again, just after one came and once things are quiet. */
    static final long LOOK_MICROS = 250, IDLE_MICROS = 2000;

    private final World world;
    private final Path socket;
    private final long graceMillis;
    private final PrintStream log;
    private final BlockingQueue<Request> inbox = new LinkedBlockingQueue<>();
    private final Transport transport;
    private final Pacer pacer;
    private final Watchdog watchdog;
    /** The programs attached, by process, and their sessions (device contexts) by connection. */
    private final Map<Integer, Program> programs = new LinkedHashMap<>();
    private final Map<Connection, Session> sessions = new HashMap<>();
    /** The event-file connections (async files, completion channels): whose each is, and what its closing undoes. */
    private final Map<Connection, EventFile> eventFiles = new HashMap<>();

    private record EventFile(Session session, Runnable gone) {}
    /** Each node's XRC domains that programs share through files. */
    private final Map<Integer, XrcDomains> domains = new HashMap<>();
    private final List<String> ended = new ArrayList<>();
    private int nextSession = 1, quietRounds;
    private long requests, protocolErrors, emptyAnswers;
    private volatile boolean closed;
    private RuntimeException failure;

    public Server(World world, Path socket, long graceMillis, PrintStream log) throws IOException {
        this(world, socket, graceMillis, Watchdog.DEFAULT_PICOS, log);
    }

    /** As above, with the watchdog reporting a QP that retries with no progress for {@code watchdogPicos} of simulated time. */
    public Server(World world, Path socket, long graceMillis, long watchdogPicos, PrintStream log) throws IOException {
        this.world = world;
        this.socket = socket;
        this.graceMillis = graceMillis;
        this.log = log;
        this.pacer = new Pacer(world, graceMillis);
        this.watchdog = new Watchdog(world, watchdogPicos, log);
        Files.createDirectories(socket.toAbsolutePath().getParent());
        if (Files.exists(socket)) {
            try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                throw new IllegalArgumentException("a simulator already serves " + socket + " (stop it, or give --socket another path)");
            } catch (IOException stale) {
                Files.delete(socket);
            }
        }
        for (var h : world.hosts()) Sysfs.write(Attach.sysfsRoot(socket, h.index), h);
        transport = new Transport(socket, inbox, log);
    }

    public Path socket() { return socket; }
    public World world() { return world; }
    /** Times simulated time moved because a program had been away from verbs for the grace time. */
    public long graceAdvances() { return pacer.graceAdvances; }
    /** Device contexts attached now. */
    public synchronized int attached() { return sessions.size(); }

    /** Serves until {@code stop} holds (looked at between requests, and during long runs of the simulation). */
    public void run(BooleanSupplier stop) {
        BooleanSupplier yield = () -> !inbox.isEmpty() || stop.getAsBoolean();
        while (!stop.getAsBoolean() && !closed) {
            Request r;
            try {
                long wait = sessions.isEmpty() ? 50_000 : quietRounds < 8 ? LOOK_MICROS : IDLE_MICROS;
                r = inbox.poll(wait, TimeUnit.MICROSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                if (r != null) {
                    quietRounds = 0;
                    serve(r);
                    if (!inbox.isEmpty()) continue; // answer what came before moving time
                } else {
                    quietRounds++;
                    for (Program p : programs.values()) p.answered = false; // each one looked at again
                }
                pacer.advance(programs.values(), r == null, this::answerWaits, yield);
                watchdog.look(programs.values());
            } catch (RuntimeException e) { // the model itself broke: say so, and let every program go with EIO
                failure = e;
                log.println("nicsim serve: the simulation failed at " + world.now() + " ps: " + e);
                for (Map.Entry<Connection, Session> s : List.copyOf(sessions.entrySet())) {
                    if (s.getValue().waiting() != null) s.getKey().send(new Wire.Out().u32(0).finish(Errno.EIO));
                    s.getKey().close();
                }
                return;
            }
        }
    }

    /** Why the simulation stopped serving, or null if it did not fail. */
    public RuntimeException failure() { return failure; }

    private void serve(Request r) {
        Connection c = r.from();
        Session s = sessions.get(c);
        if (r.op() == null) {
            if (r.body() != null) protocolError(c, s, "op " + r.rawOp() + ": " + new String(r.body()));
            else if (s != null) end(c, s, "exited");
            else fileClosed(c);
            return;
        }
        requests++;
        Wire.In in = new Wire.In(r.body());
        try {
            if (s == null) {
                switch (r.op()) {
                    case HELLO -> hello(c, in);
                    case EVENTS -> eventFile(c, in, false);
                    case CHANNEL -> eventFile(c, in, true);
                    default -> throw new Wire.Malformed("the first request must be HELLO, EVENTS or CHANNEL, not " + r.op());
                }
                return;
            }
            Wire.Out out = s.handle(r.op(), in);
            s.program.requested(out == null);
            if (out != null) c.send(out.finish(0));
        } catch (Wire.Malformed e) {
            protocolError(c, s, r.op() + ": " + e.getMessage());
        } catch (Session.Refused e) {
            refused(c, s, new Wire.Out().u32(e.badIndex).finish(e.errno));
        } catch (VerbsException e) {
            refused(c, s, new Wire.Out().u32(0).finish(e.errno()));
        } catch (IOException e) {
            refused(c, s, new Wire.Out().finish(Errno.EACCES));
            log.println("nicsim serve: cannot reach the program's memory: " + e.getMessage());
        } catch (IllegalArgumentException e) { // a value no verb takes (an enum's number, say): named in the log
            refused(c, s, new Wire.Out().u32(0).finish(Errno.EINVAL));
            log.println("nicsim serve: " + r.op() + " from " + who(s) + " refused: " + e.getMessage());
        } catch (RuntimeException e) {
            // the model refused something the verbs checks let through: the program sees EIO, the run goes on
            refused(c, s, new Wire.Out().u32(0).finish(Errno.EIO));
            log.println("nicsim serve: " + r.op() + " from " + who(s) + " failed: " + e);
        }
    }

    private static void refused(Connection c, Session s, java.nio.ByteBuffer reply) {
        if (s != null) s.program.requested(false);
        c.send(reply);
    }

    private void hello(Connection c, Wire.In in) throws IOException {
        int version = in.u32("version"), node = in.u32("node"), pid = in.u32("pid"), socketFd = in.u32("socket fd");
        String name = in.string("program");
        if (version != Wire.VERSION) throw new Wire.Malformed("protocol version " + version + ", the simulator speaks " + Wire.VERSION);
        if (node < 0 || node >= world.hosts().size())
            throw new VerbsException(Errno.ENODEV, "node " + node + " does not exist (nodes 0.." + (world.hosts().size() - 1) + ")");
        Program p = programs.computeIfAbsent(pid, k -> new Program(pid, Path.of(name).getFileName().toString()));
        Session s = new Session(nextSession++, world.host(node), p, socketFd, c::send,
                domains.computeIfAbsent(node, n -> new XrcDomains(world.host(n))));
        p.sessions.add(s);
        p.requested(false);
        synchronized (this) { sessions.put(c, s); }
        log.printf("nicsim serve: %s attached to node %d%n", p, node);
        c.send(new Wire.Out().u32(s.id).finish(0));
    }

    /**
     * A program's async file (EVENTS) or one of its completion channels (CHANNEL, with the number
     * the program knows it by): a connection of its own, named by its session and process, which
     * the simulator writes events to. A channel is answered once, before any event.
     */
    private void eventFile(Connection c, Wire.In in, boolean channel) {
        int id = in.u32("session"), pid = in.u32("pid"), number = channel ? in.u32("channel") : 0;
        Program p = programs.get(pid);
        Session s = p == null ? null : p.sessions.stream().filter(x -> x.id == id).findFirst().orElse(null);
        if (s == null) { // the context closed before this reached us (or never was): nothing will be written here
            if (id <= 0 || id >= nextSession) throw new Wire.Malformed((channel ? "CHANNEL" : "EVENTS") + " for session " + id
                    + " of process " + pid + ", which never attached");
            c.close();
            return;
        }
        if (channel) {
            s.events.channelTo(number, c::send);
            eventFiles.put(c, new EventFile(s, () -> s.events.channelClosed(number)));
            c.send(new Wire.Out().finish(0));
        } else {
            s.events.asyncTo(c::send);
            eventFiles.put(c, new EventFile(s, () -> s.events.asyncTo(null)));
        }
    }

    private void fileClosed(Connection c) {
        EventFile f = eventFiles.remove(c);
        if (f != null) f.gone().run();
        c.close();
    }

    private static String who(Session s) { return s == null ? "a new program" : s.program.toString(); }

    private void protocolError(Connection c, Session s, String why) {
        protocolErrors++;
        c.send(new Wire.Out().u32(0).finish(Errno.EPROTO));
        log.println("nicsim serve: " + (s == null ? "a program" : s.program) + " broke the protocol (" + why + "); disconnected");
        if (s != null) end(c, s, "disconnected for breaking the protocol");
        else fileClosed(c);
    }

    /** A program's context ended: everything it had in the adapter is released, and the others go on. */
    private void end(Connection c, Session s, String how) {
        c.close();
        synchronized (this) { sessions.remove(c); }
        for (var it = eventFiles.entrySet().iterator(); it.hasNext(); ) { // its files close with it
            var e = it.next();
            if (e.getValue().session() != s) continue;
            e.getKey().close();
            it.remove();
        }
        Program p = s.program;
        p.sessions.remove(s);
        if (p.sessions.isEmpty()) programs.remove(p.pid);
        try {
            s.close();
        } catch (RuntimeException e) {
            log.println("nicsim serve: releasing " + p + "'s objects: " + e);
        }
        String mem = s.memoryFailures();
        String line = String.format("%s on node %d %s after %d requests%s", p, s.host.index, how, s.requests,
                mem == null ? "" : "; DMA to its memory refused " + mem);
        ended.add(line);
        log.println("nicsim serve: " + line);
        if (!s.traffic.isEmpty()) s.traffic.print(log, p + "'s queue pairs");
        for (String e : s.errors) log.println("  error completion given to it: " + e);
        if (s.errorCompletions > s.errors.size()) log.println("  and " + (s.errorCompletions - s.errors.size()) + " more error completions");
    }

    /** Hands out what the open verbs got and the events that came; with {@code giveUp}, polls still empty are answered empty. */
    private void answerWaits(boolean giveUp) {
        for (Session s : sessions.values()) {
            s.events.deliver();
            if (s.waiting() == null) continue;
            boolean satisfied = s.waitSatisfied();
            if (s.answer(giveUp) && !satisfied) emptyAnswers++;
        }
    }

    /** What the run did: the programs, and the simulated time and traffic. */
    public void summary(PrintStream out) {
        out.printf("nicsim serve: simulated %.3f us; %d requests, %d times the programs waited on the simulation, %d polls answered empty%s%n",
                world.now() / 1e6, requests, pacer.advances, emptyAnswers, protocolErrors == 0 ? "" : "; " + protocolErrors + " protocol errors");
        for (String e : ended) out.println("  " + e);
        for (Program p : programs.values()) out.println("  " + p + " still attached");
        if (pacer.awayAdvances > 0)
            out.printf("  simulated time moved %d times while a program was away from verbs (asleep outside them)%s: this run may not "
                    + "repeat exactly%n", pacer.awayAdvances,
                    pacer.graceAdvances == 0 ? "" : ", " + pacer.graceAdvances + " of them after its grace time of " + graceMillis + " ms");
        watchdog.summary(out);
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
        for (Map.Entry<Connection, Session> e : List.copyOf(sessions.entrySet())) end(e.getKey(), e.getValue(), "was detached when the simulator stopped");
        transport.close();
        try {
            Files.deleteIfExists(socket);
            Sysfs.remove(socket.toAbsolutePath().getParent().resolve("sysfs"));
        } catch (IOException e) {
            log.println("nicsim serve: cleaning up " + socket.getParent() + ": " + e.getMessage());
        }
    }
}
