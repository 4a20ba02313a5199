package nicsim.wave;

import java.util.Collection;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Compares two waveforms signal by signal and finds the earliest time at which any named signal
 * differs. Used to check that a Java twin's trace and its RTL trace agree, and by tests that a
 * waveform survives compression unchanged.
 */
public final class WaveDiff {
    private WaveDiff() {}

    /** The first difference: when, which signal, and the two values. */
    public record Difference(long time, String signal, String left, String right) {
        @Override public String toString() {
            return "at t=" + time + " signal " + signal + ": " + left + " vs " + right;
        }
    }

    /** Compares the signals present in both waveforms under the same full name. */
    public static Optional<Difference> firstDifference(Waveform a, Waveform b) {
        TreeSet<String> common = new TreeSet<>(a.signals().keySet());
        common.retainAll(b.signals().keySet());
        return firstDifference(a, b, common);
    }

    public static Optional<Difference> firstDifference(Waveform a, Waveform b, Collection<String> names) {
        Difference best = null;
        for (String name : names) {
            Waveform.Signal sa = a.signal(name), sb = b.signal(name);
            TreeSet<Long> times = new TreeSet<>();
            sa.changes().forEach(c -> times.add(c.time()));
            sb.changes().forEach(c -> times.add(c.time()));
            for (long t : times) {
                if (best != null && t >= best.time()) break;
                String va = sa.valueAt(t), vb = sb.valueAt(t);
                if (!va.equals(vb)) { best = new Difference(t, name, va, vb); break; }
            }
        }
        return Optional.ofNullable(best);
    }
}
