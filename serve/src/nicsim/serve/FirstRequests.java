package nicsim.serve;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;
import nicsim.driver.ErrnoException;
import nicsim.driver.World;
import nicsim.serve.Transport.Connection;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * The first request on a connection that is no program's context yet, which says what the connection is for: a
 * program's device context (HELLO, or JOIN of one another process opened), its async file or a completion channel,
 * an rdma_cm or umad file, a PCI function or user context, or a question answered at once (CONTEXTS, TIME, the
 * rdma tool's RDMA_RES, RDMA_STAT and RDMA_QSTAT, PORT_LINK). What it opens is kept in {@link Attachments} or by the
 * part that serves it.
 */
final class FirstRequests {
    private final World world;
    /** serve's socket, beside which the nodes' sysfs lives (null: a replay's, nothing on disk). */
    private final Path socket;
    private final PrintStream log;
    private final Attachments attachments;
    private final PciFace pci;
    private final RdmaCm cm;
    private final Umad umad;
    /** Each node's XRC domains that programs share through files. */
    private final Map<Integer, XrcDomains> domains;
    private int nextSession = 1;

    FirstRequests(World world, Path socket, PrintStream log, Attachments attachments, PciFace pci, RdmaCm cm,
            Umad umad, Map<Integer, XrcDomains> domains) {
        this.world = world;
        this.socket = socket;
        this.log = log;
        this.attachments = attachments;
        this.pci = pci;
        this.cm = cm;
        this.umad = umad;
        this.domains = domains;
    }

    /** The first request on a connection that is no program's context yet: what the connection is for. */
    void handle(Connection c, Wire.Op op, Wire.In in) throws IOException {
        try {
            firstOf(c, op, in);
        } finally { // a program known by a first request that then failed (it died meanwhile, say) holds nothing
            attachments.forgetDetached();
        }
    }

    private void firstOf(Connection c, Wire.Op op, Wire.In in) throws IOException {
        switch (op) {
            case HELLO -> hello(c, in);
            case JOIN -> join(c, in);
            case EVENTS -> eventFile(c, in, false);
            case CHANNEL -> eventFile(c, in, true);
            case CONTEXTS -> c.send(attachments.contexts().finish(0));
            // attach --sim-time's clock before the program opens its device: the simulation's time, at once
            case TIME -> c.send(new Wire.Out(new WireLayout.Time(world.now())).finish(0));
            case RDMA_RES -> c.send(RdmaResources.of(world, attachments.programs(),
                    in.read(WireLayout.NodeRequest.class).node()).finish(0));
            case RDMA_STAT ->
                c.send(RdmaResources.stats(world, in.read(WireLayout.NodeRequest.class).node()).finish(0));
            case RDMA_QSTAT -> c.send(RdmaCounters.handle(world, attachments.programs(),
                    in.read(WireLayout.QstatRequest.class)).finish(0));
            case PCI_OPEN -> {
                try {
                    c.send(pci.open(c, in, attachments::program, false).finish(0));
                } catch (ErrnoException x) { // the driver only sees an errno: the log says why
                    log.println("nicsim serve: PCI_OPEN refused: " + x.getMessage());
                    throw x;
                }
            }
            case UCTX_OPEN -> c.send(pci.open(c, in, attachments::program, true).finish(0));
            case PORT_LINK -> {
                portLink(in.read(WireLayout.PortLinkRequest.class));
                c.send(new Wire.Out().finish(0));
            }
            case CM_OPEN -> c.send(cm.open(c, in, attachments::program).finish(0));
            case UMAD_OPEN -> c.send(umad.open(c, in, attachments::program).finish(0));
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
        Program p = attachments.program(pid, name);
        Session s = new Session(nextSession++, world.host(node), p, cmdFd,
                domains.computeIfAbsent(node, n -> new XrcDomains(world.host(n))), ownRings);
        attachments.joined(c, s, p, socketFd);
        log.printf("nicsim serve: %s attached to node %d%n", p, node);
        c.send(new Wire.Out(new WireLayout.Opened(s.id)).finish(0));
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
        Session s = attachments.session(parent, id);
        if (s == null) throw new Wire.Malformed("JOIN of session " + id + " of process " + parent
                + ", which is not attached");
        Program p = attachments.program(pid, name);
        attachments.joined(c, s, p, fd);
        log.printf("nicsim serve: %s uses the context of pid %d on node %d%n", p, parent, s.host.index);
        c.send(new Wire.Out().finish(0));
    }

    /**
     * A program's async file (EVENTS) or one of its completion channels (CHANNEL, with the number
     * the program knows it by): a connection of its own, named by its session and process, which
     * the simulator writes events to. A channel is answered once, before any event.
     */
    private void eventFile(Connection c, Wire.In in, boolean channel) {
        WireLayout.EventFileRequest q = in.read(WireLayout.EventFileRequest.class);
        int id = q.session(), pid = q.pid(), number = channel ? in.read(WireLayout.ChannelNumber.class).channel() : 0;
        Session s = attachments.session(pid, id);
        if (s == null) { // the context closed before this reached us (or never was): nothing will be written here
            if (id <= 0 || id >= nextSession) throw new Wire.Malformed((channel ? "CHANNEL" : "EVENTS")
                    + " for session " + id
                    + " of process " + pid + ", which never attached");
            c.close();
            return;
        }
        if (channel) {
            s.events.channelTo(number, c);
            attachments.eventFile(c, s, () -> s.events.channelClosed(number));
            c.send(new Wire.Out().finish(0));
        } else {
            s.events.asyncTo(c);
            attachments.eventFile(c, s, () -> s.events.asyncTo(null));
        }
    }
}
