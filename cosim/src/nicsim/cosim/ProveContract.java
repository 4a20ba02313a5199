package nicsim.cosim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.profile.Profile;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.PortWires;
import nicsim.sim.Simulator;

/**
 * docs/blocks.md's port contract of a block, written once as a SystemVerilog wrapper that Yosys's
 * {@code read -formal} takes: the wrapper instantiates the module under proof with every port of
 * the block's Java twin ({@link PortWires}, the list lockstep compares), assumes what a driver
 * promises on the inputs and asserts what the block promises on its outputs. Ports are grouped by
 * their names as in SpinalHDL: {@code P_valid} + {@code P_ready} + {@code P_payload_*} is a Stream,
 * {@code P_valid} + payload without a ready is a Flow.
 *
 * <p>Each assertion carries a label (the property's name, which yosys-smtbmc prints when it fails)
 * and sits in {@code `ifndef SKIP_label}, so a property already settled can be left out of a run.
 */
public final class ProveContract {
    private ProveContract() {}

    /** The wrapper's module name. */
    public static final String TOP = "nicsim_prove";

    /** One handshake port: its valid, its ready (null for a Flow), its payload wires, and its direction. */
    record Port(String name, PortWires.Wire valid, PortWires.Wire ready, List<PortWires.Wire> payload, boolean input) {
        String fire() { return ready == null ? valid.name() : "(" + valid.name() + " && " + ready.name() + ")"; }
    }

    /** A property: its label and what it says, for the report. */
    public record Property(String label, String says) {}

    /** The wrapper and its properties, for a module named {@code dut}. */
    public record Wrapper(String text, List<Property> properties, List<PortWires.Wire> wires) {}

    /**
     * "No output without an input": the transfers on {@code out} never outnumber those on {@code ins}
     * together, counted from reset. Per block, where the twin's comment promises it.
     */
    record NoDuplication(String out, List<String> ins) {}

    private static final Map<String, List<NoDuplication>> NO_DUPLICATION = Map.of(
            "doorbell", List.of(new NoDuplication("io_doorbell", List.of("io_mmio")),
                    new NoDuplication("io_error", List.of("io_mmio"))),
            "wqe", List.of(new NoDuplication("io_dropped", List.of("io_doorbell"))),
            "mtt", List.of(new NoDuplication("io_rsp", List.of("io_req")), new NoDuplication("io_fill", List.of("io_req"))),
            "cqe", List.of(new NoDuplication("io_write", List.of("io_cqe")),
                    new NoDuplication("io_dropped", List.of("io_arm")), new NoDuplication("io_event", List.of("io_arm"))),
            "dma", List.of(new NoDuplication("io_hostDone", List.of("io_hostDesc")),
                    new NoDuplication("io_sendDone", List.of("io_sendDesc")),
                    new NoDuplication("io_recvDone", List.of("io_recvDesc"))));

    /** The contract's ports of {@code block} for {@code profile}, from its Java twin. */
    static List<PortWires.Wire> wires(Profile profile, String block) {
        ClockDomain core = new Simulator().clockDomain("core", profile.periodPicos("core.clock"));
        Block twin = BlockPairs.get(profile, block).twin().apply(core);
        return PortWires.of(twin);
    }

    static List<Port> ports(List<PortWires.Wire> wires) {
        Map<String, PortWires.Wire> byName = new LinkedHashMap<>();
        for (PortWires.Wire w : wires) byName.put(w.name(), w);
        List<Port> out = new ArrayList<>();
        for (PortWires.Wire w : wires) {
            if (!w.name().endsWith("_valid") || w.name().contains("_payload_")) continue;
            String p = w.name().substring(0, w.name().length() - "_valid".length());
            List<PortWires.Wire> payload = wires.stream().filter(x -> x.name().startsWith(p + "_payload_")).toList();
            out.add(new Port(p, w, byName.get(p + "_ready"), payload, w.input()));
        }
        return out;
    }

    /** The wrapper around module {@code dut} for {@code block}'s contract. */
    public static Wrapper wrapper(String block, String dut, List<PortWires.Wire> wires) {
        List<Port> ports = ports(wires);
        StringBuilder b = new StringBuilder();
        List<Property> props = new ArrayList<>();
        b.append("// ").append(block).append("'s port contract (docs/blocks.md), written by nicsim.cosim.ProveContract\n");
        b.append("module ").append(TOP).append(" (\n  input clk,\n  input reset");
        for (PortWires.Wire w : wires)
            if (w.input()) b.append(",\n  input ").append(range(w)).append(w.name());
        b.append("\n);\n");
        for (PortWires.Wire w : wires) if (!w.input()) b.append("  wire ").append(range(w)).append(w.name()).append(";\n");
        b.append("  ").append(dut).append(" dut (\n    .clk(clk),\n    .reset(reset)");
        for (PortWires.Wire w : wires) b.append(",\n    .").append(w.name()).append('(').append(w.name()).append(')');
        b.append("\n  );\n\n");
        // reset: held on the first edge, then released for good (a longer reset only repeats the reset state)
        b.append("  reg f_init = 1'b1;\n  always @(posedge clk) f_init <= 1'b0;\n");
        b.append("  always @* assume(reset == f_init);\n");
        b.append("  reg f_run = 1'b0; // high once an edge out of reset has passed: $past is meaningful\n");
        b.append("  always @(posedge clk) f_run <= !reset;\n\n");
        for (Port p : ports) {
            if (p.input() && p.ready() != null) {
                b.append("  // driver of ").append(p.name()).append(": valid holds until it fires, payload stable meanwhile\n");
                b.append("  always @(posedge clk) if (f_run && $past(").append(p.valid().name()).append(" && !")
                        .append(p.ready().name()).append(")) begin\n    assume(").append(p.valid().name()).append(");\n");
                if (!p.payload().isEmpty())
                    b.append("    assume(").append(cat(p)).append(" == $past(").append(cat(p)).append("));\n");
                b.append("  end\n");
            }
        }
        for (Port p : ports) {
            if (p.input()) continue;
            if (p.ready() != null) {
                String hold = label(p.name(), "holds");
                props.add(new Property(hold, p.name() + ": valid holds until ready"));
                guard(b, hold, "  always @(posedge clk) if (f_run && $past(" + p.valid().name() + " && !" + p.ready().name()
                        + ")) " + hold + ": assert(" + p.valid().name() + ");\n");
                if (!p.payload().isEmpty()) {
                    String st = label(p.name(), "stable");
                    props.add(new Property(st, p.name() + ": payload stable while valid and not ready"));
                    guard(b, st, "  always @(posedge clk) if (f_run && $past(" + p.valid().name() + " && !"
                            + p.ready().name() + ")) " + st + ": assert(" + cat(p) + " == $past(" + cat(p) + "));\n");
                }
            }
            String rv = label(p.name(), "reset");
            props.add(new Property(rv, p.name() + ": valid low while reset is held"));
            guard(b, rv, "  always @* if (reset) " + rv + ": assert(!" + p.valid().name() + ");\n");
        }
        for (PortWires.Wire w : wires) {
            if (w.input() || w.name().endsWith("_valid") || w.name().endsWith("_ready") || w.name().contains("_payload_"))
                continue;
            String rv = label(w.name(), "reset");
            props.add(new Property(rv, w.name() + ": reads 0 while reset is held"));
            guard(b, rv, "  always @* if (reset) " + rv + ": assert(" + w.name() + " == 0);\n");
        }
        int i = 0;
        for (NoDuplication d : NO_DUPLICATION.getOrDefault(block, List.of())) {
            Port out = find(ports, d.out());
            List<Port> ins = d.ins().stream().map(n -> find(ports, n)).toList();
            if (out == null || ins.contains(null)) continue; // a port the twin does not have in this profile
            String bal = "f_balance" + i++, lab = label(d.out(), "not_duplicated");
            props.add(new Property(lab, d.out() + ": transfers never outnumber those on " + String.join(" + ", d.ins())));
            // 10 bits: far more transfers than a bounded check's depth; a wrap would need 512 of them
            b.append("  reg signed [9:0] ").append(bal).append(" = 0;\n  wire signed [9:0] ").append(bal)
                    .append("_next = ").append(bal);
            for (Port in : ins) b.append(" + ").append(in.fire());
            b.append(" - ").append(out.fire()).append(";\n");
            b.append("  always @(posedge clk) ").append(bal).append(" <= reset ? 10'sd0 : ").append(bal).append("_next;\n");
            guard(b, lab, "  always @* if (!reset) " + lab + ": assert(" + bal + "_next >= 0);\n");
        }
        b.append("endmodule\n");
        return new Wrapper(b.toString(), props, wires);
    }

    private static Port find(List<Port> ports, String name) {
        return ports.stream().filter(p -> p.name().equals(name)).findFirst().orElse(null);
    }

    private static void guard(StringBuilder b, String label, String text) {
        b.append("`ifndef SKIP_").append(label).append('\n').append(text).append("`endif\n");
    }

    static String label(String port, String what) { return "p_" + port.replaceFirst("^io_", "") + "_" + what; }

    private static String cat(Port p) {
        return "{" + String.join(", ", p.payload().stream().map(PortWires.Wire::name).toList()) + "}";
    }

    private static String range(PortWires.Wire w) { return w.width() == 1 ? "" : "[" + (w.width() - 1) + ":0] "; }
}
