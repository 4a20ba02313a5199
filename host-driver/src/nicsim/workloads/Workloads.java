package nicsim.workloads;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleConsumer;
import nicsim.driver.World;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.QpType;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * The example programs, written the way their C originals are so a driver developer recognises
 * them: rdma-core's {@code rc_pingpong} and {@code ud_pingpong}, and perftest-style
 * {@code write_bw}, {@code write_lat}, {@code send_bw}, {@code send_lat}, {@code read_bw},
 * {@code read_lat}, {@code atomic_bw} between node 0 (client) and node 1 (server). Every run checks
 * the bytes that crossed the fabric against what was sent, and every completion's status.
 * Times are simulated: the same run always prints the same figures.
 *
 * <p>Here: the names, the run by name, and the waits every workload uses. The workloads: {@link Pingpong},
 * {@link PerftestBw}, {@link PerftestLat} (what the perftest ones share: {@link Perftest}) and {@link PairsWriteBw};
 * each side of a test is an {@link Ep}.
 */
public final class Workloads {
    private Workloads() {}

    public static final List<String> NAMES = List.of("rc_pingpong", "ud_pingpong", "write_bw", "write_lat", "send_bw",
            "send_lat", "read_bw", "read_lat", "atomic_bw", "pairs_write_bw");

    /** Hears the fraction of the run done (for a progress bar), and -1 before the workload prints. */
    static DoubleConsumer progress = f -> {};

    /** How long any one wait may take in simulated time before the workload is declared stuck. */
    static final long STUCK = 10_000_000_000_000L; // 10 s

    public static Result run(String name, World world, Options o, PrintStream out) {
        return run(name, world, o, out, f -> {});
    }

    /**
     * As above; {@code progress} hears the fraction of the run done (for a progress bar), and -1 before the workload
     * prints.
     */
    public static Result run(String name, World world, Options o, PrintStream out, DoubleConsumer progress) {
        Workloads.progress = progress;
        return switch (name) {
            case "rc_pingpong" -> Pingpong.run(world, o, out, QpType.RC);
            case "ud_pingpong" -> Pingpong.run(world, o, out, QpType.UD);
            case "write_bw" -> PerftestBw.run(world, o, out, WrOpcode.RDMA_WRITE);
            case "send_bw" -> PerftestBw.run(world, o, out, WrOpcode.SEND);
            case "read_bw" -> PerftestBw.run(world, o, out, WrOpcode.RDMA_READ);
            case "atomic_bw" -> PerftestBw.run(world, o, out, WrOpcode.ATOMIC_FETCH_AND_ADD);
            case "pairs_write_bw" -> PairsWriteBw.run(world, o, out);
            case "write_lat" -> PerftestLat.run(world, o, out, WrOpcode.RDMA_WRITE);
            case "send_lat" -> PerftestLat.run(world, o, out, WrOpcode.SEND);
            case "read_lat" -> PerftestLat.run(world, o, out, WrOpcode.RDMA_READ);
            default -> throw new IllegalArgumentException(
                    "workload '" + name + "' unknown; accepted: " + String.join(", ", NAMES));
        };
    }

    /**
     * Lets the setup work (posting receives, the host CPU's queued costs) finish before the clock starts, as the C
     * programs do.
     */
    static void settle(World w) {
        w.runUntilIdle(STUCK);
    }

    static void await(World w, BooleanSupplier cond, String what) {
        named(what, () -> w.runUntilMemoryHolds(cond, STUCK));
    }

    /**
     * As {@link #await(World, BooleanSupplier, String)} for a condition that reads only the memory of {@code eps}'
     * hosts.
     */
    static void await(World w, List<Ep> eps, BooleanSupplier cond, String what) {
        int[] nodes = eps.stream().mapToInt(e -> e.node).distinct().toArray();
        named(what, () -> w.runUntilMemoryHolds(nodes, cond, STUCK));
    }

    /** Runs a wait, saying what it waited for if it got stuck. */
    static void named(String what, Runnable wait) {
        try {
            wait.run();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("stuck waiting for " + what + ": " + e.getMessage());
        }
    }

    /** Polls until a completion arrives; an error completion is reported. */
    static WorkCompletion next(World w, CompletionQueue cq, List<String> errors, String what) {
        List<WorkCompletion> got = new ArrayList<>();
        await(w, () -> { got.addAll(cq.poll(1)); return !got.isEmpty(); }, what);
        WorkCompletion wc = got.get(0);
        if (wc.status() != WcStatus.SUCCESS) errors.add(what + ": " + wc);
        return wc;
    }
}
