package nicsim.cosim.bench;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class NodeScalingTest {
    @Test
    void aCountBeyondTheRoundsRunsInTheLastTwoAndKeepsTheLeast() {
        var rows = WorkloadBench.nodeScaling(new int[]{2, 4}, 5, 3, 2);
        var two = rows.get(0);
        var four = rows.get(1);
        assertEquals(3, two.roundWalls().length, "2 nodes runs in every round");
        assertEquals(2, four.roundWalls().length, "4 nodes, beyond the rounds, runs in the last two");
        assertTrue(Arrays.stream(four.roundWalls()).allMatch(w -> w > 0), Arrays.toString(four.roundWalls()));
        assertEquals(Arrays.stream(four.roundWalls()).min().orElseThrow(), four.wallSeconds(), 0);
        assertEquals(Arrays.stream(two.roundWalls()).min().orElseThrow(), two.wallSeconds(), 0);
    }
}
