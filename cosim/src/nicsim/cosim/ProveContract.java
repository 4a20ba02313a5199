package nicsim.cosim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.adapter.AdapterConfig;
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
     * together plus {@code slack}, counted from reset. Only transfers with {@code when} high count on
     * {@code out} when it is given (a payload bit: mtt's responses come as pieces, the one with
     * {@code last} set ends a request). Per block, where the twin's comment promises it.
     *
     * <p>{@code held}, when given, is what the block holds in flight, as a Verilog expression over the
     * ports and the wrapper's {@code f_PORT_fired} (an input port's transfer one edge late, 0 in
     * reset): the wrapper asserts the balance always covers it ({@code p_OUT_covers}). That is the
     * strengthening invariant k-induction needs: an output can only fire from something held, so a
     * balance that covers the held transfers cannot go below zero (docs/blocks.md argues each).
     */
    record NoDuplication(String out, List<String> ins, String when, int slack, String held) {
        NoDuplication(String out, List<String> ins) { this(out, ins, null, 0, null); }
        NoDuplication(String out, List<String> ins, String held) { this(out, ins, null, 0, held); }
    }

    private static final Map<String, List<NoDuplication>> NO_DUPLICATION = Map.of(
            // an MMIO write is in stage 1 for an edge, then queued (occupancy), coalesced or refused (error)
            "doorbell", List.of(new NoDuplication("io_doorbell", List.of("io_mmio"), "io_occupancy + f_mmio_fired"),
                    new NoDuplication("io_error", List.of("io_mmio"), "io_error_valid + f_mmio_fired")),
            // a refused doorbell is reported from a register on the next edge
            "wqe", List.of(new NoDuplication("io_dropped", List.of("io_doorbell"), "io_dropped_valid")),
            // a request ends in one response with last set (a walk answers page by page): it is held while the
            // walker is not idle (req.ready low), then as that response until it leaves; one fill outstanding
            "mtt", List.of(new NoDuplication("io_rsp", List.of("io_req"), "io_rsp_payload_last", 0,
                            "!io_req_ready + (io_rsp_valid && io_rsp_payload_last)"),
                    new NoDuplication("io_fill", List.of("io_fillRsp"), null, 1, null)),
            // a completion taken waits in the one-entry output register; an unknown arm is reported next edge
            "cqe", List.of(new NoDuplication("io_write", List.of("io_cqe"), "io_write_valid"),
                    new NoDuplication("io_dropped", List.of("io_arm"), "io_dropped_valid"),
                    new NoDuplication("io_event", List.of("io_arm"))),
            "dma", List.of(new NoDuplication("io_hostDone", List.of("io_hostDesc")),
                    new NoDuplication("io_sendDone", List.of("io_sendDesc")),
                    new NoDuplication("io_recvDone", List.of("io_recvDesc"))));

    /**
     * Bounded latency: every transfer on {@code in} shows as a valid on one of {@code outs} on the
     * edge after it. cqe: a completion taken is written or reported as an error at once (its twin's
     * comment; cqe.ready is low while the output register is full, so the valid seen is this one's).
     */
    record Answered(String in, List<String> outs) {}

    private static final Map<String, List<Answered>> ANSWERED = Map.of(
            "cqe", List.of(new Answered("io_cqe", List.of("io_write", "io_error"))));

    /**
     * Payload words that only flow through a block (no control reads them; the contract compares
     * them only bit for bit, treating every bit alike): the proof drives their low
     * {@link #NARROW_BITS} bits and ties the rest to 0, a data-independence reduction (docs/blocks.md,
     * "Proving the contract", argues it). wqe's {@code data_0} is its WQE's control segment, which
     * the fetcher parses: it stays whole.
     */
    private static final Map<String, String> PASS_THROUGH = Map.of(
            "wqe", "io_dmaRsp_payload_data_[1-7]",
            "cqe", "io_cqe_payload_data_[0-7]",
            "dma", "io_(pciData|linkRx)_payload_data_\\d+");

    /** Bits of a pass-through word the proof keeps free. */
    static final int NARROW_BITS = 2;

    static boolean narrowed(String block, PortWires.Wire w) {
        String re = PASS_THROUGH.get(block);
        return re != null && w.input() && w.width() > NARROW_BITS && w.name().matches(re);
    }

    /**
     * Yosys selections (after {@code prep -flatten}, the module under proof is {@code dut}) of the
     * generated blocks' per-queue table reads, cut into free values on every edge as the memories
     * are: the contract must hold whatever a queue's context reads, and with no reader left the 64
     * contexts' registers (over 8,000 bits in cqe and wqe) drop out of the proof.
     */
    private static final Map<String, String> CUT = Map.of(
            "wqe", "w:dut.cur_* w:dut.dbSq_* w:dut.ps_* w:dut.pending",
            "cqe", "w:dut.c_* w:dut.a_* w:dut.uc_* %u %u");

    /**
     * Properties that need some of the table cut by {@link #CUT}: each is proved on its own, on a
     * model cut by the selection given here instead, the rest of the contract on the smaller model
     * (each proof is of one property, so each may use its own over-approximation). cqe's "no event
     * without an arm" keeps its CQs' armed bits (reset to 0, set only by an arm, cleared by the event
     * they allow): with them free, any completion could raise an event. Its CQs' valid bits stay cut:
     * a CQ that is not valid is never armed, so they add nothing to that property. Induction is not
     * tried on it: its balance would need the count of armed CQs, which no port shows (and the attempt
     * costs minutes over the 64 armed bits), so it holds to the depth checked.
     */
    record Finer(String cut, boolean induction) {}

    private static final Map<String, Map<String, Finer>> FINER = Map.of("cqe", Map.of("p_event_not_duplicated",
            new Finer("w:dut.c_* w:dut.a_* w:dut.uc_* %u %u w:dut.*_armed %d", false)));

    /** The selection of {@code block}'s generated RTL to cut, or "" (see {@link #CUT}). */
    static String cut(String block) { return CUT.getOrDefault(block, ""); }

    /** Properties of {@code block} proved on a model cut less, by their selection (see {@link #FINER}). */
    static Map<String, Finer> finer(String block) { return FINER.getOrDefault(block, Map.of()); }

    /** The contract's ports of {@code block} for {@code profile}, from its Java twin. */
    static List<PortWires.Wire> wires(Profile profile, String block) {
        ClockDomain core = new Simulator().clockDomain("core", AdapterConfig.from(profile).corePeriodPs());
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
        return wrapper(block, dut, wires, false);
    }

    /**
     * The wrapper around module {@code dut} for {@code block}'s contract; {@code reduced}: the
     * generated block, whose pass-through words are narrowed ({@link #PASS_THROUGH}). A user's own
     * Verilog is proved whole: nothing says its control ignores those bits.
     */
    public static Wrapper wrapper(String block, String dut, List<PortWires.Wire> wires, boolean reduced) {
        List<Port> ports = ports(wires);
        StringBuilder b = new StringBuilder();
        List<Property> props = new ArrayList<>();
        b.append("// ").append(block)
                .append("'s port contract (docs/blocks.md), written by nicsim.cosim.ProveContract\n");
        b.append("module ").append(TOP).append(" (\n  input clk,\n  input reset");
        for (PortWires.Wire w : wires)
            if (w.input()) {
                String bits = reduced && narrowed(block, w) ? "[" + (NARROW_BITS - 1) + ":0] " : range(w);
                b.append(",\n  input ").append(bits).append(w.name());
            }
        b.append("\n);\n");
        for (PortWires.Wire w : wires) if (!w.input()) b.append("  wire ").append(range(w)).append(w.name())
                .append(";\n");
        b.append("  ").append(dut).append(" dut (\n    .clk(clk),\n    .reset(reset)");
        for (PortWires.Wire w : wires)
            b.append(",\n    .").append(w.name()).append('(').append(reduced && narrowed(block, w)
                    ? "{" + (w.width() - NARROW_BITS) + "'b0, " + w.name() + "}" : w.name()).append(')');
        b.append("\n  );\n\n");
        // reset: held on the first edge, then released for good (a longer reset only repeats the reset state)
        b.append("  reg f_init = 1'b1;\n  always @(posedge clk) f_init <= 1'b0;\n");
        b.append("  always @* assume(reset == f_init);\n");
        b.append("  reg f_run = 1'b0; // high once an edge out of reset has passed: $past is meaningful\n");
        b.append("  always @(posedge clk) f_run <= !reset;\n\n");
        for (Port p : ports) {
            if (p.input() && p.ready() != null) {
                b.append("  // driver of ").append(p.name())
                        .append(": valid holds until it fires, payload stable meanwhile\n");
                b.append("  always @(posedge clk) if (f_run && $past(").append(p.valid().name()).append(" && !")
                        .append(p.ready().name()).append(")) begin\n    assume(").append(p.valid().name())
                        .append(");\n");
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
                guard(b, hold, "  always @(posedge clk) if (f_run && $past(" + p.valid().name() + " && !"
                        + p.ready().name() + ")) " + hold + ": assert(" + p.valid().name() + ");\n");
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
            String n = w.name();
            if (w.input() || n.endsWith("_valid") || n.endsWith("_ready") || n.contains("_payload_")) continue;
            String rv = label(w.name(), "reset");
            props.add(new Property(rv, w.name() + ": reads 0 while reset is held"));
            guard(b, rv, "  always @* if (reset) " + rv + ": assert(" + w.name() + " == 0);\n");
        }
        for (Port p : ports) {
            if (!p.input()) continue;
            String f = "f_" + p.name().replaceFirst("^io_", "") + "_fired";
            b.append("  reg ").append(f).append(" = 1'b0;\n  always @(posedge clk) ").append(f)
                    .append(" <= !reset && ").append(p.fire()).append(";\n");
        }
        int i = 0;
        for (NoDuplication d : NO_DUPLICATION.getOrDefault(block, List.of())) {
            Port out = find(ports, d.out());
            List<Port> ins = d.ins().stream().map(n -> find(ports, n)).toList();
            if (out == null || ins.contains(null)) continue; // a port the twin does not have in this profile
            String bal = "f_balance" + i++, lab = label(d.out(), "not_duplicated");
            String outFire = d.when() == null ? out.fire() : "(" + out.fire() + " && " + d.when() + ")";
            props.add(new Property(lab, d.out() + (d.when() == null ? "" : " with " + d.when())
                    + ": transfers never outnumber those on " + String.join(" + ", d.ins())
                    + (d.slack() == 0 ? "" : " + " + d.slack())));
            // 10 bits: far more transfers than a bounded check's depth. It saturates at its top instead of
            // wrapping, so induction cannot start just below a wrap: a saturated balance is at most the true
            // one, and a property of the smaller number implies it of the true one.
            b.append("  reg signed [9:0] ").append(bal).append(" = ").append(d.slack())
                    .append(";\n  wire signed [10:0] ").append(bal).append("_sum = ").append(bal);
            // each fire as a signed 0 or 1: one unsigned operand would make Verilog zero-extend the balance
            for (Port in : ins) b.append(" + $signed({1'b0, ").append(in.fire()).append("})");
            b.append(" - $signed({1'b0, ").append(outFire).append("});\n");
            b.append("  wire signed [9:0] ").append(bal).append("_next = ").append(bal)
                    .append("_sum > 11'sd511 ? 10'sd511 : ").append(bal).append("_sum[9:0];\n");
            b.append("  always @(posedge clk) ").append(bal).append(" <= reset ? 10'sd").append(d.slack()).append(" : ")
                    .append(bal).append("_next;\n");
            guard(b, lab, "  always @* if (!reset) " + lab + ": assert(" + bal + "_next >= 0);\n");
            if (d.held() != null) {
                String cov = label(d.out(), "covers");
                props.add(new Property(cov, d.out() + ": the balance covers what the block holds (" + d.held() + ")"));
                b.append("  wire [9:0] ").append(bal).append("_held = ").append(d.held()).append(";\n");
                guard(b, cov, "  always @* if (!reset) " + cov + ": assert(" + bal + " >= $signed(" + bal
                        + "_held));\n");
            }
        }
        for (Answered a : ANSWERED.getOrDefault(block, List.of())) {
            Port in = find(ports, a.in());
            List<Port> outs = a.outs().stream().map(n -> find(ports, n)).toList();
            if (in == null || outs.contains(null)) continue;
            String lab = label(a.in(), "answered_next");
            props.add(new Property(lab, a.in() + ": a transfer shows on " + String.join(" or ", a.outs())
                    + " on the next edge"));
            guard(b, lab, "  always @(posedge clk) if (f_run && !reset && $past(" + in.fire() + ")) " + lab
                    + ": assert(" + String.join(" || ", outs.stream().map(o -> o.valid().name()).toList()) + ");\n");
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
