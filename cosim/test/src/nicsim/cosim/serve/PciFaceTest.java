package nicsim.cosim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The adapter as a PCI function for C drivers: libnicsim (built by Mill) brings it up through its
 * registers and commands and moves a message with WQEs and CQEs of its own (examples/raw-send.c);
 * a node the Java driver holds is refused; the C headers are what the ABI code makes.
 */
class PciFaceTest {
    private static Path example(String name) {
        String dir = System.getProperty("nicsim.libnicsim");
        assertNotNull(dir, "nicsim.libnicsim: where Mill built libnicsim (build.sc passes it to cosim's tests)");
        return Path.of(dir, name);
    }

    @Test
    void rawSendMovesAMessageThroughADriverOfItsOwn() throws Exception {
        Served s = new Served("nicsim-pci").start(Served.cluster());
        try {
            var run = Programs.start(s, 0, false, example("raw-send").toString(), "bytes across the PCI face");
            int status = run.await(60);
            String out = run.output();
            assertEquals(0, status, out + "\n" + s.log());
            assertTrue(out.contains("received \"bytes across the PCI face\": intact"), out);
            assertTrue(out.contains("send completion: yes; receive completion: yes, 26 bytes"), out);
            var c = s.world.sim.counters();
            assertTrue(c.get("Firmware.packets_out") >= 2, "the SEND and its ACK crossed the fabric: " + c.snapshot());
            assertTrue(s.log().contains("opened node 0's adapter as a PCI function"), s.log());
            // it destroyed what it made and took the adapter down: a second driver brings it up again
            var again = Programs.start(s, 0, false, example("raw-send").toString(), "once more");
            assertEquals(0, again.await(60), again.output() + "\n" + s.log());
            assertTrue(again.output().contains("received \"once more\": intact"), again.output());
            assertFalse(s.log().contains("left the adapter up"), s.log());
        } finally {
            assertTrue(s.stop());
        }
        assertTrue(s.log().matches("(?s).*raw-send \\(pid \\d+\\) closed its PCI function on node 0: \\d+ requests.*"),
                s.log());
    }

    @Test
    void aNodeTheJavaDriverHoldsIsRefused() throws Exception {
        var w = Served.cluster();
        w.host(1).driver(); // probed by the Java driver, as a libibverbs program's context would
        Served s = new Served("nicsim-pci-busy").start(w);
        try {
            var run = Programs.start(s, 1, false, example("raw-send").toString());
            assertEquals(1, run.await(60));
            assertTrue(run.output().contains("bringing the adapter up: Device or resource busy"), run.output());
            assertTrue(s.log().contains("driven by the Java driver already"), s.log());
        } finally {
            assertTrue(s.stop());
        }
    }

    @Test
    void theCHeadersAreTheAbiCodes() throws Exception {
        Path include = Path.of(System.getProperty("nicsim.root", "."), "libnicsim", "include", "nicsim");
        assertEquals(nicsim.driver.DeviceHeader.render(), Files.readString(include.resolve("device.h")),
                "libnicsim/include/nicsim/device.h: rewrite it with "
                        + "./mill host-driver.runMain nicsim.driver.DeviceHeader");
        assertEquals(Wire.cHeader(), Files.readString(include.resolve("wire.h")),
                "libnicsim/include/nicsim/wire.h: rewrite it with ./mill cosim.runMain nicsim.cosim.serve.Wire");
    }
}
