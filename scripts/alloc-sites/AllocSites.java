import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a JFR recording's sampled allocations went (jdk.ObjectAllocationSample, each sample weighted by
 * the bytes it stands for), by allocation site in nicsim's code: the first two frames of package nicsim
 * (a lambda's synthetic frames skipped), so a java.util call is charged to the model code that made it.
 * The recorder's own allocations (frames of jdk.jfr) are left out.
 * Usage: java AllocSites.java RECORDING.jfr MESSAGES [ROWS]; prints bytes per message and share per site.
 */
public final class AllocSites {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) throw new IllegalArgumentException("usage: AllocSites RECORDING.jfr MESSAGES [ROWS]");
        long messages = Long.parseLong(args[1]);
        int rows = args.length > 2 ? Integer.parseInt(args[2]) : 30;
        Map<String, Long> bySite = new HashMap<>();
        long total = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(Path.of(args[0]))) {
            if (!e.getEventType().getName().equals("jdk.ObjectAllocationSample")) continue;
            if (recorders(e)) continue; // the recorder's own, not the run's
            long w = e.getLong("weight");
            total += w;
            String type = e.getClass("objectClass").getName().replaceAll("\\$\\$Lambda.*", " (lambda)");
            bySite.merge(type + "  " + site(e), w, Long::sum);
        }
        List<Map.Entry<String, Long>> sorted = new ArrayList<>(bySite.entrySet());
        sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        System.out.printf("%,d bytes sampled, %,.0f B per message over %d messages%n", total,
                (double) total / messages, messages);
        System.out.printf("%10s %6s  %s%n", "B/message", "share", "type  site (first nicsim frames)");
        for (int i = 0; i < Math.min(rows, sorted.size()); i++) {
            var s = sorted.get(i);
            System.out.printf("%,10.0f %5.1f%%  %s%n", (double) s.getValue() / messages, 100.0 * s.getValue() / total,
                    s.getKey());
        }
    }

    /** Whether the sample is the flight recorder's own allocation (its settings, its buffers). */
    private static boolean recorders(RecordedEvent e) {
        if (e.getStackTrace() == null) return false;
        for (RecordedFrame f : e.getStackTrace().getFrames())
            if (f.getMethod().getType().getName().startsWith("jdk.jfr.")) return true;
        return false;
    }

    /** The first two frames in package nicsim, skipping the JVM's lambda frames; "(JVM)" when there is none. */
    private static String site(RecordedEvent e) {
        if (e.getStackTrace() == null) return "(no stack)";
        List<String> ours = new ArrayList<>();
        for (RecordedFrame f : e.getStackTrace().getFrames()) {
            String type = f.getMethod().getType().getName();
            if (!type.startsWith("nicsim.") || type.contains("$$Lambda")) continue;
            String simpleName = type.substring(type.lastIndexOf('.') + 1);
            ours.add(simpleName + "." + f.getMethod().getName() + ":" + f.getLineNumber());
            if (ours.size() == 2) break;
        }
        return ours.isEmpty() ? "(JVM)" : String.join(" < ", ours);
    }
}
