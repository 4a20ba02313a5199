package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.regex.Pattern;

/** MPI jobs on a serve's nodes, as Open MPI's and MPICH's launchers start them: the pieces their tests share. */
final class MpiJobs {
    private MpiJobs() {}

    /** mpi-pingpong.c (a test resource) built by {@code mpicc} into a folder of its own: the folder. */
    static Path compilePingpong(String mpicc) throws Exception {
        Path dir = Files.createTempDirectory("nicsim-mpi");
        try (var in = MpiJobs.class.getResourceAsStream("/nicsim/serve/mpi-pingpong.c")) {
            Files.copy(in, dir.resolve("mpi-pingpong.c"));
        }
        Process cc = new ProcessBuilder(mpicc, "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o",
                dir.resolve("mpi-pingpong").toString(), dir.resolve("mpi-pingpong.c").toString())
                .redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, cc.waitFor(), out);
        return dir;
    }

    /**
     * A script in {@code dir} that execs rank r's command line (what './nicsim attach --node rank' does for each
     * rank), r read from the launcher's variable {@code rankVariable}; exit 99 for a rank it does not know.
     */
    static Path perRankScript(Path dir, String rankVariable, int ranks, IntFunction<List<String>> command)
            throws Exception {
        StringBuilder sh = new StringBuilder("#!/bin/sh\ncase \"$" + rankVariable + "\" in\n");
        for (int r = 0; r < ranks; r++) {
            sh.append(r).append(") exec");
            for (String a : command.apply(r)) sh.append(" '").append(a.replace("'", "'\\''")).append('\'');
            sh.append(" ;;\n");
        }
        sh.append("esac\nexit 99\n");
        Path perRank = dir.resolve("rank.sh");
        Files.writeString(perRank, sh.toString());
        Files.setPosixFilePermissions(perRank, PosixFilePermissions.fromString("rwx------"));
        return perRank;
    }

    /** Runs the launcher line {@code cmd} to its end (180 s at most); it must exit 0; its output. */
    static String run(List<String> cmd, Served served) throws Exception {
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
        assertTrue(done && p.exitValue() == 0, String.join(" ", cmd) + ":\n" + out[0] + "\n--- serve:\n"
                + served.log());
        return out[0];
    }

    /** Each of ranks 0..ranks-1's mpi-pingpong, as serve's log tabled its QPs at exit, sent over RC. */
    static void assertSentOverRc(Served served, int ranks) {
        String log = served.log();
        for (int r = 0; r < ranks; r++)
            assertTrue(Pattern.compile("mpi-pingpong \\(pid \\d+\\) on node " + r
                    + " exited[^\\n]*\\n[^\\n]*\\n[^\\n]*\\n(\\s+0x[^\\n]*\\n)*?"
                    + "\\s+0x\\p{XDigit}+\\s+RC\\s+\\d+\\s+[1-9]")
                    .matcher(log).find(), "node " + r + " sent over RC:\n" + log);
    }
}
