package nicsim.wave;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GTKWave save file (.gtkw) for a waveform nicsim wrote: it names the dump file, so
 * {@code gtkwave out/run.gtkw} opens the waveform with one command, and lists every wire, grouped
 * by the block (scope) it belongs to, in the order the block declares its ports. Single bits show
 * as binary, vectors as hex.
 */
public final class GtkwSave {
    private GtkwSave() {}

    /** GTKWave's display flags (its TR_* bits): right-justified binary, right-justified hex, group start and end. */
    private static final String BIN = "@28", HEX = "@22", GROUP_BEGIN = "@800200", GROUP_END = "@1000200";

    /** The save file that goes beside {@code dump}: "run.vcd.gz" -> "run.gtkw". */
    public static Path beside(Path dump) {
        String name = dump.getFileName().toString().replaceFirst("\\.vcd(\\.gz|\\.xz)?$", "");
        return dump.resolveSibling(name + ".gtkw");
    }

    /** Writes the save file for {@code dump}, whose wires are {@code wires}, beside it; returns its path. */
    public static Path write(Path dump, List<VcdWriter.Wire> wires) throws IOException {
        Path save = beside(dump);
        Files.writeString(save, text(dump.toAbsolutePath(), save.toAbsolutePath(), wires), StandardCharsets.UTF_8);
        return save;
    }

    static String text(Path dump, Path save, List<VcdWriter.Wire> wires) {
        Map<String, List<VcdWriter.Wire>> byScope = new LinkedHashMap<>();
        for (VcdWriter.Wire w : wires) byScope.computeIfAbsent(w.scope(), k -> new ArrayList<>()).add(w);
        StringBuilder b = new StringBuilder();
        b.append("[*] GTKWave save file written by nicsim: gtkwave ").append(save.getFileName()).append('\n');
        b.append("[dumpfile] \"").append(dump).append("\"\n");
        b.append("[savefile] \"").append(save).append("\"\n");
        b.append("[timestart] 0\n");
        b.append("[sst_expanded] 1\n");
        List<String> opened = new ArrayList<>();
        for (String scope : byScope.keySet()) {
            String prefix = "";
            for (String part : scope.isEmpty() ? new String[0] : scope.split("\\.")) {
                prefix += part + ".";
                if (opened.contains(prefix)) continue;
                opened.add(prefix);
                b.append("[treeopen] ").append(prefix).append('\n');
            }
        }
        for (Map.Entry<String, List<VcdWriter.Wire>> e : byScope.entrySet()) {
            String group = e.getKey().isEmpty() ? "top" : e.getKey().substring(e.getKey().lastIndexOf('.') + 1);
            b.append(GROUP_BEGIN).append("\n-").append(group).append('\n');
            for (VcdWriter.Wire w : e.getValue()) b.append(signal(w)).append('\n');
            b.append(GROUP_END).append("\n-").append(group).append('\n');
        }
        return b.toString();
    }

    /** The display flag and the name GTKWave gives the wire: vectors carry their range. */
    private static String signal(VcdWriter.Wire w) {
        return w.width() == 1 ? BIN + "\n" + w.fullName() : HEX + "\n" + w.fullName() + "[" + (w.width() - 1) + ":0]";
    }
}
