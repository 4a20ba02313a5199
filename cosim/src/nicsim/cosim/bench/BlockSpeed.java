package nicsim.cosim.bench;

import java.util.ArrayList;
import java.util.List;
import nicsim.cosim.BlockPairs;
import nicsim.hw.rtl.NativeBuild;
import nicsim.hw.rtl.NativeRtl;
import nicsim.hw.rtl.RtlHandle;
import nicsim.hw.rtl.RtlRunner;
import nicsim.profile.Profile;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.PortWires;
import nicsim.sim.Simulator;

/**
 * Simulation speed of each block, Java twin against Verilated RTL, measured side by side in one
 * run (issue 7). The Java figure runs the twin with its seeded stimulus; the RTL figure replays
 * the very inputs the twin saw, cycle by cycle, into the Verilated model through SpinalSim's JNI
 * (pokes, one settle, peeks of every output, one edge), which is what RTL in the loop costs.
 * Wall-clock figures: this is a benchmark that prints numbers, never a test.
 */
public final class BlockSpeed {
    private BlockSpeed() {}

    /** One block's figures. */
    public record Row(String block, long cycles, double javaCyclesPerSec, double rtlCyclesPerSec, double nativeCyclesPerSec, int inputWires,
                      int outputWires) {
        /** Java twin against the RTL through SpinalSim's binding, a crossing per signal: the target's ratio. */
        public double ratio() { return javaCyclesPerSec / rtlCyclesPerSec; }
    }

    public static Row measure(Profile p, String name, long cycles, long seed) {
        BlockPairs.Pair pair = BlockPairs.get(p, name);
        // Java: warm up the JIT once, then time a run; record its inputs for the RTL replay
        runJava(pair, p, cycles / 4, seed, null);
        List<long[]> inputs = new ArrayList<>();
        List<String> inNames = new ArrayList<>(), outNames = new ArrayList<>();
        long t0 = System.nanoTime();
        runJava(pair, p, cycles, seed, null);
        double javaSecs = (System.nanoTime() - t0) / 1e9;
        runJava(pair, p, cycles, seed, new Recorder(inputs, inNames, outNames));
        // RTL: replay those inputs, peek every output, once to warm up and once timed
        RtlRunner.Compiled rtl = RtlRunner.compile(pair.rtlName(), pair.rtl(), false);
        double[] rtlSecs = new double[1];
        rtl.run("bench_warmup", (int) seed, h -> replay(h, inputs.subList(0, Math.min(inputs.size(), 2000)), inNames, outNames));
        rtl.run("bench", (int) seed, h -> {
            long s = System.nanoTime();
            replay(h, inputs, inNames, outNames);
            rtlSecs[0] = (System.nanoTime() - s) / 1e9;
        });
        // the same replay through nicsim's batched binding: one crossing per batch of RtlInLoop.BATCH cycles
        NativeBuild.Compiled nat = NativeBuild.compile(pair.rtlName(), pair.rtl(), inNames, outNames);
        replayNative(nat, inputs.subList(0, Math.min(inputs.size(), 20_000)));
        double nativeSecs = replayNative(nat, inputs);
        return new Row(name, cycles, cycles / javaSecs, cycles / rtlSecs[0], cycles / nativeSecs, inNames.size(), outNames.size());
    }

    /** Collects, per cycle, the values of the twin's input wires, by RTL name. */
    private static final class Recorder {
        final List<long[]> rows;
        final List<String> inNames, outNames;
        List<PortWires.Wire> wires;
        Recorder(List<long[]> rows, List<String> inNames, List<String> outNames) { this.rows = rows; this.inNames = inNames; this.outNames = outNames; }

        void attach(Block twin) {
            wires = PortWires.of(twin);
            for (PortWires.Wire w : wires) (w.input() ? inNames : outNames).add(w.name());
        }

        void sample() {
            long[] row = new long[inNames.size()];
            int i = 0;
            for (PortWires.Wire w : wires) if (w.input()) row[i++] = w.value().getAsLong();
            rows.add(row);
        }
    }

    private static void runJava(BlockPairs.Pair pair, Profile p, long cycles, long seed, Recorder rec) {
        Simulator sim = new Simulator();
        ClockDomain core = sim.clockDomain("core", p.periodPicos("core.clock"));
        Block twin = pair.twin().apply(core);
        core.add(pair.stimulus().create(twin, seed));
        if (rec != null) rec.attach(twin);
        for (long c = 0; c < cycles; c++) {
            core.wake();
            sim.runUntil(core.picosOfCycle(c));
            if (rec != null) rec.sample();
        }
    }

    private static void replay(RtlHandle h, List<long[]> rows, List<String> in, List<String> out) {
        long sink = 0;
        for (long[] row : rows) {
            for (int i = 0; i < row.length; i++) h.poke(in.get(i), row[i]);
            h.settle();
            for (String o : out) sink += h.peek(o);
            h.clockEdge();
        }
        if (sink == 42) System.out.print(""); // keep the peeks from being optimised away
    }

    /** Seconds to run {@code rows} through a fresh native instance, batch by batch (the records are packed before the clock starts). */
    private static double replayNative(NativeBuild.Compiled nat, List<long[]> rows) {
        int in = nat.inputs().size(), out = nat.outputs().size(), batch = nicsim.cosim.RtlInLoop.BATCH;
        List<long[]> packed = new ArrayList<>();
        for (int i = 0; i < rows.size(); i += batch) {
            int n = Math.min(batch, rows.size() - i);
            long[] rec = new long[n * (in + 1)];
            for (int k = 0; k < n; k++) {
                rec[k * (in + 1)] = i + k == 0 ? 0 : 1;
                System.arraycopy(rows.get(i + k), 0, rec, k * (in + 1) + 1, in);
            }
            packed.add(rec);
        }
        long[] outputs = new long[batch * out];
        try (NativeRtl rtl = nat.open()) {
            long t = System.nanoTime();
            for (long[] rec : packed) rtl.run(rec, rec.length / (in + 1), outputs);
            return (System.nanoTime() - t) / 1e9;
        }
    }

    /** Nanoseconds per JNI crossing of nicsim's binding with an empty batch, and per cycle of the doorbell decoder in batches of RtlInLoop.BATCH. */
    public static double[] nativeCost(Profile p) {
        BlockPairs.Pair pair = BlockPairs.get(p, "doorbell");
        List<String> in = new ArrayList<>(), out = new ArrayList<>();
        for (PortWires.Wire w : PortWires.of(pair.twin().apply(new Simulator().clockDomain("core", 1000)))) (w.input() ? in : out).add(w.name());
        NativeBuild.Compiled nat = NativeBuild.compile(pair.rtlName(), pair.rtl(), in, out);
        int batch = nicsim.cosim.RtlInLoop.BATCH;
        long[] rec = new long[batch * (in.size() + 1)], outputs = new long[batch * out.size()];
        for (int k = 0; k < batch; k++) rec[k * (in.size() + 1)] = 1; // idle inputs, one edge each
        double[] ns = new double[2];
        try (NativeRtl rtl = nat.open()) {
            for (int round = 0; round < 2; round++) {
                int n = 1_000_000;
                long t = System.nanoTime();
                for (int i = 0; i < n; i++) rtl.run(rec, 0, outputs);
                ns[0] = (System.nanoTime() - t) / (double) n;
                int batches = 1000;
                t = System.nanoTime();
                for (int i = 0; i < batches; i++) rtl.run(rec, batch, outputs);
                ns[1] = (System.nanoTime() - t) / (double) batches / batch;
            }
        }
        return ns;
    }

    /** Nanoseconds per JNI poke and per peek of one signal (a million of each, after a warm-up). */
    public static double[] jniCost(Profile p) {
        BlockPairs.Pair pair = BlockPairs.get(p, "doorbell");
        double[] ns = new double[2];
        RtlRunner.compile(pair.rtlName(), pair.rtl(), false).run("bench_jni", 1, h -> {
            for (int k = 0; k < 2; k++) {
                int n = k == 0 ? 100_000 : 1_000_000;
                long t = System.nanoTime();
                for (int i = 0; i < n; i++) h.poke("io_mmio_payload_offset", i);
                ns[0] = (System.nanoTime() - t) / (double) n;
                long sink = 0;
                t = System.nanoTime();
                for (int i = 0; i < n; i++) sink += h.peek("io_seen");
                ns[1] = (System.nanoTime() - t) / (double) n;
                if (sink == 42) System.out.print("");
            }
        });
        return ns;
    }
}
