package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.Set;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Workloads with all of node 0's blocks taken from Verilated RTL give the same bytes, completions and cycles as the
 * model alone.
 */
class RtlInLoopTest {
    static Result run(String workload, Set<String> rtl, Options o, long[] edges) {
        try (Cluster c = Cluster.builder().nodes(2).profile("cx-gen3x16").seed(2).rtl(rtl).build()) {
            Result r = Workloads.run(workload, c.world(), o, new PrintStream(new ByteArrayOutputStream()));
            edges[0] = c.rtlEdges().values().stream().mapToLong(Long::longValue).sum();
            return r;
        }
    }

    @ParameterizedTest
    @CsvSource({"rc_pingpong, 6, 2048", "write_bw, 24, 8192"})
    void rtlBlocksInTheLoopChangeNothing(String workload, int iters, int size) {
        Options o = Options.defaults().with(set -> set.iters(iters).size(size));
        long[] none = {0}, edges = {0};
        Result model = run(workload, Set.of(), o, none);
        Result rtl = run(workload, Set.copyOf(RtlInLoop.IN_SYSTEM), o, edges); // all five blocks, every DMA channel
        assertTrue(model.ok(), model.errors().toString());
        assertTrue(rtl.ok(), rtl.errors().toString());
        assertEquals(model.rows(), rtl.rows(), "same figures, to the picosecond");
        assertTrue(edges[0] > 1000, "the RTL blocks took part: " + edges[0] + " edges");
    }
}
