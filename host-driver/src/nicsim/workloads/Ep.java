package nicsim.workloads;

import java.util.ArrayList;
import java.util.List;
import nicsim.driver.World;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Connect;
import nicsim.verbs.Context;
import nicsim.verbs.Device;
import nicsim.verbs.HostBuffer;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.ProcessMemory;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QpType;
import nicsim.verbs.QueuePair;

/** One side of a test: context, PD, CQ, QPs, a buffer registered for every access. */
final class Ep {
    final World world;
    final Context ctx;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final List<QueuePair> qps = new ArrayList<>();
    final HostBuffer buf;
    final MemoryRegion mr;
    final int lid;
    final int node;

    Ep(World world, int node, QpType type, int nqps, long bufBytes, int txDepth, int rxDepth, int inline,
            boolean scatterToCqe) {
        this.world = world;
        this.node = node;
        ctx = new Device(world.host(node)).open();
        pd = ctx.allocPd();
        cq = ctx.createCq(Math.min(1 << 16, Math.max(16, (txDepth + rxDepth) * nqps)));
        // with many QPs the test's depth is shared among them (perftest -q keeps tx_depth per QP; memory would not)
        int perQp = nqps == 1 ? txDepth : Math.max(4, Math.min(txDepth, 4096 / nqps));
        for (int i = 0; i < nqps; i++)
            qps.add(pd.createQp(new QpInitAttr().qpType(type).sendCq(cq).recvCq(cq)
                    .maxSendWr(perQp).maxRecvWr(rxDepth).maxSendSge(1).maxRecvSge(1)
                    .maxInlineData(Math.max(0, inline)).scatterToCqe(scatterToCqe)));
        buf = new ProcessMemory(world.host(node)).alloc(bufBytes);
        mr = pd.regMr(buf, Connect.ALL_REMOTE);
        lid = ctx.queryPort(1).lid();
    }

    QueuePair qp() { return qps.get(0); }

    static void connect(Ep a, Ep b, Options o) {
        for (int i = 0; i < a.qps.size(); i++) {
            QueuePair qa = a.qps.get(i), qb = b.qps.get(i);
            if (qa.qpType() == QpType.UD) {
                for (QueuePair q : List.of(qa, qb)) {
                    Connect.toInit(q, 0);
                    Connect.toRtr(q, null, o.mtu());
                    Connect.toRts(q, 0);
                }
            } else {
                Connect.up(qa, Connect.ALL_REMOTE, Connect.Dest.of(b.ctx, qb, 0x2000 + i), o.mtu(), 0x1000 + i);
                Connect.up(qb, Connect.ALL_REMOTE, Connect.Dest.of(a.ctx, qa, 0x1000 + i), o.mtu(), 0x2000 + i);
            }
        }
    }
}
