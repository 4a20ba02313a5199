package nicsim.serve;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import nicsim.driver.ErrnoException;
import nicsim.driver.World;
import nicsim.serve.Transport.Connection;
import nicsim.serve.Transport.Request;
import nicsim.sim.Simulator;
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
    /**
     * Wall time the loop waits for a request before looking at the programs again: just after one came, or after a
     * run woke a program without answering a request (an event written to its completion channel), and once things
     * are quiet.
     */
    static final long LOOK_MICROS = 250, IDLE_MICROS = 2000;

    private final World world;
    private final Path socket;
    private final long graceMillis;
    private final PrintStream log;
    private final BlockingQueue<Request> inbox = new LinkedBlockingQueue<>();
    private final Transport transport;
    private final Pacer pacer;
    private final Watchdog watchdog;
    private final RdmaCm cm;
    private final PciFace pci;
    /** The programs attached, by process, and each connection's session (device context), its program and file. */
    private final Map<Integer, Program> programs = new LinkedHashMap<>();
    /** In the order the connections came (not by identity hash): what is sent to each goes in one order every run. */
    private final Map<Connection, End> ends = new LinkedHashMap<>();

    /**
     * A program's way to a session: its file {@code fd} (a forked child reaches its parent's sessions
     * through files of its own).
     */
    private record End(Session session, Program program, int fd) {}
    /** The event-file connections (async files, completion channels): whose each is, and what its closing undoes. */
    private final Map<Connection, EventFile> eventFiles = new HashMap<>();

    private record EventFile(Session session, Runnable gone) {}
    /** Each node's XRC domains that programs share through files. */
    private final Map<Integer, XrcDomains> domains = new HashMap<>();
    /** What the run did, program by program. */
    private final RunReport report;
    private int nextSession = 1, quietRounds;
    private long requests, protocolErrors, emptyAnswers;
    private volatile boolean closed;
    /** Faults inside the model: each its adapter's fatal error (that node resets), never the server's. */
    private final AdapterFaults faults;
    /** The fabric's SM and SA, on node 0's special QPs. */
    private final SubnetManager sm;
    /** libibumad's files of attached programs. */
    private final Umad umad;
    /** serve --record (null: not recording). */
    private Recorder recorder;

    public Server(World world, Path socket, long graceMillis, PrintStream log) throws IOException {
        this(world, socket, graceMillis, Watchdog.DEFAULT_PICOS, log);
    }

    /**
     * As above, with the watchdog reporting a QP that retries with no progress for {@code watchdogPicos}
     * of simulated time.
     */
    public Server(World world, Path socket, long graceMillis, long watchdogPicos, PrintStream log) throws IOException {
        this(log, world, Objects.requireNonNull(socket, "socket"), graceMillis, watchdogPicos);
    }

    /** A server with no socket (null), whose requests a replay feeds ({@link Replay}). */
    static Server replaying(World world, long graceMillis, long watchdogPicos, PrintStream log) {
        try {
            return new Server(log, world, null, graceMillis, watchdogPicos);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // nothing to open without a socket
        }
    }

    /** {@code socket} null: a replay's server (no socket, nothing on disk). */
    private Server(PrintStream log, World world, Path socket, long graceMillis, long watchdogPicos) throws IOException {
        this.world = world;
        this.socket = socket;
        this.graceMillis = graceMillis;
        this.log = log;
        this.report = new RunReport(log);
        this.cm = new RdmaCm(world, log);
        this.pci = new PciFace(world, log, p -> {
            reportIfClosed(p);
            if (p.detached()) programs.remove(p.pid);
        });
        this.pacer = new Pacer(world, graceMillis, cm);
        this.watchdog = new Watchdog(world, watchdogPicos, log);
        this.faults = new AdapterFaults(world, log, pci, cm, domains, this::sessions);
        this.sm = new SubnetManager(world);
        this.umad = new Umad(world);
        pci.resetNode = faults::reset;
        faults.afterReset = n -> {
            if (n == SubnetManager.SM_NODE) sm.attach();
            umad.reset(n);
        };
        if (socket == null) {
            transport = new Transport(log);
            return;
        }
        Files.createDirectories(socket.toAbsolutePath().getParent());
        if (Files.exists(socket)) {
            try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                throw new IllegalArgumentException("a simulator already serves " + socket
                        + " (stop it, or give --socket another path)");
            } catch (IOException stale) {
                Files.delete(socket);
            }
        }
        for (var h : world.hosts()) Sysfs.write(Attach.sysfsRoot(socket, h.index), h);
        Files.writeString(Attach.hostsFile(socket), hostsLines());
        transport = new Transport(socket, inbox, log);
    }

    public Path socket() { return socket; }

    /**
     * serve --record: from now on, what the programs ask and the adapters read of their memory is kept by
     * {@code r} (call before {@link #run}); closing the server ends the recording.
     */
    public Server record(Recorder r) {
        recorder = r;
        pacer.recorder = r;
        transport.sent = r::answer;
        return this;
    }

    /** With {@code on}, a driver on the PCI face is stopped at the first violation the device sees (serve --strict). */
    public Server strict(boolean on) {
        pci.strict = on;
        return this;
    }

    /** The nodes' IP addresses and names, as /etc/hosts lines (attach adds them to the program's). */
    private String hostsLines() {
        StringBuilder b = new StringBuilder("# nicsim serve's nodes (RDMA CM addresses)\n");
        for (var h : world.hosts()) b.append(RdmaCm.ipText(h.index)).append(" node").append(h.index).append('\n');
        return b.toString();
    }

    /** "node0 127.77.0.1, node1 127.77.0.2, ...". */
    public String addresses() {
        StringBuilder b = new StringBuilder();
        for (var h : world.hosts()) b.append(h.index == 0 ? "" : ", ").append("node").append(h.index).append(' ')
                .append(RdmaCm.ipText(h.index));
        return b.toString();
    }
    public World world() { return world; }
    /** Times simulated time moved because a program had been away from verbs for the grace time. */
    public long graceAdvances() { return pacer.graceAdvances; }
    /** Device contexts attached now. */
    public synchronized int attached() { return ends.size() + ending + pending; }

    /**
     * Connections whose end is being handled (their objects released, their program's report printed), and
     * programs whose report waits for a user context: attached() counts both, so a reader of the log after it
     * reaches 0 finds every report whole.
     */
    private int ending, pending;

    /**
     * What the server holds for programs now, by kind (socket connections, device contexts, programs, event
     * files, PCI functions, RDMA CM channels): all 0 once every program has left. Read it while the simulation
     * is quiet.
     */
    public synchronized Map<String, Integer> holdings() {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("connections", transport.connections());
        m.put("contexts", ends.size());
        m.put("programs", programs.size());
        m.put("event files", eventFiles.size());
        m.put("PCI functions", pci.open());
        m.put("CM channels", cm.channelsOpen());
        return m;
    }

    /** Serves until {@code stop} holds (looked at between requests, and during long runs of the simulation). */
    public void run(BooleanSupplier stop) {
        BooleanSupplier yield = () -> !inbox.isEmpty() || stop.getAsBoolean();
        ProcMemory.TAP.set(recorder); // this thread's accesses to the programs' memory: recorded, or not
        try {
            loop(stop, yield);
        } finally {
            ProcMemory.TAP.remove();
        }
    }

    private void loop(BooleanSupplier stop, BooleanSupplier yield) {
        while (!stop.getAsBoolean() && !closed) {
            Request r;
            try {
                boolean none = ends.isEmpty() && !pci.any();
                long wait = none ? 50_000 : quietRounds < 8 ? LOOK_MICROS : IDLE_MICROS;
                r = inbox.poll(wait, TimeUnit.MICROSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                if (r != null) {
                    quietRounds = 0;
                    handle(r);
                    if (!inbox.isEmpty()) continue; // answer what came before moving time
                } else {
                    quietRounds++;
                    for (Program p : programs.values()) p.answered = false; // each one looked at again
                }
                // a program woken by an event (asleep on its completion channel, say) acts and sleeps again without
                // a request: looked at again soon, not after IDLE_MICROS, which was most of such a round trip
                if (pacer.advance(programs.values(), r == null, this::answerWaits, yield)) quietRounds = 0;
                watchdog.look(programs.values());
            } catch (RuntimeException e) {
                failed(e);
            }
        }
    }

    /** Request {@code r}: recorded (serve --record), served, and RDMA CM's work done. */
    private void handle(Request r) {
        if (recorder != null) recorder.request(world.now(), r);
        serve(r);
        cm.service();
        takeFaults(); // a fault another node's command waited past (Simulator#runUntil): that node resets now
    }

    /** Each fault events threw and no one took yet, its adapter's (Faults); whether there was one. */
    private boolean takeFaults() {
        boolean any = false;
        for (Simulator.Fault f; (f = world.sim.takeFault()) != null; any = true) faults.fault(f);
        return any;
    }

    /** A fault while time moved: its adapter's (Faults), or serve's own. */
    private void failed(RuntimeException e) {
        if (!takeFaults())
            log.println("nicsim serve: serving failed at " + world.now() + " ps: " + AdapterFaults.where(e)
                    + "; serving goes on");
    }

    /** A replay's recorded request {@code r}, served as the loop serves one. */
    void replayRequest(Request r) {
        try {
            handle(r);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    /** A replay's recorded look at the programs, done as the loop does one; whether it threw (a fault). */
    boolean replayStep(Pacer.Step step) {
        try {
            pacer.replay(step, programs.values(), this::answerWaits);
            watchdog.look(programs.values());
            return false;
        } catch (RuntimeException e) {
            failed(e);
            return true;
        }
    }

    /** A replay's connection numbered {@code id} (as recorded), whose messages go to {@code sent}. */
    Connection replayConnection(int id, BiConsumer<Connection, ByteBuffer> sent) {
        transport.sent = sent;
        return transport.replayed(id);
    }

    /** The first fault inside the model while serving (each was its adapter's, and serve went on), or null. */
    public RuntimeException failure() { return faults.first(); }

    private void serve(Request r) {
        Connection c = r.from();
        End e = ends.get(c);
        Session s = e == null ? null : e.session();
        if (pci.owns(c)) {
            device(r);
            return;
        }
        if (c.fenced) return; // its program was let go as it exited: a request queued then would be "a new program"
        if (r.op() == null) {
            if (r.body() != null) protocolError(c, s, "op " + r.rawOp() + ": " + new String(r.body()));
            else if (s != null) end(c, "exited");
            else fileClosed(c);
            return;
        }
        requests++;
        Wire.In in = new Wire.In(r.body());
        if (s != null && s.fatal != null) { // its adapter faulted and was reset: as a dead device, EIO
            refused(c, e, new Wire.Out().u32(0).finish(Errno.EIO));
            return;
        }
        try {
            if (s == null) {
                first(c, r.op(), in);
                return;
            }
            int pid = e.program().pid;
            Wire.Out out = s.host.within(() -> s.handle(r.op(), in, c::send, pid)); // what it schedules is its node's
            e.program().requested(out == null);
            if (out != null) c.send(out.finish(0));
        } catch (Wire.Malformed x) {
            protocolError(c, s, r.op() + ": " + x.getMessage());
        } catch (QueueVerbs.Refused x) {
            refused(c, e, new Wire.Out().u32(x.badIndex).finish(x.errno));
        } catch (ErrnoException x) {
            refused(c, e, new Wire.Out().u32(0).finish(x.errno()));
        } catch (IOException x) {
            refused(c, e, new Wire.Out().finish(Errno.EACCES));
            log.println("nicsim serve: cannot reach the program's memory: " + x.getMessage());
        } catch (IllegalArgumentException x) { // a value no verb takes (an enum's number, say): named in the log
            refused(c, e, new Wire.Out().u32(0).finish(Errno.EINVAL));
            log.println("nicsim serve: " + r.op() + " from " + who(s) + " refused: " + x.getMessage());
        } catch (RuntimeException x) {
            // the model refused something the verbs checks let through, or serve's handling of it failed: the
            // request fails EIO, the run goes on; if an event threw it, its adapter faulted
            refused(c, e, new Wire.Out().u32(0).finish(Errno.EIO));
            if (!takeFaults())
                log.println("nicsim serve: " + r.op() + " from " + who(s) + " failed: " + AdapterFaults.where(x));
        }
    }

    /** The first request on a connection that is no program's context yet: what the connection is for. */
    private void first(Connection c, Wire.Op op, Wire.In in) throws IOException {
        try {
            firstOf(c, op, in);
        } finally { // a program known by a first request that then failed (it died meanwhile, say) holds nothing
            programs.values().removeIf(Program::detached);
        }
    }

    private void firstOf(Connection c, Wire.Op op, Wire.In in) throws IOException {
        switch (op) {
            case HELLO -> hello(c, in);
            case JOIN -> join(c, in);
            case EVENTS -> eventFile(c, in, false);
            case CHANNEL -> eventFile(c, in, true);
            case CONTEXTS -> c.send(contexts().finish(0));
            // attach --sim-time's clock before the program opens its device: the simulation's time, at once
            case TIME -> c.send(new Wire.Out(new WireLayout.Time(world.now())).finish(0));
            case RDMA_RES -> c.send(RdmaResources.of(world, programs.values(),
                    in.read(WireLayout.NodeRequest.class).node()).finish(0));
            case RDMA_STAT ->
                c.send(RdmaResources.stats(world, in.read(WireLayout.NodeRequest.class).node()).finish(0));
            case RDMA_QSTAT -> c.send(RdmaCounters.handle(world, programs.values(),
                    in.read(WireLayout.QstatRequest.class)).finish(0));
            case PCI_OPEN -> {
                try {
                    c.send(pci.open(c, in, this::program, false).finish(0));
                } catch (ErrnoException x) { // the driver only sees an errno: the log says why
                    log.println("nicsim serve: PCI_OPEN refused: " + x.getMessage());
                    throw x;
                }
            }
            case UCTX_OPEN -> c.send(pci.open(c, in, this::program, true).finish(0));
            case PORT_LINK -> {
                portLink(in.read(WireLayout.PortLinkRequest.class));
                c.send(new Wire.Out().finish(0));
            }
            case CM_OPEN -> c.send(cm.open(c, in, this::program).finish(0));
            case UMAD_OPEN -> c.send(umad.open(c, in, this::program).finish(0));
            case UMAD_EVENTS -> { // answered, then the connection is the program's file of MADs
                c.send(new Wire.Out().finish(0));
                umad.events(c, in);
            }
            case UMAD_CMD -> c.send(umad.command(c, in).finish(0));
            case CM_EVENTS -> {
                cm.events(c, in);
                c.send(new Wire.Out().finish(0));
            }
            case CM_CMD -> {
                try {
                    c.send(cm.command(c, in).finish(0));
                } catch (ErrnoException x) {
                    if (RdmaCm.DEBUG) log.println("CM refused: " + x.getMessage());
                    throw x;
                }
            }
            default -> throw new Wire.Malformed("the first request must be HELLO, JOIN, EVENTS, CHANNEL, CONTEXTS, "
                    + "RDMA_RES, RDMA_STAT, RDMA_QSTAT, CM_OPEN, PCI_OPEN, UCTX_OPEN, UMAD_OPEN, PORT_LINK or TIME, "
                    + "not " + op);
        }
    }

    /**
     * PORT_LINK (nicsim port): node {@code q.node()}'s link goes down or comes up now, in simulated time; its adapter
     * then writes PORT_ERR or PORT_ACTIVE to its event queue, and the node's sysfs port reads as the link is.
     */
    private void portLink(WireLayout.PortLinkRequest q) throws IOException {
        int node = q.node();
        if (node < 0 || node >= world.hosts().size())
            throw new VerbsException(Errno.ENODEV, "node " + node + " does not exist (nodes 0.."
                    + (world.hosts().size() - 1) + ")");
        if (q.up() != 0 && q.up() != 1)
            throw new VerbsException(Errno.EINVAL, "link state " + q.up() + " must be 0 (down) or 1 (up)");
        boolean up = q.up() == 1;
        var h = world.host(node);
        boolean changed = h.within(() -> world.fabric.link(h.firmware.lid(), up));
        log.printf("nicsim serve: node %d's link %s at %d ps%n", node,
                changed ? (up ? "came up" : "went down") : "was already " + (up ? "up" : "down"), world.now());
        if (socket != null) Sysfs.portState(Attach.sysfsRoot(socket, node), up);
    }

    /** A request of a driver on its PCI function, or the end of its connection. */
    private void device(Request r) {
        if (r.op() == null) {
            if (r.body() == null) pci.closed(r.from(), "closed its PCI function");
            else driverBroke(r.from(), "op " + r.rawOp() + ": " + new String(r.body()));
            return;
        }
        requests++;
        try {
            pci.handle(r.from(), r.op(), new Wire.In(r.body()));
        } catch (Wire.Malformed x) {
            driverBroke(r.from(), r.op() + ": " + x.getMessage());
        } catch (RuntimeException x) { // as for a verb: the request fails EIO; an event's fault is its adapter's
            if (r.op() != Wire.Op.PCI_MMIO_WRITE) r.from().send(new Wire.Out().finish(Errno.EIO));
            if (!takeFaults())
                log.println("nicsim serve: " + r.op() + " of a driver failed: " + AdapterFaults.where(x));
        }
    }

    /** A driver broke the protocol ({@code why}): it is told EPROTO and its function is closed. */
    private void driverBroke(Connection c, String why) {
        protocolErrors++;
        c.send(new Wire.Out().finish(Errno.EPROTO));
        log.println("nicsim serve: a driver broke the protocol (" + why + "); disconnected");
        pci.closed(c, "was disconnected from its PCI function");
    }

    private static void refused(Connection c, End e, ByteBuffer reply) {
        if (e != null) e.program().requested(false);
        c.send(reply);
    }

    private void hello(Connection c, Wire.In in) throws IOException {
        WireLayout.HelloRequest q = in.read(WireLayout.HelloRequest.class);
        int version = q.version(), node = q.node(), pid = q.pid(), socketFd = q.socketFd(), cmdFd = q.cmdFd();
        String name = in.string("program");
        boolean ownRings = (in.read(WireLayout.OpenArgument.class).value() & Wire.HELLO_OWN_RINGS) != 0;
        if (version != Wire.VERSION) throw new Wire.Malformed("protocol version " + version
                + ", the simulator speaks " + Wire.VERSION);
        if (node < 0 || node >= world.hosts().size())
            throw new VerbsException(Errno.ENODEV, "node " + node + " does not exist (nodes 0.."
                    + (world.hosts().size() - 1) + ")");
        if (pci.holds(node))
            throw new VerbsException(Errno.EBUSY, "node " + node + "'s adapter is held by a driver through the PCI "
                    + "face");
        Program p = program(pid, name);
        Session s = new Session(nextSession++, world.host(node), p, cmdFd,
                domains.computeIfAbsent(node, n -> new XrcDomains(world.host(n))), ownRings);
        joined(c, s, p, socketFd);
        log.printf("nicsim serve: %s attached to node %d%n", p, node);
        c.send(new Wire.Out(new WireLayout.Opened(s.id)).finish(0));
    }

    /** Process {@code pid} (its program's path {@code name}), known from now on if it was not. */
    private Program program(int pid, String name) {
        return programs.computeIfAbsent(pid, k -> new Program(pid, Path.of(name).getFileName().toString()));
    }

    private void joined(Connection c, Session s, Program p, int fd) {
        p.uses(s, fd);
        p.requested(false);
        s.ends++;
        synchronized (this) { ends.put(c, new End(s, p, fd)); }
    }

    /**
     * A process using a context another opened (JOIN: the session, the opener's pid, its own, its
     * socket's number): a child forked after its parent opened it, or a process that imported it
     * (ibv_import_device of a duplicate of its command file). As with the kernel's shared uverbs
     * file, its verbs reach the same objects, from a connection of its own; the buffers it
     * registers are its own memory.
     */
    private void join(Connection c, Wire.In in) {
        WireLayout.JoinRequest q = in.read(WireLayout.JoinRequest.class);
        int id = q.session(), parent = q.parentPid(), pid = q.pid(), fd = q.socketFd();
        String name = in.string("program");
        Program from = programs.get(parent);
        Session s = from == null ? null : from.sessions.stream().filter(x -> x.id == id).findFirst().orElse(null);
        if (s == null) throw new Wire.Malformed("JOIN of session " + id + " of process " + parent
                + ", which is not attached");
        Program p = program(pid, name);
        joined(c, s, p, fd);
        log.printf("nicsim serve: %s uses the context of pid %d on node %d%n", p, parent, s.host.index);
        c.send(new Wire.Out().finish(0));
    }

    /**
     * The contexts open now (CONTEXTS): each one's session, the process that opened it, its command
     * file's number there, and its node. ibv_import_device finds by them which context a command
     * file it was given is a duplicate of (kcmp(2) compares the two files).
     */
    private synchronized Wire.Out contexts() {
        Set<Session> seen = new LinkedHashSet<>();
        for (End e : ends.values()) seen.add(e.session());
        Wire.Out out = new Wire.Out().u32(seen.size());
        for (Session s : seen) out.put(new WireLayout.ContextEntry(s.id, s.program.pid, s.cmdFd, s.host.index));
        return out;
    }

    /**
     * A program's async file (EVENTS) or one of its completion channels (CHANNEL, with the number
     * the program knows it by): a connection of its own, named by its session and process, which
     * the simulator writes events to. A channel is answered once, before any event.
     */
    private void eventFile(Connection c, Wire.In in, boolean channel) {
        WireLayout.EventFileRequest q = in.read(WireLayout.EventFileRequest.class);
        int id = q.session(), pid = q.pid(), number = channel ? in.read(WireLayout.ChannelNumber.class).channel() : 0;
        Program p = programs.get(pid);
        Session s = p == null ? null : p.sessions.stream().filter(x -> x.id == id).findFirst().orElse(null);
        if (s == null) { // the context closed before this reached us (or never was): nothing will be written here
            if (id <= 0 || id >= nextSession) throw new Wire.Malformed((channel ? "CHANNEL" : "EVENTS")
                    + " for session " + id
                    + " of process " + pid + ", which never attached");
            c.close();
            return;
        }
        if (channel) {
            s.events.channelTo(number, c);
            eventFiles.put(c, new EventFile(s, () -> s.events.channelClosed(number)));
            c.send(new Wire.Out().finish(0));
        } else {
            s.events.asyncTo(c);
            eventFiles.put(c, new EventFile(s, () -> s.events.asyncTo(null)));
        }
    }

    private void fileClosed(Connection c) {
        if (cm.owns(c)) {
            cm.closed(c, p -> { if (p.detached()) programs.remove(p.pid); });
            return;
        }
        if (umad.owns(c)) {
            umad.closed(c, p -> { if (p.detached()) programs.remove(p.pid); });
            return;
        }
        EventFile f = eventFiles.remove(c);
        if (f != null) f.gone().run();
        c.close();
    }

    private static String who(Session s) { return s == null ? "a new program" : s.program.toString(); }

    private void protocolError(Connection c, Session s, String why) {
        protocolErrors++;
        c.send(new Wire.Out().u32(0).finish(Errno.EPROTO));
        log.println("nicsim serve: " + (s == null ? "a program" : s.program) + " broke the protocol (" + why
                + "); disconnected");
        if (s != null) end(c, "disconnected for breaking the protocol");
        else fileClosed(c);
    }

    /** Programs' ended sessions whose report waits for a user context still open (see {@link #end}). */
    private final Map<Program, List<Runnable>> pendingReports = new HashMap<>();

    /**
     * A program's connection to a context ended; when it was the context's last (a forked child's
     * leaves its parent's), everything the context had in the adapter is released, and the others go on.
     */
    private void end(Connection c, String how) {
        c.close();
        End gone;
        synchronized (this) {
            gone = ends.remove(c);
            ending++; // attached() counts it until its report is out: a reader of the log then sees it whole
        }
        try {
            if (gone != null) ended(gone, how);
        } finally {
            synchronized (this) { ending--; }
        }
    }

    private void ended(End gone, String how) {
        Session s = gone.session();
        gone.program().leaves(s, gone.fd());
        if (gone.program().detached()) programs.remove(gone.program().pid);
        if (--s.ends > 0) return;
        for (var it = eventFiles.entrySet().iterator(); it.hasNext(); ) { // its files close with it
            var f = it.next();
            if (f.getValue().session() != s) continue;
            f.getKey().close();
            it.remove();
        }
        Program p = s.program;
        try {
            s.close();
        } catch (RuntimeException e) { // an event's fault while the destroys ran is its adapter's: that node resets
            if (!takeFaults()) log.println("nicsim serve: releasing " + p + "'s objects: " + e);
        }
        // a C driver's user context may close after its libibverbs session (the process's two sockets, taken in
        // either order): its QPs, destroyed then, belong in the report, which waits for it
        pendingReports.computeIfAbsent(p, k -> new ArrayList<>()).add(() -> report.ended(s, p, how));
        synchronized (this) { pending = pendingReports.size(); }
        reportIfClosed(p);
    }

    /** Reports {@code p}'s ended session once none of its user contexts is open any more. */
    private void reportIfClosed(Program p) {
        for (PciDevice d : p.devices.values()) if (d.user != null) return;
        List<Runnable> r = pendingReports.get(p);
        if (r == null) return;
        r.forEach(Runnable::run);
        pendingReports.remove(p);
        synchronized (this) { pending = pendingReports.size(); }
    }

    /**
     * Hands out what the open verbs got and the events that came; with {@code giveUp}, polls still empty are answered
     * empty.
     */
    private void answerWaits(boolean giveUp) {
        fenceExited();
        pci.answerWaits(giveUp);
        for (Session s : sessions()) {
            if (s.fatal != null) continue; // its adapter is gone: nothing more comes from it
            s.events.deliver();
            if (s.waits.waiting() == null) continue;
            boolean satisfied = s.waits.satisfied();
            if (s.waits.answer(giveUp) && !satisfied) emptyAnswers++;
        }
    }

    /**
     * Lets go every connection of a process whose memory is gone, as the kernel's close of an exiting process's files
     * would a moment later, rather than have the adapter run its queues on zeros until its sockets' ends reach serve.
     * By pid: a forked child's death does not end its parent's session.
     */
    private void fenceExited() {
        Set<Integer> gone = new HashSet<>();
        Collection<Session> attached = sessions();
        for (Session s : attached) gone.addAll(s.memoryGone());
        if (gone.isEmpty()) return;
        for (Map.Entry<Connection, End> e : List.copyOf(ends.entrySet())) {
            if (!gone.contains(e.getValue().program().pid)) continue;
            e.getKey().fenced = true;
            end(e.getKey(), "exited (its memory is gone)");
        }
        for (Session s : attached) for (int pid : gone) s.letGo(pid);
    }

    /** The sessions attached, each once. */
    private Collection<Session> sessions() {
        Set<Session> out = new LinkedHashSet<>();
        for (End e : ends.values()) out.add(e.session());
        return out;
    }

    /** What the run did: the programs, and the simulated time and traffic. */
    public void summary(PrintStream out) {
        out.printf("nicsim serve: simulated %.3f us; %d requests, %d times the programs waited on the simulation, "
                + "%d polls answered empty%s%n",
                world.now() / 1e6, requests, pacer.advances, emptyAnswers, protocolErrors == 0 ? "" : "; "
                        + protocolErrors + " protocol errors");
        if (faults.resets() > 0)
            out.printf("  adapters faulted and were reset %d times (see above); first: %s%n", faults.resets(),
                    faults.first());
        report.programs(out);
        for (Program p : programs.values()) out.println("  " + p + " still attached");
        if (pacer.awayAdvances > 0)
            out.printf("  simulated time moved %d times while a program was away from verbs (asleep outside them)%s: "
                    + "this run may not repeat exactly%n", pacer.awayAdvances,
                    pacer.graceAdvances == 0 ? "" : ", " + pacer.graceAdvances
                            + " of them after its grace time of " + graceMillis + " ms");
        watchdog.summary(out);
        cm.summary(out);
        RunReport.adapters(out, world.sim.counters());
    }

    @Override public void close() {
        if (recorder != null) recorder.closing();
        closed = true;
        for (Connection c : List.copyOf(ends.keySet())) end(c, "was detached when the simulator stopped");
        cm.close();
        pci.close();
        for (List<Runnable> r : pendingReports.values()) r.forEach(Runnable::run); // their contexts went with pci
        pendingReports.clear();
        synchronized (this) { pending = 0; }
        transport.close();
        if (recorder != null) {
            try {
                recorder.end(world.now());
            } catch (IOException e) {
                log.println("nicsim serve: ending the recording " + recorder.file() + ": " + e.getMessage());
            }
        }
        if (socket == null) return; // a replay's: nothing on disk
        try {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(Attach.hostsFile(socket));
            Sysfs.remove(Attach.sysfsRoot(socket, 0).getParent());
        } catch (IOException e) {
            log.println("nicsim serve: cleaning up " + socket.getParent() + ": " + e.getMessage());
        }
    }
}
