package nicsim.cosim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.sim.PortWires;
import nicsim.wave.GtkwSave;

/**
 * The GTKWave view of a counterexample yosys-smtbmc wrote: like a run's view ({@link GtkwSave}), one
 * group per port of the block (valid, ready, payload, in the twin's port order), then the counters,
 * under the wrapper's scope; single bits binary, vectors hex.
 */
final class ProveView {
    private ProveView() {}

    /** GTKWave's display flags (its TR_* bits), as GtkwSave writes them. */
    private static final String BIN = "@28", HEX = "@22", GROUP_BEGIN = "@800200", GROUP_END = "@1000200";

    static Path write(Path vcd, List<PortWires.Wire> wires) throws IOException {
        Path save = GtkwSave.beside(vcd);
        Map<String, List<PortWires.Wire>> groups = new LinkedHashMap<>();
        groups.put("clock", new ArrayList<>());
        for (PortWires.Wire w : wires) {
            int at = w.name().indexOf("_payload_");
            String g = at >= 0 ? w.name().substring(0, at) : w.name().replaceFirst("_(valid|ready)$", "");
            if (g.equals(w.name())) g = "signals";
            groups.computeIfAbsent(g, k -> new ArrayList<>()).add(w);
        }
        StringBuilder b = new StringBuilder();
        b.append("[*] GTKWave save file written by nicsim hw prove: gtkwave ").append(save.getFileName()).append('\n');
        b.append("[dumpfile] \"").append(vcd.toAbsolutePath()).append("\"\n");
        b.append("[savefile] \"").append(save.toAbsolutePath()).append("\"\n[timestart] 0\n[sst_expanded] 1\n");
        b.append("[treeopen] ").append(ProveContract.TOP).append(".\n");
        for (Map.Entry<String, List<PortWires.Wire>> e : groups.entrySet()) {
            b.append(GROUP_BEGIN).append("\n-").append(e.getKey()).append('\n');
            if (e.getKey().equals("clock"))
                b.append(BIN).append('\n').append(ProveContract.TOP).append(".clk\n").append(ProveContract.TOP)
                        .append(".reset\n");
            for (PortWires.Wire w : e.getValue()) {
                String name = ProveContract.TOP + "." + w.name();
                b.append(w.width() == 1 ? BIN + "\n" + name : HEX + "\n" + name + "[" + (w.width() - 1) + ":0]")
                        .append('\n');
            }
            b.append(GROUP_END).append("\n-").append(e.getKey()).append('\n');
        }
        Files.writeString(save, b.toString(), StandardCharsets.UTF_8);
        return save;
    }
}
