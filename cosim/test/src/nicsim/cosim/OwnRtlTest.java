package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import nicsim.cosim.cli.Main;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A block of an architect's own in the twin's place: a DoorbellDecoder written by hand in plain
 * Verilog (another inside, the same ports) runs the block's lockstep stimulus with no divergence;
 * the same file with one bug is caught at its cycle; a file that breaks the port contract is named
 * before anything is built.
 */
class OwnRtlTest {
    private static final String TOP = "doorbell_decoder_hand";

    private static Path copy(Path dir, String text) throws Exception {
        Files.createDirectories(dir);
        Path f = dir.resolve(TOP + ".v");
        Files.writeString(f, text);
        return f;
    }

    private static String hand() throws Exception {
        try (InputStream in = OwnRtlTest.class.getResourceAsStream("/nicsim/rtl/" + TOP + ".v")) {
            assertNotNull(in, "test resource nicsim/rtl/" + TOP + ".v");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aHandWrittenDecoderAgreesAndItsBugIsCaught(@TempDir Path dir) throws Exception {
        Profile p = Profiles.load("cx-gen3x16");
        Path good = copy(dir.resolve("good").toAbsolutePath(), hand());
        assertNull(RtlInLoop.lockstep(p, "doorbell", new RtlInLoop.Own(List.of(good), TOP), 20_000, 1));
        assertEquals(0, Main.run("cosim", "doorbell", "--verilog", good.toString(), "--cycles", "5000"));
        // one bug: a merged doorbell counted twice
        String bugged = hand().replace("if (accept && hit) io_coalesced <= io_coalesced + 32'd1;",
                "if (accept && hit) io_coalesced <= io_coalesced + 32'd2;");
        assertNotEquals(hand(), bugged);
        Path bad = copy(dir.resolve("bad").toAbsolutePath(), bugged);
        String d = RtlInLoop.lockstep(p, "doorbell", new RtlInLoop.Own(List.of(bad), TOP), 20_000, 1);
        assertNotNull(d, "the bug is caught");
        assertTrue(d.matches("RTL in the loop: DoorbellDecoder diverged at cycle \\d+ of clock core on io_coalesced: "
                + "Java model 0x\\p{XDigit}+, RTL 0x\\p{XDigit}+"), d);
    }

    @Test
    void aBrokenPortContractIsNamedBeforeAnythingRuns(@TempDir Path dir) throws Exception {
        Profile p = Profiles.load("cx-gen3x16");
        String text = hand().replace("output reg  [31:0] io_seen,", "output reg  [15:0] io_seen,")
                .replace("io_rejected", "io_refused");
        Path f = copy(dir, text);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RtlInLoop.lockstep(p, "doorbell", new RtlInLoop.Own(List.of(f), TOP), 100, 1));
        assertTrue(e.getMessage().contains("port io_rejected (output, 32 bits) is missing")
                && e.getMessage().contains("port io_seen is 16 bits wide; the contract has 32"), e.getMessage());
        assertEquals(2, Main.run("cosim", "doorbell", "--verilog", f.toString(), "--cycles", "100"));
        assertEquals(2, Main.run("cosim", "doorbell", "--verilog", dir.resolve("none.v").toString()));
        Path broken = copy(dir.resolve("x").toAbsolutePath(), "module " + TOP + "(input wire clk\n");
        e = assertThrows(IllegalArgumentException.class,
                () -> RtlInLoop.lockstep(p, "doorbell", new RtlInLoop.Own(List.of(broken), TOP), 100, 1));
        assertTrue(e.getMessage().startsWith("--verilog: Verilator cannot build module " + TOP + ": %Error"),
                e.getMessage());
    }
}
