package nicsim.serve;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Assertions;

/** A simulator serving a cluster on a thread of the test's JVM, at a socket of its own; what it logs is kept. */
public final class Served {
    public final Path socket;
    public World world;
    public Server server;
    private Thread loop;
    private volatile boolean stop;
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();

    public Served(String name) throws Exception { socket = Files.createTempDirectory(name).resolve("serve.sock"); }

    /** Two nodes of cx-gen3x16, seed 1: the same cluster every time. */
    public static World cluster() { return new World(2, Profiles.load("cx-gen3x16"), 1, Faults.parse("none")); }

    /** Serves {@code w} until {@link #stop}. */
    public Served start(World w) throws Exception { return start(w, Watchdog.DEFAULT_PICOS); }

    /**
     * Serves {@code w} until {@link #stop}, its watchdog reporting QPs that retry without progress for {@code
     * watchdogPicos}.
     */
    public Served start(World w, long watchdogPicos) throws Exception {
        stop = false;
        world = w;
        server = new Server(w, socket, Server.DEFAULT_GRACE_MILLIS, watchdogPicos, new PrintStream(log, true));
        loop = new Thread(() -> server.run(() -> stop), "serve");
        loop.start();
        return this;
    }

    /** Ends the serve loop and closes the server (its programs' objects released); true if the loop ended. */
    public boolean stop() throws Exception {
        stop = true;
        loop.join(10_000);
        server.close();
        return !loop.isAlive();
    }

    public String log() { return log.toString(StandardCharsets.UTF_8); }

    /**
     * Every program attached so far has left and had its objects released (within 30 s): the server
     * sees each program's socket close a moment after the program exits.
     */
    public void awaitReleased() throws Exception {
        long t0 = System.nanoTime();
        while (server.attached() > 0 && System.nanoTime() - t0 < 30_000_000_000L) Thread.sleep(20);
        Assertions.assertEquals(0, server.attached(), "every program's objects released: "
                + log());
    }
}
