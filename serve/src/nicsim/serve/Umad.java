package nicsim.serve;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.driver.World;
import nicsim.fabric.Mad;
import nicsim.firmware.Management;
import nicsim.serve.CmLayout.UserMadHdr;
import nicsim.serve.CmLayout.UserMadHdrOld;
import nicsim.serve.Transport.Connection;
import nicsim.sim.Simulator;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * The kernel's ib_umad for attached programs (libibumad's /dev/infiniband/umadN, ABI version 5, with
 * P_Key indexes): a file per open, agents registered on it for QP0 or QP1, MADs written to it sent
 * from the node adapter's special QP, and MADs the adapter passes up read from it. As ib_umad does:
 * a request's TID gets the agent's number in its upper 32 bits, and its response (matched by TID)
 * comes back to that agent, or, after {@code timeout_ms} of simulated time and its retries, the request
 * itself with status ETIMEDOUT; an unsolicited request goes to the agent registered for its QP, class,
 * version and method; an SA table that comes in RMPP segments is read whole (the first segment's
 * header, then every segment's data). The file the program holds is a socket serve writes each MAD
 * to as a frame (u32 length, u32 0, then the struct ib_user_mad), so poll sees it readable when one waits
 * (interpose/nicsim-umad.c).
 */
final class Umad {
    /** struct ib_user_mad_hdr: 64 bytes (56 without the P_Key index the program enabled). */
    static final int ETIMEDOUT = 110;
    /** UMAD_CMD kinds. */
    static final int REGISTER = 1, UNREGISTER = 2, SEND = 3, ENABLE_PKEY = 4;
    static final int SA_DATA = 56, RMPP_FLAGS = 26, RMPP_ACTIVE = 1, RMPP_LAST = 4;

    record Agent(int id, File file, int qp, int cls, int version, long methodsLo, long methodsHi) {
        boolean takes(int q, byte[] m) {
            int method = Mad.method(m);
            long bits = method < 64 ? methodsLo : methodsHi;
            return q == qp && Mad.mgmtClass(m) == cls && Mad.classVersion(m) == version
                    && (bits >>> (method & 63) & 1) != 0;
        }
    }

    /** A request sent and waiting for its response: its MAD (to time out with), its timer, RMPP segments so far. */
    static final class Sent {
        final Agent agent;
        final byte[] mad;
        final int dlid, dqp, qp;
        int retries;
        Simulator.Event timer;
        final List<byte[]> segments = new ArrayList<>();

        Sent(Agent agent, byte[] mad, int qp, int dlid, int dqp, int retries) {
            this.agent = agent; this.mad = mad; this.qp = qp; this.dlid = dlid; this.dqp = dqp; this.retries = retries;
        }
    }

    final class File {
        final int number, node;
        final Program program;
        final int fd;
        final Connection commands;
        Connection events;
        boolean pkey;
        final ArrayDeque<ByteBuffer> early = new ArrayDeque<>(); // frames before the events connection came

        File(int number, int node, Program program, int fd, Connection commands) {
            this.number = number; this.node = node; this.program = program; this.fd = fd; this.commands = commands;
        }
    }

    private final World world;
    private final Map<Integer, File> files = new HashMap<>();
    private final Map<Connection, File> byConnection = new HashMap<>();
    private final Map<Integer, Agent> agents = new LinkedHashMap<>();
    private final Map<Long, Sent> outstanding = new HashMap<>();
    private final boolean[] listening;
    private int nextFile = 1, nextAgent = 1;
    long sent, delivered, timeouts;

    Umad(World world) {
        this.world = world;
        this.listening = new boolean[world.hosts().size()];
    }

    /**
     * Node {@code n}'s adapter was reset: the new one needs the listener again, and what its agents had
     * outstanding comes back at once with ETIMEDOUT (the old adapter's timers went with it).
     */
    void reset(int n) {
        listening[n] = false;
        for (Sent s : List.copyOf(outstanding.values()))
            if (s.agent.file.node == n) {
                outstanding.remove(Mad.tid(s.mad));
                timeouts++;
                deliver(s.agent, ETIMEDOUT, s.dlid, s.dqp, s.mad);
            }
        if (files.values().stream().anyMatch(f -> f.node == n)) listen(n);
    }

    private void listen(int n) {
        if (listening[n]) return;
        listening[n] = true;
        world.host(n).firmware.management().listen((qp, slid, src, mad) -> arrived(n, qp, slid, src, mad));
    }

    /** UMAD_OPEN: node, port, pid, the number the program's file will have, the program's name. */
    Wire.Out open(Connection c, Wire.In in, BiFunction<Integer, String, Program> programs) {
        WireLayout.UmadOpenRequest q = in.read(WireLayout.UmadOpenRequest.class);
        int node = q.node(), port = q.port(), pid = q.pid(), fd = q.file();
        String name = in.string("program");
        if (node < 0 || node >= listening.length)
            throw new VerbsException(Errno.ENODEV, "node " + node + " does not exist (nodes 0.."
                    + (listening.length - 1) + ")");
        if (port != 1) throw new VerbsException(Errno.ENODEV, "umad port " + port + ": the adapter has port 1 only");
        Program p = programs.apply(pid, name);
        File f = new File(nextFile++, node, p, fd, c);
        files.put(f.number, f);
        byConnection.put(c, f);
        // a thread asleep on the file is away from verbs (time moves); one with a MAD to read is not asleep
        p.cmFiles.put(fd, () -> false);
        listen(node);
        return new Wire.Out(new WireLayout.Opened(f.number));
    }

    /** UMAD_EVENTS: the connection that is the program's file (its first and only message). */
    void events(Connection c, Wire.In in) {
        WireLayout.UmadEventsRequest q = in.read(WireLayout.UmadEventsRequest.class);
        int number = q.file(), pid = q.pid();
        File f = files.get(number);
        if (f == null || f.program.pid != pid || f.events != null)
            throw new Wire.Malformed("UMAD_EVENTS for file " + number + " of process " + pid
                    + ", which is not its own");
        f.events = c;
        byConnection.put(c, f);
        while (!f.early.isEmpty()) c.send(f.early.poll());
    }

    boolean owns(Connection c) { return byConnection.containsKey(c); }

    /** A connection of a file closed: its agents go, and their outstanding requests with them. */
    void closed(Connection c, Consumer<Program> programLeft) {
        File f = byConnection.remove(c);
        if (f == null) return;
        byConnection.remove(f.commands);
        if (f.events != null) byConnection.remove(f.events);
        f.commands.close();
        if (f.events != null) f.events.close();
        files.remove(f.number);
        agents.values().removeIf(a -> a.file == f);
        outstanding.values().removeIf(s -> {
            if (s.agent.file != f) return false;
            if (s.timer != null) s.timer.cancel();
            return true;
        });
        f.program.cmFiles.remove(f.fd);
        programLeft.accept(f.program);
    }

    /**
     * UMAD_CMD: REGISTER (qp, class, version, methods), UNREGISTER (agent), SEND (agent, timeout, retries, route, MAD).
     */
    Wire.Out command(Connection c, Wire.In in) {
        File f = byConnection.get(c);
        if (f == null || f.commands != c)
            throw new Wire.Malformed("a umad command on a connection that is not a umad file");
        int kind = in.read(WireLayout.UmadCommand.class).kind();
        switch (kind) {
            case ENABLE_PKEY -> { f.pkey = true; return new Wire.Out(); }
            case REGISTER -> {
                WireLayout.UmadRegister q = in.read(WireLayout.UmadRegister.class);
                int qp = q.qpn(), cls = q.mgmtClass(), version = q.classVersion();
                long lo = q.methodsLo(), hi = q.methodsHi();
                if (qp != 0 && qp != 1) throw new VerbsException(Errno.EINVAL, "umad agent on QP " + qp + ": 0 or 1");
                if (qp == 0 != (cls == Mad.CLASS_SUBN_LID || cls == Mad.CLASS_SUBN_DR) && cls != 0)
                    throw new VerbsException(Errno.EINVAL,
                            String.format("umad agent for class 0x%02x on QP%d", cls, qp));
                for (Agent a : agents.values())
                    if (cls != 0 && a.file.node == f.node && a.qp == qp && a.cls == cls && a.version == version
                            && ((a.methodsLo & lo) | (a.methodsHi & hi)) != 0)
                        throw new VerbsException(Errno.EINVAL, String.format(
                                "umad agent for class 0x%02x version %d: its methods are another agent's", cls,
                                version));
                Agent a = new Agent(nextAgent++, f, qp, cls, version, lo, hi);
                agents.put(a.id, a);
                return new Wire.Out(new WireLayout.UmadAgent(a.id));
            }
            case UNREGISTER -> {
                Agent a = agents.get(in.read(WireLayout.UmadAgent.class).agent());
                if (a == null || a.file != f) throw new VerbsException(Errno.EINVAL, "no such umad agent");
                agents.remove(a.id);
                return new Wire.Out();
            }
            case SEND -> { send(f, in); return new Wire.Out(); }
            default -> throw new Wire.Malformed("umad command " + kind);
        }
    }

    private void send(File f, Wire.In in) {
        WireLayout.UmadSend q = in.read(WireLayout.UmadSend.class);
        int id = q.agent(), timeout = q.timeoutMs(), retries = q.retries();
        int dlid = q.lid(), dqp = q.qpn() & 0xffffff;
        byte[] mad = in.bytes(q.length(), "MAD");
        Agent a = agents.get(id);
        if (a == null || a.file != f)
            throw new VerbsException(Errno.EINVAL, "umad send on agent " + id + ", not the file's");
        if (mad.length < Mad.HEADER || mad.length > Mad.SIZE)
            throw new VerbsException(Errno.EINVAL, "umad send of " + mad.length + " bytes: a MAD is 24 to 256");
        byte[] m = Arrays.copyOf(mad, Mad.SIZE);
        Management mg = world.host(f.node).firmware.management();
        if (!Mad.isResponse(m)) { // ib_umad: the agent's number in the TID's upper half, so the response finds it
            BigEndian.put32(m, 8, a.id);
            if (timeout > 0) {
                Sent s = new Sent(a, m, a.qp, dlid, dqp, retries);
                outstanding.put(Mad.tid(m), s);
                arm(f.node, s, timeout);
            }
        }
        sent++;
        world.host(f.node).within(() -> { mg.send(a.qp, dlid, dqp, m); return null; });
    }

    /**
     * Times request {@code s} out {@code timeoutMs} of simulated time from now. The wait goes in steps of
     * {@link Pacer#AWAY_STEP_PICOS}: serve moves a simulation with nothing to do no further than its next
     * event within a step, so without them a request no one answers would wait for ever.
     */
    private void arm(int node, Sent s, int timeoutMs) {
        tick(node, s, world.now() + timeoutMs * 1_000_000_000L, timeoutMs);
    }

    private void tick(int node, Sent s, long at, int timeoutMs) {
        long next = Math.min(at, world.now() + Pacer.AWAY_STEP_PICOS);
        s.timer = world.host(node).within(() -> world.host(node).sim.schedule(next, () -> {
            if (outstanding.get(Mad.tid(s.mad)) != s) return;
            if (next < at) tick(node, s, at, timeoutMs);
            else expired(node, s, timeoutMs);
        }));
    }

    private void expired(int node, Sent s, int timeoutMs) {
        if (outstanding.get(Mad.tid(s.mad)) != s) return;
        if (s.retries-- > 0) {
            s.segments.clear();
            arm(node, s, timeoutMs);
            world.host(node).firmware.management().send(s.qp, s.dlid, s.dqp, s.mad);
            return;
        }
        outstanding.remove(Mad.tid(s.mad));
        timeouts++;
        deliver(s.agent, ETIMEDOUT, s.dlid, s.dqp, s.mad);
    }

    /** A MAD node {@code n}'s adapter passed up: a response to an agent's request, or a request an agent takes. */
    private boolean arrived(int n, int qp, int slid, int srcQp, byte[] m) {
        if (Mad.isResponse(m)) {
            Sent s = outstanding.get(Mad.tid(m));
            if (s == null || s.agent.file.node != n) return false;
            boolean rmpp = Mad.mgmtClass(m) == Mad.CLASS_SUBN_ADM && (m[RMPP_FLAGS] & RMPP_ACTIVE) != 0;
            if (rmpp) {
                s.segments.add(m);
                if ((m[RMPP_FLAGS] & RMPP_LAST) == 0) return true;
            }
            outstanding.remove(Mad.tid(m));
            if (s.timer != null) s.timer.cancel();
            deliver(s.agent, 0, slid, srcQp, rmpp ? joined(s.segments) : m);
            return true;
        }
        for (Agent a : agents.values())
            if (a.file.node == n && a.takes(qp, m)) {
                deliver(a, 0, slid, srcQp, m);
                return true;
            }
        return false;
    }

    /** An RMPP transfer read whole: the first segment's 56-byte headers, then each segment's data in order. */
    private static byte[] joined(List<byte[]> segs) {
        segs.sort(Comparator.comparingLong(s -> BigEndian.get32(s, 28)));
        int last = (int) BigEndian.get32(segs.get(segs.size() - 1), 32) - 20; // the last segment's data
        int len = SA_DATA + (segs.size() - 1) * (Mad.SIZE - SA_DATA) + Math.max(0, Math.min(last, Mad.SIZE - SA_DATA));
        byte[] out = new byte[len];
        System.arraycopy(segs.get(0), 0, out, 0, SA_DATA);
        for (int i = 0; i < segs.size(); i++)
            System.arraycopy(segs.get(i), SA_DATA, out, SA_DATA + i * (Mad.SIZE - SA_DATA),
                    Math.min(Mad.SIZE - SA_DATA, len - SA_DATA - i * (Mad.SIZE - SA_DATA)));
        return out;
    }

    /** Writes struct ib_user_mad (the header in the layout the file chose) and the MAD to the agent's file. */
    private void deliver(Agent a, int status, int lid, int qpn, byte[] mad) {
        File f = a.file;
        // the old header (the file's default) is the new one's first bytes, its fields where the new one has them
        int hdr = f.pkey ? UserMadHdr.S.size : UserMadHdrOld.S.size, at = 8;
        ByteBuffer b = CmAbi.le(new byte[at + hdr + mad.length]);
        b.putInt(0, 4 + hdr + mad.length); // the frame's length; its status, 0, follows
        UserMadHdr.ID.put32(b, at, a.id);
        UserMadHdr.STATUS.put32(b, at, status);
        UserMadHdr.LENGTH.put32(b, at, hdr + mad.length);
        UserMadHdr.QPN.put32(b, at, qpn);
        UserMadHdr.QKEY.put32(b, at, qpn == 0 ? 0 : Mad.GSI_QKEY);
        UserMadHdr.LID.put16(b, at, lid);
        b.position(at + hdr).put(mad).flip();
        delivered++;
        if (f.events != null) f.events.send(b);
        else f.early.add(b);
    }
}
