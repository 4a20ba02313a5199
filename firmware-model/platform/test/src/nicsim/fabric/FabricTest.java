package nicsim.fabric;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Counters;
import nicsim.sim.Simulator;
import nicsim.sim.Windows;
import org.junit.jupiter.api.Test;

class FabricTest {
    static Packet pkt(int from, int to, int psn, int bytes) {
        return new Packet(from, to, Packet.Op.SEND_ONLY, 1, 1, psn, false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                new byte[bytes], Packet.RC);
    }

    /**
     * A lone 4 KiB packet from port 1 to port 2, its sender feeding the link in {@code feed} ps: when
     * it is whole at port 2, its serialization time, when port 2 was handed it, and its arrival.
     */
    static long[] oneHop(Profile p, long feed) {
        Simulator sim = new Simulator();
        Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.NONE, 1);
        List<long[]> at = new ArrayList<>();
        f.attach(x -> {});
        f.attach(x -> at.add(new long[]{sim.now(), x.arrival().head(), x.arrival().tail(), x.arrival().length()}));
        Packet k = pkt(1, 2, 0, 4096);
        f.send(k, feed);
        sim.runUntilIdle();
        assertEquals(1, at.size());
        long[] a = at.get(0);
        long tail = a[2] + f.serialization(Packet.trailerBytes());
        return new long[]{tail, f.serialization(k.wireBytes()), a[0], a[1], a[2], a[3]};
    }

    static long[] oneHop(Profile p) { return oneHop(p, 0); }

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
        // Myrinet's wormhole routing (docs/sources.md#kvia-measurements), InfiniBand's cut-through: one serialization
        // less
        for (String profile : List.of("cx-gen3x16", "lanai43")) {
            Profile p = Profiles.load(profile);
            assertEquals("cut-through", p.text("switch.forwarding"), profile);
            long[] r = oneHop(p);
            assertEquals(r[1] + 2 * p.picos("link.propagation") + p.picos("switch.latency"), r[0], profile);
        }
    }

    @Test
    void thePortHandsThePacketOverOnceItsHeadersAreInAndThePayloadFollowsAtTheLinkRate() {
        Profile p = Profiles.load("lanai43");
        long[] r = oneHop(p);
        Fabric f = new Fabric(new Simulator(), Fabric.Config.from(p), Faults.NONE, 1);
        long firstBit = r[0] - r[1]; // the whole packet is in one serialization after its first bit
        assertEquals(firstBit + f.serialization(Packet.LRH + Packet.BTH), r[2], "handed over when LRH and BTH are in");
        assertEquals(r[2], r[3], "the payload starts right behind the headers");
        assertEquals(4096, r[5]);
        assertEquals(f.serialization(4096), r[4] - r[3], 1, "and takes its serialization time");
    }

    @Test
    void aSenderSlowerThanTheLinkStretchesThePacketOnBothLinks() {
        // a LANai 4.3's send engine moves 132 MB/s into a 160 MB/s link: the packet leaves, and arrives, at the
        // engine's pace
        Profile p = Profiles.load("lanai43");
        long[] fast = oneHop(p), slow = oneHop(p, 2 * fast[1]);
        assertEquals(fast[2], slow[2], "the head is not held back");
        assertEquals(fast[0] + fast[1], slow[0], "the tail comes one more serialization time later");
    }

    @Test
    void aStoreAndForwardPortTakesThePacketOnlyOnceItIsWhole() {
        Profile p = Profiles.load("lanai43").with("link.receive", "\"store-and-forward\"");
        Simulator sim = new Simulator();
        Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.NONE, 1);
        List<Packet> got = new ArrayList<>();
        long[] at = {-1};
        f.attach(x -> {});
        f.attach(x -> { got.add(x); at[0] = sim.now(); });
        f.send(pkt(1, 2, 0, 4096));
        sim.runUntilIdle();
        assertNull(got.get(0).arrival(), "all of it is in");
        assertEquals(oneHop(Profiles.load("lanai43"))[0], at[0], "when a cut-through port has its last bit");
    }

    @Test
    void anUnknownForwardingModeIsRefusedByName() {
        for (String key : List.of("switch.forwarding", "link.receive")) {
            var e = assertThrows(IllegalArgumentException.class,
                    () -> Fabric.Config.from(Profiles.load("cx-gen3x16").with(key, "\"wormhole\"")));
            assertEquals(key + " = \"wormhole\": must be one of \"store-and-forward\", \"cut-through\"",
                    e.getMessage());
        }
    }

    @Test
    void aBadSizeIsRefusedAsTheConfigIsMadeNamingKeyAndValue() {
        Profile p = Profiles.load("cx-gen3x16");
        var e = assertThrows(IllegalArgumentException.class, () -> Fabric.Config.from(p.with("link.mtu", "3000 B")));
        assertEquals("link.mtu = 3000 B: must be a power of two from 256 B to 4096 B", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> Fabric.Config.from(p.with("switch.port.buffer", "1 KiB")));
        assertEquals("switch.port.buffer = 1024 B: must be at least one MTU packet (4160 B)", e.getMessage());
    }

    @Test
    void anIncastSharesTheDestinationsLinkAndLosesNothing() {
        Profile p = Profiles.load("cx-gen3x16");
        Simulator sim = new Simulator();
        Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.NONE, 1);
        List<Packet> got = new ArrayList<>();
        for (int i = 0; i < 3; i++) f.attach(x -> {});
        f.attach(got::add);
        int n = 200;
        for (int k = 0; k < n; k++) for (int s = 1; s <= 3; s++) f.send(pkt(s, 4, k, 4096));
        sim.runUntilIdle();
        assertEquals(3 * n, got.size(), "lossless");
        long ser = f.serialization(pkt(1, 4, 0, 4096).wireBytes());
        // three senders into one link: it takes three times as long as one sender alone
        long end = got.get(got.size() - 1).arrival().tail();
        assertTrue(end >= 3L * n * ser, "finished at " + end);
        assertTrue(sim.counters().get("Fabric.flow_control_waits") > 0, "senders were held by the switch's buffer");
        // each sender's packets stay in order
        for (int s = 1; s <= 3; s++) {
            final int src = s;
            List<Integer> psns = got.stream().filter(x -> x.slid() == src).map(Packet::psn).toList();
            for (int k = 0; k < n; k++) assertEquals(k, psns.get(k));
        }
    }

    @Test
    void aLinkCutAfterAPacketsHeadCameInStillDeliversItAndDropsWhatComesLater() {
        // the switch takes a packet as its head comes in: the destination's link going down while the head crosses
        // the switch loses only what comes in after
        Profile p = Profiles.load("cx-gen3x16");
        Simulator sim = new Simulator();
        Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.NONE, 1);
        List<Long> at = new ArrayList<>();
        f.attach(x -> {});
        f.attach(x -> at.add(sim.now()));
        f.send(pkt(1, 2, 0, 64));
        long headIn = p.picos("link.propagation"), cut = headIn + p.picos("switch.latency") / 2;
        sim.runUntil(cut);
        assertTrue(f.link(2, false));
        f.send(pkt(1, 2, 1, 64));
        sim.runUntilIdle();
        assertEquals(1, at.size(), "the packet in before the cut is delivered, the one after is lost");
        assertEquals(1, sim.counters().get("Fabric.link_down_drops"));
        assertEquals(2, sim.counters().get("Fabric.packets"));
    }

    @Test
    void aSenderLearnsOfTheSwitchsFreedBufferOnlyWhenTheCreditsHaveCrossedTheLink() {
        // room for one packet in the switch's input buffer: the second waits for the first's credits
        Profile p = Profiles.load("cx-gen3x16").with("switch.port.buffer", "4160 B");
        Simulator sim = new Simulator();
        Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.NONE, 1);
        List<Long> at = new ArrayList<>(), left = new ArrayList<>();
        f.attach(x -> {});
        f.attach(x -> at.add(sim.now()));
        for (int k = 0; k < 2; k++) f.send(pkt(1, 2, k, 4096), 0, left::add);
        sim.runUntilIdle();
        long ser = f.serialization(pkt(1, 2, 0, 4096).wireBytes());
        long prop = p.picos("link.propagation"), sw = p.picos("switch.latency");
        // the first packet's tail leaves the switch once it is all in (cut-through, an idle downlink)
        long firstOut = ser + prop + sw, creditsBack = firstOut + prop;
        assertEquals(List.of(ser, creditsBack + ser), left,
                "the second leaves when the credits are back, not when the buffer freed");
        assertEquals(creditsBack, at.get(1) - at.get(0), "and arrives that much later");
        assertEquals(1, sim.counters().get("Fabric.flow_control_waits"));
        assertEquals(creditsBack - ser, sim.counters().get("Fabric.flow_control_wait_ps"),
                "it waited from the moment it could have gone");
        assertEquals(2 * prop + sw, f.lookahead(),
                "no port hears from another sooner than a link, the switch and a link");
    }

    /**
     * Two ports with room for one 4 KiB packet in the switch's input buffer, and the times the packets sent left
     * their port at and the PSNs of those whose sender heard they had left the fabric.
     */
    private static final class Credits {
        final Profile p = Profiles.load("cx-gen3x16").with("switch.port.buffer", "4160 B");
        final Simulator sim = new Simulator();
        final Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.NONE, 1);
        final List<Long> left = new ArrayList<>();
        final List<Integer> gone = new ArrayList<>();

        Credits() {
            f.attach(x -> {});
            f.attach(x -> {});
        }

        /** A packet of {@code bytes} from port 1 to port 2, noting when it left and when its sender hears it gone. */
        void send(int psn, int bytes) { f.send(pkt(1, 2, psn, bytes), 0, left::add, x -> gone.add(x.psn())); }
    }

    @Test
    void aCreditNoPacketWaitsForCostsNoEventYetIsBackAtItsInstant() {
        Credits c = new Credits();
        c.send(0, 4096);
        c.sim.runUntilIdle();
        assertEquals(2, c.sim.eventsExecuted(), "the switch's take and the delivery; the credit made no event");
        long ser = c.f.serialization(pkt(1, 2, 0, 4096).wireBytes());
        long prop = c.p.picos("link.propagation"), creditsBack = ser + prop + c.p.picos("switch.latency") + prop;
        assertTrue(c.sim.now() < creditsBack, "the run ended before the credits were back");
        c.sim.runUntil(creditsBack);
        c.send(1, 4096);
        assertEquals(List.of(ser, creditsBack + ser), c.left, "the credits were back: the second goes at once");
        assertEquals(List.of(0), c.gone, "and the first packet's sender heard it had left the fabric");
        c.sim.runUntil(creditsBack + ser - 1);
        c.f.send(pkt(1, 2, 2, 4096), 0, c.left::add);
        c.sim.runUntilIdle();
        assertEquals(List.of(ser, creditsBack + ser, 2 * creditsBack + ser), c.left,
                "the third waits for the second's credits, which wake it at their instant");
        assertEquals(1, c.sim.counters().get("Fabric.flow_control_waits"));
    }

    @Test
    void aWaitingPacketMakesAnEventOfTheOneCreditThatLetsItGoAndTheRestComeBackAtTheEnd() {
        Credits c = new Credits();
        // three small packets leave at once, their credits kept with no packet waiting
        for (int k = 0; k < 3; k++) c.send(k, 64);
        long small = c.f.serialization(pkt(1, 2, 0, 64).wireBytes());
        long big = c.f.serialization(pkt(1, 2, 3, 4096).wireBytes());
        long prop = c.p.picos("link.propagation"), sw = c.p.picos("switch.latency");
        c.sim.runUntil(2 * prop + sw + small - 1); // the switch took all three; the first's credits are not back
        long events = c.sim.eventsExecuted();
        // a full packet waits for all three: only the last to come back wakes it
        c.send(3, 4096);
        c.sim.runUntilIdle();
        assertEquals(2 * prop + sw + 3 * small + big, c.left.get(3), "it left as the third's credits came back");
        assertEquals(events + 5, c.sim.eventsExecuted(),
                "the last two small ones' deliveries, the switch's take of it, its delivery, and one credit");
        assertEquals(List.of(0, 1, 2), c.gone, "the first three packets' sender heard they had left the fabric");
        c.f.creditsBackAtEnd();
        assertEquals(List.of(0, 1, 2, 3), c.gone, "the run's end gives back the credit no event brought");
    }

    /**
     * Four ports, each sending a burst every few microseconds to the others (an incast on port 4 among
     * them), with faults: what each port received and when, and the counters. {@code threads} 0 runs
     * every port in one simulator, the switch at each head's instant; otherwise each port has a
     * simulator of its own and they run apart in windows on that many threads.
     */
    static List<String> traffic(int threads) {
        Profile p = Profiles.load("cx-gen3x16").with("switch.port.buffer", "8 KiB");
        Counters counters = new Counters();
        Simulator one = new Simulator(counters);
        Fabric f = new Fabric(one, Fabric.Config.from(p), Faults.parse("drop=0.02,dup=0.02,reorder=0.05"), 7);
        List<Simulator> sims = new ArrayList<>();
        List<List<String>> got = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Simulator s = threads == 0 ? one : new Simulator(counters);
            List<String> mine = new ArrayList<>();
            got.add(mine);
            sims.add(s);
            f.attach(x -> mine.add(x.slid() + ":" + x.psn() + "@" + s.now()), s);
        }
        for (int i = 0; i < 4; i++) {
            int src = i + 1;
            Simulator s = sims.get(i);
            for (int b = 0; b < 20; b++) {
                int burst = b;
                s.schedule(b * 3_000_000L + src * 7_000L, () -> {
                    for (int k = 0; k < 6; k++) {
                        int to = src == 4 ? 1 + burst % 3 : k % 2 == 0 ? 4 : 1 + src % 4;
                        f.send(pkt(src, to, burst * 6 + k, 512 + 700 * k));
                    }
                });
            }
        }
        if (threads == 0) one.runUntilIdle();
        else {
            f.fabricSwitch().runApart();
            try (Windows w = new Windows(sims, f.fabricSwitch(), f.lookahead(), threads)) {
                w.runUntilIdle(1_000_000_000L);
            }
        }
        List<String> out = new ArrayList<>();
        for (List<String> g : got) out.add(String.join(" ", g));
        out.add(counters.snapshot().toString());
        return out;
    }

    @Test
    void portsRunningApartInWindowsReceiveWhatTheyReceiveTogetherWhateverTheThreads() {
        List<String> together = traffic(0);
        assertTrue(together.get(3).split(" ").length > 100, "the incast port got its packets");
        String counters = together.get(4);
        assertTrue(counters.contains("Fabric.flow_control_waits") && counters.contains("Fabric.dropped"), counters);
        for (int threads : new int[]{1, 2, 3}) assertEquals(together, traffic(threads), threads + " threads");
    }

    @Test
    void faultsAreSeededAndCounted() {
        Profile p = Profiles.load("cx-gen3x16");
        long[] counts = new long[2];
        for (int run = 0; run < 2; run++) {
            Simulator sim = new Simulator();
            Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.parse("drop=0.1,dup=0.1,reorder=0.1,corrupt=0.05"),
                    42);
            List<Packet> got = new ArrayList<>();
            f.attach(x -> {});
            f.attach(got::add);
            for (int k = 0; k < 1000; k++) f.send(pkt(1, 2, k, 64));
            sim.runUntilIdle();
            counts[run] = got.size() * 1_000_000L + got.stream().mapToInt(Packet::psn).sum();
            long dropped = sim.counters().get("Fabric.dropped"), corrupted = sim.counters().get("Fabric.corrupted");
            long dup = sim.counters().get("Fabric.duplicated");
            assertEquals(1000 - dropped - corrupted + dup, got.size());
            assertTrue(dropped > 50 && dup > 50 && corrupted > 20, dropped + " " + dup + " " + corrupted);
        }
        assertEquals(counts[0], counts[1], "the same seed gives the same packets");
        assertThrows(IllegalArgumentException.class, () -> Faults.parse("drop=1.5"));
        assertThrows(IllegalArgumentException.class, () -> Faults.parse("lose=0.1"));
    }
}
