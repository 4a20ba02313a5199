package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.wave.GtkwSave;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * nicsim hw prove: every block's generated RTL meets its port contract, and a block whose contract is
 * broken on purpose fails with a counterexample that opens in GTKWave. Depths are kept small for CI;
 * passing results are cached by the Verilog's hash ({@code NICSIM_CACHE}).
 */
class HwProveTest {
    private final Profile profile = Profiles.load("cx-gen3x16");

    /**
     * Every block, at the depth CI affords here (docs/blocks.md, "Proving the contract", gives each
     * block's figures): the generated blocks are proved with their pass-through words narrowed and
     * their queue tables cut (ProveContract), which is what brings wqe and cqe within budget.
     */
    private static final List<String> BLOCKS = List.of("doorbell", "wqe", "mtt", "dma", "cqe");

    /**
     * The balances whose strengthening invariant ({@code _covers}: the balance covers what the block
     * holds) lets induction close: "no output without an input" then holds on every edge, not only to
     * the depth checked.
     */
    private static final Map<String, List<String>> CLOSED_BY_INDUCTION = Map.of(
            "doorbell", List.of("p_doorbell_not_duplicated", "p_doorbell_covers", "p_error_not_duplicated"),
            "wqe", List.of("p_dropped_not_duplicated", "p_dropped_covers"),
            "mtt", List.of("p_rsp_not_duplicated", "p_rsp_covers"),
            "cqe", List.of("p_write_not_duplicated", "p_write_covers", "p_dropped_not_duplicated"));

    @Test
    void everyBlocksContractHolds(@TempDir Path dir) throws Exception {
        for (String block : BLOCKS) {
            Path rtl = Files.createDirectories(dir.resolve(block));
            List<HwProve.Result> rs = HwProve.prove(profile, block, HwProve.generated(profile, block, rtl), 3,
                    dir.resolve("cex"));
            assertFalse(rs.isEmpty(), block);
            for (HwProve.Result r : rs)
                assertNotEquals(HwProve.Status.FAILED, r.status(), block + ": " + r.property() + " " + r.describe());
            assertTrue(rs.stream().anyMatch(r -> r.status() == HwProve.Status.PROVED
                    && r.property().label().endsWith("_reset")), block + ": its reset values close by induction " + rs);
            for (String label : CLOSED_BY_INDUCTION.getOrDefault(block, List.of()))
                assertTrue(rs.stream().anyMatch(r -> r.property().label().equals(label)
                        && r.status() == HwProve.Status.PROVED), block + ": " + label + " closes by induction " + rs);
        }
    }

    /**
     * mtt answers a request page by page: its contract counts only the response with last set, so a
     * walker that sets last on a piece before the end (two "last" responses for one request) fails.
     */
    @Test
    void aWalkerThatEndsARequestTwiceFails(@TempDir Path dir) throws Exception {
        HwProve.Design d = HwProve.generated(profile, "mtt", dir);
        Path v = d.files().get(0);
        String text = Files.readString(v);
        Matcher m = Pattern.compile("outReg_last <= ([^;]+);").matcher(text);
        assertTrue(m.find(), "the generated walker sets outReg_last");
        Files.writeString(v, m.replaceAll("outReg_last <= 1'b1;"));
        List<HwProve.Result> rs = HwProve.prove(profile, "mtt", d, 6, dir.resolve("cex"));
        assertTrue(rs.stream().anyMatch(r -> r.property().label().equals("p_rsp_not_duplicated")
                && r.status() == HwProve.Status.FAILED), rs.toString());
    }

    /** The doorbell FIFO popping its head whether or not the consumer is ready: the Stream contract is broken. */
    @Test
    void aDecoderThatIgnoresReadyFailsWithACounterexample(@TempDir Path dir) throws Exception {
        HwProve.Design d = HwProve.generated(profile, "doorbell", dir);
        Path v = d.files().get(0);
        String text = Files.readString(v), pop = "assign pop = (io_doorbell_valid && io_doorbell_ready);";
        assertTrue(text.contains(pop), "the generated decoder pops on the Stream's fire");
        Files.writeString(v, text.replace(pop, "assign pop = io_doorbell_valid;"));
        List<HwProve.Result> rs = HwProve.prove(profile, "doorbell", d, 6, dir.resolve("cex"));
        HwProve.Result failed = rs.stream().filter(r -> r.status() == HwProve.Status.FAILED).findFirst()
                .orElseThrow(() -> new AssertionError("the broken decoder passed: " + rs));
        assertTrue(List.of("p_doorbell_holds", "p_doorbell_stable").contains(failed.property().label()),
                failed.toString());
        assertTrue(failed.vcd().getFileName().toString().contains(failed.property().label()), failed.vcd().toString());
        String vcd = Files.readString(failed.vcd());
        assertTrue(vcd.contains("io_doorbell_valid") && vcd.contains("io_doorbell_ready"), "the VCD has the port");
        String gtkw = Files.readString(GtkwSave.beside(failed.vcd()));
        assertTrue(gtkw.contains("-io_doorbell") && gtkw.contains(failed.vcd().toAbsolutePath().toString()), gtkw);
        // the properties the mutant does not touch still hold
        assertTrue(rs.stream().anyMatch(r -> r.property().label().equals("p_seen_reset")
                && r.status() == HwProve.Status.PROVED), rs.toString());
    }

    /**
     * Vacuity runs every aimed mutant from one netlist, selected by a constant per run: the doorbell's
     * first four break what docs/blocks.md's table says (mutant 2, the FIFO's count after a pop, breaks
     * the balance and its invariant; mutant 4, the valid's "count != 0" inverted, breaks its reset
     * value), and nothing else.
     */
    @Test
    void aimedMutantsBreakTheDoorbellsBalanceAndResetValue() throws Exception {
        List<String> progress = new ArrayList<>();
        Map<String, String> broken = HwProve.vacuity(profile, "doorbell", 4, 1, 3, progress::add);
        assertEquals(4, progress.size(), progress.toString());
        assertEquals(13, broken.size(), broken.toString());
        for (String label : List.of("p_doorbell_not_duplicated", "p_doorbell_covers"))
            assertTrue(broken.get(label) != null && broken.get(label).contains("-wire countAfter -wirebit 1 "),
                    label + ": " + broken.get(label));
        assertTrue(broken.get("p_doorbell_reset") != null
                && broken.get("p_doorbell_reset").contains("-wire io_doorbell_valid "), broken.toString());
        assertEquals(3, broken.values().stream().filter(v -> v != null).count(), broken.toString());
    }

    /** The wrapper passes the mutant select up as an input of its own, beside reset. */
    @Test
    void theSelectIsAnInputOfTheWrapperPassedToTheModule() {
        String w = ProveContract.wrapper("doorbell", "DoorbellDecoder", ProveContract.wires(profile, "doorbell"), true)
                .text();
        String s = HwProve.withSelect(w, 4);
        assertTrue(s.contains("\n  input reset,\n  input [3:0] nicsim_mutant,\n  input "), s);
        assertTrue(s.contains(".reset(reset),\n    .nicsim_mutant(nicsim_mutant),"), s);
        assertEquals("0101", HwProve.bits(5, 4));
    }
}
