package nicsim.fabric;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

/** The switch's multicast forwarding: one copy per member port of the MLID, none back out the in-port. */
class FabricMulticastTest {
    static final int MLID = 0xC001;

    /** Four ports; what each was handed (port, time, the packet's GRH DGID low half). */
    static final class Four {
        final Simulator sim = new Simulator();
        final Profile p = Profiles.load("cx-gen3x16");
        final Fabric f = new Fabric(sim, Fabric.Config.from(p), Faults.NONE, 1);
        final List<long[]> got = new ArrayList<>();

        Four() {
            for (int i = 1; i <= 4; i++) {
                int port = i;
                f.attach(x -> got.add(new long[]{port, sim.now(), x.grh().dgidLo()}));
            }
        }

        Packet toGroup(int from, int bytes) {
            return FabricTest.pkt(from, MLID, 0, bytes).withGrh(new Grh(0xfe80_0000_0000_0000L, from,
                    0xff12_401b_ffff_0000L, 7, 0, 0, 1));
        }
    }

    @Test
    void eachMemberPortButTheSendersGetsOneCopyInPortOrder() {
        Four t = new Four();
        for (int lid : new int[]{4, 1, 2}) t.f.fabricSwitch().multicastMember(MLID, lid, true);
        assertEquals(List.of(1, 2, 4), t.f.fabricSwitch().multicastPorts(MLID));
        Packet k = t.toGroup(1, 1000);
        assertEquals(1000 + 8 + 40 + 12 + 4 + 2, k.wireBytes(), "the GRH's 40 bytes go on the link");
        t.f.send(k);
        t.sim.runUntilIdle();
        assertEquals(2, t.got.size(), "ports 2 and 4: port 1 sent it, port 3 is no member");
        assertEquals(2, t.got.get(0)[0]);
        assertEquals(4, t.got.get(1)[0]);
        assertEquals(t.got.get(0)[1], t.got.get(1)[1], "idle downlinks: both copies land at once");
        assertEquals(7, t.got.get(1)[2], "the GRH travels with each copy");
        assertEquals(1, t.sim.counters().get("Fabric.multicast_packets"));
        assertEquals(2, t.sim.counters().get("Fabric.multicast_copies"));
    }

    @Test
    void aPortThatLeftGetsNothingAndAnMlidWithoutMembersIsUnroutable() {
        Four t = new Four();
        t.f.fabricSwitch().multicastMember(MLID, 3, true);
        t.f.fabricSwitch().multicastMember(MLID, 3, false);
        assertEquals(List.of(), t.f.fabricSwitch().multicastPorts(MLID));
        t.f.send(t.toGroup(2, 64));
        t.sim.runUntilIdle();
        assertTrue(t.got.isEmpty());
        assertEquals(1, t.sim.counters().get("Fabric.unroutable"));
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> t.f.fabricSwitch().multicastMember(0x12, 1, true));
        assertTrue(bad.getMessage().contains("MLID 0x12"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> t.f.fabricSwitch().multicastMember(MLID, 9, true));
    }
}
