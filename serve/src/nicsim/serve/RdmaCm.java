package nicsim.serve;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import nicsim.serve.Transport.Connection;
import nicsim.driver.World;
import nicsim.fabric.Mad;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * RDMA CM for unmodified librdmacm: the kernel's rdma_cm file (ucma, ABI version 4), emulated as
 * uverbs is. A program's provider turns its open of /dev/infiniband/rdma_cm into two connections:
 * commands (each write(2) librdmacm makes, answered with what the kernel would copy out) and its
 * event file, a socket of the program's own that gets one byte per event queued, so the program may
 * poll it, make it non-blocking or be interrupted in it, and GET_EVENT takes the next event.
 *
 * <p>Each node has an IPv4 address ({@link #ip}); addresses resolve to nodes, routes to the fabric's
 * path between their ports, and connecting sends the IB CM's messages as MADs between the nodes'
 * agents ({@link CmAgent}, {@link CmExchange}), over the simulated fabric in simulated time.
 *
 * <p>This class holds the files, the identifiers and their events; the commands are decoded by {@link CmCommands},
 * binds and listeners are {@link CmPorts}', address and route resolution {@link CmResolve}'s.
 */
final class RdmaCm implements AutoCloseable {
    /**
     * The nodes' subnet, 127.77.0.0/16: node n is 127.77.0.0 + n + 1 (node 0 is 127.77.0.1). Linux routes all
     * of 127/8 to the loopback device and lets anyone bind there, so the same address reaches the node's
     * programs over ordinary TCP and UDP too, and nothing sent to it leaves the machine (docs/attach.md).
     */
    static final int SUBNET = 0x7F4D_0000, SUBNET_MASK = 0xFFFF_0000;
    /** The first port handed out to an identifier bound to port 0. */
    static final int EPHEMERAL = 32768;

    /** A program's rdma_cm file: its number there, its node, its two connections, and its events. */
    final class Channel {
        final int number, node, fd, commandFd;
        final Program program;
        final Connection commands;
        Connection events;
        final ArrayDeque<Pending> queue = new ArrayDeque<>();
        /** Whether an event waits to be read: what the program's entry for this file ({@link Program#cmFiles}) says. */
        final BooleanSupplier pending = () -> !queue.isEmpty();

        Channel(int number, int node, int fd, int commandFd, Program program, Connection commands) {
            this.number = number;
            this.node = node;
            this.fd = fd;
            this.commandFd = commandFd;
            this.program = program;
            this.commands = commands;
        }
    }

    /** An event waiting in a file, and the identifier it is for (its going drops the event). */
    record Pending(CmId id, CmId child, byte[] resp) {}

    /** NICSIM_CM_DEBUG set: every command and MAD goes to the log. */
    static final boolean DEBUG = System.getenv("NICSIM_CM_DEBUG") != null;
    final World world;
    final PrintStream log;
    private final CmAgent[] agents;
    private final Map<Connection, Channel> byCommands = new HashMap<>(), byEvents = new HashMap<>();
    private final Map<Integer, Channel> channels = new HashMap<>();
    final Map<Integer, CmId> ids = new LinkedHashMap<>();
    /** Identifiers whose timer may be running ({@link #awaitsTimer} drops those whose timer has gone). */
    private final Set<CmId> timed = new LinkedHashSet<>();
    final CmExchange exchange;
    /** AF_IB addressing: the nodes' GIDs, what an AF_IB bind takes. */
    final CmIb ib;
    /** Multicast joins: the SA's groups, asked for across the fabric. */
    final CmMulticast multicast = new CmMulticast(this);
    /** Binds and listeners, and address and route resolution. */
    final CmPorts ports = new CmPorts(this);
    final CmResolve resolve = new CmResolve(this);
    private final CmCommands decoder = new CmCommands(this);
    /** Work that simulation events (a MAD's interrupt, a timer) leave for between steps. */
    final ArrayDeque<Runnable> deferred = new ArrayDeque<>();
    private boolean agentsStarted;
    private int nextChannel = 1, nextId = 1;
    /** Events queued to programs' files so far: a program waiting on one may go on once this moves. */
    long written;
    long commands;

    RdmaCm(World world, PrintStream log) {
        this.world = world;
        this.log = log;
        this.agents = new CmAgent[world.hosts().size()];
        this.exchange = new CmExchange(this);
        this.ib = new CmIb(world);
    }

    static int ip(int node) { return SUBNET + node + 1; }

    /** Loopback outside the nodes' subnet (127.0.0.1, ...): the program's own node. */
    static boolean loopback(int ip) { return ip >>> 24 == 127 && (ip & SUBNET_MASK) != SUBNET; }

    /** An address a bind takes as any address: 0.0.0.0, or loopback outside the nodes' subnet. */
    static boolean wildcard(CmAbi.Addr a) { return a.any() || loopback(a.ip()); }

    static String ipText(int node) { return dotted(ip(node)); }

    static String dotted(int ip) {
        return (ip >>> 24) + "." + (ip >>> 16 & 0xff) + "." + (ip >>> 8 & 0xff) + "." + (ip & 0xff);
    }

    /**
     * The node an address names (loopback: {@code self}), -1 for one in the subnet no node has;
     * ENETUNREACH outside the subnet.
     */
    int nodeOf(int ip, int self) {
        if (loopback(ip)) return self;
        if ((ip & SUBNET_MASK) != SUBNET) throw new VerbsException(Errno.ENETUNREACH, "address " + dotted(ip)
                + " is outside nicsim's subnet 127.77.0.0/16 (node n is 127.77.0.<n+1>)");
        int n = ip - SUBNET - 1;
        return n >= 0 && n < agents.length ? n : -1;
    }

    /**
     * Node {@code n}'s adapter was reset after a fault: its agent went with it (the old one is touched no
     * more) and a new one starts on the fresh adapter at first use. Every identifier bound to that device
     * (to the node's address, or resolved or connected through it) gets RDMA_CM_EVENT_DEVICE_REMOVAL, as
     * the kernel's RDMA CM tells its ids when their device goes (cma_process_remove), and can then only be
     * destroyed: no MAD goes from the dead adapter, so a peer finds out as from a dead host, by its QP's
     * retries. A listener on any address is not told and listens on, on the fresh adapter, as the kernel's
     * wildcard listener loses only its per-device child.
     */
    void reset(int n) {
        agents[n] = null;
        for (CmId id : ids.values()) {
            if (id.node != n || id.state == CmId.State.DEVICE_REMOVAL) continue;
            id.cancelTimer();
            exchange.forget(id);
            id.state = CmId.State.DEVICE_REMOVAL;
            queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.DEVICE_REMOVAL, 0));
        }
    }

    /** Node {@code n}'s agent, started on first use. */
    CmAgent agent(int n) {
        if (agents[n] == null) {
            agents[n] = new CmAgent(world.host(n));
            agentsStarted = true;
        }
        return agents[n];
    }

    // ---- files ----

    /** CM_OPEN: a program opened the rdma_cm file (node, pid, its program's name, the number of its event file). */
    Wire.Out open(Connection c, Wire.In in, BiFunction<Integer, String, Program> programs) {
        WireLayout.CmOpenRequest q = in.read(WireLayout.CmOpenRequest.class);
        int node = q.node(), pid = q.pid(), fd = q.eventFile();
        String name = in.string("program");
        if (node < 0 || node >= agents.length)
            throw new VerbsException(Errno.ENODEV, "node " + node + " does not exist (nodes 0.."
                    + (agents.length - 1) + ")");
        Program p = programs.apply(pid, name);
        Channel ch = new Channel(nextChannel++, node, fd, q.commandFile(), p, c);
        channels.put(ch.number, ch);
        byCommands.put(c, ch);
        p.cmFiles.put(fd, ch.pending);
        p.cmCommands.put(ch.commandFd, ch);
        return new Wire.Out(new WireLayout.Opened(ch.number));
    }

    /** CM_EVENTS: the event file of channel {@code number} (its first and only message). */
    void events(Connection c, Wire.In in) {
        WireLayout.CmEventsRequest q = in.read(WireLayout.CmEventsRequest.class);
        int number = q.channel(), pid = q.pid();
        Channel ch = channels.get(number);
        if (ch == null || ch.program.pid != pid || ch.events != null)
            throw new Wire.Malformed("CM_EVENTS for channel " + number + " of process " + pid
                    + ", which is not its own");
        ch.events = c;
        byEvents.put(c, ch);
        for (int i = 0; i < ch.queue.size(); i++) token(ch);
    }

    boolean owns(Connection c) { return byCommands.containsKey(c) || byEvents.containsKey(c); }

    /** One of a channel's connections closed (the program closed the file, or ended): its identifiers go. */
    void closed(Connection c, Consumer<Program> programLeft) {
        Channel ch = byCommands.remove(c);
        if (ch == null) ch = byEvents.remove(c);
        if (ch == null) return;
        byCommands.remove(ch.commands);
        if (ch.events != null) byEvents.remove(ch.events);
        ch.commands.close();
        if (ch.events != null) ch.events.close();
        channels.remove(ch.number);
        for (CmId id : List.copyOf(ids.values())) if (id.channel == ch) destroy(id);
        // a file closed and another opened at once can share a number, and their connections' ends and starts
        // reach serve in either order: only this file's own entry goes
        ch.program.cmFiles.remove(ch.fd, ch.pending);
        ch.program.cmCommands.remove(ch.commandFd, ch);
        programLeft.accept(ch.program);
    }

    /**
     * Whether program {@code p} owes a peer the answer to a connection request or reply (REP or REJ, RTU) that came
     * less than {@code limitNanos} of wall time before {@code now} ({@link CmId#owesAnswer}).
     */
    boolean answerOwed(Program p, long now, long limitNanos) { return exchange.owes(p, now, limitNanos); }

    /**
     * The simulated time simulation must stay below while a program owes a peer the answer to its connection request
     * (the REQ came less than {@code limitNanos} of wall time before {@code now}, and the program still holds it): the
     * moment that peer's REQ timeout would run out; Long.MAX_VALUE when no answer is owed.
     */
    long answerHorizon(long now, long limitNanos) { return exchange.answerHorizon(now, limitNanos); }

    /** Starts {@code id}'s timer: at {@code at} ps of simulated time, {@code expiry} runs between simulation steps. */
    void startTimer(CmId id, long at, Runnable expiry) {
        id.cancelTimer();
        id.timer = world.sim.schedule(at, () -> deferred.add(() -> {
            id.timer = null;
            expiry.run();
        }));
        timed.add(id);
    }

    /**
     * Whether an identifier of the rdma_cm file program {@code p} reads events from on descriptor {@code fd} has a
     * timer running (an address no node answers, a REQ or REP unanswered): an event will come with simulated time.
     */
    boolean awaitsTimer(Program p, int fd) {
        if (timed.isEmpty()) return false;
        timed.removeIf(id -> id.timer == null || id.timer.cancelled() || !ids.containsKey(id.handle));
        for (CmId id : timed) if (id.channel.program == p && id.channel.fd == fd) return true;
        return false;
    }

    /** The channels open now. */
    int channelsOpen() { return channels.size(); }

    // ---- events ----

    /**
     * Queues event {@code resp} for {@code id} in its file (for a connection request, {@code child}
     * is the new identifier).
     */
    void queue(CmId id, CmId child, ByteBuffer resp) {
        Channel ch = id.channel;
        ch.queue.add(new Pending(id, child, resp.array()));
        if (ch.events != null) token(ch);
        written++;
    }

    private static void token(Channel ch) { ch.events.send(ByteBuffer.wrap(new byte[]{1})); }

    /** Takes what the adapters and timers left since the last look: between simulation steps. */
    void service() {
        while (!deferred.isEmpty()) deferred.poll().run();
        if (!agentsStarted) return;
        for (int n = 0; n < agents.length; n++)
            if (agents[n] != null && agents[n].pending())
                for (CmAgent.Received r : agents[n].received()) {
                    if (Mad.mgmtClass(r.mad()) == Mad.CLASS_SUBN_ADM)
                        multicast.received(n, r);
                    else exchange.received(n, r);
                }
        while (!deferred.isEmpty()) deferred.poll().run();
    }

    // ---- commands ----

    /** CM_CMD: one write(2) of librdmacm ({@link CmCommands}). */
    Wire.Out command(Connection c, Wire.In in) {
        Channel ch = byCommands.get(c);
        if (ch == null) throw new Wire.Malformed("a CM command on a connection that is not an rdma_cm file");
        return decoder.run(ch, in);
    }

    /** The rdma_cm file numbered {@code number}, or null. */
    Channel channel(int number) { return channels.get(number); }

    /** The nodes, each with an address and an agent. */
    int nodes() { return agents.length; }

    /** A new identifier in file {@code ch} (the program's {@code uid} for it, its port space and QP type). */
    CmId newId(Channel ch, long uid, int ps, int qpType) {
        CmId id = new CmId(nextId++, ch, uid, ps, qpType);
        ids.put(id.handle, id);
        return id;
    }

    /** Destroys {@code id} as rdma_destroy_id: its peer is told, its unread events go; the events handed out. */
    int destroy(CmId id) {
        exchange.leaving(id);
        multicast.destroyed(id);
        id.cancelTimer();
        ids.remove(id.handle);
        List<CmId> unasked = new ArrayList<>(); // requests to a listener that goes before the program saw them
        for (var it = id.channel.queue.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (p.id() != id && p.child() != id) continue;
            it.remove();
            if (p.child() != null && p.child() != id) unasked.add(p.child());
        }
        for (CmId c : unasked) if (ids.containsKey(c.handle)) destroy(c);
        return id.reported;
    }

    /** A new identifier for a request that came to listener {@code l}, in its file. */
    CmId child(CmId l) { return newId(l.channel, 0, l.ps, l.qpType); }

    /** The listener a request for {@code ps}/{@code port} to {@code ip} at {@code node} reaches ({@link CmPorts}). */
    CmId listener(int node, int ps, int port, int ip, int ipVersion) {
        return ports.listener(node, ps, port, ip, ipVersion);
    }

    /** One line per node: its address and its agent's traffic, for serve's summary. */
    void summary(PrintStream out) {
        if (commands == 0) return;
        StringBuilder b = new StringBuilder("  RDMA CM: " + commands + " commands; CM MADs sent/received per node:");
        long errors = 0;
        for (int n = 0; n < agents.length; n++) {
            if (agents[n] == null) continue;
            b.append(' ').append(n).append('=').append(agents[n].sent).append('/').append(agents[n].receivedCount);
            errors += agents[n].errors;
        }
        if (multicast.joinsSent > 0) b.append("; multicast: ").append(multicast.joinsSent).append(" SA joins, ")
                .append(multicast.leavesSent).append(" leaves");
        if (exchange.badMads > 0) b.append("; ").append(exchange.badMads).append(" MADs not understood, dropped");
        if (errors > 0) b.append("; ").append(errors).append(" error completions on the agents' QPs");
        out.println(b);
    }

    @Override public void close() {
        for (CmAgent a : agents) if (a != null) a.close();
    }
}
