package nicsim.cosim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import nicsim.adapter.Adapter;
import nicsim.adapter.AdapterConfig;
import nicsim.hw.rtl.NativeBuild;
import nicsim.hw.rtl.NativeRtl;
import nicsim.profile.Profile;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.PortWires;
import nicsim.sim.PortWires.Wire;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.adapter.DmaEngine;
import nicsim.hw.rtl.Toolchain;
import nicsim.sim.Simulator;

/**
 * RTL in the loop of a whole-system run: the named blocks of an adapter run as Verilated RTL
 * alongside their Java twins, edge for edge. On every edge the adapter's clock runs, each RTL block
 * receives exactly the inputs its Java twin receives in the live system, and every output wire it
 * produces must equal the twin's. The first disagreement stops the run with the cycle, wire and both
 * values ({@link Divergence}).
 *
 * <p>The RTL is a shadow: nothing it produces feeds back into the system, so its edges need not be
 * run the moment they happen. Each block records its twin's inputs and outputs edge by edge and
 * hands the RTL a batch of edges ({@link #BATCH} by default) at once through nicsim's own Verilator binding
 * ({@link NativeRtl}: one JNI crossing per batch, on the adapter's own thread). A divergence is
 * therefore found up to one batch late but reported at the exact cycle it happened; {@link #check()}
 * runs what is pending, and {@link #edges()} and {@link #close()} call it, so a run that reports
 * success has had every edge compared.
 *
 * <p>The RTL takes exactly the edges its twin takes: while the adapter's clock is stopped (no block
 * has work) neither side is clocked, so the blocks must hold still when idle, and any that did not
 * would diverge.
 */
public final class RtlInLoop implements AutoCloseable {
    /** The blocks of an adapter that can run from RTL in a whole system. */
    public static final List<String> IN_SYSTEM = List.of("doorbell", "wqe", "mtt", "dma", "cqe");

    /** The RTL and its twin disagreed. */
    public static final class Divergence extends RuntimeException {
        public Divergence(String message) { super(message); }
    }

    /**
     * Throws, naming the block and the accepted names, unless every one of {@code blocks} is in
     * {@link #IN_SYSTEM}; and, when there are any, {@link nicsim.hw.rtl.Toolchain.MissingTool}
     * unless the tools that build RTL are installed: both before any work is done.
     */
    public static void requireKnown(Set<String> blocks) {
        for (String b : blocks)
            if (!IN_SYSTEM.contains(b))
                throw new IllegalArgumentException("rtl block '" + b + "' unknown; accepted: " + IN_SYSTEM);
        if (!blocks.isEmpty()) Toolchain.requireRtl();
    }

    /**
     * A block of the user's own in place of the generated one: Verilog/SystemVerilog {@code files}
     * whose module {@code top} keeps the block's port contract (docs/blocks.md).
     */
    public record Own(List<Path> files, String top) {
        /** The first module declared in the first file: the top when none is named. */
        public static String firstModule(Path file) throws IOException {
            Matcher m = Pattern.compile("(?m)^\\s*module\\s+(\\w+)").matcher(
                    Files.readString(file));
            if (!m.find()) throw new IllegalArgumentException("--verilog " + file + ": no module in it");
            return m.group(1);
        }
    }

    /** Edges a block records before its RTL runs them, by default. */
    public static final int BATCH = 1024;

    private final List<Shadow> shadows = new ArrayList<>();

    /** Attaches RTL twins of {@code blocks}, built from {@code profile}, to {@code adapter}. */
    public RtlInLoop(Adapter adapter, Profile profile, Set<String> blocks) { this(adapter, profile, blocks, BATCH); }

    /** As above, running the RTL every {@code batch} edges of each block (1: on every edge). */
    public RtlInLoop(Adapter adapter, Profile profile, Set<String> blocks, int batch) {
        this(adapter, profile, blocks, batch, Map.of());
    }

    /** As above, with the user's own RTL for the blocks {@code own} names. */
    public RtlInLoop(Adapter adapter, Profile profile, Set<String> blocks, int batch, Map<String, Own> own) {
        if (batch < 1) throw new IllegalArgumentException("batch " + batch + " must be >= 1");
        requireKnown(blocks);
        Map<String, Block> twins = new LinkedHashMap<>();
        twins.put("doorbell", adapter.decoder());
        twins.put("wqe", adapter.fetcher());
        twins.put("mtt", adapter.mtt());
        twins.put("cqe", adapter.cqeWriter());
        for (String b : IN_SYSTEM) {
            if (!blocks.contains(b)) continue;
            BlockPairs.Pair pair = BlockPairs.get(profile, b);
            if (b.equals("dma")) {
                // one RTL DmaEngine beside each channel's engines, on that channel's clock
                List<DmaEngine> engines = adapter.dma().engines();
                for (int k = 0; k < engines.size(); k++)
                    shadows.add(new Shadow(engines.size() == 1 ? b : b + k, engines.get(k), adapter.dma().domain(k),
                            compile(pair, engines.get(k), own.get(b), false), batch, new long[0]));
            } else shadows.add(new Shadow(b, twins.get(b), adapter.core(),
                    compile(pair, twins.get(b), own.get(b), false), batch, new long[0]));
        }
    }

    /**
     * The block's random stimulus (the one {@code cosim} runs) for {@code cycles} cycles against
     * {@code own}, the user's RTL, in lockstep with the Java twin: null if they agree on every edge,
     * else the divergence (cycle, wire, both values).
     */
    public static String lockstep(Profile profile, String block, Own own, long cycles, long seed) {
        return lockstep(profile, block, own, cycles, seed, null);
    }

    /**
     * As above; when {@code coverage} is not null the RTL is a coverage build, and what it covered
     * (Verilator's line and toggle coverage, whether or not it diverged) is written there at the end.
     */
    public static String lockstep(Profile profile, String block, Own own, long cycles, long seed,
                                  Path coverage) {
        requireKnown(Set.of(block));
        BlockPairs.Pair pair = BlockPairs.get(profile, block);
        return lockstep(profile, block, twin -> compile(pair, twin, own, coverage != null), new long[0], cycles,
                seed, coverage);
    }

    /**
     * As {@link #lockstep(Profile, String, Own, long, long)}, on RTL built already, so many runs share
     * one build: {@code rtl}'s inputs are the twin's (in {@link PortWires}' order), then one more per
     * value of {@code fixed}, which every edge drives unchanged (the select of a netlist holding many
     * mutants, Yosys {@code mutate -ctrl}).
     */
    public static String lockstep(Profile profile, String block, NativeBuild.Compiled rtl, long[] fixed, long cycles,
                                  long seed) {
        return lockstep(profile, block, twin -> rtl, fixed, cycles, seed, null);
    }

    private static String lockstep(Profile profile, String block,
                                   Function<Block, NativeBuild.Compiled> build, long[] fixed,
                                   long cycles, long seed, Path coverage) {
        requireKnown(Set.of(block));
        BlockPairs.Pair pair = BlockPairs.get(profile, block);
        Simulator sim = new Simulator();
        long period = AdapterConfig.from(profile).corePeriodPs();
        ClockDomain core = sim.clockDomain("core", period);
        Block twin = pair.twin().apply(core);
        core.add(pair.stimulus().create(twin, seed));
        Shadow s = new Shadow(block, twin, core, build.apply(twin), BATCH, fixed);
        try {
            sim.runUntil(Math.multiplyExact(cycles, period));
            s.flush();
            return null;
        } catch (Divergence d) {
            return d.getMessage();
        } finally {
            try {
                if (coverage != null) s.rtl.writeCoverage(coverage);
            } finally {
                s.rtl.close();
            }
        }
    }

    /** Runs every recorded edge through the RTL and compares; throws the first {@link Divergence}. */
    public void check() { for (Shadow s : shadows) s.flush(); }

    /** Edges each RTL block has run and matched so far, by block name (runs what is pending first). */
    public Map<String, Long> edges() {
        check();
        Map<String, Long> m = new LinkedHashMap<>();
        for (Shadow s : shadows) m.put(s.name, s.exchanges);
        return m;
    }

    /** Checks what is pending, then frees the RTL. */
    @Override public void close() {
        try {
            check();
        } finally {
            for (Shadow s : shadows) s.rtl.close();
        }
    }

    /** {@code pair}'s RTL (generated, or the user's {@code own}) with the ports of {@code twin}, in its order. */
    private static NativeBuild.Compiled compile(BlockPairs.Pair pair, Block twin, Own own, boolean coverage) {
        List<Wire> wires = PortWires.of(twin);
        List<String> in = wires.stream().filter(Wire::input).map(Wire::name).toList();
        List<String> out = wires.stream().filter(w -> !w.input()).map(Wire::name).toList();
        return own == null ? NativeBuild.compile(pair.rtlName(), pair.rtl(), in, out, coverage)
                : NativeBuild.compileVerilog(pair.rtlName(), pair.rtl(), own.files(), own.top(), in, out, coverage);
    }

    private static final class Shadow implements Clocked {
        final String name;
        final Block twin;
        final ClockDomain domain;
        final Wire[] ins, outs;
        final NativeRtl rtl;
        // the batch: per edge, [edges to take, inputs...]; the twin's outputs; whether each is compared; its cycle
        final long[] records, expected, actual, cycles;
        final boolean[] care;
        final long[] fixed;
        final int batch;
        int pending;
        long lastCycle = -1, exchanges;
        boolean stopped;

        /** {@code compiled}'s inputs are the twin's, then one per value of {@code fixed}, driven on every edge. */
        Shadow(String name, Block twin, ClockDomain domain, NativeBuild.Compiled compiled, int batch, long[] fixed) {
            this.name = name;
            this.batch = batch;
            this.twin = twin;
            this.domain = domain;
            this.fixed = fixed.clone();
            List<Wire> wires = PortWires.of(twin);
            ins = wires.stream().filter(Wire::input).toArray(Wire[]::new);
            outs = wires.stream().filter(w -> !w.input()).toArray(Wire[]::new);
            if (compiled.inputs().size() != ins.length + fixed.length || compiled.outputs().size() != outs.length)
                throw new IllegalArgumentException("RTL " + compiled.name() + " has inputs " + compiled.inputs()
                        + " and outputs " + compiled.outputs() + "; twin " + twin.name() + " has " + ins.length
                        + " inputs (+ " + fixed.length + " fixed) and " + outs.length + " outputs");
            rtl = compiled.open();
            records = new long[batch * (ins.length + fixed.length + 1)];
            expected = new long[batch * outs.length];
            actual = new long[batch * outs.length];
            care = new boolean[batch * outs.length];
            cycles = new long[batch];
            domain.add(this);
        }

        @Override public void drive() {}

        /**
         * In the update phase every wire holds this edge's value: record the inputs the RTL gets and
         * the outputs it must give.
         */
        @Override public void update() {
            if (stopped) return;
            long c = domain.cycle();
            int r = pending * (ins.length + fixed.length + 1);
            // the edge that ends the previous recorded cycle: the RTL takes exactly the twin's edges
            records[r++] = lastCycle < 0 ? 0 : 1;
            for (Wire w : ins) records[r++] = w.value().getAsLong();
            for (long f : fixed) records[r++] = f;
            int o = pending * outs.length;
            for (Wire w : outs) {
                boolean m = w.meaningful().getAsBoolean();
                care[o] = m;
                expected[o++] = m ? w.value().getAsLong() : 0;
            }
            cycles[pending++] = c;
            lastCycle = c;
            if (pending == batch) flush();
        }

        void flush() {
            if (stopped || pending == 0) return;
            int n = pending;
            pending = 0;
            rtl.run(records, n, actual);
            for (int i = 0; i < n; i++) {
                for (int j = 0, o = i * outs.length; j < outs.length; j++, o++)
                    if (care[o] && expected[o] != actual[o]) {
                        stopped = true;
                        throw new Divergence(String.format("RTL in the loop: %s diverged at cycle %d of clock "
                                        + domain.name() + " on %s: Java model 0x%x, RTL 0x%x",
                                twin.name(), cycles[i], outs[j].name(), expected[o], actual[o]));
                    }
                exchanges++;
            }
        }

        @Override public boolean active() { return false; }
    }
}
