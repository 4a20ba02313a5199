package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
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
     * Vacuity of every block (docs/blocks.md, "Can each property fail?"): 3 mutants aimed at each property's
     * cone beside its outputs' drivers tied, seed 1, cached by hash as the proofs are. Each property listed
     * here was broken by one of its mutants when the table was measured; one that no mutant breaks now
     * has become vacuous (the RTL, the contract or the aim changed), and the table must be made again.
     */
    private static final Map<String, List<String>> BROKEN_BY_A_MUTANT = Map.of(
            "doorbell", List.of("p_doorbell_holds", "p_doorbell_stable", "p_doorbell_reset", "p_error_reset",
                    "p_seen_reset", "p_coalesced_reset", "p_overflowed_reset", "p_rejected_reset",
                    "p_occupancy_reset", "p_doorbell_not_duplicated", "p_doorbell_covers", "p_error_not_duplicated",
                    "p_error_covers"),
            "mtt", List.of("p_rsp_holds", "p_rsp_stable", "p_rsp_reset", "p_fill_holds", "p_fill_stable",
                    "p_fill_reset", "p_requests_reset", "p_hits_reset", "p_misses_reset", "p_faults_reset",
                    "p_rsp_not_duplicated", "p_rsp_covers", "p_fill_not_duplicated"),
            "dma", List.of("p_pciRead_holds", "p_pciRead_stable", "p_pciWrite_holds", "p_pciWrite_stable",
                    "p_linkTx_holds", "p_linkTx_stable", "p_pciRead_reset", "p_pciWrite_reset", "p_hostDone_reset",
                    "p_linkTx_reset", "p_sendDone_reset", "p_recvDone_reset", "p_beats_reset", "p_stalls_reset",
                    "p_hostDone_not_duplicated", "p_sendDone_not_duplicated", "p_recvDone_not_duplicated"),
            "wqe", List.of("p_dmaReq_holds", "p_dmaReq_stable", "p_wqe_holds", "p_wqe_stable", "p_dmaReq_reset",
                    "p_wqe_reset", "p_error_reset", "p_dropped_reset", "p_wqes_reset", "p_wqebbs_reset",
                    "p_fetches_reset", "p_errors_reset", "p_dropped_not_duplicated", "p_dropped_covers"),
            "cqe", List.of("p_write_holds", "p_write_stable", "p_cqe_answered_next", "p_write_reset", "p_event_reset",
                    "p_error_reset", "p_dropped_reset", "p_cqes_reset", "p_events_reset", "p_errors_reset",
                    "p_write_not_duplicated", "p_write_covers", "p_dropped_not_duplicated", "p_dropped_covers",
                    "p_event_not_duplicated"));

    /**
     * The depth of each block's vacuity check (3 if not named): a Stream that lets go of a transfer nobody
     * took shows it only once a transfer can wait there: 6 edges in, 7 for mtt's fill (it follows a walk), 8
     * for wqe's output (a WQE fetched, then queued); 5 for cqe's (a completion taken, then written: a clocked
     * assertion about an edge is checked one step after it), whose event balance's model stays at 3
     * (Vacuity.FINER_DEPTH: it costs minutes a run).
     */
    private static final Map<String, Integer> VACUITY_DEPTH = Map.of("doorbell", 6, "mtt", 7, "dma", 6, "wqe", 8,
            "cqe", 5);

    @Test
    void everyPropertyAMutantBrokeStillFailsOnOne() throws Exception {
        for (String block : BLOCKS) {
            Vacuity.Report v = Vacuity.run(profile, block, 3, 1, VACUITY_DEPTH.getOrDefault(block, 3), l -> {});
            assertEquals(ProveContract.wrapper(block, "M", ProveContract.wires(profile, block), true).properties()
                    .size(), v.broken().size(), block + ": a verdict for every property " + v.broken());
            for (String label : BROKEN_BY_A_MUTANT.getOrDefault(block, List.of()))
                assertNotNull(v.broken().get(label), block + ": " + label + " has become vacuous " + v.broken());
        }
    }

    /**
     * nicsim's Verilog carries no "// Git hash" line (a checkout and an unpacked tree number its lines alike), and
     * one in a user's own Verilog is no part of the proofs' cache key: a new commit proves nothing again.
     */
    @Test
    void aNewCommitLineKeepsTheCachedProof(@TempDir Path dir) throws Exception {
        HwProve.Design d = HwProve.generated(profile, "doorbell", dir);
        List<HwProve.Result> first = HwProve.prove(profile, "doorbell", d, 3, dir.resolve("cex"));
        Path v = d.files().get(0);
        String text = Files.readString(v);
        assertFalse(text.contains("// Git hash"), "no commit line in nicsim's Verilog");
        Files.writeString(v, text.replaceFirst("\\R", "\n// Git hash  : 0123456789abcdef\n"));
        assertTrue(Files.readString(v).contains("// Git hash  : 0123456789abcdef"), "the line was put in");
        // a result read back from the cache carries the first run's seconds exactly
        assertEquals(first, HwProve.prove(profile, "doorbell", d, 3, dir.resolve("cex")));
    }
}
