package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import nicsim.cosim.bench.MpiBench;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code run pairs_write_bw --mpi} under Open MPI's mpirun, 2 ranks on this machine (shared memory between
 * them, the launcher's own traffic on loopback): its output is the one-process run's, byte for byte, but
 * for the wall time and the line that says how the hosts ran.
 */
class MpiRunTest {
    static Path launcher;

    @BeforeAll
    static void launcher() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        launcher = Files.createTempDirectory("nicsim-mpi-launcher").resolve("run");
        Files.writeString(launcher, "#!/bin/sh\nexec '" + java + "' -Xmx1g -XX:+UseParallelGC -cp '"
                + System.getProperty("java.class.path") + "' nicsim.cosim.cli.Main \"$@\"\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    static final List<String> RUN = MpiBench.run(8, 24, 8192);

    @Test
    void twoRanksPrintWhatOneProcessPrints() throws Exception {
        MpiBench.Comparison c = MpiBench.compare(launcher.toString(), 2, RUN);
        assertTrue(c.alone().contains("pairs_write_bw: data and completions checked: OK"), c.alone());
        // figures, counters and checks; the same windows, simulated time and clock edges
        assertEquals(MpiBench.figures(c.alone()), MpiBench.figures(c.ranked()));
        assertEquals(MpiBench.same(c.alone()), MpiBench.same(c.ranked()));
        assertTrue(MpiBench.same(c.alone()).contains("hosts ran apart in "), c.alone());
        assertTrue(c.identical());
        assertTrue(c.ranked().contains(" on 2 ranks x 1 threads ("), c.ranked());
        // what the bench reports of it
        assertEquals(8, c.nodes());
        assertEquals(2, c.ranks());
        assertTrue(c.windows() > 10 && c.collectives() > 2 * c.windows(), c.ranked());
        assertTrue(c.collectiveSeconds() > 0 && c.collectiveSeconds() < c.rankedSeconds(), c.ranked());
        String md = MpiBench.markdown(List.of(c), List.of(String.join(" ", RUN)));
        String cell = " [0-9.]+ \\|", count = " [0-9,]+ \\|";
        assertTrue(md.matches("(?s).*\\| 8 \\| 2 \\|" + cell + cell + cell + count + count + cell + cell
                + " yes \\|.*"), md);
    }

    @Test
    void mpiWithoutMpirunIsRefused() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(launcher.toString()));
        cmd.addAll(RUN);
        cmd.add("--mpi");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertTrue(p.exitValue() != 0, out);
        assertTrue(out.contains("--mpi: this process was not started by Open MPI's mpirun"), out);
    }

    @Test
    void anUnknownWayToWaitIsNamed() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(launcher.toString()));
        cmd.addAll(RUN);
        cmd.add("--mpi");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("OMPI_COMM_WORLD_SIZE", "1"); // as if mpirun had started it
        pb.environment().put("NICSIM_MPI_WAIT", "spin");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertTrue(p.exitValue() != 0, out);
        assertTrue(out.contains("NICSIM_MPI_WAIT 'spin' must be sleep or poll"), out);
    }
}
