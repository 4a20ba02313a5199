package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Debian's Open MPI 4.1, unchanged, with rank r on node r (as 'mpirun ... ./nicsim attach --node
 * rank -- PROGRAM' runs it; here a small script picks each rank's attach command): a ping-pong of
 * 1 B to 1 MiB with every byte checked and an MPI_Allreduce, over UCX on four nodes (pml ucx) and
 * over the openib BTL on two (pml ob1), both through the simulated fabric; each with the provider's
 * Java driver and its C driver (NICSIM_DRIVER=c).
 */
class MpiTest {
    private Served served;
    private Path dir;

    @BeforeEach
    void serve() throws Exception {
        served = new Served("nicsim-mpi").start(new World(4, Profiles.load("cx-gen3x16"), 1, Faults.parse("none")));
        dir = Files.createTempDirectory("nicsim-mpi");
        try (var in = MpiTest.class.getResourceAsStream("/nicsim/serve/mpi-pingpong.c")) {
            Files.copy(in, dir.resolve("mpi-pingpong.c"));
        }
        Process cc = new ProcessBuilder("mpicc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o",
                dir.resolve("mpi-pingpong").toString(),
                dir.resolve("mpi-pingpong.c").toString()).redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, cc.waitFor(), out);
    }

    @AfterEach
    void stop() throws Exception { served.stop(); }

    @ParameterizedTest
    @ValueSource(strings = {"java", "c"})
    void pmlUcxOnFourNodes(String driver) throws Exception {
        String out = mpirun(driver, 4, "--mca", "pml", "ucx");
        assertTrue(out.contains("allreduce over 4 ranks; 0 wrong"), out);
        assertTraffic(4);
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "c"})
    void pmlOb1WithTheOpenibBtl(String driver) throws Exception {
        String out = mpirun(driver, 2, "--mca", "pml", "ob1", "--mca", "btl", "openib,self", "--mca",
                "btl_openib_allow_ib", "1", "--mca", "btl_openib_warn_no_device_params_found", "0");
        assertTrue(out.contains("allreduce over 2 ranks; 0 wrong"), out);
        assertTraffic(2);
    }

    /** Runs the job on {@code ranks} ranks with the MCA options given; its output (it must exit 0). */
    private String mpirun(String driver, int ranks, String... mca) throws Exception {
        Path perRank = dir.resolve("rank.sh"); // what './nicsim attach --node rank' does for each rank
        StringBuilder sh = new StringBuilder("#!/bin/sh\ncase \"$OMPI_COMM_WORLD_RANK\" in\n");
        for (int r = 0; r < ranks; r++) {
            sh.append(r).append(") exec");
            List<String> program = Attach.withDriver(driver, List.of(dir.resolve("mpi-pingpong").toString()));
            for (String a : Attach.command(served.socket, r, program))
                sh.append(" '").append(a.replace("'", "'\\''")).append('\'');
            sh.append(" ;;\n");
        }
        sh.append("esac\nexit 99\n");
        Files.writeString(perRank, sh.toString());
        Files.setPosixFilePermissions(perRank, PosixFilePermissions.fromString("rwx------"));
        List<String> cmd = new ArrayList<>(List.of("mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                Integer.toString(ranks)));
        cmd.addAll(List.of(mca));
        cmd.add(perRank.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String[] out = {""};
        Thread reader = new Thread(() -> {
            try {
                out[0] = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (Exception ignored) { // the job ended
            }
        });
        reader.start();
        boolean done = p.waitFor(180, TimeUnit.SECONDS);
        if (!done) p.destroyForcibly().waitFor();
        reader.join(10_000);
        assertTrue(done && p.exitValue() == 0, "mpirun " + String.join(" ", mca) + ":\n" + out[0]
                + "\n--- serve:\n" + served.log());
        return out[0];
    }

    /**
     * Every rank's node sent packets, and its program's table (the adapter's record of its QPs, whichever
     * driver it used) shows RC traffic: the job went through the adapters.
     */
    private void assertTraffic(int ranks) throws Exception {
        long t0 = System.nanoTime();
        while (served.server.attached() > 0 && System.nanoTime() - t0 < 30_000_000_000L) Thread.sleep(20);
        String log = served.log();
        for (int r = 0; r < ranks; r++)
            assertTrue(served.world.sim.counters().scope("node" + r).get("Firmware.packets_out") >= 10,
                    "node " + r + " sent: " + served.world.sim.counters().scope("node" + r).snapshot());
        for (int r = 0; r < ranks; r++)
            assertTrue(java.util.regex.Pattern.compile("mpi-pingpong \\(pid \\d+\\) on node " + r
                    + " exited[^\\n]*\\n[^\\n]*\\n[^\\n]*\\n(\\s+0x[^\\n]*\\n)*?"
                    + "\\s+0x\\p{XDigit}+\\s+RC\\s+\\d+\\s+[1-9]")
                    .matcher(log).find(), "node " + r + " sent over RC:\n" + log);
        assertTrue(served.world.sim.counters().get("Fabric.packets") >= 100 * ranks,
                "the traffic crossed the simulated fabric");
    }
}
