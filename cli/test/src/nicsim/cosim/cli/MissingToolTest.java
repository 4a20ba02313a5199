package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a machine without Verilator (played by an empty PATH for the tool lookup), every command that
 * needs RTL says in one line which tool is missing and how to install it, and exits 2: no stack
 * trace, and no model run first that the missing tool then throws away.
 */
class MissingToolTest {
    @AfterEach
    void restorePath() { System.clearProperty("nicsim.tools.path"); }

    private static String[] runWithoutTools(Path emptyDir, String... args) {
        System.setProperty("nicsim.tools.path", emptyDir.toString());
        PrintStream oldErr = System.err, oldOut = System.out;
        ByteArrayOutputStream err = new ByteArrayOutputStream(), out = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err));
        System.setOut(new PrintStream(out));
        int rc;
        try { rc = Main.run(args); } finally { System.setErr(oldErr); System.setOut(oldOut); }
        return new String[]{Integer.toString(rc), err.toString(), out.toString()};
    }

    private static void assertOneLineNamingVerilator(String[] r) {
        assertEquals("2", r[0], r[1]);
        String err = r[1].strip();
        assertFalse(err.contains("\n"), "one line, got:\n" + err);
        assertFalse(err.contains("Exception") || err.contains("\tat "), err);
        assertTrue(err.contains("verilator") && err.contains("apt-get install -y")
                && err.contains("ensure-tools.sh --rtl"), err);
    }

    @Test
    void runWithRtlInTheLoopNamesTheMissingToolBeforeAnyWork(@TempDir Path empty) {
        String[] r = runWithoutTools(empty, "run", "rc_pingpong", "--rtl", "all");
        assertOneLineNamingVerilator(r);
        assertFalse(r[2].contains("the Java model alone"), "the model run must not start first:\n" + r[2]);
    }

    @Test
    void cosimNamesTheMissingTool(@TempDir Path empty) {
        assertOneLineNamingVerilator(runWithoutTools(empty, "cosim", "doorbell", "--cycles", "100"));
    }

    @Test
    void aRunWithoutRtlDoesNotNeedTheTools(@TempDir Path empty) {
        String[] r = runWithoutTools(empty, "run", "rc_pingpong", "--iters", "2", "--size", "64");
        assertEquals("0", r[0], r[1] + r[2]);
    }
}
