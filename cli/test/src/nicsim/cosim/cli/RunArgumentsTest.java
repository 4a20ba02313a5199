package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import org.junit.jupiter.api.Test;

/** What `nicsim run` answers to numbers out of range: exit 2 and one line naming the option and its value, no run. */
class RunArgumentsTest {
    /** Runs the command line; returns its exit code, then what it printed on stdout and on stderr. */
    private static String[] run(String... args) {
        PrintStream out = System.out, err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream(), e = new ByteArrayOutputStream();
        System.setOut(new PrintStream(o, true));
        System.setErr(new PrintStream(e, true));
        int rc;
        try { rc = Main.run(args); } finally { System.setOut(out); System.setErr(err); }
        return new String[]{Integer.toString(rc), o.toString(), e.toString()};
    }

    private static void refused(String option, String value, String range) {
        String[] r = run("run", "write_bw", option, value);
        String all = String.join("\n", r);
        assertEquals("2", r[0], all);
        assertTrue(r[2].contains(option + " " + value + " must be " + range), all);
        assertFalse(r[1].contains("=== write_bw"), "nothing ran: " + all); // 0 is not "the default"
    }

    @Test
    void zeroSizeAndZeroIterationsAreRefusedNotTakenAsTheDefaults() {
        refused("--size", "0", "1..8388608");
        refused("--iters", "0", "1..10000000");
    }

    @Test
    void negativeAndTooLargeValuesAreRefusedTheSameWay() {
        refused("--size", "-5", "1..8388608");
        refused("--size", "8388609", "1..8388608");
        refused("--iters", "-1", "1..10000000");
        refused("--iters", "10000001", "1..10000000");
        refused("--qps", "0", "1..10000");
        refused("--mrs", "0", "1..100000");
        refused("--tx-depth", "0", "1..4096");
        refused("--nodes", "0", "2..1024");
        refused("--threads", "0", "1..1024");
    }

    @Test
    void theSmallestValuesRunWhatTheyAskFor() {
        String[] r = run("run", "write_bw", "--size", "1", "--iters", "1");
        String all = String.join("\n", r);
        assertEquals("0", r[0], all);
        assertTrue(r[1].contains("write_bw: data and completions checked: OK"), all);
        // perftest's row: 1 byte, 1 iteration, as asked (not the test's own 65536 B x 5000)
        assertTrue(r[1].lines().anyMatch(l -> l.matches(" 1 +1 +.*")), all);
    }
}
