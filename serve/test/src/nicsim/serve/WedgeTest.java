package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No program wedges serve: a QP that retries for ever (RNR NAK with rnr_retry 7) leaves other
 * programs answered, the watchdog names it, and SIGTERM stops serve within seconds, printing what
 * ran.
 */
class WedgeTest {
    /** Through either of the provider's drivers. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aLivelockedQpLeavesOthersAnsweredAndTheWatchdogNamesIt(boolean cDriver) throws Exception {
        Served served = new Served("wedge").start(Served.cluster(), 2_000_000_000L); // 2 ms of simulated retries
        Path spin = Programs.compile("serve", "livelock", List.of(), "-libverbs");
        Path conf = Programs.compile("conformance", "device", List.of("conf.h"), "-libverbs");
        Programs.Run stuck = Programs.start(served, 0, false, Programs.withDriver(cDriver,
                spin.resolve("livelock").toString()));
        try {
            String qpn = Programs.waitFor(stuck::output, Programs.SPINNING, 60);
            Programs.Run other = Programs.start(served, 1, false, conf.resolve("device").toString());
            assertEquals(0, other.await(60), "another program is answered while the QP retries:\n" + other.output());
            String named = Programs.waitFor(served::log,
                    Pattern.compile("watchdog: livelock \\(pid \\d+\\)'s QP (" + qpn + ") on node 0"), 60);
            assertEquals(qpn, named);
            assertTrue(stuck.process().isAlive(), "the QP goes on retrying as the program asked:\n" + stuck.output());
        } finally {
            stuck.process().destroyForcibly();
            assertTrue(served.stop(), "serve stopped");
        }
    }

    /**
     * 100,000 random verbs with random arguments from one C program: no crash, no hang, every refusal an
     * errno; serve goes on. Through either of the provider's drivers: through the C driver the random
     * arguments reach the device's commands themselves, which refuse them (a QP state of 7 once crashed
     * the model).
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aHundredThousandRandomVerbsAreAnsweredOrRefusedWithAnErrno(boolean cDriver) throws Exception {
        Served served = new Served("fuzz").start(Served.cluster());
        try {
            Programs.Run fuzz = Programs.start(served, 0, false, Programs.withDriver(cDriver,
                    ProviderBuild.get().resolve(ProviderBuild.FUZZ).toString(), "100000", "7"));
            assertEquals(0, fuzz.await(600), fuzz.output());
            assertTrue(fuzz.output().contains("fuzz: 100000 verbs"), fuzz.output());
            assertTrue(fuzz.output().contains(", 0 bad"), fuzz.output());
            Path conf = Programs.compile("conformance", "device", List.of("conf.h"), "-libverbs");
            Programs.Run after = Programs.start(served, 0, false, Programs.withDriver(cDriver,
                    conf.resolve("device").toString()));
            assertEquals(0, after.await(60), "serve still answers as it should:\n" + after.output());
            assertFalse(served.log().contains("Exception"),
                    served.log().lines().filter(l -> l.contains("Exception")).findFirst().orElse(""));
            assertEquals(cDriver, served.log().contains("as a user context"), served.log());
        } finally {
            assertTrue(served.stop(), "serve stopped");
        }
    }
}
