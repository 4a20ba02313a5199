package nicsim.cosim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.adapter.AdapterConfig;
import nicsim.adapter.StageLog;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.profile.Profile;
import nicsim.sim.Simulator;
import nicsim.sim.Trace;

/** The per-stage breakdown of send WQEs, from a run's timeline: where a message's time went. */
public final class Stages {
    private Stages() {}

    /** The stages of a send WQE's timeline, in order. */
    public static final String[] NAMES = StageLog.NAMES.toArray(String[]::new);

    /** One step between consecutive stages: its mean over the WQEs that had it, and how many did. */
    public record Step(String from, String to, double meanPicos, double meanCycles, long wqes) {
        public String name() { return from + " -> " + to; }
    }

    /** The most WQE stages the timeline keeps. */
    public static final int LIMIT = 2_000_000;

    /** Records what {@link #steps} needs (the WQE stages), keeping at most {@link #LIMIT} of them. */
    public static void record(Trace trace) {
        trace.enable("wqe");
        trace.limit(LIMIT);
    }

    /**
     * Has the adapters of {@code sim} keep what {@link #steps(StageLog, Profile, String)} needs in a log of numbers
     * (not the trace), counting stages as the trace of {@link #record} would: the same steps, at little cost.
     */
    public static StageLog log(World world, Simulator sim) { return log(world, sim, LIMIT); }

    /** {@link #log(World, Simulator)} as a trace limited to {@code limit} entries. */
    public static StageLog log(World world, Simulator sim, int limit) {
        StageLog log = new StageLog(limit);
        for (Host h : world.hosts())
            if (world.isLocal(h.index) && h.adapter.simulator() == sim) h.adapter.recordStages(log);
        return log;
    }

    /** {@link #steps(Trace, Profile, String)} from a {@link #log}. */
    public static List<Step> steps(StageLog log, Profile p, String prefix) { return steps(log.times(prefix), p); }

    /**
     * Mean time between consecutive stages of the send WQEs whose transaction starts with
     * {@code prefix} (e.g. "node0/"), in stage order; cycles are of the profile's core clock.
     */
    public static List<Step> steps(Trace trace, Profile p, String prefix) {
        Map<String, Integer> stageIndex = new HashMap<>();
        for (int i = 0; i < NAMES.length; i++) stageIndex.put(NAMES[i], i);
        // each WQE's time at each stage, the first recorded where it has several; -1 where it has none
        Map<String, long[]> byTxn = new HashMap<>();
        for (Trace.Entry e : trace.entries()) {
            Integer k = stageIndex.get(e.stage());
            if (k == null || !e.txn().startsWith(prefix)) continue;
            long[] at = byTxn.computeIfAbsent(e.txn(), t -> newTimes());
            if (at[k] < 0) at[k] = e.timePicos();
        }
        return steps(byTxn.values(), p);
    }

    /** The steps of WQEs with these times at each stage (-1: none). */
    private static List<Step> steps(Iterable<long[]> times, Profile p) {
        long[][] sum = new long[NAMES.length][NAMES.length], count = new long[NAMES.length][NAMES.length];
        Integer[] order = new Integer[NAMES.length];
        for (long[] at : times) {
            // consecutive stages in the order they happened (a streamed message is on the wire before all
            // of it is read); stages at the same time keep the names' order
            int n = 0;
            for (int i = 0; i < NAMES.length; i++) if (at[i] >= 0) order[n++] = i;
            Arrays.sort(order, 0, n, Comparator.comparingLong(i -> at[i]));
            for (int i = 1; i < n; i++) {
                sum[order[i - 1]][order[i]] += at[order[i]] - at[order[i - 1]];
                count[order[i - 1]][order[i]]++;
            }
        }
        List<Step> steps = new ArrayList<>();
        double period = AdapterConfig.from(p).corePeriodPs();
        for (int a = 0; a < NAMES.length; a++)
            for (int b = 0; b < NAMES.length; b++) {
                if (count[a][b] == 0) continue;
                double mean = (double) sum[a][b] / count[a][b];
                steps.add(new Step(NAMES[a], NAMES[b], mean, mean / period, count[a][b]));
            }
        return steps;
    }

    private static long[] newTimes() {
        long[] at = new long[NAMES.length];
        Arrays.fill(at, -1);
        return at;
    }
}
