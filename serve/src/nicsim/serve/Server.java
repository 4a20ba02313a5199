package nicsim.serve;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 *
 * <p>This class is the loop and the dispatch of each request; the programs attached, who each connection is, and a
 * program's lifetime (its reports, letting go of one that exited) are {@link Attachments}'; what a connection's
 * first request opens is {@link FirstRequests}'.
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
    /** The programs attached, and who each connection is. */
    private final Attachments attachments;
    /** What a connection's first request opens. */
    private final FirstRequests firstRequests;
    /** Each node's XRC domains that programs share through files. */
    private final Map<Integer, XrcDomains> domains = new HashMap<>();
    /** What the run did, program by program. */
    private final RunReport report;
    private int quietRounds;
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
        this.attachments = new Attachments(report, log, this::takeFaults);
        this.cm = new RdmaCm(world, log);
        this.pci = new PciFace(world, log, p -> {
            attachments.reportIfClosed(p);
            attachments.leftIfDetached(p);
        });
        this.pacer = new Pacer(world, graceMillis, cm);
        this.watchdog = new Watchdog(world, watchdogPicos, log);
        this.faults = new AdapterFaults(world, log, pci, cm, domains, attachments::sessions);
        this.sm = new SubnetManager(world);
        this.umad = new Umad(world);
        this.firstRequests = new FirstRequests(world, socket, log, attachments, pci, cm, umad, domains);
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
    public int attached() { return attachments.attached(); }

    /**
     * What the server holds for programs now, by kind (socket connections, device contexts, programs, event
     * files, PCI functions, RDMA CM channels): all 0 once every program has left. Read it while the simulation
     * is quiet.
     */
    public synchronized Map<String, Integer> holdings() {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("connections", transport.connections());
        attachments.holdings(m);
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
                boolean none = attachments.none() && !pci.any();
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
                    for (Program p : attachments.programs()) p.answered = false; // each one looked at again
                }
                // a program woken by an event (asleep on its completion channel, say) acts and sleeps again without
                // a request: looked at again soon, not after IDLE_MICROS, which was most of such a round trip
                if (pacer.advance(attachments.programs(), r == null, this::answerWaits, yield)) quietRounds = 0;
                watchdog.look(attachments.programs());
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
            pacer.replay(step, attachments.programs(), this::answerWaits);
            watchdog.look(attachments.programs());
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
        Attachments.End e = attachments.end(c);
        Session s = e == null ? null : e.session();
        if (pci.owns(c)) {
            device(r);
            return;
        }
        if (c.fenced) return; // its program was let go as it exited: a request queued then would be "a new program"
        if (r.op() == null) {
            if (r.body() != null) protocolError(c, s, "op " + r.rawOp() + ": " + new String(r.body()));
            else if (s != null) attachments.end(c, "exited");
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
                firstRequests.handle(c, r.op(), in);
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

    private static void refused(Connection c, Attachments.End e, ByteBuffer reply) {
        if (e != null) e.program().requested(false);
        c.send(reply);
    }


    private void fileClosed(Connection c) {
        if (cm.owns(c)) {
            cm.closed(c, attachments::leftIfDetached);
            return;
        }
        if (umad.owns(c)) {
            umad.closed(c, attachments::leftIfDetached);
            return;
        }
        attachments.eventFileClosed(c);
        c.close();
    }

    private static String who(Session s) { return s == null ? "a new program" : s.program.toString(); }

    private void protocolError(Connection c, Session s, String why) {
        protocolErrors++;
        c.send(new Wire.Out().u32(0).finish(Errno.EPROTO));
        log.println("nicsim serve: " + (s == null ? "a program" : s.program) + " broke the protocol (" + why
                + "); disconnected");
        if (s != null) attachments.end(c, "disconnected for breaking the protocol");
        else fileClosed(c);
    }

    /**
     * Hands out what the open verbs got and the events that came; with {@code giveUp}, polls still empty are answered
     * empty.
     */
    private void answerWaits(boolean giveUp) {
        attachments.fenceExited();
        pci.answerWaits(giveUp);
        List<Session> attached = attachments.sessions(); // no copy while no connection came or went
        for (int i = 0; i < attached.size(); i++) {
            Session s = attached.get(i);
            if (s.fatal != null) continue; // its adapter is gone: nothing more comes from it
            s.events.deliver();
            if (s.waits.waiting() == null) continue;
            boolean satisfied = s.waits.satisfied();
            if (s.waits.answer(giveUp) && !satisfied) emptyAnswers++;
        }
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
        for (Program p : attachments.programs()) out.println("  " + p + " still attached");
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
        attachments.closeAll("was detached when the simulator stopped");
        cm.close();
        pci.close();
        attachments.reportAll(); // their contexts went with pci
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
