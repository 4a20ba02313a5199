package nicsim.sim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CountersTest {
    @Test
    void eachNodeCountsUnderItsPathAndTheTopReadsTotals() {
        Counters top = new Counters();
        Counters n0 = top.scope("node0"), n1 = top.scope("node1");
        n0.counter("Firmware.packets_in").add(3);
        n1.ref("Firmware.packets_in").add(4);
        top.counter("Fabric.packets").add(7);
        n1.ref("Firmware.never"); // a handle that never counts does not appear
        assertEquals(7, top.get("Firmware.packets_in"));
        assertEquals(3, n0.get("Firmware.packets_in"));
        assertEquals(4, top.scope("node1").get("Firmware.packets_in"));
        assertEquals(0, n0.get("Fabric.packets"));
        assertEquals(Map.of("Fabric.packets", 7L, "Firmware.packets_in", 7L), top.snapshot());
        assertEquals(Map.of("Firmware.packets_in", 4L), n1.snapshot()); // no "Firmware.never"
        assertEquals(List.of("", "node0", "node1"), List.copyOf(top.scopes()));
    }

    @Test
    void blocksCountUnderTheNodeTheirClockBelongsTo() {
        Simulator sim = new Simulator();
        sim.clockDomain("node3.core", 1000).counters().counter("X.y").inc();
        sim.clockDomain("node3.dma0", 1000).counters().counter("X.y").inc();
        sim.clockDomain("core", 1000).counters().counter("X.y").inc();
        assertEquals(2, sim.counters().scope("node3").get("X.y"));
        assertEquals(3, sim.counters().get("X.y"));
    }
}
