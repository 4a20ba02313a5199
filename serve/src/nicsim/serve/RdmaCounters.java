package nicsim.serve;

import java.util.Collection;
import nicsim.abi.Cmd;
import nicsim.abi.QCounter;
import nicsim.driver.Host;
import nicsim.driver.QpCounters;
import nicsim.driver.World;
import nicsim.firmware.Resources;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * RDMA_QSTAT: `rdma statistic qp` on one node's port (answered to an attached program by
 * interpose/nicsim-netlink-qstat.c), through the kernel's QP counters of the node's adapter ({@link
 * QpCounters}). The request ({@link WireLayout.QstatRequest}) names an action: SHOW, SET_AUTO (mask),
 * BIND (qpn; counter, or -1 for a new one) or UNBIND (qpn, counter). A node whose adapter no kernel driver
 * brought up (a driver holds it through the PCI face) has no counters: SHOW lists none, the others are
 * EOPNOTSUPP. Simulator thread.
 *
 * <p>SHOW's reply: {@link WireLayout.QstatShow}, then per counter a {@link WireLayout.QstatCounter}, its QPNs
 * (u32 each), u32 n and its n values ({@link WireLayout.StatCounter}). BIND's: {@link WireLayout.QstatBound}.
 * SET_AUTO's and UNBIND's: nothing.
 */
final class RdmaCounters {
    static final int SHOW = 0, SET_AUTO = 1, BIND = 2, UNBIND = 3;

    private RdmaCounters() {}

    static Wire.Out handle(World world, Collection<Program> programs, WireLayout.QstatRequest q) {
        if (q.node() < 0 || q.node() >= world.hosts().size())
            throw new VerbsException(Errno.EINVAL, "RDMA_QSTAT: node " + q.node() + " is not one of the cluster's "
                    + world.hosts().size());
        Host host = world.host(q.node());
        QpCounters k = host.qpCounters();
        if (!host.probed() && (q.action() == BIND || q.action() == UNBIND)) // no program's verbs made a QP of its
            throw new VerbsException(Errno.EOPNOTSUPP, "node " + q.node() + "'s adapter has no QP the kernel made "
                    + "(no program opened it, or a driver holds it through the PCI face)");
        return switch (q.action()) {
            case SHOW -> show(k);
            case SET_AUTO -> { k.setAuto(q.mask()); yield new Wire.Out(); }
            case BIND -> new Wire.Out(new WireLayout.QstatBound((int) k.bind(qp(host, programs, q.qpn()),
                    q.counter() < 0 ? null : Long.valueOf(q.counter()), q.qpn() & 0xFFFF_FFFFL)));
            case UNBIND -> {
                k.unbind(q.qpn() & 0xFFFF_FFFFL, q.counter() & 0xFFFF_FFFFL, qp(host, programs, q.qpn()) != null);
                yield new Wire.Out();
            }
            default -> throw new VerbsException(Errno.EINVAL, "RDMA_QSTAT: action " + q.action()
                    + " is not SHOW (0), SET_AUTO (1), BIND (2) nor UNBIND (3)");
        };
    }

    private static Wire.Out show(QpCounters k) {
        Wire.Out out = new Wire.Out(new WireLayout.QstatShow(k.mode(), k.mask(), k.counters().size()));
        for (QpCounters.Counter c : k.counters()) {
            out.put(new WireLayout.QstatCounter((int) c.id(), c.mode(), c.mask(), c.qpType(), c.pid(),
                    c.qps().size()));
            for (long qpn : c.qps()) out.u32(qpn);
            Cmd.QCounterValues v = k.values(c);
            out.u32(QCounter.values().length);
            for (QCounter n : QCounter.values()) out.put(new WireLayout.StatCounter(n.counterName(), v.get(n)));
        }
        return out;
    }

    /** QP {@code qpn} of the node's adapter with its type and owner, or null if there is none. */
    private static QpCounters.Qp qp(Host host, Collection<Program> programs, int qpn) {
        RdmaResources.Owners owners = RdmaResources.owners(programs, host.index);
        for (Resources.QpRow r : Resources.of(host.firmware).qps())
            if (r.qpn() == (qpn & 0xFFFF_FFFFL))
                return new QpCounters.Qp(r.qpn(), r.type(), owners.qps().getOrDefault(r.qpn(), 0));
        return null;
    }
}
