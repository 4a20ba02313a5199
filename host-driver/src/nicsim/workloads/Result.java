package nicsim.workloads;

import java.util.List;

/**
 * What a workload measured: one row per message size (simulated time, so the same on every run),
 * and the problems found. {@link #ok()} is false if any byte or completion was wrong.
 */
public record Result(String workload, List<Row> rows, List<String> errors) {
    /** One message size: bandwidth in Gb/s (average and peak), message rate, latencies in microseconds. */
    public record Row(long bytes, int iters, double bwAvgGbps, double bwPeakGbps, double msgRateMpps, double latMinUs,
                      double latTypicalUs, double latMaxUs, double latAvgUs, double latP99Us, long simPicos) {}

    public boolean ok() { return errors.isEmpty(); }
}
