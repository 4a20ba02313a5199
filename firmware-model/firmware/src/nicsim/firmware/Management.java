package nicsim.firmware;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.abi.Cmd;
import nicsim.fabric.DirectedRoute;
import nicsim.fabric.Mad;
import nicsim.fabric.Packet;
import nicsim.fabric.PerfAgent;

/**
 * The adapter's special QPs and its own management agents, as ConnectX firmware keeps them: QP0
 * (the SMI: subnet management packets, LID-routed and directed-route) and QP1 (the GSI, every other
 * class, with the GSI Q_Key). A MAD that reaches port QP0 or QP1 is taken by the firmware: the SMA
 * ({@link SubnetAgent}) answers SubnGet/SubnSet of its attributes, the PMA ({@link PerfAgent})
 * answers the performance class from the port's own counters; everything else (responses to the
 * host's own requests, SMInfo, SA and CM classes) is passed up to whoever listens on the port's
 * special QPs ({@link #listen}) and, with no listener, a request is answered "unsupported
 * method/attribute" as Linux's MAD layer answers an unclaimed one. MADs cross the fabric as UD
 * packets, each taking a firmware task of {@code fw.packet.cycles}. See docs/device.md#management-qp0-and-qp1.
 *
 * <p>A driver may own QP0 and QP1 through CREATE_QP (types {@link nicsim.abi.Cmd#QPT_SMI} and
 * {@link nicsim.abi.Cmd#QPT_GSI}): what is passed up then goes into its QP's receive queue, after the
 * fabric's agents ({@link #agent}: serve's subnet manager) and instead of the listeners, and its QP's
 * sends leave from QP0 or QP1, those to the port itself looped back here ({@link #loopsBack}).
 */
public final class Management {
    /** Something above the firmware that owns a special QP: gets the MADs the agents do not consume. */
    public interface Listener {
        /**
         * A MAD arrived on special QP {@code qp} (0 or 1) from LID {@code slid}, QP {@code srcQp}; returns whether
         * this listener takes it (a request no listener takes is answered "unsupported method/attribute").
         */
        boolean mad(int qp, int slid, int srcQp, byte[] mad);
    }

    /** The node GUID nicsim burns into adapter {@code node} (an OUI of no real vendor's); its port GUID is the same. */
    public static long nodeGuid(int node) { return 0x0002_1de5_0000_0000L | (node + 1); }

    final Firmware fw;
    final SubnetAgent sma;
    final PerfAgent pma;
    private final List<Listener> listeners = new ArrayList<>();
    /** The fabric's own agents on this port (the subnet manager): they take their MADs whoever owns the QPs. */
    private final List<Listener> agents = new ArrayList<>();
    /** A driver's QP0 and QP1 (null: no driver owns it): each takes what is passed up on its special QP. */
    private final Qp[] owners = new Qp[2];
    long guid;
    String description = "nicsim";
    /** The LID of the fabric's subnet manager, as PortInfo.MasterSMLID reports it. */
    int smLid = 1;
    /** The port's traffic, every packet, for the PMA: octets and packets each way. */
    long xmitBytes, rcvBytes, xmitPkts, rcvPkts;
    /** P_Key and Q_Key violations the port saw (PortInfo reports them). */
    int qkeyViolations;
    /** MADs refused as malformed: each is also in the adapter's log, with what was wrong. */
    long malformed;
    /**
     * The CapabilityMask bits the host's software keeps (MODIFY_PORT: ib_cm's IsCM, ib_srpt's
     * IsDeviceManagementSupported...); a reset makes a new adapter, with {@link SubnetAgent#CAP_RESET}.
     */
    private int heldCapabilities = SubnetAgent.CAP_RESET;

    Management(Firmware fw) {
        this.fw = fw;
        this.sma = new SubnetAgent(this);
        this.pma = new PerfAgent(new PerfAgent.Ports() {
            @Override public int[] numbers() { return new int[]{1}; }
            @Override public long[] raw(int port) { return portCounters(); }
        });
    }

    /** Sets what the adapter's flash would hold: its GUID and node description. */
    public void identity(long nodeGuid, String nodeDescription) {
        this.guid = nodeGuid;
        this.description = nodeDescription;
    }

    public long guid() { return guid; }
    public void smLid(int lid) { this.smLid = lid; }
    public int smLid() { return smLid; }
    public long malformed() { return malformed; }

    /**
     * The port's CapabilityMask as the SMA's PortInfo (and the SA's PortInfoRecord) reports it: what the
     * hardware is (IsExtendedSpeedsSupported), IsSM on the subnet manager's port, and the bits the host keeps.
     */
    public int capabilityMask() {
        return SubnetAgent.CAP_FIXED | heldCapabilities | (smLid == fw.lid() ? SubnetAgent.CAP_IS_SM : 0);
    }

    /** MODIFY_PORT: sets, then clears, bits the host keeps in port {@code p.port()}'s mask; the mask now. */
    int modifyPort(Cmd.ModifyPort p) {
        if (p.port() != 1) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_PORT, p.port());
        heldCapabilities = (heldCapabilities | (int) p.set()) & ~(int) p.clear();
        return capabilityMask();
    }

    /** The port's traffic so far, as the PMA counts it: octets sent, received, packets sent, received. */
    public long[] portCounters() { return new long[]{xmitBytes, rcvBytes, xmitPkts, rcvPkts}; }

    /** Takes the MADs the agents leave (see the class comment). */
    public void listen(Listener l) { listeners.add(l); }

    public void unlisten(Listener l) { listeners.remove(l); }

    /**
     * Takes the MADs the firmware's agents leave before a driver's special QP or any listener does: for an agent of
     * the fabric's that runs beside the port, as serve's subnet manager does on node 0 (a driver's QP1 there still
     * gets everything the agent declines).
     */
    public void agent(Listener l) { agents.add(l); }

    /** Whether a driver's QP owns special QP {@code qp} (0 or 1). */
    public boolean driverOwns(int qp) { return owners[qp] != null; }

    /** The driver's QP bound to special QP {@code qp}, or null. */
    Qp owner(int qp) { return owners[qp]; }

    /** Binds special QP {@code qp} to driver QP {@code q} (null: releases it). */
    void own(int qp, Qp q) {
        owners[qp] = q;
        if (q != null) q.special = qp;
    }

    void countXmit(Packet p) { xmitBytes += p.wireBytes(); xmitPkts++; }

    void countRcv(Packet p) { rcvBytes += p.wireBytes(); rcvPkts++; }

    /**
     * What the SMA answers for {@code attr} (NodeInfo, NodeDescription, PortInfo), written at {@code at} of {@code b}.
     */
    public void describe(int attr, byte[] b, int at) {
        switch (attr) {
            case Mad.ATTR_NODE_INFO -> sma.nodeInfo(b, at);
            case Mad.ATTR_NODE_DESC -> sma.nodeDescription(b, at);
            case Mad.ATTR_PORT_INFO -> sma.portInfo(b, at);
            default -> throw new IllegalArgumentException(
                    String.format("attribute 0x%04x is not one the SMA describes", attr));
        }
    }

    /** Whether {@code p} is for a special QP: then it is the management's, taken here. */
    boolean onPacket(Packet p) {
        if (p.destQp() > 1) return false;
        int qp = (int) p.destQp();
        if (qp == 1 && p.qkey() != Mad.GSI_QKEY) {
            qkeyViolations++;
            fw.stats.inc(FirmwareStat.QKEY_MISMATCH);
            fw.report(String.format("MAD to QP1 from LID %d with Q_Key 0x%x, not the GSI's 0x%x: dropped, counted",
                    p.slid(), p.qkey(), Mad.GSI_QKEY));
            return true;
        }
        fw.exec(fw.packetCycles, () -> arrived(qp, p.slid(), (int) p.srcQp(), p.payload()));
        return true;
    }

    /**
     * A MAD that came in on the port: a directed-route SMP first takes the SMI's step (IBA 14.2.2), which on an
     * adapter ends the route: the SMA answers a request, the requester gets a response back.
     */
    private void arrived(int qp, int slid, int srcQp, byte[] mad) {
        if (!DirectedRoute.is(mad)) {
            handle(qp, slid, srcQp, mad);
            return;
        }
        byte[] m = mad.clone();
        if (!DirectedRoute.endsDirected(m)) {
            refuse(String.format("directed-route SMP from LID %d with DrDLID 0x%x: a LID-routed part after the "
                    + "directed one is not modelled; dropped", slid, Mad.get16(m, Mad.DR_DLID)));
            return;
        }
        if (DirectedRoute.arrive(m, 1, false) != DirectedRoute.LOCAL) {
            refuse(String.format("directed-route SMP from LID %d at hop %d of %d (%s): an adapter is no hop on the "
                    + "way; dropped", slid, DirectedRoute.hopPointer(mad), DirectedRoute.hopCount(mad),
                    DirectedRoute.returning(mad) ? "returning" : "outgoing"));
            return;
        }
        handle(qp, slid, srcQp, m);
    }

    /**
     * Sends {@code mad} from special QP {@code qp} of this port to QP {@code dqp} behind {@code dlid}: the host's
     * side of QP0/QP1. To the port's own LID (or a directed-route SMP of hop count 0) it goes no further than
     * the adapter, as an HCA's SMI loops it back; a directed-route SMP of more hops takes the SMI's step out.
     */
    public void send(int qp, int dlid, int dqp, byte[] mad) {
        if (qp != 0 && qp != 1) throw new IllegalArgumentException("special QP " + qp + " must be 0 (SMI) or 1 (GSI)");
        if (mad.length != Mad.SIZE) throw new IllegalArgumentException("MAD of " + mad.length + " bytes must be 256");
        byte[] m = mad.clone();
        fw.exec(fw.packetCycles, () -> {
            // to the port's own special QPs: looped back; to another QP of its own (an agent's) it crosses the link
            if (startsAtSwitch(m, dlid)) transmit(qp, dlid, 0, m);
            else if (directedRoute(m) || dlid == fw.lid() && dqp <= 1) local(qp, m);
            else transmit(qp, dlid, dqp, m);
        });
    }

    /**
     * Whether a MAD a driver's special QP {@code qp} sends to {@code dlid} stays in the adapter: one to the port's
     * own LID, or a directed-route SMP of hop count 0, which goes to the local SMA. It is then handled here, in a
     * firmware task, as if it had come in on the port. A directed-route SMP of more hops leaves by port 1 to the
     * permissive LID, the switch's, as the driver made it: its MAD layer took the SMI's step already (Linux's
     * ib_mad moves the hop pointer before it posts), unless its route is LID-routed first (then by the AH).
     */
    boolean loopsBack(int qp, int dlid, byte[] mad) {
        if (directedRoute(mad) && mad.length == Mad.SIZE && mad[Mad.DR_HOP_CNT] != 0) {
            if (startsAtSwitch(mad, dlid)) return false;
            fw.stats.inc(FirmwareStat.MADS_LOOPED_BACK);
            byte[] m = mad.clone();
            fw.exec(fw.packetCycles, () -> transmit(0, Mad.PERMISSIVE_LID, 0, m));
            return true;
        }
        if (!directedRoute(mad) && dlid != fw.lid()) return false;
        fw.stats.inc(FirmwareStat.MADS_LOOPED_BACK);
        byte[] m = mad.clone();
        fw.exec(fw.packetCycles, () -> local(qp, m));
        return true;
    }

    /**
     * Whether directed-route SMP {@code m} goes LID-routed to {@code dlid} first (DrSLID is the requester's LID, not
     * permissive): its directed part starts there, at the switch (libibmad's "DR path slid L" routes).
     */
    private boolean startsAtSwitch(byte[] m, int dlid) {
        return DirectedRoute.is(m) && !DirectedRoute.startsDirected(m) && !DirectedRoute.returning(m)
                && DirectedRoute.hopPointer(m) == 0 && dlid != Mad.PERMISSIVE_LID && dlid != fw.lid();
    }

    private static boolean directedRoute(byte[] m) { return m.length > 1 && Mad.mgmtClass(m) == Mad.CLASS_SUBN_DR; }

    /** A MAD of this port's to this port: handled as come in; a directed-route SMP takes the SMI's step first. */
    private void local(int qp, byte[] m) {
        if (DirectedRoute.is(m)) leave(qp, m);
        else handle(qp, fw.lid(), qp, m);
    }

    /**
     * A directed-route SMP leaving the port's SMI (IBA 14.2.2): a route of no hops stays in the adapter (to its SMA,
     * or back to the requester); one of more leaves by port 1 with the permissive DLID, for the switch's SMI.
     */
    private void leave(int qp, byte[] m) {
        if (DirectedRoute.hopCount(m) > 0 && !DirectedRoute.endsDirected(m)) {
            refuse(String.format("directed-route SMP with DrDLID 0x%x: a LID-routed part after the directed one is "
                    + "not modelled; dropped", Mad.get16(m, Mad.DR_DLID)));
            return;
        }
        int port = DirectedRoute.leave(m, false);
        if (port == DirectedRoute.LOCAL) {
            if (Mad.isResponse(m)) passUp(qp, fw.lid(), qp, m);
            else handle(qp, fw.lid(), qp, m);
        } else if (port == 1) {
            transmit(0, Mad.PERMISSIVE_LID, 0, m);
        } else {
            refuse(String.format("directed-route SMP to leave by port %d at hop %d of %d: the adapter has port 1 only;"
                    + " dropped", port, DirectedRoute.hopPointer(m), DirectedRoute.hopCount(m)));
        }
    }

    private void transmit(int qp, int dlid, int dqp, byte[] mad) {
        fw.send(new Packet(fw.lid(), dlid, Packet.Op.SEND_ONLY, dqp, qp, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                dqp == 0 ? 0 : Mad.GSI_QKEY, mad, Packet.UD));
    }

    /** One MAD that reached special QP {@code qp}: an agent's, or passed up, or refused with a status. */
    private void handle(int qp, int slid, int srcQp, byte[] mad) {
        fw.stats.inc(FirmwareStat.MADS_IN);
        if (mad.length < Mad.HEADER) {
            refuse(String.format("MAD of %d bytes from LID %d: shorter than its 24-byte header, cannot be answered",
                    mad.length, slid));
            return;
        }
        byte[] m = Arrays.copyOf(mad, Mad.SIZE);
        if (mad.length != Mad.SIZE) {
            refuse(String.format("MAD of %d bytes from LID %d: a MAD is 256 bytes", mad.length, slid));
            if (!Mad.isResponse(m)) reply(qp, slid, srcQp, Mad.response(m, Mad.STATUS_INVALID_FIELD));
            return;
        }
        int cls = Mad.mgmtClass(m);
        boolean smp = cls == Mad.CLASS_SUBN_LID || cls == Mad.CLASS_SUBN_DR;
        if (smp != (qp == 0)) { // an answer would be as misplaced (IBA 13.5.3.1): counted and logged only
            refuse(String.format("MAD class 0x%02x from LID %d on QP%d: QP0 takes SMPs, QP1 the other classes; "
                    + "not answered", cls, slid, qp));
            return;
        }
        if (Mad.baseVersion(m) != 1) {
            refuse(String.format("MAD from LID %d to QP%d: base version %d, not 1", slid, qp, Mad.baseVersion(m)));
            if (!Mad.isResponse(m)) reply(qp, slid, srcQp, Mad.response(m, Mad.STATUS_BAD_VERSION));
            return;
        }
        byte[] answer = Mad.isResponse(m) ? null
                : smp ? sma.answer(m) : cls == Mad.CLASS_PERF ? pma.answer(m) : null;
        if (answer != null) {
            fw.stats.inc(FirmwareStat.MADS_ANSWERED);
            if ((Mad.status(answer) & ~Mad.DR_DIRECTION) != 0) refuse(String.format(
                    "MAD class 0x%02x method 0x%02x attribute 0x%04x modifier 0x%x from LID %d: answered status 0x%04x",
                    cls, Mad.method(m), Mad.attr(m), Mad.attrMod(m), slid, Mad.status(answer) & ~Mad.DR_DIRECTION));
            reply(qp, slid, srcQp, answer);
            return;
        }
        if (passUp(qp, slid, srcQp, m)) {
            fw.stats.inc(FirmwareStat.MADS_PASSED_UP);
            return;
        }
        fw.stats.inc(FirmwareStat.MADS_UNCLAIMED);
        if (Mad.isResponse(m) || Mad.method(m) == Mad.SEND || Mad.method(m) == Mad.TRAP) return; // nothing to answer
        reply(qp, slid, srcQp, Mad.response(m, Mad.STATUS_METHOD_ATTR));
    }

    private void refuse(String what) {
        malformed++;
        fw.stats.inc(FirmwareStat.MADS_MALFORMED);
        fw.report(what);
    }

    /**
     * Passes a MAD up: to the fabric's agents first, then to the driver's QP that owns {@code qp} (it takes every
     * MAD: its MAD layer answers or drops what no agent of its own claims), or, with none, to the listeners.
     */
    private boolean passUp(int qp, int slid, int srcQp, byte[] m) {
        for (Listener l : List.copyOf(agents)) if (l.mad(qp, slid, srcQp, m.clone())) return true;
        Qp q = owners[qp];
        if (q != null) {
            fw.stats.inc(FirmwareStat.MADS_TO_DRIVER);
            // into its receive queue as a UD message to it, with the GRH space and the sender in the CQE
            q.responder.onPacket(new Packet(slid, fw.lid(), Packet.Op.SEND_ONLY, q.qpn, srcQp, 0, false, false, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, qp == 1 ? Mad.GSI_QKEY : 0, m.clone(), Packet.UD));
            return true;
        }
        boolean taken = false;
        for (Listener l : List.copyOf(listeners)) taken |= l.mad(qp, slid, srcQp, m.clone());
        return taken;
    }

    /** An answer goes back where its request came from; a local request's answer is passed up at once. */
    private void reply(int qp, int dlid, int dqp, byte[] mad) {
        if (DirectedRoute.is(mad)) {
            leave(qp, mad);
            return;
        }
        if (dlid == fw.lid() && dqp == qp) {
            passUp(qp, dlid, dqp, mad);
            return;
        }
        transmit(qp, dlid, dqp, mad);
    }
}
