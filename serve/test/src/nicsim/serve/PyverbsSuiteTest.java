package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * rdma-core's own test suite (pyverbs' tests, as Debian's python3-pyverbs ships them) run
 * unchanged on a simulated adapter: every test passes, or is skipped for a reason docs/attach.md
 * lists (a feature nicsim's device does not have, each in the suite's own words). Through either of
 * the provider's drivers: the Java driver's, and the C driver's on libnicsim.
 */
class PyverbsSuiteTest {
    private static final Path SUITE = Path.of("/usr/share/doc/rdma-core/tests");
    /** Tests of the suite that pass on nicsim today (rdma-core 44's, Debian 12). */
    private static final int PASSING = 129;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void rdmaCoresTestsPassOrSkipForListedReasons(boolean cDriver) throws Exception {
        Assumptions.assumeTrue(Files.isRegularFile(SUITE.resolve("run_tests.py")),
                "python3-pyverbs is installed (ensure-tools --rdma)");
        Path dir = Files.createTempDirectory("nicsim-pyverbs").resolve("tests");
        Files.createDirectories(dir);
        try (var files = Files.list(SUITE)) { // the suite as Debian ships it, its longer files gzipped
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".gz"))
                    try (var in = new GZIPInputStream(Files.newInputStream(f))) {
                        Files.copy(in, dir.resolve(name.substring(0, name.length() - 3)));
                    }
                else Files.copy(f, dir.resolve(name));
            }
        }
        Served served = new Served("nicsim-pyverbs").start(Served.cluster());
        String out;
        try {
            Run r = Programs.start(served, 0, false, Programs.withDriver(cDriver, "/usr/bin/python3",
                    dir.resolve("run_tests.py").toString(), "--dev", "nicsim0", "-v"));
            r.await(600);
            out = r.output();
            assertEquals(cDriver, served.log().contains("as a user context"), served.log());
        } finally {
            served.stop();
        }
        List<String> reasons = allowedSkips();
        List<String> bad = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^(.*?) \\.\\.\\. (ok|FAIL|ERROR|skipped (.*))$").matcher(out);
        int ok = 0, skipped = 0;
        while (m.find()) {
            if (m.group(2).equals("ok")) { ok++; continue; }
            if (m.group(3) == null) { bad.add(m.group(1) + ": " + m.group(2)); continue; }
            skipped++;
            String why = m.group(3);
            if (reasons.stream().noneMatch(why::contains))
                bad.add(m.group(1) + ": skipped for a reason docs/attach.md does not list: " + why);
        }
        assertTrue(bad.isEmpty(), String.join("\n", bad) + "\n--- output:\n" + out + "\n--- serve:\n" + served.log());
        assertTrue(out.contains("\nOK"), out);
        // as many pass as did when the last feature landed: a test that starts skipping for a listed reason is caught
        // too
        assertTrue(ok >= PASSING, ok + " tests passed (" + PASSING + " before), " + skipped + " skipped:\n" + out);
    }

    /** The skip reasons docs/attach.md's table of rdma-core's tests gives, each in backquotes. */
    private static List<String> allowedSkips() throws Exception {
        String doc = Files.readString(Path.of(System.getProperty("nicsim.root", "."), "docs", "attach.md"));
        String table = doc.substring(doc.indexOf("## rdma-core's own tests"), doc.indexOf("## What a verb costs"));
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^\\| `([^`]+)` \\|").matcher(table);
        while (m.find()) out.add(m.group(1));
        assertFalse(out.isEmpty(), "docs/attach.md lists the suite's skips");
        return out;
    }
}
