package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The timeline a run writes, as Chrome DevTools' own trace engine reads it
 * (scripts/timeline-reader): a pipeline of one track per block per node, not a row per WQE; each
 * WQE's stages tied by flow arrows across blocks and nodes; counter tracks for occupancy and link
 * bandwidth; and nothing the reader warns about.
 */
class TimelineTest {
    /** Blocks a send WQE meets; a track may be a block's numbered lane ("DmaEngine send 3"). */
    private static final Set<String> BLOCKS = Set.of("DoorbellDecoder", "WqeFetcher", "MttWalker", "DmaEngine host",
            "DmaEngine send", "Link", "CqeWriter");

    private static List<String[]> read(Path timeline) throws Exception {
        Path root = Path.of(System.getProperty("nicsim.root", "."));
        Process p = new ProcessBuilder(root.resolve("scripts/timeline-reader/read.sh").toString(), timeline.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), "the trace reader failed:\n" + out);
        List<String[]> facts = new ArrayList<>();
        for (String line : out.split("\n")) if (!line.isBlank()) facts.add(line.split("\t"));
        return facts;
    }

    @Test
    void aRunsTimelineIsAPipelineOfBlockTracksTiedByFlows(@TempDir Path dir) throws Exception {
        Path tl = dir.resolve("t.json");
        PrintStream old = System.out;
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        System.setOut(new PrintStream(b));
        int rc;
        try {
            rc = Main.run("run", "write_bw", "--iters", "200", "--size", "8192", "--timeline", tl.toString());
        } finally {
            System.setOut(old);
        }
        assertEquals(0, rc, b.toString());

        List<String[]> facts = read(tl);
        Map<String, Set<String>> tracksPerNode = new HashMap<>();
        int slices = 0, flows = 0, crossNode = 0;
        Set<String> counters = new HashSet<>();
        for (String[] f : facts) {
            switch (f[0]) {
                case "thread" -> {
                    String block = f[4].replaceFirst(" \\d+$", "");
                    assertTrue(BLOCKS.contains(block), "a track that is not a block: " + String.join(" ", f));
                    tracksPerNode.computeIfAbsent(f[2], k -> new HashSet<>()).add(f[4]);
                    slices += Integer.parseInt(f[5]);
                }
                case "flow" -> {
                    flows++;
                    assertTrue(Integer.parseInt(f[1]) >= 4, "a WQE's flow ties its stages: " + String.join(" ", f));
                    assertTrue(Integer.parseInt(f[3]) >= 4, "across at least four blocks: " + String.join(" ", f));
                    if (Integer.parseInt(f[2]) == 2) crossNode++;
                }
                case "counter" -> counters.add(f[2]);
                case "warning" -> fail("the trace reader warns: " + String.join(" ", f));
                default -> fail("unexpected line " + String.join(" ", f));
            }
        }
        assertEquals(Set.of("node0", "node1"), tracksPerNode.keySet());
        // one track per block (five, and the two sets of DMA engines), each set of engines with up to
        // dma.channels (16) lanes for its parallel transfers
        int node0 = tracksPerNode.get("node0").size();
        assertTrue(node0 >= 6 && node0 <= 7 + 2 * 15, "node0's tracks: " + tracksPerNode.get("node0"));
        var node0Blocks = List.of("DoorbellDecoder", "WqeFetcher", "MttWalker", "DmaEngine host", "Link");
        assertTrue(tracksPerNode.get("node0").containsAll(node0Blocks), tracksPerNode.get("node0").toString());
        assertEquals(200, flows, "one flow per WQE");
        assertEquals(200, crossNode, "every WRITE's flow reaches the peer that received it");
        assertTrue(slices >= 200 * 5, "slices: " + slices);
        assertTrue(counters.contains("Link tx Gb/s") && counters.contains("MttWalker WQEs"), counters.toString());
    }
}
