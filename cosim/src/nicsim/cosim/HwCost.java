package nicsim.cosim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.hw.VerilogFile;
import nicsim.profile.Profile;

/**
 * What an RTL block costs in hardware, from Yosys (Debian's yosys): its generated Verilog
 * synthesized generically, with memories kept as memories (a bit-blasted 16K-entry table would
 * take minutes and count as flip-flops), then mapped to gates by ABC. Cells, flip-flops, memories
 * and their bits, and the longest path of logic between flip-flops, in gates; and, as an FPGA
 * estimate, the same logic mapped by ABC to 6-input LUTs (what a Xilinx or Intel fabric offers).
 */
public final class HwCost {
    private HwCost() {}

    /** One block's figures, and the seconds Yosys took. */
    public record Cost(String block, String module, long cells, long flipFlops, int memories, long memoryBits,
                       int depth, long luts, double seconds) {}

    /** The cost of block {@code name} (BlockPairs' names: doorbell, wqe, mtt, cqe, dma) built for {@code profile}. */
    public static Cost of(Profile profile, String name) throws IOException, InterruptedException {
        return synthesized(profile, name, false);
    }

    private static final java.util.Map<String, Cost> CACHE = new java.util.concurrent.ConcurrentHashMap<>();

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
            if (!cache) return synthesize(name, top, dir);
            byte[] verilog = Files.readAllBytes(dir.resolve(top + ".v"));
            String key = name + ":" + java.util.HexFormat.of().formatHex(sha256(verilog));
            Cost c = CACHE.get(key);
            if (c == null) {
                c = synthesize(name, top, dir);
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
        ProcessBuilder pb = new ProcessBuilder("yosys", "-q", "-p", script).redirectErrorStream(true);
        if (dir != null) pb.directory(dir.toFile());
        Process y = pb.start();
        String out = new String(y.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!y.waitFor(10, TimeUnit.MINUTES)) {
            y.destroyForcibly();
            throw new IOException("yosys ran over 10 minutes on " + what);
        }
        if (y.exitValue() != 0)
            throw new IOException("yosys failed on " + what + ": " + out.lines().findFirst().orElse("") + "\n" + out);
    }

    /** Deletes a scratch folder and everything in it. */
    static void deleteTree(Path dir) throws IOException {
        try (var w = Files.walk(dir)) {
            for (Path p : w.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    private static byte[] sha256(byte[] b) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(b);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Yosys on module {@code top}, whose Verilog is in {@code dir}. */
    private static Cost synthesize(String name, String top, Path dir) throws IOException, InterruptedException {
        String script = String.join("; ",
                "read_verilog " + dir.resolve(top + ".v"),
                "synth -top " + top + " -run begin:fine", // up to the memories: they are kept as memories
                "memory -nomap", "opt -fast",
                "tee -q -o " + dir.resolve("mems.txt") + " dump t:$mem_v2",
                "techmap", "opt -fast", "design -save logic", "abc -fast", "opt -fast",
                "tee -q -o " + dir.resolve("stat.txt") + " stat",
                "tee -q -o " + dir.resolve("ltp.txt") + " ltp -noff",
                "design -load logic", "abc -lut 6 -fast", "opt -fast", // the FPGA estimate
                "tee -q -o " + dir.resolve("luts.txt") + " stat");
        long t0 = System.nanoTime();
        yosys(null, script, name + " (" + top + ")");
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
        Matcher lut = Pattern.compile("(?m)^\\s+\\$lut\\s+(\\d+)").matcher(lutStat);
        long luts = lut.find() ? Long.parseLong(lut.group(1)) : 0;
        return new Cost(name, top, cells, ffs, memories, bits, depth, luts, seconds);
    }

    private static long number(String text, String regex) throws IOException {
        Matcher m = Pattern.compile(regex).matcher(text);
        if (!m.find()) throw new IOException("yosys's report has no match for " + regex + ":\n" + text);
        return Long.parseLong(m.group(1));
    }

    /** The block names, in BlockPairs' order. */
    public static List<String> blocks(Profile profile) { return List.copyOf(BlockPairs.all(profile).keySet()); }
}
