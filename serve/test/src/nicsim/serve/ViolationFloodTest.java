package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.adapter.Problems;
import nicsim.driver.World;
import nicsim.serve.Transport.Connection;
import org.junit.jupiter.api.Test;

/**
 * A driver killed while its queues run leaves the adapter reading zeros where its memory was: a receive queue
 * flushed against a producer counter of 0 completes some 65,000 WQEs into a CQ whose consumer index reads 0, and
 * every completion after the overrun is a violation. ChaosTest (seed 57, iteration 11, a C rping killed in setup)
 * saw serve still hold the program 30 s after it died: closing its user context told those violations, each with a
 * fresh copy of the adapter's whole list of problems, while the ends of its other connections waited behind; and
 * the log had a line for each.
 */
class ViolationFloodTest {
    static final int PROBLEMS = 200_000;

    @Test
    void aDriverWhoseAdapterReportedAFloodIsReleasedPromptlyAndTheLogStaysShort() throws Exception {
        World w = Served.cluster();
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        List<Program> left = new ArrayList<>();
        PciFace pci = new PciFace(w, new PrintStream(log, true), left::add);
        pci.resetNode = old -> w.reset(old.index);
        Connection c = new Transport(System.err).replayed(1);
        int pid = (int) ProcessHandle.current().pid(); // its memory is this JVM's, which /proc lets it read
        Program[] p = new Program[1];
        pci.open(c, openRequest(pid), (id, name) -> p[0] = new Program(id, name), false);
        assertEquals(1, pci.open());

        var adapter = w.host(0).adapter;
        adapter.report("CQ 0x2 overrun: a completion found the ring full; the CQ is in error from now on");
        for (int i = 1; i < PROBLEMS; i++) adapter.report("CQ 0x2 a completion dropped: the CQ is in error");
        long t0 = System.nanoTime();
        pci.closed(c, "closed its PCI function");
        long millis = (System.nanoTime() - t0) / 1_000_000;

        String text = log.toString(StandardCharsets.UTF_8);
        assertTrue(millis < 10_000, "closing took " + millis + " ms");
        assertEquals(0, pci.open(), "its function is let go");
        assertEquals(List.of(p[0]), left, "its program is told once that a function of it closed");
        assertTrue(p[0].detached(), "nothing of it is left attached");
        assertTrue(text.contains("the device reports at 0.000 us: CQ 0x2 overrun"), text);
        // the adapter kept the first and the last KEPT reports: the run is told on either side of those not kept
        String dropped = "CQ 0x2 a completion dropped: the CQ is in error (";
        assertTrue(text.contains(dropped + (Problems.KEPT - 1) + " times in a row, the last at 0.000 us)"), text);
        assertTrue(text.contains(String.format("the device reports %,d problems more, not kept (an adapter keeps "
                + "the first and last %d reports)", PROBLEMS - 2 * Problems.KEPT, Problems.KEPT)), text);
        assertTrue(text.contains(dropped + Problems.KEPT + " times in a row, the last at 0.000 us)"), text);
        assertEquals(4, text.lines().filter(l -> l.contains("the device reports")).count(), "a line a run:\n" + text);
        assertTrue(text.contains(PROBLEMS + " violations"), "the summary counts each: " + text);
    }

    /** PCI_OPEN's body for node 0, process {@code pid}, socket 3, no flags. */
    static Wire.In openRequest(int pid) {
        ByteBuffer b = new Wire.Out(new WireLayout.PciOpenRequest(Wire.VERSION, 0, pid, 3)).string("flood")
                .put(new WireLayout.OpenArgument(0)).finish(0);
        byte[] all = new byte[b.remaining()];
        b.get(all);
        return new Wire.In(Arrays.copyOfRange(all, 8, all.length)); // after the length and op
    }
}
