package nicsim.workloads;

import nicsim.verbs.Mtu;

/**
 * A workload's parameters, with perftest's defaults (docs/sources.md#perftest-defaults) where perftest has the test,
 * and rdma-core's for the pingpong examples. {@code size} 0 and {@code iters} 0 mean "the test's
 * default". {@code ud}: the perftest test runs over UD QPs ({@code -c UD}; send_lat and send_bw).
 */
public record Options(long size, boolean allSizes, int iters, int txDepth, int rxDepth, int cqMod, int qps, Mtu mtu,
                      int inline, int mrs, boolean scatterToCqe, boolean ud) {
    public static Options defaults() { return new Options(0, false, 0, 128, 512, 100, 1, Mtu.MTU_4096, -1, 1, false, false); }

    /** Bandwidth tests register this many MRs over their buffer on each side and use them in turn (translation-cache studies). */
    public Options withMrs(int v) {
        return new Options(size, allSizes, iters, txDepth, rxDepth, cqMod, qps, mtu, inline, v, scatterToCqe, ud);
    }

    public Options withSize(long v) {
        return new Options(v, allSizes, iters, txDepth, rxDepth, cqMod, qps, mtu, inline, mrs, scatterToCqe, ud);
    }

    public Options withAllSizes(boolean v) {
        return new Options(size, v, iters, txDepth, rxDepth, cqMod, qps, mtu, inline, mrs, scatterToCqe, ud);
    }

    public Options withIters(int v) {
        return new Options(size, allSizes, v, txDepth, rxDepth, cqMod, qps, mtu, inline, mrs, scatterToCqe, ud);
    }

    public Options withQps(int v) {
        return new Options(size, allSizes, iters, txDepth, rxDepth, cqMod, v, mtu, inline, mrs, scatterToCqe, ud);
    }

    public Options withMtu(Mtu v) {
        return new Options(size, allSizes, iters, txDepth, rxDepth, cqMod, qps, v, inline, mrs, scatterToCqe, ud);
    }

    /** The QPs let small receives come in their CQE (scatter to CQE; cqe.scatter.max says how small). */
    public Options withScatterToCqe(boolean v) {
        return new Options(size, allSizes, iters, txDepth, rxDepth, cqMod, qps, mtu, inline, mrs, v, ud);
    }

    public Options withTxDepth(int v) {
        return new Options(size, allSizes, iters, v, rxDepth, cqMod, qps, mtu, inline, mrs, scatterToCqe, ud);
    }

    /** The test runs over UD QPs, as perftest's {@code -c UD}. */
    public Options withUd(boolean v) {
        return new Options(size, allSizes, iters, txDepth, rxDepth, cqMod, qps, mtu, inline, mrs, scatterToCqe, v);
    }
}
