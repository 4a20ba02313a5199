package nicsim.serve;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import nicsim.abi.Cmd;
import nicsim.driver.World;
import nicsim.firmware.Resources;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Errno;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QueuePair;
import nicsim.verbs.VerbsException;

/**
 * RDMA_RES: what Linux's resource tracking would list for one node's adapter (`rdma resource
 * show`, answered to an attached program by interpose/nicsim-netlink.c): the adapter's QPs, CQs,
 * memory regions and PDs, each with the process that owns it. An object no program owns is the
 * kernel's, as serve's RDMA CM agents' QPs are (the kernel's CM owns QP1 so): pid 0. Usage counts
 * are computed as the kernel's are for these kinds: a CQ's QPs, a PD's QPs and MRs. Simulator thread.
 *
 * <p>The reply: per kind, a u32 count and that many rows, each a record of {@link WireLayout}
 * (ResQp, ResCq, ResMr, ResPd), from which the C side's structs are generated.
 */
final class RdmaResources {
    private RdmaResources() {}

    /** The reply to RDMA_RES for node {@code node} (EINVAL naming it if the cluster has no such node). */
    static Wire.Out of(World world, Collection<Program> programs, int node) {
        check(world, node, "RDMA_RES");
        Resources r = Resources.of(world.host(node).firmware);
        Owners o = owners(programs, node);
        Map<Long, Integer> cqUsers = new HashMap<>(), pdUsers = new HashMap<>();
        Wire.Out out = new Wire.Out().u32(r.qps().size());
        for (Resources.QpRow q : r.qps()) {
            out.put(new WireLayout.ResQp((int) q.qpn(), q.type(), q.state(), (int) q.pd(), (int) q.destQpn(), q.sqPsn(),
                    q.rqPsn(), o.qps.getOrDefault(q.qpn(), 0)));
            cqUsers.merge(q.scqn(), 1, Integer::sum);
            if (q.rcqn() != q.scqn()) cqUsers.merge(q.rcqn(), 1, Integer::sum);
            pdUsers.merge(q.pd(), 1, Integer::sum);
        }
        out.u32(r.cqs().size());
        for (Resources.CqRow c : r.cqs())
            out.put(new WireLayout.ResCq((int) c.cqn(), c.cqe(), cqUsers.getOrDefault(c.cqn(), 0),
                    o.cqs.getOrDefault(c.cqn(), 0)));
        out.u32(r.mrs().size());
        for (Resources.MrRow m : r.mrs()) {
            out.put(new WireLayout.ResMr((int) m.key(), (int) m.pd(), m.start(), m.length(),
                    o.mrs.getOrDefault(m.key(), 0), m.pageFaults(), m.pageInvalidations(), m.pagePrefetches()));
            pdUsers.merge(m.pd(), 1, Integer::sum);
        }
        out.u32(r.pds().size());
        for (long pd : r.pds())
            out.put(new WireLayout.ResPd((int) pd, pdUsers.getOrDefault(pd, 0), o.pds.getOrDefault(pd, 0)));
        return out;
    }

    /**
     * The reply to RDMA_STAT (`rdma statistic show`): node {@code node}'s adapter counters, those its
     * blocks count under its scope ("node1": Firmware.retransmits...), sorted by name: u32 count, then
     * a {@link WireLayout.StatCounter} each.
     */
    static Wire.Out stats(World world, int node) {
        check(world, node, "RDMA_STAT");
        Map<String, Long> counters = world.sim.counters().scope("node" + node).snapshot();
        Wire.Out out = new Wire.Out().u32(counters.size());
        counters.forEach((name, value) -> out.put(new WireLayout.StatCounter(name, value)));
        return out;
    }

    private static void check(World world, int node, String what) {
        if (node < 0 || node >= world.hosts().size())
            throw new VerbsException(Errno.EINVAL, what + ": node " + node + " is not one of the cluster's "
                    + world.hosts().size());
    }

    /** Which process owns each QP, CQ, MR (by key) and PD of node {@code node}'s adapter. */
    record Owners(Map<Long, Integer> qps, Map<Long, Integer> cqs, Map<Long, Integer> mrs,
                          Map<Long, Integer> pds) {}

    static Owners owners(Collection<Program> programs, int node) {
        Owners o = new Owners(new HashMap<>(), new HashMap<>(), new HashMap<>(), new HashMap<>());
        for (Program p : programs) {
            for (Session s : p.sessions) { // the Java driver's objects: the verbs library's, by their handles
                if (s.host.index != node) continue;
                for (Handles.Record rec : s.handles.newestFirst()) {
                    if (rec.object instanceof QueuePair q) o.qps.put(q.qpNum() & 0xFFFF_FFFFL, p.pid);
                    else if (rec.object instanceof CompletionQueue c) o.cqs.put(c.handle() & 0xFFFF_FFFFL, p.pid);
                    else if (rec.object instanceof MemoryRegion m) o.mrs.put(m.lkey() & 0xFFFF_FFFFL, p.pid);
                    else if (rec.object instanceof ProtectionDomain d) o.pds.put(d.handle() & 0xFFFF_FFFFL, p.pid);
                }
            }
            for (PciDevice d : p.devices.values()) { // the C driver's: the commands its user context ran
                if (d.user == null || d.host.index != node) continue;
                d.user.owned(Cmd.DESTROY_QP).forEach(h -> o.qps.put(h, p.pid));
                d.user.owned(Cmd.DESTROY_CQ).forEach(h -> o.cqs.put(h, p.pid));
                d.user.owned(Cmd.DESTROY_MKEY).forEach(h -> o.mrs.put(h, p.pid));
                d.user.owned(Cmd.DEALLOC_PD).forEach(h -> o.pds.put(h, p.pid));
            }
        }
        return o;
    }
}
