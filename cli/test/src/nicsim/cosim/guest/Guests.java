package nicsim.cosim.guest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.serve.Served;
import nicsim.vm.Vm;
import nicsim.vm.VmOptions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * `./nicsim vm` guests for tests: one per command, guest i on node i of one serve, all at once, on the
 * guests' network of that serve's socket (so they reach each other as node0, node1...), each running its
 * command with --run. The modules are the ones `kernel.module` and `kernel.selftest` built.
 */
final class Guests {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", "."));

    /** A guest's run: the status of its command, its console, and how long it took from start to status. */
    record Ran(int node, int status, String console, long millis) { }

    /**
     * A busybox sh function for guest scripts that set N (this node) and P (the peer): {@code xchg BASE LINE}
     * swaps LINE with the peer's over the guests' network (nc listening on BASE+N, sending to BASE+P, retried
     * for 150 s) and prints the peer's line; its status is 1 if the peer never answered.
     */
    static final String XCHG = String.join("\n",
            "xchg() {",
            "  nc -l -p $(($1 + N)) > /tmp/got.$1 & l=$!",
            "  n=0; until echo \"$2\" | nc node$P $(($1 + P)) 2>/dev/null; do",
            "    n=$((n + 1)); [ $n -gt 150 ] && { kill $l; return 1; }; sleep 1; done",
            "  wait $l; cat /tmp/got.$1",
            "}");

    private Guests() {}

    /**
     * Boots a guest per command on {@code served}, concurrently, each stopped after {@code timeoutSeconds};
     * returns their runs in node order, once all have ended. Each console is printed as the test's output.
     */
    static List<Ran> run(Served served, Path share, int timeoutSeconds, String... commands) throws Exception {
        return run(served, share, null, timeoutSeconds, commands);
    }

    /** As {@link #run(Served, Path, int, String...)}, each guest's rdma-core given nicsim's {@code provider}. */
    static List<Ran> run(Served served, Path share, Path provider, int timeoutSeconds, String... commands)
            throws Exception {
        List<CompletableFuture<Ran>> runs = new ArrayList<>();
        for (int node = 0; node < commands.length; node++) {
            int n = node;
            VmOptions o = new VmOptions(n, commands[n], false, served.socket, share, 384, ROOT,
                    VmOptions.defaultCache(), VmOptions.defaultNetPort(served.socket), timeoutSeconds, "", null,
                    provider);
            runs.add(CompletableFuture.supplyAsync(() -> boot(n, o)));
        }
        List<Ran> ran = new ArrayList<>();
        ExecutionException failed = null;
        for (CompletableFuture<Ran> r : runs) {
            try {
                ran.add(r.get());
            } catch (ExecutionException e) {
                System.out.println("--- a guest failed: " + e.getCause().getMessage());
                if (failed == null) failed = e; // the other guests' consoles are printed before it is thrown
            }
        }
        for (Ran r : ran)
            System.out.println("--- node" + r.node() + "'s console (" + r.millis() + " ms, status " + r.status()
                    + "):\n" + r.console());
        if (failed != null) throw failed;
        return ran;
    }

    private static Ran boot(int node, VmOptions o) {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        try {
            int status = new Vm(o, new PrintStream(console, true, StandardCharsets.UTF_8), System.err).run();
            long millis = (System.nanoTime() - t0) / 1_000_000;
            return new Ran(node, status, console.toString(StandardCharsets.UTF_8), millis);
        } catch (Exception e) {
            throw new IllegalStateException("node" + node + "'s guest: " + e.getMessage() + "\n"
                    + console.toString(StandardCharsets.UTF_8), e);
        }
    }

    /** Waits (at most 10 s) until serve has logged both guests' drivers leaving: each close names its DMA maps left. */
    static void awaitBothLeft(Served served) throws InterruptedException {
        for (int i = 0; i < 100 && served.log().split(" 0 DMA maps left", -1).length < 3; i++) Thread.sleep(100);
    }

    /** Both guests' drivers broke none of the device's rules, and their removes left nothing mapped. */
    static void assertBothDriversClean(Served served) {
        assertFalse(served.log().contains("the device reports") || served.log().contains("violations"),
                "the drivers broke none of the device's rules: " + served.log());
        assertEquals(3, served.log().split(" 0 DMA maps left", -1).length,
                "both drivers' removes left nothing mapped: " + served.log());
    }

    /** What a console's line NAME=... says, or the whole console if it has none (so the failure shows it). */
    static String value(String console, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + "=(.*)$").matcher(console);
        return m.find() ? m.group(1).trim() : console;
    }

    /**
     * A ULP test's client lines (inside its shell's "if"): MIB MiB of random bytes written to DEST (a block
     * device or a file on a mount) with fsync, the page cache dropped, read back. Prints SENT and READ_BACK
     * (their md5s), WRITE (dd's status) and SECONDS (the guest's wall time for both), each dd bounded.
     */
    static String writeReadBack(String dest, int mib, int boundSeconds) {
        String bounded = "  bounded " + boundSeconds + " dd ";
        return String.join("\n",
                "  dd if=/dev/urandom of=/tmp/data bs=1048576 count=" + mib + " 2>/dev/null",
                "  echo SENT=$(md5sum < /tmp/data | cut -d' ' -f1)",
                "  t0=$(date +%s);" + bounded + "if=/tmp/data of=" + dest + " bs=1048576 conv=fsync 2>/dev/null",
                "  echo WRITE=$?",
                "  echo 3 > /proc/sys/vm/drop_caches",
                bounded + "if=" + dest + " of=/tmp/back bs=1048576 count=" + mib + " 2>/dev/null",
                "  echo READ_BACK=$(md5sum < /tmp/back | cut -d' ' -f1)",
                "  echo SECONDS=$(($(date +%s) - t0))");
    }

    /** A block target's backing file, /tmp/backing.img: 2 x MIB MiB of zeros. */
    static String makeBacking(int mib) {
        return "dd if=/dev/zero of=/tmp/backing.img bs=1048576 count=" + 2 * mib + " 2>/dev/null";
    }

    /** Prints BACKING (the md5 of the backing file's first MIB MiB) and TAIL (its bytes not zero past them). */
    static String backingSums(int mib) {
        String dd = "dd if=/tmp/backing.img bs=1048576 ";
        return String.join("\n",
                "echo BACKING=$(" + dd + "count=" + mib + " 2>/dev/null | md5sum | cut -d' ' -f1)",
                "echo TAIL=$(" + dd + "skip=" + mib + " 2>/dev/null | tr -d '\\000' | wc -c)");
    }
}
