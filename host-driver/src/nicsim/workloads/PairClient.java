package nicsim.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import nicsim.driver.World;
import nicsim.sim.Simulator;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * The writer of one pair of pairs_write_bw, as a program of its own host: keeps {@code tx} RDMA
 * WRITEs in flight into the server's slots, and looks at its CQ at the instant its host's memory was
 * written (a CQE landed), after that instant's other events, as a polling loop would see it. It runs
 * on its host's thread, touching nothing of another host but the run's tally of finished writers (once), so hosts
 * may run apart.
 */
final class PairClient {
    private final Ep c, s;
    private final Simulator sim;
    private final long size;
    private final int iters, tx, slots, cqMod;
    final List<String> errors = new ArrayList<>();
    private int posted, completed;
    long lastAt; // when its last completion was polled
    private boolean lookScheduled, looking, counted;
    /**
     * Writers finished, each counted once as it finishes: what the run looks at between windows, where asking each
     * writer read a line of every node's (cold once many nodes are resident) at every window.
     */
    private final AtomicInteger finishedTally;

    PairClient(World w, Ep c, Ep s, long size, int iters, int tx, int slots, int cqMod,
            AtomicInteger finishedTally) {
        this.c = c;
        this.finishedTally = finishedTally;
        this.s = s;
        this.size = size;
        this.iters = iters;
        this.tx = tx;
        this.slots = slots;
        this.cqMod = cqMod;
        this.sim = w.host(c.node).sim;
        w.onMemoryWrite(c.node, this::written);
    }

    /** The writer's node. */
    int node() { return c.node; }

    boolean finished() { return completed >= iters || !errors.isEmpty(); }

    /** Its host's memory was written (not by its own look): it looks once more at this instant. */
    private void written() {
        if (looking || lookScheduled || finished()) return;
        lookScheduled = true;
        sim.schedule(sim.now(), Simulator.Priority.OBSERVE, () -> {
            lookScheduled = false;
            look();
        });
    }

    /** Takes the completions there are, then posts while the window of {@code tx} has room. */
    void look() {
        looking = true;
        try {
            for (WorkCompletion wc : c.cq.poll(64)) {
                if (wc.status() != WcStatus.SUCCESS) errors.add("pair " + c.node / 2 + ": " + wc);
                completed = (int) wc.wrId() + 1;
                lastAt = sim.now();
            }
            while (errors.isEmpty() && posted < iters && posted - completed < tx) {
                long slot = (long) (posted % slots) * size;
                boolean signaled = posted % cqMod == cqMod - 1 || posted == iters - 1;
                c.qp().postSend(new SendWr().wrId(posted).opcode(WrOpcode.RDMA_WRITE)
                        .sendFlags(signaled ? SendFlags.SIGNALED : 0)
                        .sgList(new Sge(c.buf.addr() + slot, (int) size, c.mr.lkey()))
                        .remoteAddr(s.buf.addr() + slot).rkey(s.mr.rkey()));
                posted++;
            }
        } finally {
            looking = false;
        }
        if (!counted && finished()) {
            counted = true;
            finishedTally.incrementAndGet();
        }
    }
}
