package nicsim.cosim.bench;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

class ThreadBenchTest {
    @Test
    void theSpeedupIsTheMostThreadsAgainstOneInTheBestRunsAndInEachRound() {
        var one = new ThreadBench.Run(8, 1, 2.0, 10, "same");
        var two = new ThreadBench.Run(8, 2, 1.25, 10, "same");
        var rounds = new ThreadBench.Rounds(List.of(one, two), new double[][]{{2.4, 2.0, 3.0}, {1.6, 1.25, 1.5}});
        assertEquals(1.6, rounds.speedup(), 1e-12);
        assertArrayEquals(new double[]{1.5, 1.6, 2.0}, rounds.roundSpeedups(), 1e-12);
    }

    @Test
    void twoThreadsPrintWhatOnePrints() {
        var rounds = ThreadBench.rounds(4, new int[]{1, 2}, 10, 2);
        var best = rounds.best();
        assertEquals(best.get(0).fingerprint(), best.get(1).fingerprint());
        assertEquals(best.get(0).windows(), best.get(1).windows());
        assertTrue(best.get(0).windows() > 100, best.get(0).windows() + " windows");
        assertEquals(2, rounds.roundSpeedups().length);
    }
}
