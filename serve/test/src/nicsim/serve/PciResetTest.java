package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A function-level reset on the PCI face (docs/device.md, "Function-level reset"): a C driver writes
 * Initiate FLR in the PCI Express capability, the function answers nothing for pci.flr.time, then
 * comes back at its reset values with a fresh adapter whose INIT_HCA runs; a driver that leaves with
 * the adapter up has its function reset by serve, so the next driver brings it up.
 */
class PciResetTest {
    private static Path flr() throws Exception {
        String lib = System.getProperty("nicsim.libnicsim");
        assertNotNull(lib, "nicsim.libnicsim: where Mill built libnicsim");
        Path include = Path.of(System.getProperty("nicsim.root", "."), "libnicsim", "include");
        return Programs.compile("drivers", "flr", List.of(), "-I" + include, Path.of(lib, "libnicsim.a").toString())
                .resolve("flr");
    }

    private static String group(String regex, String text) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), regex + " in:\n" + text);
        return m.group(1);
    }

    @Test
    void anFlrClearsTheFunctionAndAFreshInitHcaRuns() throws Exception {
        String flr = flr().toString();
        Served s = new Served("nicsim-flr").start(Served.cluster());
        try {
            var run = Programs.start(s, 0, false, flr);
            assertEquals(0, run.await(60), run.output() + "\n" + s.log());
            String out = run.output();
            assertTrue(out.contains("PCIe capability at 0x50: FLR capable"), out);
            assertTrue(out.contains("during the reset: command reads 0xffffffff"), "a resetting function answers "
                    + "no config read: " + out);
            long ready = Long.parseLong(group("ready after (\\d+) us", out));
            assertTrue(ready >= 1000 && ready <= 1100, "cx-gen3x16's pci.flr.time is 1 ms: ready after " + ready
                    + " us");
            // BAR0 unassigned (its low bits say 64-bit prefetchable), memory space, bus mastering and MSI-X off
            assertTrue(out.contains("after the reset: command 0x00000000, BAR0 0x0000000c, MSI-X control 0x0000, "
                    + "device control FLR bit 0"), "config space at its reset values: " + out);
            assertTrue(out.matches("(?s).*DESTROY_CQ of CQ \\d+: status 0x5, syndrome UNKNOWN_CQ.*"),
                    "the reset adapter has no CQ: " + out);
            assertTrue(s.log().matches("(?s).*at [0-9.]+ us node 0's function was reset: flr \\(pid \\d+\\) "
                    + "initiated a function-level reset \\(FLR\\); it left the adapter up with CQs 1, PDs 1, UARs 2, "
                    + "\\d+ DMA maps; ready 1000.000 us later.*"), s.log());
        } finally {
            assertTrue(s.stop());
        }
        assertTrue(s.log().contains("the device reports at"), s.log());
        assertTrue(Pattern.compile("the device reports at [0-9.]+ us: DESTROY_CQ refused: BAD_RESOURCE, syndrome "
                + "UNKNOWN_CQ").matcher(s.log()).find(), "the sanitizer names the CQ the reset took: " + s.log());
        assertEquals(2, s.world.sim.counters().scope("node0").get("Adapter.function_resets"),
                "one FLR, then the reset as the driver left");
    }

    @Test
    void aDriverThatLeavesWithTheAdapterUpHasItsFunctionReset() throws Exception {
        String flr = flr().toString();
        Served s = new Served("nicsim-flr-leave").start(Served.cluster());
        try {
            var first = Programs.start(s, 1, false, flr, "leave");
            assertEquals(0, first.await(60), first.output() + "\n" + s.log());
            assertTrue(first.output().contains("leaving with the adapter up"), first.output());
            // its INIT_HCA would be refused ALREADY_INITIALIZED had serve not reset the function
            var second = Programs.start(s, 1, false, flr, "leave");
            assertEquals(0, second.await(60), second.output() + "\n" + s.log());
        } finally {
            assertTrue(s.stop());
        }
        assertTrue(s.log().matches("(?s).*node 1's function was reset: its driver flr \\(pid \\d+\\) left; it "
                + "left the adapter up with PDs 1, UARs 1, \\d+ DMA maps.*"), s.log());
        assertEquals(4, s.world.sim.counters().scope("node1").get("Adapter.function_resets"),
                "two FLRs and two drivers gone");
    }
}
