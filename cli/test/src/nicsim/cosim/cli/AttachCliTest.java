package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import nicsim.serve.Attach;
import nicsim.serve.Programs;
import nicsim.serve.Served;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * `./nicsim attach` as launchers and scripts run it: the launcher script with this test's classpath
 * (NICSIM_LAUNCHER), so the descriptors a launcher passes and the signals it sends are those of a user's run.
 */
class AttachCliTest {
    static Served served;
    static Path launcher;
    static final Path SCRIPT = Path.of(System.getProperty("nicsim.root", "."), "nicsim");

    @BeforeAll
    static void serve() throws Exception {
        served = new Served("nicsim-attach-cli").start(Served.cluster());
        String java = ProcessHandle.current().info().command().orElse("java");
        launcher = Files.createTempDirectory("nicsim-launcher").resolve("run");
        Files.writeString(launcher, "#!/bin/sh\nexec '" + java + "' -cp '" + System.getProperty("java.class.path")
                + "' nicsim.cosim.cli.Main \"$@\"\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @AfterAll
    static void stop() throws Exception { served.stop(); }

    /** `./nicsim attach --socket S ARGS...` (or the launcher itself, without the script, when {@code direct}). */
    static ProcessBuilder attach(boolean direct, String... args) {
        List<String> cmd = new ArrayList<>(direct ? List.of(launcher.toString()) : List.of("bash", SCRIPT.toString()));
        cmd.addAll(List.of("attach", "--socket", served.socket.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("NICSIM_LAUNCHER", launcher.toString());
        return pb;
    }

    /**
     * With no --socket, attach takes NICSIM_SOCKET (as a script run under attach has it) before its default; the
     * program runs on a host named for its node.
     */
    @Test
    void theSocketComesFromTheEnvironmentWhenNotGiven() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", SCRIPT.toString(), "attach", "--node", "1", "--",
                "sh", "-c", "echo host $(hostname); ibv_devinfo -l");
        pb.environment().put("NICSIM_LAUNCHER", launcher.toString());
        pb.environment().put("NICSIM_SOCKET", served.socket.toString());
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("nicsim0"), "the program found the adapter of NICSIM_SOCKET's serve: " + out);
        assertTrue(out.contains("host node1\n"), "node 1's host name: " + out);
    }

    /** A launcher-like parent opens fd 5 on a pipe (this test's stdout pipe); the program writes there. */
    @Test
    void aDescriptorTheLauncherPassesReachesTheProgram() throws Exception {
        List<String> cmd = new ArrayList<>(List.of("sh", "-c", "exec \"$@\" 5>&1 1>&2", "launcher"));
        cmd.addAll(attach(false, "--node", "0", "--", "sh", "-c", "echo hi >&5").command());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("NICSIM_LAUNCHER", launcher.toString());
        Path err = Files.createTempFile("attach-fd", ".err");
        Process p = pb.redirectError(err.toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "attach still running");
        assertEquals(0, p.exitValue(), Files.readString(err));
        assertEquals("hi\n", out, "what the program wrote on fd 5; stderr:\n" + Files.readString(err));
    }

    @Test
    void sigtermToTheScriptEndsTheProgramAndFreesItsPort() throws Exception { sigtermEnds(false, 41); }

    @Test
    void sigtermToTheJvmEndsTheProgramAndFreesItsPort() throws Exception { sigtermEnds(true, 42); }

    /**
     * A pingpong server on node 1 waits for a client for ever; SIGTERM to attach ends it within seconds, leaves
     * no process of it and its port free, and a pingpong pair then runs on that port.
     */
    private static void sigtermEnds(boolean direct, int offset) throws Exception {
        String port = Integer.toString(Programs.port() + offset);
        Path log = Files.createTempFile("attach-term", ".log");
        Process p = attach(direct, "--node", "1", "--", "ibv_rc_pingpong", "-p", port).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        long t0 = System.nanoTime();
        while (!Attach.listening(Integer.parseInt(port))) {
            assertTrue(p.isAlive(), "the server ended before listening:\n" + Files.readString(log));
            assertTrue(System.nanoTime() - t0 < 60_000_000_000L, "nothing listens on " + port);
            Thread.sleep(50);
        }
        List<ProcessHandle> started = new ArrayList<>(p.descendants().toList());
        started.add(p.toHandle());
        p.destroy(); // SIGTERM, as timeout and job control send
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "attach still running 10 s after SIGTERM");
        for (ProcessHandle h : started)
            assertFalse(h.isAlive(), "left running: " + h.pid() + " " + h.info().commandLine().orElse("?"));
        assertFalse(Attach.listening(Integer.parseInt(port)), "port " + port + " still taken");
        Programs.Run srv = Programs.start(served, 1, false, "ibv_rc_pingpong", "-n", "10", "-p", port);
        Programs.awaitListening(srv, Integer.parseInt(port));
        Programs.Run cli = Programs.start(served, 0, false, "ibv_rc_pingpong", "-n", "10", "-p", port, "node1");
        assertEquals(0, cli.await(), cli.output() + served.log());
        assertEquals(0, srv.await(), srv.output());
    }

    /**
     * MPICH's launcher passes each rank its PMI descriptor (PMI_FD), which reaches the program through attach;
     * over libfabric's verbs provider the job's messages, 1 B to 1 MiB each checked, cross the adapters.
     */
    @Test
    void mpichRunsRankRonNodeROverLibfabricsVerbsProvider() throws Exception {
        Path dir = Files.createTempDirectory("nicsim-mpich");
        try (var in = AttachCliTest.class.getResourceAsStream("/nicsim/serve/mpi-pingpong.c")) {
            Files.copy(in, dir.resolve("mpi-pingpong.c"));
        }
        Process cc = new ProcessBuilder("mpicc.mpich", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o",
                dir.resolve("mpi-pingpong").toString(), dir.resolve("mpi-pingpong.c").toString())
                .redirectErrorStream(true).start();
        String ccOut = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, cc.waitFor(), ccOut);
        List<String> cmd = new ArrayList<>(List.of("mpiexec.mpich", "-n", "2"));
        cmd.addAll(attach(false, "--node", "rank", "--", dir.resolve("mpi-pingpong").toString()).command());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("NICSIM_LAUNCHER", launcher.toString());
        // as a user runs it: no MPIR_CVAR_NOLOCAL (each node is a host name of its own, so MPICH does not pair the
        // ranks through shared memory) and libfabric's own choice of provider
        pb.environment().remove("MPIR_CVAR_NOLOCAL");
        pb.environment().remove("FI_PROVIDER");
        Path log = Files.createTempFile("mpich", ".log");
        Process p = pb.redirectOutput(log.toFile()).start();
        boolean done = p.waitFor(180, TimeUnit.SECONDS);
        if (!done) p.destroyForcibly().waitFor();
        String out = Files.readString(log);
        assertTrue(done && p.exitValue() == 0, "mpiexec.mpich:\n" + out + "\n--- serve:\n" + served.log());
        assertTrue(out.contains("1 MiB, 3 rounds each; allreduce over 2 ranks; 0 wrong"), out);
        served.awaitReleased();
        // each node's table of queue pairs, once serve has printed it whole (it prints row by row)
        for (int r = 0; r < 2; r++)
            Programs.waitFor(served::log, Pattern.compile("mpi-pingpong \\(pid \\d+\\) on node " + r
                    + " exited[^\\n]*\\n[^\\n]*\\n[^\\n]*\\n(?:\\s+0x[^\\n]*\\n)*?"
                    + "\\s+0x\\p{XDigit}+\\s+(RC)\\s+\\d+\\s+[1-9]"), 30);
    }
}
