package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The benchmark command writes its report; speed itself is never asserted (figures only). */
class BenchCommandTest {
    @Test
    void benchWritesAReportRowForEveryBlock(@TempDir Path dir) throws Exception {
        assertEquals(0, Main.run("bench", "--cycles", "2000", "--quick", "--out", dir.toString()));
        List<String> csv = Files.readAllLines(dir.resolve("blocks.csv"));
        assertEquals(6, csv.size(), csv.toString()); // header + five blocks
        for (String block : List.of("doorbell", "wqe", "mtt", "dma", "cqe"))
            assertTrue(csv.stream().anyMatch(l -> l.startsWith(block + ",2000,")), block + " in " + csv);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("JNI crossing") && md.contains("Host link DMA efficiency"), md);
        assertEquals(2, Main.run("bench", "--cycles", "10"));
        assertEquals(2, Main.run("bench", "--sections", "colour"));
    }

    @Test
    void fidelityAndSpeedSectionsWriteTablesPlotsAndCsv(@TempDir Path dir) throws Exception {
        assertEquals(0, Main.run("bench", "--sections", "fidelity,speed,attach", "--quick", "--out", dir.toString()));
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("4 B round trip, lanai72 (KVIA)") && md.contains("docs/sources.md#kvia-measurements"),
                md);
        assertTrue(md.contains("RTL edges per wall second") && md.contains("with RTL in the loop"), md);
        // a verb from Java, through attach with the Java driver, and with the C driver
        assertTrue(md.matches("(?s).*\\| ibv_post_send \\| [0-9,]+ \\| [0-9,]+ \\| [0-9,]+ "
                + "\\| [0-9.]+x \\| [0-9,]+ \\|.*"), "a verb through attach against Java: " + md);
        assertTrue(md.matches("(?s).*`ib_write_bw -s 64` through attach.*[0-9,]+ ns with the provider's C driver.*"),
                md);
        assertTrue(Files.size(dir.resolve("latency.png")) > 1000 && Files.size(dir.resolve("bandwidth.png")) > 1000);
        assertTrue(Files.readAllLines(dir.resolve("fidelity.csv")).size() >= 4);
        // cx-gen3x16's curves, each published ConnectX point beside its simulated one
        assertTrue(md.matches("(?s).*\\| send_lat RC \\| 32 \\| [0-9.]+ us \\| 0\\.83 us \\| [-+][0-9.]+% \\|.*"), md);
        assertTrue(Files.size(dir.resolve("connectx5-latency.png")) > 1000
                && Files.size(dir.resolve("connectx6-bandwidth.png")) > 1000);
        assertTrue(Files.readAllLines(dir.resolve("connectx5-curves.csv")).size() >= 6);
        // nodes and threads, each count beside the others: per node against 2 nodes, and the same output on 2 threads
        var nodeRows = Files.readAllLines(dir.resolve("node-scaling.csv"));
        assertEquals(3, nodeRows.size());
        // the heap a 64 KiB message allocates: some, and less than a thousand times its bytes
        double kb = Double.parseDouble(nodeRows.get(2).substring(nodeRows.get(2).lastIndexOf(',') + 1));
        assertTrue(kb > 0 && kb < 65_536, nodeRows.get(2));
        assertTrue(md.matches("(?s).*\\| 4 \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+x \\|.*"), md);
        assertTrue(md.matches("(?s).*\\| 8 \\| 2 \\| [0-9.]+ \\| [0-9.]+x \\| [0-9,]+ \\| identical \\|.*"), md);
    }

    @Test
    void theThreadsSectionAloneWritesTheThreadsTableAndItsGoal(@TempDir Path dir) throws Exception {
        assertEquals(0, Main.run("bench", "--sections", "threads", "--quick", "--out", dir.toString()));
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.matches("(?s).*\\| 8 \\| 2 \\| [0-9.]+ \\| [0-9.]+x \\| [0-9,]+ \\| identical \\|.*"), md);
        assertTrue(md.contains("| 2 threads over 1 at 8 nodes, of the ceiling | >= 0.90x |"), md);
        assertFalse(md.contains("Host link DMA efficiency"), md); // nothing of the other sections
    }
}
