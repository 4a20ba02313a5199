package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.hw.VerilogFile;
import nicsim.profile.Profiles;
import nicsim.workloads.Options;
import nicsim.workloads.Workloads;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model alone moves payload as a copy, its DMA beats keeping only the timing; with a channel's engine in RTL in
 * the loop the beats carry the payload again, and the RTL is compared on it: an engine that corrupts a payload beat
 * (only where the payload has a bit set, so a beat carrying no bytes would not show it) is caught.
 */
class RtlInLoopPayloadTest {
    /** The first send-engine output data word's assignment in the generated Verilog. */
    static final Pattern LINK_DATA = Pattern.compile("assign (io_linkTx_payload_data\\w*) = (\\w+);");

    @Test
    void anRtlEngineThatCorruptsPayloadBeatsIsCaught(@TempDir Path dir) throws Exception {
        World w = new World(2, Profiles.load("lanai72"), 2, Faults.NONE);
        Path d = dir.toAbsolutePath();
        String top = VerilogFile.write(BlockPairs.get(w.profile, "dma").rtl(), d);
        Path v = d.resolve(top + ".v");
        String text = Files.readString(v);
        Matcher m = LINK_DATA.matcher(text);
        assertTrue(m.find(), "the send engine's data output in " + v);
        // bit 0 flipped where bit 9 is set: a blank beat (all zero) goes out unchanged, a payload beat rarely does
        String bad = text.substring(0, m.start()) + "assign " + m.group(1) + " = " + m.group(2) + " ^ {{"
                + "($bits(" + m.group(2) + ") - 1){1'b0}}, " + m.group(2) + "[9]};" + text.substring(m.end());
        Files.writeString(v, bad);
        RtlInLoop rtl = new RtlInLoop(w.host(0).adapter, w.profile, Set.of("dma"), RtlInLoop.BATCH,
                Map.of("dma", new RtlInLoop.Own(List.of(v), top)));
        RtlInLoop.Divergence e = assertThrows(RtlInLoop.Divergence.class, () -> {
            try (rtl) {
                Workloads.run("write_bw", w, Options.defaults().with(set -> set.iters(4).size(4096)),
                        new PrintStream(new ByteArrayOutputStream()));
            }
        });
        assertTrue(e.getMessage().matches("RTL in the loop: DmaEngine diverged at cycle \\d+ of clock \\S+ on "
                + m.group(1) + ": Java model 0x\\p{XDigit}+, RTL 0x\\p{XDigit}+"), e.getMessage());
    }
}
