package nicsim.firmware;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The objects an adapter holds now, each with the fields Linux's resource tracking reports for it
 * (`rdma resource show`, RDMA_NLDEV_ATTR_RES_*): a snapshot taken on the simulator's thread, so a
 * reader on another thread sees one consistent moment. Numbers are the adapter's own (QPN, CQN, PD
 * number, mkey), which are also what the program's verbs objects carry.
 */
public record Resources(List<QpRow> qps, List<CqRow> cqs, List<MrRow> mrs, List<Long> pds) {
    /**
     * A QP: its type and state in libibverbs' numbering, its PD, its peer's QPN, the next PSN it sends
     * and the one it expects, its send and receive CQs (-1: none).
     */
    public record QpRow(long qpn, int type, int state, long pd, long destQpn, int sqPsn, int rqPsn, long scqn,
                        long rcqn) {}

    /** A CQ: its size in entries (what ibv_create_cq reported as cqe). */
    public record CqRow(long cqn, int cqe) {}

    /**
     * A memory region (an mkey, not a window nor an indirect mkey): its key (lkey = rkey), PD, start, length, and
     * what on-demand paging did to it (page faults its accesses took, invalidations, prefetches), as mlx5 counts
     * an MR's (`rdma statistic mr`).
     */
    public record MrRow(long key, long pd, long start, long length, long pageFaults, long pageInvalidations,
                        long pagePrefetches) {}

    /** {@code fw}'s objects now. */
    public static Resources of(Firmware fw) {
        List<QpRow> qps = new ArrayList<>();
        for (Qp q : fw.qps.values()) // a TreeMap: by QPN
            qps.add(new QpRow(q.qpn, q.type.value(), q.state.value(), q.pd, q.destQpn, q.requester.nextPsn(),
                    q.responder.expectedPsn(),
                    q.scq == null ? -1 : q.scq.cqn, q.rcq == null ? -1 : q.rcq.cqn));
        List<CqRow> cqs = new ArrayList<>();
        for (Cq c : fw.cqs.all()) cqs.add(new CqRow(c.cqn, c.size - 1));
        cqs.sort(Comparator.comparingLong(CqRow::cqn));
        List<MrRow> mrs = new ArrayList<>();
        for (var m : fw.keys.regions()) {
            MemoryKeys.Paging p = fw.keys.paging(m.index());
            mrs.add(new MrRow(m.index() << 8 | m.key(), m.pd(), m.start(), m.length(), p.faults(), p.invalidations(),
                    p.prefetches()));
        }
        mrs.sort(Comparator.comparingLong(MrRow::key));
        return new Resources(List.copyOf(qps), List.copyOf(cqs), List.copyOf(mrs), fw.commands.pds());
    }
}
