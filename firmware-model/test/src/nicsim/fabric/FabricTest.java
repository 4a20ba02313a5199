package nicsim.fabric;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

class FabricTest {
    static Packet pkt(int from, int to, int psn, int bytes) {
        return new Packet(from, to, Packet.Op.SEND_ONLY, 1, 1, psn, false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, new byte[bytes], Packet.RC);
    }

    /** When a lone 4 KiB packet from port 1 is whole at port 2, under {@code forwarding}; and its serialization time. */
    static long[] oneHop(Profile p) {
        Simulator sim = new Simulator();
        Fabric f = new Fabric(sim, p, Faults.NONE, 1);
        List<Long> at = new ArrayList<>();
        f.attach(x -> {});
        f.attach(x -> at.add(sim.now()));
        Packet k = pkt(1, 2, 0, 4096);
        f.send(k);
        sim.runUntilIdle();
        assertEquals(1, at.size());
        return new long[]{at.get(0), f.serialization(k.wireBytes())};
    }

    @Test
    void aStoreAndForwardHopTakesTwoSerializationsTwoPropagationsAndTheSwitch() {
        Profile p = Profiles.load("cx-gen3x16").with("switch.forwarding", "\"store-and-forward\"");
        long[] r = oneHop(p);
        assertEquals(2 * r[1] + 2 * p.picos("link.propagation") + p.picos("switch.latency"), r[0]);
        // 4096 B + LRH 8, BTH 12, ICRC 4, VCRC 2 = 4122 B at 100 Gb/s = 329.76 ns
        assertEquals(329_760, r[1]);
    }

    @Test
    void aCutThroughSwitchForwardsThePacketsHeadWhileItsTailIsStillArriving() {
        // Myrinet's wormhole routing (seed kvia-paper 4), InfiniBand's cut-through: one serialization less
        for (String profile : List.of("cx-gen3x16", "lanai43")) {
            Profile p = Profiles.load(profile);
            assertEquals("cut-through", p.text("switch.forwarding"), profile);
            long[] r = oneHop(p);
            assertEquals(r[1] + 2 * p.picos("link.propagation") + p.picos("switch.latency"), r[0], profile);
        }
    }

    @Test
    void anUnknownForwardingModeIsRefusedByName() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new Fabric(new Simulator(), Profiles.load("cx-gen3x16").with("switch.forwarding", "\"wormhole\""), Faults.NONE, 1));
        assertTrue(e.getMessage().contains("switch.forwarding 'wormhole'"), e.getMessage());
    }

    @Test
    void anIncastSharesTheDestinationsLinkAndLosesNothing() {
        Profile p = Profiles.load("cx-gen3x16");
        Simulator sim = new Simulator();
        Fabric f = new Fabric(sim, p, Faults.NONE, 1);
        List<Packet> got = new ArrayList<>();
        for (int i = 0; i < 3; i++) f.attach(x -> {});
        f.attach(got::add);
        int n = 200;
        for (int k = 0; k < n; k++) for (int s = 1; s <= 3; s++) f.send(pkt(s, 4, k, 4096));
        sim.runUntilIdle();
        assertEquals(3 * n, got.size(), "lossless");
        long ser = f.serialization(pkt(1, 4, 0, 4096).wireBytes());
        // three senders into one link: it takes three times as long as one sender alone
        assertTrue(sim.now() >= 3L * n * ser, "finished at " + sim.now());
        assertTrue(sim.counters().counter("Fabric.flow_control_waits").get() > 0, "senders were held by the switch's buffer");
        // each sender's packets stay in order
        for (int s = 1; s <= 3; s++) {
            final int src = s;
            List<Integer> psns = got.stream().filter(x -> x.slid() == src).map(Packet::psn).toList();
            for (int k = 0; k < n; k++) assertEquals(k, psns.get(k));
        }
    }

    @Test
    void faultsAreSeededAndCounted() {
        Profile p = Profiles.load("cx-gen3x16");
        long[] counts = new long[2];
        for (int run = 0; run < 2; run++) {
            Simulator sim = new Simulator();
            Fabric f = new Fabric(sim, p, Faults.parse("drop=0.1,dup=0.1,reorder=0.1,corrupt=0.05"), 42);
            List<Packet> got = new ArrayList<>();
            f.attach(x -> {});
            f.attach(got::add);
            for (int k = 0; k < 1000; k++) f.send(pkt(1, 2, k, 64));
            sim.runUntilIdle();
            counts[run] = got.size() * 1_000_000L + got.stream().mapToInt(Packet::psn).sum();
            long dropped = sim.counters().counter("Fabric.dropped").get(), corrupted = sim.counters().counter("Fabric.corrupted").get();
            long dup = sim.counters().counter("Fabric.duplicated").get();
            assertEquals(1000 - dropped - corrupted + dup, got.size());
            assertTrue(dropped > 50 && dup > 50 && corrupted > 20, dropped + " " + dup + " " + corrupted);
        }
        assertEquals(counts[0], counts[1], "the same seed gives the same packets");
        assertThrows(IllegalArgumentException.class, () -> Faults.parse("drop=1.5"));
        assertThrows(IllegalArgumentException.class, () -> Faults.parse("lose=0.1"));
    }
}
