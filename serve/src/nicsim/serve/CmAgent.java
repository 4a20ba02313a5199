package nicsim.serve;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.driver.Host;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.AhAttr;
import nicsim.verbs.CompletionChannel;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Context;
import nicsim.verbs.Device;
import nicsim.verbs.HostBuffer;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.Mtu;
import nicsim.verbs.PortAttr;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QpAttr;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QpState;
import nicsim.verbs.QpType;
import nicsim.verbs.QueuePair;
import nicsim.verbs.RecvWr;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcOpcode;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * A node's communication manager on the wire: a UD queue pair of the node's own adapter (the
 * kernel's GSI agent; the model numbers it as any other QP, not QP1) that sends and receives CM
 * MADs with the GSI Q_Key, so connection setup crosses the simulated fabric and takes its time.
 * Receives raise the adapter's completion interrupt, which only marks the agent ready: what came
 * is taken by {@link #received} between simulation steps, as a kernel's completion handler would.
 */
final class CmAgent implements AutoCloseable {
    static final int GSI_QKEY = 0x80010000;
    private static final int RECVS = 64, SENDS = 64, GRH = 40, SLOT = GRH + CmMad.SIZE;

    /** A MAD that arrived, and the LID it came from. */
    record Received(int slid, byte[] mad) {}

    final int lid;
    final byte[] gid;
    final Mtu mtu;
    private final Host host;
    private final Context ctx;
    private final ProtectionDomain pd;
    private final CompletionChannel ch;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final HostBuffer buf;
    private final MemoryRegion mr;
    private final long pa;
    private final Map<Integer, AddressHandle> ahs = new HashMap<>();
    /** Sends waiting for room on the send queue: LID, QPN, MAD. */
    private final ArrayDeque<Object[]> backlog = new ArrayDeque<>();
    private int outstanding, nextSlot;
    private boolean ready;
    long sent, receivedCount, errors;

    CmAgent(Host host) {
        this.host = host;
        ctx = new Device(host).open();
        PortAttr port = ctx.queryPort(1);
        lid = port.lid();
        gid = port.gid();
        mtu = port.activeMtu();
        ch = ctx.createCompChannel();
        ch.onEvent(() -> ready = true);
        cq = ctx.createCq(RECVS + SENDS, ch);
        pd = ctx.allocPd();
        long len = (long) (RECVS + SENDS) * SLOT;
        pa = host.allocPhysical(len, host.memory.pageSize());
        buf = new HostBuffer(host, host.va(pa), len);
        mr = pd.regMr(buf, AccessFlags.LOCAL_WRITE);
        qp = pd.createQp(new QpInitAttr().qpType(QpType.UD).sendCq(cq).recvCq(cq).maxSendWr(SENDS).maxRecvWr(RECVS)
                .maxSendSge(1).maxRecvSge(1));
        qp.modify(new QpAttr().qpState(QpState.INIT).pkeyIndex(0).portNum(1).qkey(GSI_QKEY),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
        qp.modify(new QpAttr().qpState(QpState.RTR), QpAttrMask.STATE);
        qp.modify(new QpAttr().qpState(QpState.RTS).sqPsn(0), QpAttrMask.STATE | QpAttrMask.SQ_PSN);
        for (int i = 0; i < RECVS; i++) postRecv(i);
        cq.reqNotify(false);
    }

    int qpn() { return qp.qpNum(); }


    private void postRecv(int slot) {
        qp.postRecv(new RecvWr().wrId(slot).sgList(new Sge(buf.addr() + (long) slot * SLOT, SLOT, mr.lkey())));
    }

    /** Sends {@code mad} to the agent with QP number {@code qpn} behind LID {@code dlid}. */
    void send(int dlid, int qpn, byte[] mad) {
        if (outstanding >= SENDS) {
            backlog.add(new Object[]{dlid, qpn, mad});
            return;
        }
        int slot = RECVS + nextSlot;
        nextSlot = (nextSlot + 1) % SENDS;
        buf.write((long) slot * SLOT, mad);
        AddressHandle ah = ahs.computeIfAbsent(dlid, l -> pd.createAh(new AhAttr().dlid(l).portNum(1)));
        qp.postSend(new SendWr().wrId(slot).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(buf.addr() + (long) slot * SLOT, CmMad.SIZE, mr.lkey())).ah(ah).remoteQpn(qpn)
                .remoteQkey(GSI_QKEY));
        outstanding++;
        sent++;
    }

    /**
     * The MADs that arrived since the last look. The adapter's interrupt says when (an arm behind a
     * completion not yet taken raises it at once); a look also peeks at the next entry, which costs one
     * read of host memory and needs no event.
     */
    List<Received> received() {
        List<Received> out = new ArrayList<>();
        if (!ready && !cq.ready()) return out;
        ready = false;
        while (ch.getCqEvent().isPresent()) { } // taken, so the next arm carries the next sequence number
        for (List<WorkCompletion> wcs = cq.poll(32); !wcs.isEmpty(); wcs = cq.poll(32)) {
            for (WorkCompletion wc : wcs) {
                if (wc.status() != WcStatus.SUCCESS) errors++;
                if (wc.opcode() == WcOpcode.RECV) {
                    int slot = (int) wc.wrId();
                    if (wc.status() == WcStatus.SUCCESS) {
                        out.add(new Received(wc.slid(), buf.read((long) slot * SLOT + GRH, CmMad.SIZE)));
                        receivedCount++;
                    }
                    postRecv(slot);
                } else {
                    outstanding--;
                }
            }
        }
        while (outstanding < SENDS && !backlog.isEmpty()) {
            Object[] s = backlog.poll();
            send((Integer) s[0], (Integer) s[1], (byte[]) s[2]);
        }
        cq.reqNotify(false);
        return out;
    }

    /** Whether {@link #received} has something to take. */
    boolean pending() { return ready || cq.ready(); }

    @Override public void close() {
        ctx.close();
        host.freePhysical(pa, (long) (RECVS + SENDS) * SLOT);
    }
}
