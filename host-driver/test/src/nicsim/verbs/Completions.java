package nicsim.verbs;

import java.util.ArrayList;
import java.util.List;
import nicsim.driver.World;

/** What the verbs tests share for waiting: completions polled while the world runs. */
final class Completions {
    private Completions() {}

    /**
     * Polls {@code cq} while {@code w} runs until {@code n} completions came; IllegalStateException if a simulated
     * second passes first.
     */
    static List<WorkCompletion> await(World w, CompletionQueue cq, int n) {
        List<WorkCompletion> got = new ArrayList<>();
        w.runUntil(() -> { got.addAll(cq.poll(n - got.size())); return got.size() >= n; }, 1_000_000_000_000L);
        return got;
    }
}
