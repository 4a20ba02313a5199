package nicsim.cosim;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.adapter.AdapterConfig;
import nicsim.profile.Profile;
import nicsim.sim.Trace;

/** The per-stage breakdown of send WQEs, from a run's timeline: where a message's time went. */
public final class Stages {
    private Stages() {}

    /** The stages of a send WQE's timeline, in order. */
    public static final String[] NAMES = {"doorbell_decoded", "fetch_issued", "delivered", "translated", "on_wire",
            "payload_read", "acked", "cqe_written"};

    /** One step between consecutive stages: its mean over the WQEs that had it, and how many did. */
    public record Step(String from, String to, double meanPicos, double meanCycles, long wqes) {
        public String name() { return from + " -> " + to; }
    }

    /** Records what {@link #steps} needs (the WQE stages), keeping at most two million of them. */
    public static void record(Trace trace) {
        trace.enable("wqe");
        trace.limit(2_000_000);
    }

    /**
     * Mean time between consecutive stages of the send WQEs whose transaction starts with
     * {@code prefix} (e.g. "node0/"), in stage order; cycles are of the profile's core clock.
     */
    public static List<Step> steps(Trace trace, Profile p, String prefix) {
        Map<String, Map<String, Long>> byTxn = new HashMap<>();
        for (Trace.Entry e : trace.entries())
            if (e.txn().startsWith(prefix))
                byTxn.computeIfAbsent(e.txn(), k -> new HashMap<>()).putIfAbsent(e.stage(), e.timePicos());
        Map<String, long[]> sums = new LinkedHashMap<>();
        for (Map<String, Long> st : byTxn.values()) {
            // consecutive stages in the order they happened (a streamed message is on the wire before all
            // of it is read)
            List<String> order = new ArrayList<>();
            for (String s : NAMES) if (st.containsKey(s)) order.add(s);
            order.sort(Comparator.comparingLong(st::get));
            for (int i = 1; i < order.size(); i++) {
                long[] acc = sums.computeIfAbsent(order.get(i - 1) + " -> " + order.get(i), k -> new long[2]);
                acc[0] += st.get(order.get(i)) - st.get(order.get(i - 1));
                acc[1]++;
            }
        }
        List<Step> steps = new ArrayList<>();
        double period = AdapterConfig.from(p).corePeriodPs();
        for (String s1 : NAMES)
            for (String s2 : NAMES) {
                long[] acc = sums.get(s1 + " -> " + s2);
                if (acc == null) continue;
                double mean = (double) acc[0] / acc[1];
                steps.add(new Step(s1, s2, mean, mean / period, acc[1]));
            }
        return steps;
    }
}
