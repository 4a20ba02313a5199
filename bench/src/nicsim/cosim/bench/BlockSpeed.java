package nicsim.cosim.bench;

import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.AdapterConfig;
import nicsim.cosim.BlockPairs;
import nicsim.hw.rtl.NativeBuild;
import nicsim.hw.rtl.NativeRtl;
import nicsim.hw.rtl.RtlHandle;
import nicsim.hw.rtl.RtlRunner;
import nicsim.profile.Profile;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Flow;
import nicsim.sim.Port;
import nicsim.sim.Stream;
import nicsim.sim.PortWires;
import nicsim.sim.Simulator;
import java.util.Arrays;
import nicsim.cosim.RtlInLoop;

/**
 * Simulation speed of each block, Java twin against Verilated RTL, measured side by side in one
 * run (issue 7). The twin first runs with its seeded stimulus, which records every input it drove;
 * then a fresh twin, the Verilated model through SpinalSim's JNI (pokes, one settle, peeks of
 * every output, one edge) and the Verilated model through nicsim's batched binding each replay
 * those inputs cycle by cycle, so no figure pays for the stimulus.
 * Wall-clock figures: this is a benchmark that prints numbers, never a test.
 */
public final class BlockSpeed {
    private BlockSpeed() {}

    /** One block's figures. */
    public record Row(String block, long cycles, double javaCyclesPerSec, double rtlCyclesPerSec,
                      double nativeCyclesPerSec, int inputWires, int outputWires) {
        /** Java twin against the RTL through SpinalSim's binding, a crossing per signal: the target's ratio. */
        public double ratio() { return javaCyclesPerSec / rtlCyclesPerSec; }
    }

    public static Row measure(Profile p, String name, long cycles, long seed) {
        BlockPairs.Pair pair = BlockPairs.get(p, name);
        // run the twin with its seeded stimulus once, recording what was driven on every input: as wires for the
        // RTL replays, as port values for the Java one, so all three run the very same inputs without the
        // stimulus's cost
        List<long[]> inputs = new ArrayList<>();
        List<String> inNames = new ArrayList<>(), outNames = new ArrayList<>();
        Script script = new Script();
        long[] fired = fires(runJava(pair, p, cycles, seed, new Recorder(inputs, inNames, outNames), script));
        // Java: replays are short, so the JIT gets two to warm up and the best of three counts; each
        // must move what the stimulus's run moved
        double javaSecs = Double.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long t0 = System.nanoTime();
            Block replayed = replayJava(pair, p, script, cycles);
            if (round >= 2) javaSecs = Math.min(javaSecs, (System.nanoTime() - t0) / 1e9);
            if (!Arrays.equals(fired, fires(replayed)))
                throw new IllegalStateException(name + ": the replayed twin's transfers differ from its stimulus "
                        + "run's");
        }
        // RTL: replay those inputs, peek every output, once to warm up and once timed
        RtlRunner.Compiled rtl = RtlRunner.compile(pair.rtlName(), pair.rtl(), false);
        double[] rtlSecs = new double[1];
        List<long[]> warmup = inputs.subList(0, Math.min(inputs.size(), 2000));
        rtl.run("bench_warmup", (int) seed, h -> replay(h, warmup, inNames, outNames));
        rtl.run("bench", (int) seed, h -> {
            long s = System.nanoTime();
            replay(h, inputs, inNames, outNames);
            rtlSecs[0] = (System.nanoTime() - s) / 1e9;
        });
        // the same replay through nicsim's batched binding: one crossing per batch of RtlInLoop.BATCH cycles
        NativeBuild.Compiled nat = NativeBuild.compile(pair.rtlName(), pair.rtl(), inNames, outNames);
        replayNative(nat, inputs.subList(0, Math.min(inputs.size(), 20_000)));
        double nativeSecs = replayNative(nat, inputs);
        return new Row(name, cycles, cycles / javaSecs, cycles / rtlSecs[0], cycles / nativeSecs, inNames.size(),
                outNames.size());
    }

    /** Collects, per cycle, the values of the twin's input wires, by RTL name. */
    private static final class Recorder {
        final List<long[]> rows;
        final List<String> inNames, outNames;
        List<PortWires.Wire> wires;
        Recorder(List<long[]> rows, List<String> inNames, List<String> outNames) {
            this.rows = rows;
            this.inNames = inNames;
            this.outNames = outNames;
        }

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

    /** Transfers on each of a block's stream and flow ports so far. */
    private static long[] fires(Block b) {
        return b.ports().stream().mapToLong(port -> port.channel() instanceof Stream<?> st ? st.fires()
                : port.channel() instanceof Flow<?> f ? f.fires() : 0).toArray();
    }

    private static Block runJava(BlockPairs.Pair pair, Profile p, long cycles, long seed, Recorder rec, Script script) {
        Simulator sim = new Simulator();
        ClockDomain core = sim.clockDomain("core", AdapterConfig.from(p).corePeriodPs());
        Block twin = pair.twin().apply(core);
        core.add(pair.stimulus().create(twin, seed));
        rec.attach(twin);
        script.attach(twin);
        for (long c = 0; c < cycles; c++) {
            core.wake();
            sim.runUntil(core.picosOfCycle(c));
            rec.sample();
            script.sample();
        }
        return twin;
    }

    /** Runs a fresh twin for {@code cycles} on the inputs {@code script} recorded. */
    private static Block replayJava(BlockPairs.Pair pair, Profile p, Script script, long cycles) {
        Simulator sim = new Simulator();
        ClockDomain core = sim.clockDomain("core", AdapterConfig.from(p).corePeriodPs());
        Block twin = pair.twin().apply(core);
        core.add(script.player(twin));
        for (long c = 0; c < cycles; c++) {
            core.wake();
            sim.runUntil(core.picosOfCycle(c));
        }
        return twin;
    }

    /**
     * What a stimulus drove on a twin's ports, cycle by cycle: valid and payload on the streams and
     * flows into it, ready on the streams out of it. {@link #player} drives the same on another twin.
     */
    private static final class Script {
        final List<Object[]> rows = new ArrayList<>();
        List<Port> ports;

        /** The ports the stimulus drives, in the twin's order. */
        static List<Port> driven(Block twin) {
            List<Port> d = new ArrayList<>();
            for (Port port : twin.ports())
                if (port.channel() instanceof Stream<?>
                        || port.channel() instanceof Flow<?> && port.direction() == Port.Direction.IN) d.add(port);
            return d;
        }

        void attach(Block twin) { ports = driven(twin); }

        /** Per port: the payload (null: not valid) of an input, or Boolean ready of an output stream. */
        void sample() {
            Object[] row = new Object[ports.size()];
            for (int i = 0; i < row.length; i++) {
                Port port = ports.get(i);
                if (port.direction() == Port.Direction.OUT) row[i] = ((Stream<?>) port.channel()).ready();
                else if (port.channel() instanceof Stream<?> st) row[i] = st.valid() ? st.payload() : null;
                else if (port.channel() instanceof Flow<?> f) row[i] = f.valid() ? f.payload() : null;
            }
            rows.add(row);
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        Clocked player(Block twin) {
            List<Port> to = driven(twin);
            return new Clocked() {
                int cycle;

                @Override public void drive() {
                    Object[] row = rows.get(cycle % rows.size());
                    for (int i = 0; i < row.length; i++) {
                        Port port = to.get(i);
                        if (port.direction() == Port.Direction.OUT) {
                            ((Stream<?>) port.channel()).ready((Boolean) row[i]);
                        } else if (port.channel() instanceof Stream st) {
                            if (row[i] == null) st.idle();
                            else st.push(row[i]);
                        } else {
                            Flow f = (Flow) port.channel();
                            if (row[i] == null) f.idle();
                            else f.push(row[i]);
                        }
                    }
                }

                @Override public void update() { cycle++; }

                @Override public boolean active() { return true; }
            };
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

    /**
     * Seconds to run {@code rows} through a fresh native instance, batch by batch (the records are packed before
     * the clock starts).
     */
    private static double replayNative(NativeBuild.Compiled nat, List<long[]> rows) {
        int in = nat.inputs().size(), out = nat.outputs().size(), batch = RtlInLoop.BATCH;
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

    /**
     * Nanoseconds per JNI crossing of nicsim's binding with an empty batch, and per cycle of the doorbell decoder in
     * batches of RtlInLoop.BATCH.
     */
    public static double[] nativeCost(Profile p) {
        BlockPairs.Pair pair = BlockPairs.get(p, "doorbell");
        List<String> in = new ArrayList<>(), out = new ArrayList<>();
        Block twin = pair.twin().apply(new Simulator().clockDomain("core", 1000));
        for (PortWires.Wire w : PortWires.of(twin)) (w.input() ? in : out).add(w.name());
        NativeBuild.Compiled nat = NativeBuild.compile(pair.rtlName(), pair.rtl(), in, out);
        int batch = RtlInLoop.BATCH;
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
