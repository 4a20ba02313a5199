package nicsim.host;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.host.PciLink.Direction;
import org.junit.jupiter.api.Test;

/**
 * The link's two directions: on PCIe each is a wire of its own (a packet one way never waits for one the other way,
 * and waits behind the one before it its own way); on conventional PCI both share one bus. Each direction's
 * packets and bytes are counted on its own side.
 */
class PciLinkTest {
    // 8 Gb/s: a byte a nanosecond
    private static final long BYTE_PS = 1000, LATENCY = 50_000;

    private static PciLink link(boolean pcie) {
        return new PciLink(new PciLink.Config(pcie, 8_000_000_000L, pcie ? 1 : 0, pcie ? 8_000_000_000L : 0,
                24, 24, 20, 1, 256, 512, 256, LATENCY));
    }

    @Test
    void onPcieEachDirectionQueuesBehindItsOwnPacketsOnly() {
        for (Direction busy : Direction.values()) {
            Direction other = busy == Direction.UPSTREAM ? Direction.DOWNSTREAM : Direction.UPSTREAM;
            PciLink l = link(true);
            // a long packet one way, then at the same instant a short one each way
            assertEquals(1000 * BYTE_PS + LATENCY, l.send(busy, 0, 1000, 0), busy.toString());
            assertEquals(10 * BYTE_PS + LATENCY, l.send(other, 0, 10, 0), other + " beside a busy " + busy);
            assertEquals(1010 * BYTE_PS + LATENCY, l.send(busy, 0, 10, 0), busy + " behind its own");
            // the other way is busy only with its own short packet
            assertEquals(20 * BYTE_PS + LATENCY, l.send(other, 0, 10, 0), other + " behind its own");
        }
    }

    @Test
    void onPciBothDirectionsShareTheBus() {
        for (Direction first : Direction.values()) {
            Direction other = first == Direction.UPSTREAM ? Direction.DOWNSTREAM : Direction.UPSTREAM;
            PciLink l = link(false);
            assertEquals(1000 * BYTE_PS + LATENCY, l.send(first, 0, 1000, 0));
            assertEquals(1010 * BYTE_PS + LATENCY, l.send(other, 0, 10, 0), other + " waits for the bus");
        }
    }

    @Test
    void eachDirectionCountsItsOwnPackets() {
        PciLink l = link(true);
        l.send(Direction.DOWNSTREAM, 0, 100, 20);
        l.send(Direction.UPSTREAM, 0, 64, 24);
        l.send(Direction.UPSTREAM, 0, 64, 24);
        assertEquals(1, l.packets(Direction.DOWNSTREAM));
        assertEquals(120, l.wireBytes(Direction.DOWNSTREAM));
        assertEquals(100, l.payloadBytes(Direction.DOWNSTREAM));
        assertEquals(2, l.packets(Direction.UPSTREAM));
        assertEquals(176, l.wireBytes(Direction.UPSTREAM));
        assertEquals(128.0 / 176, l.efficiency(Direction.UPSTREAM));
    }
}
