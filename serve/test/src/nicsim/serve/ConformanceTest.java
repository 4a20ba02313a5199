package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.List;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The conformance programs (test resources nicsim/conformance): one C program per verb family,
 * written from libibverbs' man pages and the kernel's qp_state_table, error cases included, run
 * unchanged through attach on one simulated node (rdmacm: librdmacm, from its man pages). Each prints a line
 * per check; every one must say "ok".
 */
class ConformanceTest {
    private static Served served;

    @BeforeAll
    static void serve() throws Exception { served = new Served("nicsim-conformance").start(Served.cluster()); }

    @AfterAll
    static void stopServing() throws Exception { served.stop(); }

    @ParameterizedTest
    @ValueSource(strings = {"device", "pd", "mr", "cq", "cq-events", "qp", "qp-ex", "atomic", "odp", "mw", "dm",
            "domain", "srq", "xrc", "import", "rdmacm"})
    void family(String family) throws Exception {
        Path dir = Programs.compile("conformance", family, List.of("conf.h"), "-libverbs", "-lrdmacm", "-lpthread");
        Run r = Programs.start(served, 0, false, dir.resolve(family).toString());
        int status = r.await(300);
        String out = r.output();
        List<String> failed = out.lines().filter(l -> l.startsWith("not ok")).toList();
        assertTrue(failed.isEmpty(), family + ": " + failed.size() + " checks failed:\n" + String.join("\n", failed)
                + "\n--- serve:\n" + served.log());
        assertEquals(0, status, out);
        assertTrue(out.lines().anyMatch(l -> l.matches("# \\d+ checks, 0 failed")), out);
    }
}
