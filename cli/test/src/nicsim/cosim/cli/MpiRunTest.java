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
import java.util.stream.Collectors;
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

    static final List<String> RUN = List.of("run", "pairs_write_bw", "--nodes", "8", "--iters", "24", "--size", "8192",
            "--threads", "1", "--seed", "5");

    static String run(List<String> cmd) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "still running: " + cmd);
        assertEquals(0, p.exitValue(), cmd + " failed:\n" + out);
        return out;
    }

    /** The output but for the lines of wall time and of how the hosts ran, which must differ. */
    static String figures(String out) {
        return out.lines().filter(l -> !l.startsWith("simulated ") && !l.startsWith("hosts ran apart"))
                .collect(Collectors.joining("\n"));
    }

    static String line(String out, String start) {
        return out.lines().filter(l -> l.startsWith(start)).findFirst()
                .orElse("(no line '" + start + "' in:\n" + out + ")");
    }

    @Test
    void twoRanksPrintWhatOneProcessPrints() throws Exception {
        List<String> one = new ArrayList<>(List.of(launcher.toString()));
        one.addAll(RUN);
        String alone = run(one);
        List<String> two = new ArrayList<>(List.of("mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "2",
                "--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", "lo", launcher.toString()));
        two.addAll(RUN);
        two.add("--mpi");
        String ranked = run(two);
        assertTrue(alone.contains("pairs_write_bw: data and completions checked: OK"), alone);
        assertEquals(figures(alone), figures(ranked), "figures, counters and checks of 1 process and of 2 ranks");
        // the same windows, and the same simulated time and clock edges
        String windows = line(alone, "hosts ran apart").replaceAll(" on .*", "");
        assertEquals(windows, line(ranked, "hosts ran apart").replaceAll(" on .*", ""));
        assertTrue(line(ranked, "hosts ran apart").contains(" on 2 ranks x 1 threads ("), ranked);
        assertEquals(line(alone, "simulated ").replaceAll(" in .* wall time \\(slowdown \\d+x;", ""),
                line(ranked, "simulated ").replaceAll(" in .* wall time \\(slowdown \\d+x;", ""));
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
}
