package nicsim.cosim.cli;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import nicsim.adapter.Adapter;
import nicsim.cosim.Cluster;
import nicsim.cosim.RtlInLoop;
import nicsim.cosim.Stages;
import nicsim.sim.Trace;
import nicsim.wave.VcdWriter;

/** What run and serve share: the --rtl list, node 0's waveform, the timeline. */
final class Observe {
    private Observe() {}

    /** The blocks named by --rtl ("doorbell,wqe", "all"), each checked. */
    static Set<String> rtlBlocks(String list) {
        Set<String> blocks = new TreeSet<>();
        if (list == null || list.isBlank()) return blocks;
        for (String item : list.split(",")) {
            String b = item.contains("=") ? item.substring(0, item.indexOf('=')) : item;
            if (b.equals("all")) blocks.addAll(RtlInLoop.IN_SYSTEM);
            else if (Cluster.RTL_BLOCKS.contains(b)) blocks.add(b);
            else throw new IllegalArgumentException("--rtl '" + b + "' unknown; accepted: "
                    + String.join(", ", Cluster.RTL_BLOCKS) + ", all");
        }
        return blocks;
    }

    /**
     * The blocks of {@code --rtl} given as BLOCK=FILE[+FILE...]: the user's own Verilog in place of the
     * generated block, its top the first module of the first file.
     */
    static Map<String, RtlInLoop.Own> ownRtl(String list) throws IOException {
        Map<String, RtlInLoop.Own> own = new TreeMap<>();
        if (list == null || list.isBlank()) return own;
        for (String item : list.split(",")) {
            int eq = item.indexOf('=');
            if (eq < 0) continue;
            List<Path> files = new ArrayList<>();
            for (String f : item.substring(eq + 1).split("\\+")) {
                Path p = Path.of(f).toAbsolutePath();
                if (!Files.isRegularFile(p))
                    throw new IllegalArgumentException("--rtl " + item + ": no file " + f);
                files.add(p);
            }
            own.put(item.substring(0, eq), new RtlInLoop.Own(files, RtlInLoop.Own.firstModule(files.get(0))));
        }
        return own;
    }

    /** Blocks whose ports the waveform shows. */
    static final String WAVE_BLOCKS = "DoorbellDecoder, WqeFetcher, MttWalker, CqeWriter and DmaEngine (channel 0)";

    /** Starts a waveform of {@code a}'s block ports under their RTL names; the caller closes it. */
    static VcdWriter wave(Adapter a, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        VcdWriter vcd = VcdWriter.open(file, "1ps");
        a.decoder().trace(vcd, "TOP.DoorbellDecoder");
        a.fetcher().trace(vcd, "TOP.WqeFetcher");
        a.mtt().trace(vcd, "TOP.MttWalker");
        a.cqeWriter().trace(vcd, "TOP.CqeWriter");
        // channel 0, the busiest: each piece goes to the least busy, lowest first
        a.dma().engines().get(0).trace(vcd, "TOP.DmaEngine");
        return vcd;
    }

    /** Records the send WQEs' stages from now on, for a timeline. */
    static void recordTimeline(Trace trace) { Stages.record(trace); }

    /** Writes the timeline as Perfetto / Chrome JSON. */
    static void writeTimeline(Trace trace, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        try (Writer w = Files.newBufferedWriter(file)) { trace.writeChromeJson(w); }
    }
}
