package nicsim.cosim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.SynchronousQueue;
import nicsim.adapter.Adapter;
import nicsim.hw.rtl.RtlRunner;
import nicsim.profile.Profile;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.PortWires;
import nicsim.sim.PortWires.Wire;

/**
 * RTL in the loop of a whole-system run: the named blocks of an adapter run as Verilated RTL
 * alongside their Java twins, edge for edge. On every edge the adapter's clock runs, each RTL block
 * receives exactly the inputs its Java twin receives in the live system, and every output wire it
 * produces must equal the twin's; the system carries on only while they agree, so the run's bytes,
 * completions and cycles are the RTL's as much as the model's. The first disagreement stops the run
 * with the cycle, wire and both values ({@link Divergence}).
 *
 * <p>Each RTL block runs inside its own SpinalSim simulation on its own thread (SpinalSim keeps one
 * simulation per thread); the adapter's thread hands it one exchange per edge. The RTL takes exactly
 * the edges its twin takes: while the adapter's clock is stopped (no block has work) neither side
 * is clocked, so the blocks must hold still when idle, and any that did not would diverge.
 */
public final class RtlInLoop implements AutoCloseable {
    /** The blocks of an adapter that can run from RTL in a whole system. */
    public static final List<String> IN_SYSTEM = List.of("doorbell", "wqe", "mtt", "dma", "cqe");

    /** The RTL and its twin disagreed. */
    public static final class Divergence extends RuntimeException {
        public Divergence(String message) { super(message); }
    }

    private final List<Shadow> shadows = new ArrayList<>();

    /** Attaches RTL twins of {@code blocks} to {@code adapter}. */
    public RtlInLoop(Adapter adapter, Profile profile, Set<String> blocks, long seed) {
        for (String b : blocks)
            if (!IN_SYSTEM.contains(b)) throw new IllegalArgumentException("rtl block '" + b + "' unknown; accepted: " + IN_SYSTEM);
        Map<String, Block> twins = new LinkedHashMap<>();
        twins.put("doorbell", adapter.decoder());
        twins.put("wqe", adapter.fetcher());
        twins.put("mtt", adapter.mtt());
        twins.put("cqe", adapter.cqeWriter());
        for (String b : IN_SYSTEM) {
            if (!blocks.contains(b)) continue;
            BlockPairs.Pair pair = BlockPairs.get(profile, b);
            RtlRunner.Compiled rtl = RtlRunner.compile(pair.rtlName(), pair.rtl(), false);
            if (b.equals("dma")) {
                // one RTL DmaEngine beside each channel's engines, on that channel's clock
                List<nicsim.adapter.DmaEngine> engines = adapter.dma().engines();
                for (int k = 0; k < engines.size(); k++)
                    shadows.add(new Shadow(engines.size() == 1 ? b : b + k, engines.get(k), adapter.dma().domain(k), rtl, seed));
            } else shadows.add(new Shadow(b, twins.get(b), adapter.core(), rtl, seed));
        }
    }

    /** Edges exchanged with each RTL block so far, by block name. */
    public Map<String, Long> edges() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Shadow s : shadows) m.put(s.name, s.exchanges);
        return m;
    }

    @Override public void close() { for (Shadow s : shadows) s.stop(); }

    /** One exchange: edges to take first (the previous cycle's, then idle ones), inputs to poke; outputs come back. */
    private static final class Exchange {
        long edges;
        long[] inputs;
        long[] outputs;
        boolean stop;
        Throwable failure;
    }

    private static final class Shadow implements Clocked {
        final String name;
        final Block twin;
        final ClockDomain domain;
        final List<Wire> wires;
        final int[] inIdx, outIdx;
        final SynchronousQueue<Exchange> toRtl = new SynchronousQueue<>(), fromRtl = new SynchronousQueue<>();
        final Thread thread;
        long lastCycle = -1, exchanges;
        boolean stopped;

        Shadow(String name, Block twin, ClockDomain domain, RtlRunner.Compiled rtl, long seed) {
            this.name = name;
            this.twin = twin;
            this.domain = domain;
            this.wires = PortWires.of(twin);
            this.inIdx = java.util.stream.IntStream.range(0, wires.size()).filter(i -> wires.get(i).input()).toArray();
            this.outIdx = java.util.stream.IntStream.range(0, wires.size()).filter(i -> !wires.get(i).input()).toArray();
            thread = new Thread(() -> rtl.run("inloop_" + name, (int) seed, h -> {
                for (Wire w : wires)
                    if (!h.ports().contains(w.name()))
                        throw new IllegalStateException(twin.name() + ": the RTL has no port " + w.name());
                while (true) {
                    Exchange e;
                    try {
                        e = toRtl.take();
                    } catch (InterruptedException ie) {
                        return;
                    }
                    if (e.stop) return;
                    try {
                        for (long k = 0; k < e.edges; k++) h.clockEdge();
                        for (int j = 0; j < inIdx.length; j++) h.poke(wires.get(inIdx[j]).name(), e.inputs[j]);
                        h.settle();
                        e.outputs = new long[outIdx.length];
                        for (int j = 0; j < outIdx.length; j++) e.outputs[j] = h.peek(wires.get(outIdx[j]).name());
                    } catch (Throwable t) {
                        e.failure = t;
                    }
                    try {
                        fromRtl.put(e);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }), "rtl-" + name);
            thread.setDaemon(true);
            thread.start();
            domain.add(this);
        }

        @Override public void drive() {}

        /** In the update phase every wire holds this edge's value: hand the inputs to the RTL and compare its outputs. */
        @Override public void update() {
            if (stopped) return;
            long c = domain.cycle();
            Exchange e = new Exchange();
            e.edges = lastCycle < 0 ? 0 : 1; // the edge that ends the previous exchanged cycle: the RTL takes exactly the twin's edges
            e.inputs = new long[inIdx.length];
            for (int j = 0; j < inIdx.length; j++) e.inputs[j] = wires.get(inIdx[j]).value().getAsLong();
            Exchange back;
            try {
                toRtl.put(e);
                back = fromRtl.take();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the RTL of " + name);
            }
            if (back.failure != null) throw new IllegalStateException("RTL of " + name + " failed: " + back.failure, back.failure);
            lastCycle = c;
            exchanges++;
            for (int j = 0; j < outIdx.length; j++) {
                Wire w = wires.get(outIdx[j]);
                if (!w.meaningful().getAsBoolean()) continue;
                long java = w.value().getAsLong();
                if (java != back.outputs[j]) {
                    stopped = true;
                    throw new Divergence(String.format("RTL in the loop: %s diverged at cycle %d of clock " + domain.name() + " on %s: Java model 0x%x, RTL 0x%x",
                            twin.name(), c, w.name(), java, back.outputs[j]));
                }
            }
        }

        @Override public boolean active() { return false; }

        void stop() {
            if (!thread.isAlive()) return;
            Exchange e = new Exchange();
            e.stop = true;
            try {
                toRtl.offer(e, 5, java.util.concurrent.TimeUnit.SECONDS);
                thread.join(10_000);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
