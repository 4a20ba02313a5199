package nicsim.cosim.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Issue 56's speed goals, each set beside what the same bench run measured: met, or the gap to it, and
 * how far the run's own rounds spread, so a reader can tell a regression from a noisy hour. The figures
 * are ratios against the same run's references (simulated time, 2 nodes' wall per node, the machine's
 * ceiling for two threads), never absolute times from another day.
 */
public final class SpeedGoals {
    /** Whether the measured figure must stay at or under the target, or reach at least it. */
    public enum Sense { AT_MOST, AT_LEAST }

    /**
     * One goal: what it measures, the target, the measured figure and its rounds' lowest and highest
     * (NaN when measured once), and the unit they print with ("x" for ratios, "KB" for heap).
     */
    public record Goal(String what, Sense sense, double target, double measured, double low, double high,
                       String unit) {
        public Goal {
            if (!(target > 0)) throw new IllegalArgumentException("target = " + target + ": must be above 0");
            if (!(measured >= 0)) throw new IllegalArgumentException("measured = " + measured + ": must be 0 or more");
        }

        public boolean met() { return sense == Sense.AT_MOST ? measured <= target : measured >= target; }

        /** How many times the measure must still shrink (or grow) to reach the target; 1 or less when met. */
        public double gap() { return sense == Sense.AT_MOST ? measured / target : target / measured; }

        String verdict() {
            return met() ? "met" : String.format(Locale.ROOT, "gap %.2fx", gap());
        }

        String spread() {
            return Double.isNaN(low) ? "one run" : figure(low) + " to " + figure(high);
        }

        String figure(double x) {
            String digits = Math.abs(x) >= 100 ? "%,.0f" : "%.2f";
            return String.format(Locale.ROOT, digits, x) + unit;
        }
    }

    private final List<Goal> goals = new ArrayList<>();

    /** A slowdown goal from a row's runs (wall / simulated each): the median is the measure. */
    public void slowdown(String what, double target, double[] runs) {
        add(what + " slowdown", Sense.AT_MOST, target, WorkloadBench.median(runs), runs, "x");
    }

    /** A goal measured once or over rounds, its figure given (the best or the median, as the row says). */
    public void add(String what, Sense sense, double target, double measured, double[] rounds, String unit) {
        double lo = Double.NaN, hi = Double.NaN;
        if (rounds.length > 1) {
            lo = Double.MAX_VALUE;
            hi = -Double.MAX_VALUE;
            for (double r : rounds) {
                lo = Math.min(lo, r);
                hi = Math.max(hi, r);
            }
        }
        goals.add(new Goal(what, sense, target, measured, lo, hi, unit));
    }

    public List<Goal> goals() { return List.copyOf(goals); }

    /** The goals as a Markdown table, with a line counting those met. */
    public String markdown() {
        StringBuilder md = new StringBuilder("| goal | target | measured | verdict | rounds' spread |\n")
                .append("|---|---:|---:|---|---|\n");
        int met = 0;
        for (Goal g : goals) {
            String sign = g.sense() == Sense.AT_MOST ? "<= " : ">= ";
            md.append("| ").append(g.what()).append(" | ").append(sign).append(g.figure(g.target())).append(" | ")
                    .append(g.figure(g.measured())).append(" | ").append(g.verdict()).append(" | ")
                    .append(g.spread()).append(" |\n");
            if (g.met()) met++;
        }
        return md.append(String.format(Locale.ROOT, "%n%d of %d goals met in this run.%n", met, goals.size()))
                .toString();
    }
}
