package nicsim.serve;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import nicsim.driver.ErrnoException;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.serve.Transport.Connection;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * The adapters offered as PCI functions to drivers in other processes (libnicsim): PCI_OPEN takes
 * a node's function for the connection's process, and every later request on that connection is
 * the driver's config, BAR, DMA-map or WAIT request ({@link PciDevice}). One driver per function;
 * a function the Java driver probed (a libibverbs program attached to its node) is refused EBUSY,
 * as is a libibverbs program on a node a driver holds. Runs on the simulator's thread only.
 */
final class PciFace implements AutoCloseable {
    private final World world;
    private final PrintStream log;
    /** In the order the drivers came, so what goes to each goes in the same order every run. */
    private final Map<Connection, PciDevice> devices = new LinkedHashMap<>();
    /** Told of a driver's program once one of its functions is closed (it may have nothing attached left). */
    private final Consumer<Program> left;
    /** serve --strict: a driver is stopped at its first violation. */
    volatile boolean strict;
    /** Replaces a node's host by a fresh one, with what must follow it ({@link AdapterFaults#reset}). */
    UnaryOperator<Host> resetNode = h -> {
        throw new IllegalStateException("PciFace.resetNode not set");
    };

    PciFace(World world, PrintStream log, Consumer<Program> left) {
        this.world = world;
        this.log = log;
        this.left = left;
    }

    /**
     * Drivers let go as they exited (their memory gone) whose connections have not ended yet: what they sent before
     * they died is dropped, and their connection's end is theirs.
     */
    private final Set<Connection> exited = new HashSet<>();

    boolean owns(Connection c) { return devices.containsKey(c) || exited.contains(c); }

    /** Whether a driver holds node {@code node}'s function. */
    boolean holds(int node) {
        for (PciDevice d : devices.values()) if (d.host.index == node && d.user == null && d.fatal == null) return true;
        return false;
    }

    /**
     * PCI_OPEN (version, node, pid, the socket's number in the process, the program's path, flags): the
     * function's config space size, BAR0's size, its MSI-X vectors, and the platform's MSI address
     * (where an MSI-X table entry must point for its message to be an interrupt).
     */
    Wire.Out open(Connection c, Wire.In in, BiFunction<Integer, String, Program> programs, boolean user)
            throws IOException {
        WireLayout.PciOpenRequest q = in.read(WireLayout.PciOpenRequest.class);
        int version = q.version(), node = q.node(), pid = q.pid(), fd = q.socketFd();
        String name = in.string("program");
        int argument = in.read(WireLayout.OpenArgument.class).value(); // a user context's session, else flags
        int sessionId = user ? argument : 0;
        int flags = user ? 0 : argument;
        if ((flags & ~PciDevice.OPEN_BAR0_32BIT) != 0)
            throw new VerbsException(Errno.EINVAL, String.format("PCI_OPEN flags 0x%x: only 0x%x (BAR0 32-bit) is "
                    + "defined", flags, PciDevice.OPEN_BAR0_32BIT));
        if (version != Wire.VERSION)
            throw new Wire.Malformed("protocol version " + version + ", the simulator speaks " + Wire.VERSION);
        if (node < 0 || node >= world.hosts().size())
            throw new VerbsException(Errno.ENODEV, "node " + node + " does not exist (nodes 0.."
                    + (world.hosts().size() - 1) + ")");
        if (holds(node))
            throw new VerbsException(Errno.EBUSY, "node " + node + "'s function is held by another driver");
        Program p = programs.apply(pid, name);
        Session session = p.sessions.stream().filter(s -> s.id == sessionId).findFirst().orElse(null);
        UserContext shared = null; // a context of the session opened already: this process imported it
        for (PciDevice o : devices.values())
            if (user && session != null && o.user != null && o.user.of(session) && o.host.index == node)
                shared = o.user;
        PciDevice d = new PciDevice(world.host(node), p, fd, user, session, shared);
        if ((flags & PciDevice.OPEN_BAR0_32BIT) != 0) {
            try {
                d.bar0As32Bit();
            } catch (ErrnoException x) {
                d.close(); // the bus's hooks go with it: the node is free again
                throw x;
            }
        }
        if (!user) d.resettingUntil(readyAt.getOrDefault(node, 0L));
        devices.put(c, d);
        p.devices.put(fd, d);
        p.requested(false);
        log.printf("nicsim serve: %s opened node %d's adapter as %s%n", p, node, shared != null
                ? "a user context it imported" : user ? "a user context" : "a PCI function");
        var cs = world.host(node).bus.configSpace(0);
        return new Wire.Out(new WireLayout.PciOpenReply(PciDevice.CONFIG_BYTES, cs.barSize(0), cs.msixVectors(),
                world.host(node).config.bus().msiAddress()));
    }

    /** A request on a driver's connection: answered now, later ({@link #answerWaits}), or not at all (posted). */
    void handle(Connection c, Wire.Op op, Wire.In in) {
        PciDevice d = devices.get(c);
        if (d == null) return; // its program exited and was let go: what it sent before it died goes nowhere
        Wire.Out out;
        if (d.fatal != null) { // its adapter faulted: a posted write goes nowhere, the rest fail as on a dead device
            d.program.requested(false);
            if (op != Wire.Op.PCI_MMIO_WRITE) c.send(new Wire.Out().finish(Errno.EIO));
            return;
        }
        try {
            out = d.host.within(() -> d.handle(op, in)); // what the request schedules is its node's
        } catch (ErrnoException x) {
            if (op == Wire.Op.PCI_MMIO_WRITE) { // posted: nobody waits for an answer; it is a violation
                d.refusedWrite(x.getMessage());
                d.program.requested(false);
                tell(c, d);
                return;
            }
            d.program.requested(false);
            d.answered();
            c.send(new Wire.Out().finish(x.errno()));
            log.println("nicsim serve: " + d.program + "'s " + op + " refused: " + x.getMessage());
            return;
        }
        d.program.requested(out == null && d.waiting());
        if (out != null) {
            d.answered();
            c.send(out.finish(0));
        }
        if (d.resetAsked()) functionReset(d, d.program + " initiated a function-level reset (FLR)", d.leftBehind());
    }

    /**
     * The function of {@code d}'s node reset ({@code cause}), as PCIe's function-level reset: the node's
     * adapter replaced by a fresh one, every queue, context, key, event queue, pending DMA and MSI-X
     * entry gone, which the log tells at the simulated time with what was left; a driver that stays
     * ({@code stays}) finds config space at its reset values once pci.flr.time has passed. The fresh host.
     */
    private void functionReset(PciDevice d, String cause, String left) {
        tell(d); // what the old adapter saw first
        Host old = d.host;
        long now = old.sim.now(), takes = old.config.flrTimePs();
        Host fresh = resetNode.apply(old);
        fresh.sim.counters().scope("node" + old.index).counter("Adapter.function_resets").inc();
        log.printf("nicsim serve: at %.3f us node %d's function was reset: %s; it left %s; ready %.3f us later%n",
                now / 1e6, old.index, cause, left, takes / 1e6);
        // the reset completes as an event of the fresh node: a driver waiting for it lets time run that far
        fresh.within(() -> fresh.sim.scheduleIn(takes, () -> { }));
        readyAt.put(old.index, now + takes);
        if (devices.containsValue(d)) d.rebind(fresh, now + takes);
    }

    /** When each node's last function-level reset completes (simulated time): a driver opening it sooner waits. */
    private final Map<Integer, Long> readyAt = new HashMap<>();

    /**
     * Tells the log what the device found wrong in driver {@code d}'s doing since last told; under
     * --strict, stops the driver at the first (its connection closes: its next call fails). Whether
     * it was stopped.
     */
    private boolean tell(Connection c, PciDevice d) {
        if (!tell(d) || !strict) return false;
        closed(c, "was stopped at its first violation (--strict)");
        return true;
    }

    /** Logs what the device found wrong in {@code d}'s doing since last told; whether there was anything. */
    private boolean tell(PciDevice d) {
        List<String> v = d.newViolations();
        for (String line : v)
            log.printf("nicsim serve: %s, node %d: the device reports %s%n", d.program, d.host.index, line);
        return !v.isEmpty();
    }

    /** Answers each open request that can be (with {@code giveUp}: a WAIT as it stands, nothing being left to run). */
    void answerWaits(boolean giveUp) {
        for (Map.Entry<Connection, PciDevice> e : new ArrayList<>(devices.entrySet())) {
            if (e.getValue().memoryGone()) { // as the kernel closes an exiting process's files: its queues stop now
                exited.add(e.getKey()); // its connection ends soon: the process is on its way out
                letGo(e.getKey(), "closed its PCI function as it exited (its memory is gone)");
                continue;
            }
            if (e.getValue().fatal != null || tell(e.getKey(), e.getValue())) continue;
            Wire.Out out = e.getValue().answer(giveUp);
            if (out != null) e.getKey().send(out.finish(0));
        }
    }

    /** The driver's connection ended ({@code how}: it closed its PCI function...): its mappings go. */
    void closed(Connection c, String how) {
        exited.remove(c);
        c.close();
        letGo(c, how);
    }

    /** Lets driver {@code c} go ({@code how}), its connection left as it is. */
    private void letGo(Connection c, String how) {
        PciDevice d = devices.remove(c);
        if (d == null) return;
        d.program.devices.remove(d.socketFd);
        tell(d);
        boolean whole = d.user == null && d.fatal == null; // a faulted adapter was reset already
        String leftBehind = whole ? d.leftBehind() : null;
        try {
            d.close();
        } finally { // a fault while it destroys what was left is its adapter's (the caller resets it): the program goes
            String summary = d.summary();
            if (d.user != null) how = how.replace("PCI function", "user context");
            log.printf("nicsim serve: %s %s on node %d: %s%n", d.program, how, d.host.index, summary);
            left.accept(d.program);
        }
        // as a host resets a device its guest or user-space driver let go (VFIO on release): the next finds it fresh
        if (whole) functionReset(d, "its driver " + d.program + " left", leftBehind);
    }

    /**
     * {@code old}'s adapter faulted ({@code why}) and is being reset: each driver and user context on it
     * has its open request answered EIO, and every later one too, till it closes.
     */
    void fatal(Host old, String why) {
        for (Map.Entry<Connection, PciDevice> e : devices.entrySet()) {
            PciDevice d = e.getValue();
            if (d.host != old || d.fatal != null) continue;
            if (d.fatal(why)) e.getKey().send(new Wire.Out().finish(Errno.EIO));
            d.program.requested(false);
        }
    }

    /** Whether any driver holds a function. */
    boolean any() { return !devices.isEmpty(); }

    /** PCI functions (drivers' connections) open now. */
    int open() { return devices.size(); }

    /** Every driver's connection. */
    List<Connection> connections() { return new ArrayList<>(devices.keySet()); }

    @Override public void close() {
        for (Connection c : connections()) closed(c, "was detached from its PCI function");
    }
}
