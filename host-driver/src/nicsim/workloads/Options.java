package nicsim.workloads;

import java.util.function.Consumer;
import nicsim.verbs.Mtu;

/**
 * A workload's parameters, with perftest's defaults (docs/sources.md#perftest-defaults) where perftest has the
 * test, and rdma-core's for the pingpong examples. {@code size} 0 and {@code iters} 0 mean "the test's default".
 * {@code mrs}: bandwidth tests register this many MRs over their buffer on each side and use them in turn
 * (translation-cache studies). {@code scatterToCqe}: the QPs let small receives come in their CQE
 * (cqe.scatter.max says how small). {@code ud}: the perftest test runs over UD QPs ({@code -c UD}; send_lat and
 * send_bw). A changed copy is made by {@link #with}: {@code Options.defaults().with(set -> set.size(64).iters(1000))}.
 */
public record Options(long size, boolean allSizes, int iters, int txDepth, int rxDepth, int cqMod, int qps, Mtu mtu,
                      int inline, int mrs, boolean scatterToCqe, boolean ud) {
    public static Options defaults() {
        return new Options(0, false, 0, 128, 512, 100, 1, Mtu.MTU_4096, -1, 1, false, false);
    }

    /** A copy of these options with what {@code change} sets on its builder changed. */
    public Options with(Consumer<Builder> change) {
        Builder b = new Builder(this);
        change.accept(b);
        return b.build();
    }

    /** The fields of {@link Options}, each set by a method of its name; made only by {@link Options#with}. */
    public static final class Builder {
        private long size;
        private boolean allSizes;
        private int iters, txDepth, rxDepth, cqMod, qps, inline, mrs;
        private Mtu mtu;
        private boolean scatterToCqe, ud;

        private Builder(Options o) {
            size = o.size; allSizes = o.allSizes; iters = o.iters; txDepth = o.txDepth; rxDepth = o.rxDepth;
            cqMod = o.cqMod; qps = o.qps; mtu = o.mtu; inline = o.inline; mrs = o.mrs;
            scatterToCqe = o.scatterToCqe; ud = o.ud;
        }

        public Builder size(long v) { size = v; return this; }
        public Builder allSizes(boolean v) { allSizes = v; return this; }
        public Builder iters(int v) { iters = v; return this; }
        public Builder txDepth(int v) { txDepth = v; return this; }
        public Builder rxDepth(int v) { rxDepth = v; return this; }
        public Builder cqMod(int v) { cqMod = v; return this; }
        public Builder qps(int v) { qps = v; return this; }
        public Builder mtu(Mtu v) { mtu = v; return this; }
        public Builder inline(int v) { inline = v; return this; }
        public Builder mrs(int v) { mrs = v; return this; }
        public Builder scatterToCqe(boolean v) { scatterToCqe = v; return this; }
        public Builder ud(boolean v) { ud = v; return this; }

        private Options build() {
            return new Options(size, allSizes, iters, txDepth, rxDepth, cqMod, qps, mtu, inline, mrs, scatterToCqe, ud);
        }
    }
}
