package nicsim.cosim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.adapter.AdapterConfig;
import nicsim.hw.VerilogFile;
import nicsim.profile.Profile;

/**
 * What an RTL block costs in hardware, from Yosys (Debian's yosys): its generated Verilog
 * synthesized generically, with memories kept as memories (a bit-blasted 16K-entry table would
 * take minutes and count as flip-flops), then mapped to gates by ABC. Cells, flip-flops, memories
 * and their bits, and the longest path of logic between flip-flops, in gates; and, as an FPGA
 * estimate, Yosys's Xilinx 7-series flow ({@code synth_xilinx}): its LUTs and flip-flops, with each
 * memory kept apart as a black box of the same ports (the flow would otherwise bit-blast the large
 * tables into LUT RAM and flip-flops for minutes; their bits are counted apart, as above).
 */
public final class HwCost {
    private HwCost() {}

    /**
     * One block's figures, and the seconds Yosys took: {@code depth} is the generic flow's longest path
     * in gates, {@code lutLevels} the xc7 netlist's in LUTs ({@link LutDepth}), ending at {@code deepest};
     * {@code clockPicos} is the period of the clock the block runs at in the profile.
     */
    public record Cost(String block, String module, long cells, long flipFlops, int memories, long memoryBits,
                       int depth, long luts, long fpgaFlipFlops, int lutLevels, String deepest, long clockPicos,
                       double seconds) {
        /** The estimated shortest period of the xc7 netlist, by {@link HwCost#pathPicos}. */
        public long pathPicos() { return HwCost.pathPicos(lutLevels); }

        public double fmaxMhz() { return 1e6 / pathPicos(); }

        public double clockMhz() { return 1e6 / clockPicos; }

        /** Whether the deepest path fits in the profile's clock period. */
        public boolean meetsClock() { return pathPicos() <= clockPicos; }
    }

    /**
     * Xilinx 7-series delays, in ps, from the timing Yosys 0.23 gives its xc7 cells (techlibs/xilinx/cells_sim.v,
     * taken from Project X-Ray's Artix-7 database; docs/sources.md#xilinx-7-series-timing): a LUT6's slowest input
     * to its output, a flip-flop's clock to Q, its clock-enable setup. Routing is not in that model: one net
     * between two cells is taken as {@link #ROUTE_PS} (an assumption, stated there).
     */
    public static final long LUT_PS = 642, CLOCK_TO_Q_PS = 303, SETUP_PS = 109, ROUTE_PS = 400;

    /** A register-to-register path through {@code levels} LUTs: clock to Q, each LUT, a net into each cell, setup. */
    public static long pathPicos(int levels) {
        return CLOCK_TO_Q_PS + levels * LUT_PS + (levels + 1L) * ROUTE_PS + SETUP_PS;
    }

    /** The profile key of the clock block {@code name} runs at: the DMA engines have their own. */
    public static String clockKey(String name) { return name.equals("dma") ? "dma.clock" : "core.clock"; }

    /** The period of that clock in {@code profile}, from the adapter's parameters. */
    static long clockPicos(Profile profile, String name) {
        AdapterConfig a = AdapterConfig.from(profile);
        return name.equals("dma") ? a.dma().clockPeriodPs() : a.corePeriodPs();
    }

    /** The cost of block {@code name} (BlockPairs' names: doorbell, wqe, mtt, cqe, dma) built for {@code profile}. */
    public static Cost of(Profile profile, String name) throws IOException, InterruptedException {
        return synthesized(profile, name, false);
    }

    private static final Map<String, Cost> CACHE = new ConcurrentHashMap<>();

    /**
     * {@link #of}, once per distinct Verilog: a sweep's points that build the same RTL (a parameter the
     * block does not read) share one synthesis.
     */
    public static Cost cached(Profile profile, String name) throws IOException, InterruptedException {
        return synthesized(profile, name, true);
    }

    private static Cost synthesized(Profile profile, String name, boolean cache)
            throws IOException, InterruptedException {
        BlockPairs.Pair pair = BlockPairs.get(profile, name);
        Path dir = Files.createTempDirectory("nicsim-hw-cost-");
        try {
            String top = VerilogFile.write(pair.rtl(), dir);
            List<Path> files = List.of(dir.resolve(top + ".v"));
            long clock = clockPicos(profile, name);
            if (!cache) return synthesize(name, top, files, dir, clock);
            byte[] verilog = Files.readAllBytes(dir.resolve(top + ".v"));
            String key = name + ":" + HexFormat.of().formatHex(sha256(verilog));
            Cost c = CACHE.get(key);
            if (c == null) {
                c = synthesize(name, top, files, dir, clock);
                CACHE.putIfAbsent(key, c);
            }
            return c;
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * Runs Yosys's {@code script} (in {@code dir}, or the current folder when null); an IOException
     * naming {@code what} if it fails, with Yosys's first line and all it printed, or runs over 10 minutes.
     */
    static void yosys(Path dir, String script, String what) throws IOException, InterruptedException {
        start(dir, script, what).finish();
    }

    /** A Yosys run under way; its output goes to a scratch file, read if it fails. */
    record Run(Process process, Path log, String what) {
        void finish() throws IOException, InterruptedException {
            try {
                if (!process.waitFor(10, TimeUnit.MINUTES)) {
                    process.destroyForcibly();
                    throw new IOException("yosys ran over 10 minutes on " + what);
                }
                if (process.exitValue() != 0) {
                    String out = Files.readString(log, StandardCharsets.UTF_8);
                    throw new IOException("yosys failed on " + what + ": " + out.lines().findFirst().orElse("")
                            + "\n" + out);
                }
            } finally {
                Files.deleteIfExists(log);
            }
        }
    }

    static Run start(Path dir, String script, String what) throws IOException {
        Path log = Files.createTempFile("nicsim-yosys-", ".log");
        ProcessBuilder pb = new ProcessBuilder("yosys", "-q", "-p", script).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        if (dir != null) pb.directory(dir.toFile());
        return new Run(pb.start(), log, what);
    }

    /** Deletes a scratch folder and everything in it. */
    static void deleteTree(Path dir) throws IOException {
        try (var w = Files.walk(dir)) {
            for (Path p : w.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    private static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The cost of module {@code top} of the user's own Verilog {@code files}, timed against the clock block
     * {@code name} runs at in {@code profile} (its port contract is not checked: any module can be costed).
     */
    public static Cost ofVerilog(Profile profile, String name, List<Path> files, String top)
            throws IOException, InterruptedException {
        BlockPairs.get(profile, name);
        for (Path f : files)
            if (!Files.isRegularFile(f)) throw new IllegalArgumentException("--verilog " + f + ": no such file");
        Path dir = Files.createTempDirectory("nicsim-hw-cost-");
        try {
            List<Path> abs = files.stream().map(Path::toAbsolutePath).toList();
            return synthesize(name, top, abs, dir, clockPicos(profile, name));
        } finally {
            deleteTree(dir);
        }
    }

    /** Yosys on module {@code top} of {@code files}; {@code dir} is its scratch folder. */
    private static Cost synthesize(String name, String top, List<Path> files, Path dir, long clockPicos)
            throws IOException, InterruptedException {
        Files.writeString(dir.resolve("memory_box.v"), MEMORY_BOX);
        String xilinx = "synth_xilinx -noiopad -family xc7 -top " + top;
        String read = String.join("; ", files.stream()
                .map(f -> "read_verilog " + (f.toString().endsWith(".sv") ? "-sv " : "") + f).toList());
        String script = String.join("; ",
                read, "read_verilog -lib +/xilinx/cells_sim.v", // a user's module may instantiate 7-series cells
                "synth -top " + top + " -run begin:fine", // up to the memories: they are kept as memories
                "memory -nomap", "opt -fast",
                "tee -q -o " + dir.resolve("mems.txt") + " dump t:$mem_v2",
                "techmap", "opt -fast", "abc -fast", "opt -fast",
                "tee -q -o " + dir.resolve("stat.txt") + " stat",
                "tee -q -o " + dir.resolve("ltp.txt") + " ltp -noff");
        String fpga = String.join("; ", read,
                xilinx + " -run begin:map_memory", // the FPGA estimate, beside the generic run
                "chtype -set nicsim_memory_box t:$mem_v2", "read_verilog -lib " + dir.resolve("memory_box.v"),
                xilinx + " -run map_ffram:", "tee -q -o " + dir.resolve("luts.txt") + " stat",
                // the cell library's modules go, so the netlist holds the block alone (kilobytes, not 9 MB)
                "delete =A:blackbox", "write_json " + dir.resolve("xc7.json"));
        long t0 = System.nanoTime();
        Run xc7 = start(null, fpga, name + " (" + top + ", synth_xilinx)");
        try {
            yosys(null, script, name + " (" + top + ")");
        } finally {
            xc7.finish();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        String stat = Files.readString(dir.resolve("stat.txt")), mems = Files.readString(dir.resolve("mems.txt"));
        long cells = number(stat, "Number of cells:\\s+(\\d+)"), ffs = 0, bits = 0;
        Matcher dff = Pattern.compile("(?m)^\\s+\\$_\\w*DFF\\w*\\s+(\\d+)").matcher(stat);
        while (dff.find()) ffs += Long.parseLong(dff.group(1));
        int memories = 0;
        Matcher mem = Pattern.compile("cell \\$mem_v2[^\\n]*\\n((?:\\s+parameter[^\\n]*\\n)+)").matcher(mems);
        while (mem.find()) {
            memories++;
            bits += number(mem.group(1), "\\\\SIZE (\\d+)") * number(mem.group(1), "\\\\WIDTH (\\d+)");
        }
        int depth = (int) number(Files.readString(dir.resolve("ltp.txt")), "\\(length=(\\d+)\\)");
        String lutStat = Files.readString(dir.resolve("luts.txt"));
        LutDepth.Depth levels = LutDepth.of(dir.resolve("xc7.json"), top);
        return new Cost(name, top, cells, ffs, memories, bits, depth, sum(lutStat, "LUT\\d"), sum(lutStat, "FD\\w+"),
                levels.levels(), levels.endpoint(), clockPicos, seconds);
    }

    /** The sum of the counts of the cells whose type matches {@code type} in Yosys's {@code stat}. */
    private static long sum(String stat, String type) {
        Matcher m = Pattern.compile("(?m)^\\s+" + type + "\\s+(\\d+)$").matcher(stat);
        long n = 0;
        while (m.find()) n += Long.parseLong(m.group(1));
        return n;
    }

    /**
     * A black box with a Yosys memory's ports and parameters, which the Xilinx flow leaves alone: the
     * logic around each memory is mapped, the memory itself is not.
     */
    private static final String MEMORY_BOX = """
            (* blackbox *)
            module nicsim_memory_box #(parameter MEMID = "", SIZE = 1, OFFSET = 0, ABITS = 1, WIDTH = 1, INIT = 0,
                RD_PORTS = 1, RD_CLK_ENABLE = 0, RD_CLK_POLARITY = 0, RD_TRANSPARENCY_MASK = 0,
                RD_COLLISION_X_MASK = 0, RD_WIDE_CONTINUATION = 0, RD_CE_OVER_SRST = 0, RD_ARST_VALUE = 0,
                RD_SRST_VALUE = 0, RD_INIT_VALUE = 0, WR_PORTS = 1, WR_CLK_ENABLE = 0, WR_CLK_POLARITY = 0,
                WR_PRIORITY_MASK = 0, WR_WIDE_CONTINUATION = 0) (
                input [RD_PORTS-1:0] RD_CLK, input [RD_PORTS-1:0] RD_EN, input [RD_PORTS-1:0] RD_ARST,
                input [RD_PORTS-1:0] RD_SRST, input [RD_PORTS*ABITS-1:0] RD_ADDR,
                output [RD_PORTS*WIDTH-1:0] RD_DATA, input [WR_PORTS-1:0] WR_CLK,
                input [WR_PORTS*WIDTH-1:0] WR_EN, input [WR_PORTS*ABITS-1:0] WR_ADDR,
                input [WR_PORTS*WIDTH-1:0] WR_DATA);
            endmodule
            """;

    private static long number(String text, String regex) throws IOException {
        Matcher m = Pattern.compile(regex).matcher(text);
        if (!m.find()) throw new IOException("yosys's report has no match for " + regex + ":\n" + text);
        return Long.parseLong(m.group(1));
    }

    /** The block names, in BlockPairs' order. */
    public static List<String> blocks(Profile profile) { return List.copyOf(BlockPairs.all(profile).keySet()); }
}
