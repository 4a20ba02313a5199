package nicsim.workloads;

import static nicsim.workloads.Workloads.STUCK;
import static nicsim.workloads.Workloads.named;
import static nicsim.workloads.Workloads.progress;
import static nicsim.workloads.Workloads.settle;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import nicsim.driver.World;
import nicsim.verbs.QpType;

/** {@code pairs_write_bw}: write_bw between every pair of nodes at once, for scaling with nodes. */
final class PairsWriteBw {
    private PairsWriteBw() {}

    /**
     * write_bw on every pair of nodes at once (node 2k writes to node 2k+1) across the one switch:
     * for scaling with nodes. Each client is a program of its own host, which looks at its CQ when its
     * memory was written (so hosts may run apart, on threads of their own). Reports the aggregate
     * bandwidth from the first post to the last completion; each pair's bytes are checked.
     */
    static Result run(World w, Options o, PrintStream out) {
        int n = w.hosts().size() / 2;
        if (n < 1) throw new IllegalArgumentException("pairs_write_bw needs at least 2 nodes");
        long size = o.size() > 0 ? o.size() : 65536;
        int iters = o.iters() > 0 ? o.iters() : 1000, tx = o.txDepth(), slots = 8;
        // across processes a rank sets up only the pairs it runs a host of (a host's setup runs on its own
        // simulator, so it is the same whichever others are set up): null for the others
        List<Ep[]> pairs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (!w.isLocal(2 * k) && !w.isLocal(2 * k + 1)) { pairs.add(null); continue; }
            Ep c = new Ep(w, 2 * k, QpType.RC, 1, size * slots, tx, 1, 0, o.scatterToCqe());
            Ep s = new Ep(w, 2 * k + 1, QpType.RC, 1, size * slots, tx, 1, 0, o.scatterToCqe());
            Ep.connect(c, s, o);
            pairs.add(new Ep[]{c, s});
        }
        SeededBytes rnd = new SeededBytes(w.seed);
        List<byte[]> data = new ArrayList<>();
        for (Ep[] pr : pairs) {
            byte[] d = new byte[(int) (size * slots)];
            rnd.nextBytes(d); // every pair's, so each pair's bytes are the same on every rank
            if (pr != null) pr[0].buf.write(0, d);
            data.add(d);
        }
        settle(w);
        // on a microsecond boundary, so that the clocks' phase at the first post is the same however the setup went
        // (in one simulator each host's setup waits for the others'; apart they overlap)
        long t0 = Math.addExact(w.now(), 999_999) / 1_000_000 * 1_000_000;
        w.sync();
        w.runFor(t0 - w.now());
        int cqMod = Math.max(1, Math.min(o.cqMod(), tx / 2));
        List<PairClient> clients = new ArrayList<>();
        AtomicInteger finished = new AtomicInteger(); // writers finished: each counts itself as it looks
        for (Ep[] pr : pairs)
            if (pr != null) clients.add(new PairClient(w, pr[0], pr[1], size, iters, tx, slots, cqMod, finished));
        // across processes each runs the writers of its own hosts, and looks at their servers' bytes only
        List<PairClient> mine = clients.stream().filter(c -> w.isLocal(c.node())).toList();
        for (PairClient c : mine) c.look(); // the first posts, at t0 on every host
        named("pairs_write_bw completions", () -> w.runUntil(() -> {
            int done = finished.get();
            progress.accept((double) done / Math.max(1, mine.size()));
            return done == mine.size();
        }, STUCK));
        List<String> errors = new ArrayList<>();
        long end = t0;
        for (PairClient c : mine) {
            errors.addAll(c.errors);
            end = Math.max(end, c.lastAt);
        }
        errors = gather(w, errors);
        if (w.peers() != null) end = w.peers().max(end);
        long t = end - t0;
        // fewer iterations than slots leave the last slots unwritten
        int written = (int) (Math.min(iters, slots) * size);
        List<String> differ = new ArrayList<>();
        for (int k = 0; k < n; k++)
            if (w.isLocal(2 * k + 1)
                    && !Arrays.equals(data.get(k), 0, written, pairs.get(k)[1].buf.read(0, written), 0, written))
                differ.add("pair " + k + ": destination differs from source");
        errors.addAll(gather(w, differ));
        double bw = size * 8.0 * iters * n / (t / 1e12) / 1e9;
        progress.accept(-1);
        out.printf("%d pairs x %d writes of %d B: aggregate %.2f Gb/s (%.2f per pair) in %.1f us simulated%n",
                n, iters, size, bw, bw / n, t / 1e6);
        Result.Row row = new Result.Row(size, iters, bw, bw, iters * n / (t / 1e12) / 1e6, 0, 0, 0, 0, 0, t);
        return new Result("pairs_write_bw", List.of(row), errors);
    }

    /** Across processes every rank's {@code mine}, in rank order (ranks hold blocks of nodes); collective. */
    static List<String> gather(World w, List<String> mine) {
        return w.peers() == null ? mine : w.peers().gather(mine);
    }
}
