package nicsim.firmware;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** The firmware's parameters are read and checked once, as it is made: a bad one is named with its value. */
class FirmwareConfigTest {
    private static String refused(Profile p) {
        return assertThrows(IllegalArgumentException.class, () -> FirmwareConfig.from(p)).getMessage();
    }

    @Test
    void optionalFeaturesAreAbsentWhereTheProfileHasNone() {
        FirmwareConfig cx = FirmwareConfig.from(Profiles.load("cx-gen3x16"));
        assertEquals(16, cx.dc().dcrPool());
        assertEquals(256, cx.tm().maxTags());
        assertEquals(2, cx.umrKlmCycles());
        assertEquals(64, cx.mttFill().lineBytes());
        FirmwareConfig lanai = FirmwareConfig.from(Profiles.load("lanai72"));
        assertNull(lanai.dc(), "no DC");
        assertNull(lanai.tm(), "no tag matching");
        assertEquals(-1, lanai.umrKlmCycles(), "no indirect mkeys");
        assertEquals(0, lanai.cqeScatterMaxBytes());
        assertEquals(0, lanai.mttPageMaxBytes());
        assertTrue(lanai.mttFill().byInterrupt());
        assertEquals(8, lanai.mttFill().lineBytes(), "one entry a read");
    }

    @Test
    void aBadValueIsRefusedNamingKeyAndValue() {
        Profile cx = Profiles.load("cx-gen3x16");
        assertEquals("fw.ack.coalesce = 0: must be at least 1", refused(cx.with("fw.ack.coalesce", "0")));
        assertEquals("fw.max.msg.size = 4294967296 B: must be from 1 B to 2147483648 B",
                refused(cx.with("fw.max.msg.size", "4 GiB")));
        assertEquals("cqe.scatter.max = 64 B: must be from 0 B to 32 B", refused(cx.with("cqe.scatter.max", "64 B")));
        assertEquals("dc.handshake = \"quarter\": must be one of \"half\", \"full\"",
                refused(cx.with("dc.handshake", "\"quarter\"")));
        assertEquals("link.transmit = \"wormhole\": must be one of \"store-and-forward\", \"cut-through\"",
                refused(cx.with("link.transmit", "\"wormhole\"")));
        assertEquals("mtt.fill = \"host\": must be one of \"dma\", \"interrupt\"",
                refused(cx.with("mtt.fill", "\"host\"")));
    }
}
