package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** C programs for the tests: built from the test resources as the provider is built, run through {@link Attach}. */
public final class Programs {
    private Programs() {}

    /** A started program: its process, and its output as it comes (all of it once {@link #await} returns). */
    public record Run(Process process, ByteArrayOutputStream out, Thread reader) {
        public String output() {
            synchronized (out) { return out.toString(StandardCharsets.UTF_8); }
        }

        /** Waits up to {@code seconds} for the program to exit; its status. */
        public int await(int seconds) throws Exception {
            assertTrue(process.waitFor(seconds, TimeUnit.SECONDS),
                    "still running after " + seconds + " s:\n" + output());
            reader.join(10_000);
            return process.exitValue();
        }

        public int await() throws Exception { return await(120); }
    }

    /** Runs {@code program} on {@code node} to its end (at most 120 s) and asserts it exits 0; its output. */
    public static String runOk(Served served, int node, String... program) throws Exception {
        Run r = start(served, node, false, program);
        int status = r.await(120);
        assertEquals(0, status, String.join(" ", program) + ":\n" + r.output() + "\n--- serve:\n" + served.log());
        return r.output();
    }

    /**
     * Starts {@code program} on {@code node} of the simulator {@code served}; with {@code simulatedTime}, its clock
     * reads simulated time.
     */
    public static Run start(Served served, int node, boolean simulatedTime, String... program) throws Exception {
        Process p = new ProcessBuilder(Attach.command(served.socket, node, simulatedTime, List.of(program)))
                .redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Thread t = new Thread(() -> {
            byte[] b = new byte[4096];
            try (var in = p.getInputStream()) {
                for (int n; (n = in.read(b)) > 0; ) synchronized (out) { out.write(b, 0, n); }
            } catch (Exception ignored) { // the program ended
            }
        });
        t.setDaemon(true);
        t.start();
        return new Run(p, out, t);
    }

    /** Waits until something listens on TCP {@code port}; fails if {@code server} ended first, or after 30 s. */
    public static void awaitListening(Run server, int port) throws Exception {
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < 30_000_000_000L) {
            if (Attach.listening(port)) return;
            assertTrue(server.process().isAlive(), "the server program ended before listening:\n" + server.output());
            Thread.sleep(20);
        }
        fail("nothing listens on TCP port " + port + ":\n" + server.output());
    }

    /** What tests' livelock program prints once its QP retries for ever: the QP's number. */
    public static final Pattern SPINNING = Pattern.compile("spinning (0x[0-9a-f]+)");

    /** The first group of {@code p} in {@code text} once it shows (looked at every 100 ms); fails after the seconds. */
    public static String waitFor(Supplier<String> text, Pattern p, int seconds)
            throws InterruptedException {
        for (int i = 0; i < seconds * 10; i++) {
            Matcher m = p.matcher(text.get());
            if (m.find()) return m.group(1);
            Thread.sleep(100);
        }
        fail("no " + p + " within " + seconds + " s in:\n" + text.get());
        return null;
    }

    /** Whether {@code cond} came to hold within {@code seconds} (looked at every 20 ms). */
    public static boolean waitUntil(BooleanSupplier cond, int seconds) throws InterruptedException {
        long t0 = System.nanoTime();
        while (!cond.getAsBoolean() && System.nanoTime() - t0 < seconds * 1_000_000_000L) Thread.sleep(20);
        return cond.getAsBoolean();
    }

    /** A TCP port for programs' own exchanges (add an offset per use), one per test JVM. */
    public static int port() { return 18515 + (int) (ProcessHandle.current().pid() % 1000); }

    /**
     * Builds program {@code name} from the test resources under {@code folder} ({@code name}.c and
     * the {@code headers} beside it) as the provider is built, warning-free, in a folder of its
     * own; returns the folder.
     */
    /** {@code program}'s command line, run with the provider's C driver when {@code c}, else its Java one. */
    public static String[] withDriver(boolean c, String... program) {
        return Attach.withDriver(c ? "c" : "java", List.of(program)).toArray(String[]::new);
    }

    public static Path compile(String folder, String name, List<String> headers, String... libs) throws Exception {
        Path dir = Files.createTempDirectory("nicsim-" + name);
        List<String> files = new ArrayList<>(headers);
        files.add(name + ".c");
        for (String f : files)
            try (var in = Programs.class.getResourceAsStream("/nicsim/" + folder + "/" + f)) {
                assertNotNull(in, "test resource nicsim/" + folder + "/" + f);
                Files.copy(in, dir.resolve(f));
            }
        List<String> cmd = new ArrayList<>(List.of("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o",
                dir.resolve(name).toString(), dir.resolve(name + ".c").toString()));
        cmd.addAll(List.of(libs));
        Process cc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, cc.waitFor(), out);
        return dir;
    }
}
