package nicsim.cosim;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import nicsim.hw.rtl.RtlHandle;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.Flow;
import nicsim.sim.Port;
import nicsim.sim.PortWires;
import nicsim.sim.PortWires.Wire;
import nicsim.sim.Signal;
import nicsim.sim.Simulator;
import nicsim.sim.Stream;
import nicsim.wave.VcdWriter;

/**
 * Runs a block's Java twin and its Verilated RTL in lockstep and compares them on every edge.
 *
 * <p>Each cycle the Java side runs its edge first: the stimulus (a clocked block in the same domain)
 * drives the twin's inputs, the twin drives its outputs. The runner then copies every input wire
 * of the twin to the RTL port of the same name, lets the RTL settle, and compares every output wire
 * (stream valid, payload fields while valid, ready of input streams, flow valid and payload, plain
 * signals) before the RTL takes the same edge. Exact agreement is required: these blocks are
 * cycle-exact twins.
 *
 * <p>On the first divergence it stops and reports cycle, port wire, expected (Java) and actual
 * (RTL), and writes the last {@value #WINDOW} cycles of every wire from both sides, under the same
 * names, to {@code <block>-model.vcd.gz} and {@code <block>-rtl.vcd.gz}; idle payloads show as x.
 */
public final class Lockstep {
    public static final int WINDOW = 64;

    /** Where the twins first disagreed. */
    public record Divergence(long cycle, String wire, long expected, long actual, long seed) {
        @Override public String toString() {
            return String.format("divergence at cycle %d (seed %d): %s: Java model 0x%x, RTL 0x%x",
                    cycle, seed, wire, expected, actual);
        }
    }

    /** The outcome of one run; {@code counters} are the Java side's (what the stimulus exercised). */
    public record Result(String block, long cycles, long seed, Optional<Divergence> divergence,
                         Map<String, Long> transfers, List<Path> windowFiles, Map<String, Long> counters) {
        public int divergences() { return divergence.isPresent() ? 1 : 0; }
    }

    private Lockstep() {}

    public static Result run(RtlHandle rtl, Simulator jsim, ClockDomain core, Block twin, long cycles, long seed,
                             Path windowDir) throws IOException {
        List<Wire> wires = PortWires.of(twin);
        for (Wire w : wires)
            if (!rtl.ports().contains(w.name()))
                throw new IllegalStateException(twin.name() + ": the Java twin has wire " + w.name()
                        + " but the RTL has no such port (RTL ports: " + rtl.ports() + ")");
        // per cycle: [0]=Java values, [1]=RTL values, [2]=1 if meaningful
        ArrayDeque<long[][]> history = new ArrayDeque<>();
        Map<String, Long> transfers = new LinkedHashMap<>();
        for (Port p : twin.ports()) if (!(p.channel() instanceof Signal)) transfers.put(p.name(), 0L);

        for (long c = 0; c < cycles; c++) {
            core.wake();
            jsim.runUntil(core.picosOfCycle(c));
            long[] javaVals = new long[wires.size()], rtlVals = new long[wires.size()], known = new long[wires.size()];
            for (int i = 0; i < wires.size(); i++) {
                Wire w = wires.get(i);
                javaVals[i] = w.value().getAsLong();
                if (w.input()) rtl.poke(w.name(), javaVals[i]);
            }
            rtl.settle();
            Divergence d = null;
            for (int i = 0; i < wires.size(); i++) {
                Wire w = wires.get(i);
                rtlVals[i] = w.input() ? javaVals[i] : rtl.peek(w.name());
                known[i] = w.meaningful().getAsBoolean() ? 1 : 0;
                if (d == null && !w.input() && known[i] == 1 && rtlVals[i] != javaVals[i])
                    d = new Divergence(c, w.name(), javaVals[i], rtlVals[i], seed);
            }
            history.addLast(new long[][]{javaVals, rtlVals, known});
            if (history.size() > WINDOW) history.removeFirst();
            if (d != null) {
                List<Path> files = windowDir == null ? List.of()
                        : writeWindow(windowDir, twin.name(), core, wires, history, c);
                return new Result(twin.name(), c + 1, seed, Optional.of(d), transfers, files,
                        jsim.counters().snapshot());
            }
            for (Port p : twin.ports()) {
                boolean fired = p.channel() instanceof Stream<?> s ? s.fire()
                        : p.channel() instanceof Flow<?> f && f.valid();
                if (fired) transfers.merge(p.name(), 1L, Long::sum);
            }
            rtl.clockEdge();
        }
        return new Result(twin.name(), cycles, seed, Optional.empty(), transfers, List.of(),
                jsim.counters().snapshot());
    }

    private static List<Path> writeWindow(Path dir, String block, ClockDomain core, List<Wire> wires,
                                          ArrayDeque<long[][]> history, long lastCycle) throws IOException {
        List<Path> files = new ArrayList<>();
        String[] sides = {"model", "rtl"};
        for (int side = 0; side < 2; side++) {
            Path file = dir.resolve(block + "-" + sides[side] + ".vcd.gz");
            try (VcdWriter w = VcdWriter.open(file, "1ps")) {
                // a wire is as wide as declared, or as the widest value either side produced (a buggy twin
                // may disagree)
                List<VcdWriter.Wire> vw = new ArrayList<>();
                for (int i = 0; i < wires.size(); i++) {
                    int width = wires.get(i).width();
                    for (long[][] snap : history)
                        width = Math.max(width, Math.max(64 - Long.numberOfLeadingZeros(snap[0][i]),
                                64 - Long.numberOfLeadingZeros(snap[1][i])));
                    vw.add(w.wire("TOP." + block, wires.get(i).name(), width));
                }
                long cycle = lastCycle - history.size() + 1;
                for (long[][] snap : history) {
                    for (int i = 0; i < wires.size(); i++) {
                        // an idle payload is don't-care on both sides: shown as x, not as whatever the register holds
                        if (snap[2][i] == 1) w.set(core.picosOfCycle(cycle), vw.get(i), snap[side][i]);
                        else w.setUnknown(core.picosOfCycle(cycle), vw.get(i));
                    }
                    cycle++;
                }
                w.advanceTo(core.picosOfCycle(lastCycle + 1));
            }
            files.add(file);
        }
        return files;
    }
}
