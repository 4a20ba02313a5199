package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * QEMU's RDMA live migration between two nodes (docs/attach.md, "The Debian verbs ecosystem"), as Debian's QEMU 7.2
 * does it: the destination ({@code -incoming rdma:HOST:PORT}) listens through RDMA CM on node 1, the source on node 0
 * connects, and guest RAM goes by RDMA WRITEs into memory the destination registered, its control messages by SEND.
 * A tiny TCG guest with no disk (the BIOS finds nothing to boot), a pattern loaded into its RAM on the source only.
 */
class QemuMigrationTest {
    private static final int PORT = 4444;
    /** Where the source's loader device puts the pattern: above the BIOS's low memory, below its high tables. */
    private static final long PATTERN_AT = 0x200000;
    private static final int PATTERN_BYTES = 64 << 10;

    private Served served;
    private final List<Run> qemus = new ArrayList<>();

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-qemu-migrate").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception {
        for (Run q : qemus) {
            q.process().destroy(); // QEMU quits on SIGTERM
            if (!q.process().waitFor(20, TimeUnit.SECONDS)) q.process().destroyForcibly();
            q.await(30);
        }
        served.stop();
    }

    /** A QMP connection to one QEMU: one command at a time, its answer's line (events in between are skipped). */
    private static final class Qmp implements AutoCloseable {
        private final SocketChannel ch;
        private final BufferedReader in;
        private final Writer out;

        Qmp(Path socket) throws Exception {
            ch = SocketChannel.open(UnixDomainSocketAddress.of(socket));
            in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8));
            out = Channels.newWriter(ch, StandardCharsets.UTF_8);
            assertTrue(in.readLine().contains("\"QMP\""), "QMP's greeting");
            assertTrue(execute("{\"execute\": \"qmp_capabilities\"}").contains("\"return\""));
        }

        String execute(String command) throws Exception {
            out.write(command + "\n");
            out.flush();
            for (String line; (line = in.readLine()) != null; )
                if (line.contains("\"return\"") || line.contains("\"error\"")) return line;
            fail("QEMU closed its QMP socket after " + command);
            return null;
        }

        @Override public void close() throws Exception { ch.close(); }
    }

    /** A guest of one QEMU binary: its machine's options, and where in its RAM the source's pattern goes. */
    private record Guest(String binary, String debianPackage, List<String> machine, long patternAt) {}

    /** x86's default PC: a pattern above the BIOS's low memory, below its high tables. */
    private static final Guest X86 = new Guest("qemu-system-x86_64", "qemu-system-x86", List.of("-m", "16"),
            PATTERN_AT);
    /**
     * Arm's empty machine (docs/attach.md R17): no board, no flash, 4 MiB of RAM from address 0 in 1 KiB target
     * pages, so 4,096 pages to exchange; {@code -M virt} migrates its two 64 MiB flash banks too (593 s).
     */
    private static final Guest ARM = new Guest("qemu-system-aarch64", "qemu-system-arm",
            List.of("-M", "none", "-cpu", "cortex-a57", "-m", "4"), PATTERN_AT);

    private Path startQemu(Guest guest, Path dir, int node, String name, String... more) throws Exception {
        Path qmp = dir.resolve(name + ".qmp");
        List<String> cmd = new ArrayList<>(List.of(guest.binary()));
        cmd.addAll(guest.machine());
        cmd.addAll(List.of("-accel", "tcg", "-nodefaults", "-display", "none", "-serial", "none", "-qmp",
                "unix:" + qmp + ",server=on,wait=off"));
        cmd.addAll(List.of(more));
        Run q = Programs.start(served, node, false, cmd.toArray(String[]::new));
        qemus.add(q);
        for (int i = 0; i < 600 && !Files.exists(qmp); i++) {
            assertTrue(q.process().isAlive(), name + " QEMU ended:\n" + q.output() + "\n--- serve:\n" + served.log());
            Thread.sleep(50);
        }
        assertTrue(Files.exists(qmp), name + " QEMU made no QMP socket:\n" + q.output());
        return qmp;
    }

    @Test
    void qemuMigratesAGuestOverRdmaBetweenNodes() throws Exception { migrates(X86); }

    /** The same target-independent migration/rdma.c in Arm's binary (2026-12-06: 118 s of wall time at load 50). */
    @Test
    void qemuMigratesAnArmGuestOverRdmaBetweenNodes() throws Exception { migrates(ARM); }

    private void migrates(Guest guest) throws Exception {
        assumeTrue(new ProcessBuilder("sh", "-c", "command -v " + guest.binary()).start().waitFor() == 0,
                guest.debianPackage() + " is not installed (apt-get install " + guest.debianPackage()
                        + ", or scripts/ensure-tools.sh --vm)");
        Path dir = Files.createTempDirectory("nicsim-qemu-migrate");
        byte[] pattern = new byte[PATTERN_BYTES];
        new Random(57).nextBytes(pattern);
        Files.write(dir.resolve("pattern.bin"), pattern);
        Path dstQmp = startQemu(guest, dir, 1, "destination", "-incoming", "rdma:127.77.0.2:" + PORT);
        for (int i = 0; i < 600 && !served.log().contains("port " + PORT + " (RDMA CM, node 1)"); i++) Thread.sleep(50);
        assertTrue(served.log().contains("listens on 127.77.0.2, port " + PORT), "the destination listens:\n"
                + served.log());
        Path srcQmp = startQemu(guest, dir, 0, "source",
                "-device", "loader,file=" + dir.resolve("pattern.bin") + ",addr=" + guest.patternAt());
        try (Qmp src = new Qmp(srcQmp); Qmp dst = new Qmp(dstQmp)) {
            assertTrue(dst.execute("{\"execute\": \"query-status\"}").contains("\"status\": \"inmigrate\""));
            String migrate = src.execute("{\"execute\": \"migrate\", \"arguments\": {\"uri\": \"rdma:127.77.0.2:"
                    + PORT + "\"}}");
            assertTrue(migrate.contains("\"return\""), migrate);
            String state = "";
            // up to about 10 minutes: Arm's took 118 s and x86's up to 140 s on a machine at load 50
            for (int i = 0; i < 6000 && !state.matches(".*\"status\": \"(completed|failed|cancelled)\".*"); i++) {
                Thread.sleep(100);
                state = src.execute("{\"execute\": \"query-migrate\"}");
            }
            assertTrue(state.contains("\"status\": \"completed\""), "the migration: " + state + "\nsource:\n"
                    + qemus.get(1).output() + "\ndestination:\n" + qemus.get(0).output() + "\n--- serve:\n"
                    + served.log());
            assertTrue(dst.execute("{\"execute\": \"query-status\"}").contains("\"status\": \"running\""),
                    "the destination runs the guest");
            // the bytes the source's guest had in RAM are the destination guest's now
            Path saved = dir.resolve("destination.bin");
            String save = dst.execute("{\"execute\": \"pmemsave\", \"arguments\": {\"val\": " + guest.patternAt()
                    + ", \"size\": " + PATTERN_BYTES + ", \"filename\": \"" + saved + "\"}}");
            assertTrue(save.contains("\"return\""), save);
            assertArrayEquals(pattern, Files.readAllBytes(saved), "the pattern in the destination's guest RAM");
        }
        // RAM went by the adapters: control SENDs both ways, and the source's WRITEs of guest RAM, which node 1's
        // adapter wrote into the destination's registered chunks (4 MiB of them for 16 MiB, mostly zero, guest RAM)
        for (String node : List.of("node0", "node1"))
            assertTrue(served.world.sim.counters().scope(node).get("Firmware.packets_out") >= 100,
                    node + "'s adapter: " + served.world.sim.counters().scope(node).snapshot());
        assertTrue(served.world.sim.counters().scope("node1").get("Firmware.dma_write_bytes") >= PATTERN_BYTES,
                "guest RAM written into node 1's memory: " + served.world.sim.counters().scope("node1").snapshot());
    }
}
