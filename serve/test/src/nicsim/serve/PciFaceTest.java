package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.driver.DeviceHeader;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
            assertTrue(out.contains("interrupt: the CQ's vector 1 at"), "the armed CQ raised its MSI-X vector: " + out);
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
        assertEquals(DeviceHeader.render(), Files.readString(include.resolve("device.h")),
                "libnicsim/include/nicsim/device.h: rewrite it with "
                        + "./mill host-driver.runMain nicsim.driver.DeviceHeader");
        // wire.h: WireLayoutTest
    }

    @Test
    void pingpongRunsTwoAdaptersFromOneDriverThroughLibnicsimsQueues() throws Exception {
        Served s = new Served("nicsim-pci-pingpong").start(Served.cluster());
        try {
            var run = Programs.start(s, 0, false, example("pingpong").toString(), "200", "64");
            assertEquals(0, run.await(120), run.output() + "\n" + s.log());
            assertTrue(run.output().contains("200 messages of 64 bytes, each checked: intact"), run.output());
            Matcher m = Pattern.compile("one way, mean: ([0-9.]+) us simulated").matcher(run.output());
            assertTrue(m.find(), run.output());
            double us = Double.parseDouble(m.group(1));
            assertTrue(us > 1 && us < 5, "a SEND one way over the simulated EDR fabric: " + us + " us");
            assertEquals(2, s.log().split("closed its PCI function", -1).length - 1, "both nodes closed: " + s.log());
        } finally {
            assertTrue(s.stop());
        }
    }

    @Test
    void theCDriversLatencyIsTheJavaDriversForTheSameWqes() throws Exception {
        // 8-byte SENDs inline in one WQEBB, BlueFlame, one CQE each side: what ib_send_lat does through either driver
        String pp = example("pingpong").toString();
        double c = Double.parseDouble(figure("one way, mean: ([0-9.]+) us", pp, "300", "8"));
        Result r = Workloads.run("send_lat", Served.cluster(),
                Options.defaults().with(set -> set.iters(300).size(8)), new PrintStream(
                        OutputStream.nullOutputStream()));
        double j = r.rows().get(0).latAvgUs();
        assertTrue(Math.abs(c - j) / j < 0.10, "C driver " + c + " us one way, Java driver " + j + " us");
    }

    /** What {@code example}'s line matching {@code figure} says, run on a serve of its own. */
    private static String figure(String figure, String... example) throws Exception {
        Served s = new Served("nicsim-pci-again").start(Served.cluster());
        try {
            var run = Programs.start(s, 0, false, example);
            assertEquals(0, run.await(120), run.output());
            Matcher m = Pattern.compile(figure).matcher(run.output());
            assertTrue(m.find(), run.output());
            return m.group(1);
        } finally {
            assertTrue(s.stop());
        }
    }

    @Test
    void aDriversRunRepeatsToThePicosecond() throws Exception {
        String arrival = "bytes at ([0-9.]+) us simulated", raw = example("raw-send").toString();
        assertEquals(figure(arrival, raw), figure(arrival, raw), "the same driver, the same simulated times");
        // two adapters from one process: a doorbell to one, then a wait on the other, must keep their order
        String oneWay = "one way, mean: ([0-9.]+) us", pp = example("pingpong").toString();
        assertEquals(figure(oneWay, pp, "300", "64"), figure(oneWay, pp, "300", "64"));
    }

    /**
     * A driver's doorbells travel in the posted-write ring it shares with the device, not as a message
     * each on its socket, and land at the same simulated moments: the same pingpong gives the same
     * one-way time with its writes on the socket (NICSIM_POSTED=socket), where every write is a request.
     */
    @Test
    void postedWritesInSharedMemoryLandAsTheSocketsDo() throws Exception {
        String oneWay = "one way, mean: ([0-9.]+) us", pp = example("pingpong").toString();
        Pattern summary = Pattern.compile("closed its PCI function on node 0: (\\d+) requests, (\\d+) MMIO writes");
        long[] ring = new long[2], socket = new long[2];
        String viaRing = logged(oneWay, summary, ring, pp, "300", "64");
        String viaSocket = logged(oneWay, summary, socket, "env", "NICSIM_POSTED=socket", pp, "300", "64");
        assertEquals(viaSocket, viaRing, "the same simulated one-way time either way");
        String counts = "ring: " + ring[0] + " requests, " + ring[1] + " MMIO writes; socket: " + socket[0] + ", "
                + socket[1];
        assertEquals(ring[1], socket[1], "the same MMIO writes either way: " + counts);
        assertTrue(ring[1] >= 150 && socket[0] - ring[0] >= ring[1] * 9 / 10, "most writes left the socket: " + counts);
    }

    /** As {@link #figure}; {@code counts} gets the two numbers {@code summary} finds in serve's log. */
    private static String logged(String figure, Pattern summary, long[] counts, String... example) throws Exception {
        Served s = new Served("nicsim-pci-posted").start(Served.cluster());
        Matcher m;
        try {
            var run = Programs.start(s, 0, false, example);
            assertEquals(0, run.await(120), run.output());
            m = Pattern.compile(figure).matcher(run.output());
            assertTrue(m.find(), run.output());
        } finally {
            assertTrue(s.stop());
        }
        Matcher c = summary.matcher(s.log());
        assertTrue(c.find(), s.log());
        counts[0] = Long.parseLong(c.group(1));
        counts[1] = Long.parseLong(c.group(2));
        return m.group(1);
    }

    /** tests' broken.c, built against libnicsim as a driver developer builds: warning-free. */
    private static Path broken() throws Exception {
        Path include = Path.of(System.getProperty("nicsim.root", "."), "libnicsim", "include");
        return Programs.compile("drivers", "broken", List.of(), "-I" + include, example("libnicsim.a").toString())
                .resolve("broken");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "doorbell-no-queue | the device reports at [0-9.]+ us: BAD_QUEUE at \\+0x[0-9a-f]+800 value "
                    + "0x027777000a000000",
            "no-register       | the device reports at [0-9.]+ us: MMIO write of 4 bytes at BAR0\\+0x60: no such "
                    + "initialization register",
            "past-bar          | the device reports at [0-9.]+ us: MMIO write refused: EINVAL: BAR0 offset 0x2000040: "
                    + "BAR0 is 0x2000000 bytes",
            "arm-no-cq         | the device reports at [0-9.]+ us: BAD_QUEUE at \\+0x[0-9a-f]+020 value "
                    + "0x3700000000000000",
            "dma-unmapped      | the device reports at [0-9.]+ us: DMA read of 8 bytes at 0x[0-9a-f]+: not memory "
                    + "the driver mapped \\(an IOMMU fault\\)",
            "destroyed-qp      | the device reports at [0-9.]+ us: BAD_QUEUE at \\+0x[0-9a-f]+800 value "
                    + "0x02[0-9a-f]{6}0a000000",
            "cq-overrun        | the device reports at [0-9.]+ us: CQ 0x1 overrun: a completion found the ring full",
            "ci-past-pi        | the device reports at [0-9.]+ us: MALFORMED_CQ_DBREC on cqn 0x1: the doorbell "
                    + "record's consumer index \\(at 0x[0-9a-f]+\\) is 0x64, but 0x2 CQEs are written and 0x0 consumed",
            "left-up           | it left the adapter up \\(no TEARDOWN_HCA\\)",
            "destroyed-cq      | the device reports at [0-9.]+ us: BAD_QUEUE at \\+0x[0-9a-f]+020 value 0x[0-9a-f]{16}",
            "destroyed-mr      | the device reports at [0-9.]+ us: DESTROYED_MKEY: lkey 0x[0-9a-f]+ of WQE 0 on qpn "
                    + "0x[0-9a-f]+ was destroyed at [0-9.]+ us",
            "bad-ds            | the device reports at [0-9.]+ us: BAD_DS on qpn 0x[0-9a-f]+ at WQEBB 0 \\(ctrl "
                    + "0x[0-9a-f]+: opcode 0x0a index 0 qpn 0x[0-9a-f]+ ds 0\\)",
            "bad-opcode        | the device reports at [0-9.]+ us: BAD_OPCODE on qpn 0x[0-9a-f]+ at WQEBB 0 \\(ctrl "
                    + "0x[0-9a-f]+: opcode 0x1f index 0",
            "stale-dbrec       | the device reports at [0-9.]+ us: STALE_DBREC on qpn 0x[0-9a-f]+: "
                    + "a doorbell announces producer 0x1 but the doorbell record's send counter "
                    + "\\(at 0x[0-9a-f]+\\) is 0x0",
            "bad-command       | the device reports at [0-9.]+ us: CREATE_CQ refused: BAD_PARAM, syndrome BAD_VECTOR "
                    + "\\(MSI-X vector out of range\\), value 0x3e7",
            "ring-early        | the device reports at [0-9.]+ us: BAD_DS on qpn 0x[0-9a-f]+ at WQEBB 0 \\(ctrl "
                    + "0x0{16}: .*\\): nothing is written there \\(was the doorbell rung before the WQE.s bytes\\?\\)"})
    void theDeviceTellsADriverWhatItDidWrong(String bug, String report) throws Exception {
        Served s = new Served("nicsim-pci-broken").start(Served.cluster());
        try {
            var run = Programs.start(s, 0, false, broken().toString(), bug);
            assertEquals(0, run.await(60), run.output() + "\n" + s.log());
        } finally {
            assertTrue(s.stop());
        }
        assertTrue(Pattern.compile(report).matcher(s.log()).find(), report + " in:\n" + s.log());
    }

    @Test
    void strictStopsTheDriverAtItsFirstViolation() throws Exception {
        Served s = new Served("nicsim-pci-strict").start(Served.cluster());
        s.server.strict(true);
        try {
            var run = Programs.start(s, 0, false, broken().toString(), "no-register");
            assertEquals(3, run.await(60), "its wait after the mistake fails: " + run.output() + "\n" + s.log());
        } finally {
            assertTrue(s.stop());
        }
        List<String> lines = s.log().lines().toList();
        int report = -1, stop = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("no such initialization register")) report = i;
            if (lines.get(i).contains("was stopped at its first violation (--strict)")) stop = i;
        }
        assertTrue(report >= 0 && stop == report + 1, "the report, then the stop:\n" + s.log());
    }
}
