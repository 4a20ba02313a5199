package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** attach --node: a number, or 'rank' for the MPI rank its launcher gives (Open MPI, MPICH, PMIx). */
class AttachNodeTest {
    @Test
    void aNumberOrTheRankFromTheLauncher() {
        assertEquals(3, AttachCommand.nodeNumber("3", Map.of()));
        assertEquals(2, AttachCommand.nodeNumber("rank", Map.of("OMPI_COMM_WORLD_RANK", "2")));
        assertEquals(5, AttachCommand.nodeNumber("rank", Map.of("PMI_RANK", "5")));
        assertEquals(1, AttachCommand.nodeNumber("rank", Map.of("PMIX_RANK", "1")));
    }

    @Test
    void badValuesAreNamed() {
        var e = assertThrows(IllegalArgumentException.class, () -> AttachCommand.nodeNumber("rank", Map.of()));
        assertTrue(e.getMessage().contains("OMPI_COMM_WORLD_RANK"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AttachCommand.nodeNumber("two", Map.of()));
        assertTrue(e.getMessage().contains("'two'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AttachCommand.nodeNumber("-1", Map.of()));
        assertTrue(e.getMessage().contains("-1"), e.getMessage());
    }
}
