package nicsim.serve;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import nicsim.fabric.Grh;
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
    private final CmExchange exchange;
    /** AF_IB addressing: the nodes' GIDs, what an AF_IB bind takes. */
    final CmIb ib;
    /** Multicast joins: the SA's groups, asked for across the fabric. */
    final CmMulticast multicast = new CmMulticast(this);
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

    /** CM_CMD: one write(2) of librdmacm: the command, the size it reads back, its input, then extras. */
    Wire.Out command(Connection c, Wire.In in) {
        Channel ch = byCommands.get(c);
        if (ch == null) throw new Wire.Malformed("a CM command on a connection that is not an rdma_cm file");
        WireLayout.CmCommand q = in.read(WireLayout.CmCommand.class);
        int cmd = q.command();
        byte[] body = in.bytes(in.items(q.in(), 1, "in"), "input");
        commands++;
        ch.program.requested(false);
        ByteBuffer b = CmAbi.le(Arrays.copyOf(body, Math.max(body.length, 512)));
        int need = inputSize(cmd);
        if (DEBUG) log.println("CM channel " + ch.number + " " + CmAbi.command(cmd));
        if (body.length < need)
            throw new VerbsException(Errno.EINVAL, CmAbi.command(cmd) + ": " + body.length + " bytes in, it takes "
                    + need);
        return switch (cmd) {
            case CmAbi.CREATE_ID, CmAbi.DESTROY_ID, CmAbi.BIND_IP, CmAbi.BIND, CmAbi.RESOLVE_IP, CmAbi.RESOLVE_ADDR,
                 CmAbi.RESOLVE_ROUTE, CmAbi.LISTEN -> identifier(ch, cmd, b, body);
            case CmAbi.QUERY_ROUTE -> new Wire.Out().bytes(CmPaths.route(this, id(ch, CmLayout.Query.ID.u32(b))));
            case CmAbi.QUERY -> new Wire.Out().bytes(CmPaths.query(this, id(ch, CmLayout.Query.ID.u32(b)),
                    CmLayout.Query.OPTION.u32(b), q.out()));
            case CmAbi.CONNECT -> exchange.connect(id(ch, CmLayout.Connect.ID.u32(b)), b,
                    CmLayout.Connect.CONN_PARAM.offset());
            case CmAbi.ACCEPT -> exchange.accept(id(ch, CmLayout.Accept.ID.u32(b)), CmLayout.Accept.UID.u64(b), b,
                    CmLayout.Accept.CONN_PARAM.offset());
            case CmAbi.REJECT -> reject(ch, b, body);
            case CmAbi.DISCONNECT -> exchange.disconnect(id(ch, CmLayout.Disconnect.ID.u32(b)));
            case CmAbi.INIT_QP_ATTR -> new Wire.Out().bytes(CmPaths.initQpAttr(this,
                    id(ch, CmLayout.InitQpAttr.ID.u32(b)), CmLayout.InitQpAttr.QP_STATE.u32(b)));
            case CmAbi.GET_EVENT -> getEvent(ch);
            case CmAbi.SET_OPTION -> setOption(id(ch, CmLayout.SetOption.ID.u32(b)), CmLayout.SetOption.LEVEL.u32(b),
                    CmLayout.SetOption.OPTNAME.u32(b), in);
            case CmAbi.NOTIFY -> exchange.notify(id(ch, CmLayout.Notify.ID.u32(b)));
            case CmAbi.MIGRATE_ID -> migrate(CmLayout.MigrateId.ID.u32(b),
                    channels.get(in.read(WireLayout.ChannelNumber.class).channel()), ch);
            case CmAbi.GET_OPTION -> throw new VerbsException(Errno.ENOSYS, "GET_OPTION: the kernel has none either");
            case CmAbi.JOIN_IP_MCAST -> multicast.joinIp(id(ch, CmLayout.JoinIpMcast.ID.u32(b)), b, body);
            case CmAbi.JOIN_MCAST -> multicast.join(id(ch, CmLayout.JoinMcast.ID.u32(b)), b, body);
            case CmAbi.LEAVE_MCAST -> multicast.leave(ch, CmLayout.DestroyId.ID.u32(b));
            default -> throw new VerbsException(Errno.EINVAL, "rdma_cm command " + cmd + " does not exist");
        };
    }

    /** REJECT: its private data (at most what the struct holds) and reason. */
    private Wire.Out reject(Channel ch, ByteBuffer b, byte[] body) {
        int at = CmLayout.Reject.PRIVATE_DATA.offset();
        int len = Math.min(CmLayout.Reject.PRIVATE_DATA_LEN.u8(b), CmLayout.Reject.PRIVATE_DATA.bytes());
        return exchange.reject(id(ch, CmLayout.Reject.ID.u32(b)), Arrays.copyOfRange(body, at, at + len),
                CmLayout.Reject.REASON.u8(b));
    }

    /** The commands that make, address and listen with an identifier. */
    private Wire.Out identifier(Channel ch, int cmd, ByteBuffer b, byte[] body) {
        return switch (cmd) {
            case CmAbi.CREATE_ID -> createId(ch, CmLayout.CreateId.UID.u64(b), CmLayout.CreateId.PS.u16(b),
                    CmLayout.CreateId.QP_TYPE.u8(b));
            case CmAbi.DESTROY_ID -> new Wire.Out().u32(destroy(id(ch, CmLayout.DestroyId.ID.u32(b))));
            case CmAbi.BIND_IP -> bind(id(ch, CmLayout.BindIp.ID.u32(b)),
                    CmAbi.addr(body, CmLayout.BindIp.ADDR.offset(), "bind address"));
            case CmAbi.BIND -> {
                CmIb.sized(body, CmLayout.Bind.ADDR.offset(), CmLayout.Bind.ADDR_SIZE.u16(b), false, "bind: addr");
                yield bind(id(ch, CmLayout.Bind.ID.u32(b)), CmAbi.addr(body, CmLayout.Bind.ADDR.offset(),
                        "bind address"));
            }
            case CmAbi.RESOLVE_IP -> resolveAddr(id(ch, CmLayout.ResolveIp.ID.u32(b)),
                    addrOrNone(body, CmLayout.ResolveIp.SRC_ADDR.offset()),
                    CmAbi.addr(body, CmLayout.ResolveIp.DST_ADDR.offset(), "destination"),
                    CmLayout.ResolveIp.TIMEOUT_MS.u32(b));
            case CmAbi.RESOLVE_ADDR -> resolveAddr2(ch, b, body);
            case CmAbi.RESOLVE_ROUTE -> resolveRoute(id(ch, CmLayout.ResolveRoute.ID.u32(b)));
            case CmAbi.LISTEN -> listen(id(ch, CmLayout.Listen.ID.u32(b)), CmLayout.Listen.BACKLOG.u32(b));
            default -> throw new IllegalStateException("command " + cmd);
        };
    }

    /** RESOLVE_ADDR: RESOLVE_IP's successor, its addresses of any family with their sizes. */
    private Wire.Out resolveAddr2(Channel ch, ByteBuffer b, byte[] body) {
        int src = CmLayout.ResolveAddr.SRC_ADDR.offset(), dst = CmLayout.ResolveAddr.DST_ADDR.offset();
        int srcSize = CmLayout.ResolveAddr.SRC_SIZE.u16(b);
        CmIb.sized(body, src, srcSize, true, "resolve_addr: src_addr");
        CmIb.sized(body, dst, CmLayout.ResolveAddr.DST_SIZE.u16(b), false, "resolve_addr: dst_addr");
        return resolveAddr(id(ch, CmLayout.ResolveAddr.ID.u32(b)), srcSize == 0 ? CmAbi.Addr.NONE
                : addrOrNone(body, src), CmAbi.addr(body, dst, "destination"), CmLayout.ResolveAddr.TIMEOUT_MS.u32(b));
    }

    /** The bytes of input command {@code cmd} takes (struct rdma_ucm_*), as the kernel checks them. */
    private static int inputSize(int cmd) {
        return switch (cmd) {
            case CmAbi.CREATE_ID -> CmLayout.CreateId.S.size;
            case CmAbi.DESTROY_ID -> CmLayout.DestroyId.S.size;
            case CmAbi.QUERY_ROUTE, CmAbi.QUERY -> CmLayout.Query.S.size;
            case CmAbi.INIT_QP_ATTR -> CmLayout.InitQpAttr.S.size;
            case CmAbi.MIGRATE_ID -> CmLayout.MigrateId.S.size;
            case CmAbi.BIND_IP -> CmLayout.BindIp.S.size;
            case CmAbi.RESOLVE_IP -> CmLayout.ResolveIp.S.size;
            case CmAbi.RESOLVE_ROUTE -> CmLayout.ResolveRoute.S.size;
            case CmAbi.LISTEN -> CmLayout.Listen.S.size;
            case CmAbi.NOTIFY -> CmLayout.Notify.S.size;
            case CmAbi.CONNECT -> CmLayout.Connect.RESERVED.end(); // older librdmacm sends no ECE
            case CmAbi.ACCEPT -> CmLayout.Accept.RESERVED.end();
            case CmAbi.REJECT -> CmLayout.Reject.S.size;
            case CmAbi.DISCONNECT -> CmLayout.Disconnect.S.size;
            case CmAbi.GET_EVENT -> CmLayout.GetEvent.S.size;
            case CmAbi.SET_OPTION -> CmLayout.SetOption.S.size;
            case CmAbi.BIND -> CmLayout.Bind.S.size;
            case CmAbi.RESOLVE_ADDR -> CmLayout.ResolveAddr.S.size;
            case CmAbi.JOIN_IP_MCAST -> CmLayout.JoinIpMcast.S.size;
            case CmAbi.JOIN_MCAST -> CmLayout.JoinMcast.S.size;
            case CmAbi.LEAVE_MCAST -> CmLayout.DestroyId.S.size; // the kernel's leave takes a destroy_id
            default -> 0;
        };
    }

    private static CmAbi.Addr addrOrNone(byte[] body, int off) {
        return CmAbi.family(body, off) == 0 ? CmAbi.Addr.NONE : CmAbi.addr(body, off, "source");
    }

    /** Identifier {@code handle} of this file, or EINVAL (ENOENT, as the kernel, for one that is not there). */
    private CmId id(Channel ch, int handle) {
        CmId id = ids.get(handle);
        if (id == null) throw new VerbsException(Errno.ENOENT, "cm_id " + Integer.toUnsignedString(handle)
                + " does not exist");
        if (id.channel != ch) throw new VerbsException(Errno.EINVAL, "cm_id " + handle
                + " belongs to another rdma_cm file");
        return id;
    }

    private Wire.Out createId(Channel ch, long uid, int ps, int qpType) {
        int type = switch (ps) {
            case CmAbi.PS_TCP -> CmAbi.QPT_RC;
            case CmAbi.PS_UDP, CmAbi.PS_IPOIB -> CmAbi.QPT_UD;
            case CmAbi.PS_IB -> {
                // the IB port space takes the program's QP type, as the kernel's ucma_get_qp_type: XRC too
                if (qpType != CmAbi.QPT_RC && qpType != CmAbi.QPT_UC && qpType != CmAbi.QPT_UD
                        && qpType != CmAbi.QPT_XRC_INI && qpType != CmAbi.QPT_XRC_TGT)
                    throw new VerbsException(Errno.EINVAL, "create_id: qp_type " + qpType
                            + " is not RC, UC, UD, XRC_SEND (9) or XRC_RECV (10)");
                yield qpType;
            }
            default -> throw new VerbsException(Errno.EINVAL, "create_id: port space 0x" + Integer.toHexString(ps)
                    + " is none of RDMA_PS_TCP, _UDP, _IB, _IPOIB");
        };
        CmId id = new CmId(nextId++, ch, uid, ps, type);
        ids.put(id.handle, id);
        return new Wire.Out().u32(id.handle);
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
    CmId child(CmId l) {
        CmId c = new CmId(nextId++, l.channel, 0, l.ps, l.qpType);
        ids.put(c.handle, c);
        return c;
    }

    private Wire.Out bind(CmId id, CmAbi.Addr a) {
        if (id.state != CmId.State.IDLE)
            throw new VerbsException(Errno.EINVAL, "bind: cm_id " + id.handle + " is " + id.state + ", not idle");
        id.bindPs = id.ps;
        if (a.ib() != null) a = ib.local(id, a);
        int node = -1;
        // a loopback address binds as any address does (the kernel's cma_any_addr): no device, and a listener
        // there takes requests to every address of the node, so libfabric, given no address, finds the node's
        if (!a.any() && !loopback(a.ip())) {
            int n = nodeOfLocal(a.ip(), id.channel.node);
            if (n != id.channel.node) throw new VerbsException(Errno.EADDRNOTAVAIL, "bind: " + dotted(a.ip())
                    + " is not this node's address (node " + id.channel.node + " is " + dotted(ip(id.channel.node))
                            + ")");
            node = n;
        }
        int port = a.port() != 0 ? a.port() : ephemeral(id.bindPs, node, id.channel.node);
        // an AF_IB identifier is no family's only (the kernel sets afonly for IPv4 and IPv6 binds alone)
        boolean afonly = a.ib() == null && (id.afonlyOption != null ? id.afonlyOption : !a.v6());
        for (CmId o : ids.values())
            if (o != id && o.bound && o.bindPs == id.bindPs && o.src.port() == port
                    && overlaps(o, node, id.channel.node)
                    && !(o.reuseAddr && id.reuseAddr && o.state != CmId.State.LISTEN)
                    && !(afonly && o.afonly && o.src.v6() != a.v6())) // each family's own: 0.0.0.0 and [::] coexist
                throw new VerbsException(Errno.EADDRINUSE, "bind: port " + port + " of " + (node < 0 ? "any address"
                        : dotted(ip(node))) + " is in use (" + o + ")");
        id.node = node;
        // an AF_IB address's service ID names its port space and port (cma_select_ib_ps)
        CmAbi.Ib sib = a.ib() == null ? null
                : a.ib().withSid(CmIb.ps(id.bindPs) | port, CmAbi.IB_PS_MASK | a.ib().sidMask());
        id.src = new CmAbi.Addr(loopback(a.ip()) ? a.ip() : a.any() ? 0 : ip(node), port, a.v6(), sib);
        id.afonly = afonly;
        id.bound = true;
        id.state = CmId.State.ADDR_BOUND;
        return new Wire.Out();
    }

    private int nodeOfLocal(int ip, int self) {
        int n = loopback(ip) ? self : (ip & SUBNET_MASK) == SUBNET ? ip - SUBNET - 1 : -1;
        if (n < 0 || n >= agents.length) throw new VerbsException(Errno.EADDRNOTAVAIL, "bind: no node has address "
                + dotted(ip));
        return n;
    }

    private static boolean overlaps(CmId o, int node, int self) {
        int on = o.node >= 0 ? o.node : o.channel.node, nn = node >= 0 ? node : self;
        return on == nn;
    }

    private int ephemeral(int ps, int node, int self) {
        for (int port = EPHEMERAL; port < 65536; port++) {
            boolean free = true;
            for (CmId o : ids.values())
                if (o.bound && o.bindPs == ps && o.src.port() == port && overlaps(o, node, self)) free = false;
            if (free) return port;
        }
        throw new VerbsException(Errno.EADDRINUSE, "bind: every port is in use");
    }

    private Wire.Out resolveAddr(CmId id, CmAbi.Addr src, CmAbi.Addr dst, int timeoutMs) {
        CmAbi.Ib dib = dst.ib();
        // an unbound identifier binds to any address of the destination's family (an AF_IB one with its P_Key)
        if (id.state == CmId.State.IDLE) bind(id, src != CmAbi.Addr.NONE ? src : dib == null
                ? new CmAbi.Addr(0, 0, dst.v6())
                : new CmAbi.Addr(0, 0, false, new CmAbi.Ib(0, 0, dib.pkey(), 0, 0, 0, 0)));
        if (id.state != CmId.State.ADDR_BOUND)
            throw new VerbsException(Errno.EINVAL, "resolve_addr: cm_id " + id.handle + " is " + id.state);
        if (id.ib() != (dib != null)) throw new VerbsException(Errno.EINVAL, "resolve_addr: destination " + dst
                + " is not of the family cm_id " + id.handle + " is bound in (" + id.src + ")");
        if (dib != null ? dib.any() : dst.any())
            throw new VerbsException(Errno.EINVAL, "resolve_addr: destination is any address");
        // 224.0.0.0/4, or an MGID (ff00::/8): a group, reached by the node's own port
        boolean multicastDst = dib != null ? dib.hi() >>> 56 == 0xff : (dst.ip() & 0xF000_0000) == 0xE000_0000;
        int remote = multicastDst ? -1
                : dib != null ? ib.nodeOfGid(dib.hi(), dib.lo()) : nodeOf(dst.ip(), id.channel.node);
        if (dib != null && remote >= 0) dst = new CmAbi.Addr(ip(remote), dst.port(), false, dib);
        if (id.node < 0) id.node = id.channel.node;
        if (id.src.any()) id.src = new CmAbi.Addr(ip(id.node), id.src.port(), id.src.v6(),
                id.ib() ? id.src.ib().withGid(ib.gid(id.node)) : null);
        id.dst = dst;
        id.state = CmId.State.ADDR_QUERY;
        if (multicastDst) { // resolves to the node's own port, as Linux routes 224/4 out of its IPoIB device
            agent(id.node);
            id.state = CmId.State.ADDR_RESOLVED;
            queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ADDR_RESOLVED, 0));
            return new Wire.Out();
        }
        if (remote < 0 && dib == null) {
            // in the subnet, but no node answers ARP: as Linux's addr.c, the query waits its timeout (in simulated
            // time) and fails ETIMEDOUT
            startTimer(id, world.now() + Math.max(1, Integer.toUnsignedLong(timeoutMs)) * 1_000_000_000L, () -> {
                if (id.state != CmId.State.ADDR_QUERY || !ids.containsKey(id.handle)) return;
                id.state = CmId.State.ADDR_BOUND;
                queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ADDR_ERROR, -Errno.ETIMEDOUT));
            });
            return new Wire.Out();
        }
        // an AF_IB destination is its GID, resolved at once as the kernel's cma_resolve_ib_addr takes it, even one
        // no port has (remote -1): the route resolution's path query finds it missing
        id.remoteNode = remote;
        agent(id.node);
        if (remote >= 0) agent(remote);
        id.state = CmId.State.ADDR_RESOLVED;
        queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ADDR_RESOLVED, 0));
        return new Wire.Out();
    }

    private Wire.Out resolveRoute(CmId id) {
        if (id.state != CmId.State.ADDR_RESOLVED && id.state != CmId.State.ROUTE_RESOLVED)
            throw new VerbsException(Errno.EINVAL, "resolve_route: cm_id " + id.handle + " is " + id.state
                    + "; resolve its address first");
        CmAbi.Ib dib = id.dst.ib();
        if (dib != null && id.remoteNode < 0 && dib.hi() >>> 56 != 0xff) {
            // a GID no port has: the SA answers the PathRecord query with no record (status ERR_NO_RECORDS), which
            // ib_sa passes on as EINVAL and cma_query_handler as ROUTE_ERROR; the address stays resolved
            id.state = CmId.State.ADDR_RESOLVED;
            queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ROUTE_ERROR, -Errno.EINVAL));
            return new Wire.Out();
        }
        id.state = CmId.State.ROUTE_RESOLVED;
        queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ROUTE_RESOLVED, 0));
        return new Wire.Out();
    }

    private Wire.Out listen(CmId id, int backlog) {
        if (id.state == CmId.State.IDLE) bind(id, CmAbi.Addr.NONE);
        if (id.state != CmId.State.ADDR_BOUND && id.state != CmId.State.LISTEN)
            throw new VerbsException(Errno.EINVAL, "listen: cm_id " + id.handle + " is " + id.state);
        for (CmId o : ids.values())
            if (o != id && o.state == CmId.State.LISTEN && o.bindPs == id.bindPs && o.src.port() == id.src.port()
                    && overlaps(o, id.node, id.channel.node) && (wildcard(o.src) || wildcard(id.src)
                            || o.src.ip() == id.src.ip()) && !(o.afonly && id.afonly && o.src.v6() != id.src.v6()))
                throw new VerbsException(Errno.EADDRINUSE, "listen: " + o + " already listens there");
        int b = backlog > 0 && backlog < 1024 ? backlog : 1024;
        id.backlogLeft += b - id.backlog;
        id.backlog = b;
        if (id.state != CmId.State.LISTEN)
            log.printf("nicsim serve: %s listens on %s, port %d (RDMA CM, node %d)%n", id.channel.program,
                    id.ib() ? (id.src.any() ? "any GID" : "GID " + Grh.text(id.src.ib().hi(),
                            id.src.ib().lo())) + " (AF_IB, service ID 0x" + Long.toHexString(id.src.ib().sid()) + ")"
                    : id.src.any() ? "any address" : dotted(id.src.ip()) + (loopback(id.src.ip()) ? " (any address)"
                            : ""), id.src.port(), id.listenNode());
        id.state = CmId.State.LISTEN;
        return new Wire.Out();
    }

    /**
     * The listener that takes a request for {@code ps}/{@code port} to address {@code ip} arriving at {@code node},
     * or null. A request's IP version ({@code ipVersion}, from the RDMA CM header: 4 or 6, 0 for a request with none,
     * an AF_IB identifier's) reaches a listener of its family, or one of the other family that is not its family's
     * only (an IPv6 listener without AFONLY); an AF_IB listener takes every request, as the kernel's
     * cma_match_private_data, and a request without a header reaches an IP listener only on any address, not AFONLY.
     */
    CmId listener(int node, int ps, int port, int ip, int ipVersion) {
        CmId any = null;
        for (CmId o : ids.values()) {
            if (o.state != CmId.State.LISTEN || o.src.port() != port || o.listenNode() != node) continue;
            if (o.bindPs != ps && !(o.bindPs == CmAbi.PS_IB && (ps == CmAbi.PS_TCP || ps == CmAbi.PS_UDP))) continue;
            if (o.ib() || ipVersion == 0) {
                if (o.ib() || wildcard(o.src) && !o.afonly) any = any == null ? o : any;
                continue;
            }
            if (o.afonly && o.src.v6() != (ipVersion == 6)) continue;
            if (!o.src.any() && o.src.ip() == ip) return o;
            if (wildcard(o.src)) any = o;
        }
        return any;
    }

    private Wire.Out getEvent(Channel ch) {
        Pending p = ch.queue.poll();
        if (p == null) throw new VerbsException(Errno.EAGAIN, "no event");
        p.id().reported++;
        multicast.handedOut(p.resp());
        if (p.child() != null) p.id().backlogLeft++; // a request handed out frees its place in the backlog
        return new Wire.Out().bytes(p.resp());
    }

    private Wire.Out setOption(CmId id, int level, int name, Wire.In in) {
        byte[] v = in.bytes(in.items(in.read(WireLayout.OptionLength.class).optlen(), 1, "optlen"), "optval");
        int value = v.length >= 4 ? CmAbi.le(v).getInt(0) : v.length > 0 ? v[0] & 0xff : 0;
        if (level == 0 && name == 1) id.reuseAddr = value != 0; // RDMA_OPTION_ID_REUSEADDR
        else if (level == 0 && name == 3) id.ackTimeout = v.length > 0 ? v[0] & 0x1f : -1; // ACK_TIMEOUT
        else if (level == 0 && name == 2) { // AFONLY: before the bind only, as the kernel's rdma_set_afonly
            if (id.state != CmId.State.IDLE) throw new VerbsException(Errno.EINVAL, "set_option: AFONLY on cm_id "
                    + id.handle + ", which is " + id.state + ": it must be set before the bind");
            id.afonlyOption = value != 0;
        } else if (!(level == 0 && name == 0)) // TOS is taken and changes nothing here
            throw new VerbsException(level == 1 ? Errno.EINVAL : Errno.ENOSYS, "set_option: level " + level + " option "
                    + name + (level == 1 ? ": path records come from the fabric" : " does not exist"));
        return new Wire.Out();
    }

    /** MIGRATE_ID, written to the file {@code to}: identifier {@code handle} of file {@code from} moves there. */
    private Wire.Out migrate(int handle, Channel from, Channel to) {
        if (from == null || from.program != to.program)
            throw new VerbsException(Errno.EBADF, "migrate_id: the file given is not an rdma_cm file of this process");
        CmId id = id(from, handle);
        int reported = id.reported;
        List<Pending> moving = new ArrayList<>();
        for (var it = from.queue.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (p.id() == id) {
                it.remove();
                moving.add(p);
            }
        }
        id.channel = to;
        for (Pending p : moving) queue(id, p.child(), ByteBuffer.wrap(p.resp()));
        id.reported = 0;
        return new Wire.Out().u32(reported);
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
