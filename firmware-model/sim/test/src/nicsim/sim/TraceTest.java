package nicsim.sim;

import static org.junit.jupiter.api.Assertions.*;

import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class TraceTest {
    @Test
    void onlyEnabledBlocksAreRecordedWithSimulatedTimeAndExportedAsCsv() throws Exception {
        Simulator sim = new Simulator();
        sim.trace().enable("WqeFetcher");
        sim.schedule(1_000, () -> sim.trace().record("WqeFetcher", "wqe#1", "fetch_issued", "qpn 0x12, 8 WQEBBs"));
        sim.schedule(2_500, () -> sim.trace().record("DmaEngine", "dma#1", "issued", "not traced"));
        sim.schedule(3_000, () -> sim.trace().record("WqeFetcher", "wqe#1", "fetch_done", "ok, \"checked\""));
        sim.runUntilIdle();
        assertEquals(2, sim.trace().entries().size());
        assertEquals(3_000, sim.trace().entries("wqe#1").get(1).timePicos());
        StringWriter w = new StringWriter();
        sim.trace().writeCsv(w);
        assertEquals("time_ps,block,txn,stage,detail\n"
                + "1000,WqeFetcher,wqe#1,fetch_issued,\"qpn 0x12, 8 WQEBBs\"\n"
                + "3000,WqeFetcher,wqe#1,fetch_done,\"ok, \"\"checked\"\"\"\n", w.toString());
    }

    @Test
    void countersAreSortedAndFilterable() {
        Counters c = new Counters();
        c.counter("b.two").add(2);
        c.counter("a.one").inc();
        c.counter("b.three").add(3);
        assertEquals(List.of("a.one", "b.three", "b.two"), List.copyOf(c.snapshot().keySet()));
        assertEquals(2, c.snapshot("b.").size());
        assertEquals(0, c.get("missing"));
    }
}
