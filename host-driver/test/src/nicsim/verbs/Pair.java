package nicsim.verbs;

import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;

/** Two nodes with a connected QP each, buffers registered for every access; the tests' common setup. */
final class Pair {
    final World world;
    final Side a, b;

    static final class Side {
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final HostBuffer buf;
        final MemoryRegion mr;

        Side(World w, int node, QpType type, int bufBytes, QpInitAttr init) {
            ctx = new Device(w.host(node)).open();
            pd = ctx.allocPd();
            cq = ctx.createCq(256);
            qp = pd.createQp(init.qpType(type).sendCq(cq).recvCq(cq));
            buf = new ProcessMemory(w.host(node)).alloc(bufBytes);
            mr = pd.regMr(buf, Connect.ALL_REMOTE);
        }
    }

    Pair(String profile, QpType type, int bufBytes) {
        this(Profiles.load(profile), type, bufBytes, Faults.NONE, 1, defaults());
    }

    static QpInitAttr defaults() {
        return new QpInitAttr().maxSendWr(64).maxRecvWr(64).maxSendSge(4).maxRecvSge(4).maxInlineData(64);
    }

    Pair(Profile profile, QpType type, int bufBytes, Faults faults, long seed, QpInitAttr init) {
        this(profile, profile, type, bufBytes, faults, seed, init);
    }

    /** A on an adapter built from {@code profileA}, B on one built from {@code profileB} (the fabric is A's). */
    Pair(Profile profileA, Profile profileB, QpType type, int bufBytes, Faults faults, long seed, QpInitAttr init) {
        world = new World(2, profileA, seed, faults, i -> i == 0 ? profileA : profileB);
        a = new Side(world, 0, type, bufBytes, init);
        b = new Side(world, 1, type, bufBytes, init);
    }

    /** Connects both QPs (RESET to RTS), A's PSNs from 100, B's from 200. */
    Pair up(Mtu mtu) {
        Connect.up(a.qp, Connect.ALL_REMOTE, Connect.Dest.of(b.ctx, b.qp, 200), mtu, 100);
        Connect.up(b.qp, Connect.ALL_REMOTE, Connect.Dest.of(a.ctx, a.qp, 100), mtu, 200);
        return this;
    }

    /** Brings both UD QPs to RTS (UD needs no peer to connect to). */
    Pair upUd(Mtu mtu) {
        for (Side s : List.of(a, b)) {
            Connect.toInit(s.qp, 0);
            Connect.toRtr(s.qp, null, mtu);
            Connect.toRts(s.qp, 0);
        }
        return this;
    }

    /** Polls {@code cq} until {@code n} completions arrived (or the simulated time limit passes). */
    List<WorkCompletion> await(CompletionQueue cq, int n) {
        return Completions.await(world, cq, n);
    }

    /**
     * A second RC QP on A whose send CQ is {@code small}, connected to B's QP, with four signaled
     * WRITEs posted: more completions than {@code small} holds when it is never polled.
     */
    QueuePair overflowSendCq(CompletionQueue small) {
        QueuePair qp = a.pd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(small).recvCq(a.cq)
                .maxSendWr(16).maxRecvWr(4));
        Connect.up(qp, Connect.ALL_REMOTE, Connect.Dest.of(b.ctx, b.qp, 200), Mtu.MTU_1024, 100);
        Connect.up(b.qp, Connect.ALL_REMOTE, Connect.Dest.of(a.ctx, qp, 100), Mtu.MTU_1024, 200);
        for (int i = 0; i < 4; i++)
            qp.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sgList(new Sge(a.buf.addr(), 64, a.mr.lkey())).remoteAddr(b.buf.addr()).rkey(b.mr.rkey()));
        return qp;
    }
}
