package nicsim.cosim.cli;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.driver.World;
import nicsim.mpi.Mpi;
import nicsim.sim.Counters;
import nicsim.sim.Peers;
import nicsim.sim.TimedPeers;

/**
 * {@code run --mpi}: the run's side of a run across processes. Each rank runs its block of hosts; rank 0
 * prints, from what every rank's hosts did, exactly what one process would have printed (the other ranks'
 * output goes nowhere), so the two can be compared byte for byte but for wall time.
 */
final class Ranks {
    private Ranks() {}

    private static final Pattern NODE = Pattern.compile("node(\\d+)");

    /** Checks the run can go across processes, joins the mpirun's ranks, and silences all but rank 0. */
    static Peers start(List<String> workloads, Set<String> rtl, Path wave, Path timeline) {
        for (String w : workloads)
            if (!w.equals("pairs_write_bw")) throw new IllegalArgumentException("--mpi: workload '" + w
                    + "' looks at every host at once; only pairs_write_bw runs across processes");
        if (!rtl.isEmpty() || wave != null || timeline != null)
            throw new IllegalArgumentException(
                    "--mpi: RTL in the loop, waveforms and timelines keep every host in one process");
        if (!Mpi.launched())
            throw new IllegalArgumentException("--mpi: this process was not started by Open MPI's mpirun "
                    + "(OMPI_COMM_WORLD_SIZE is not set)");
        Mpi m = Mpi.world();
        if (m.rank() != 0) System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        return new TimedPeers(m);
    }

    /** Every rank's failures added up; MPI finalized. */
    static int finish(Peers p, int failures) {
        int all = (int) p.sum(failures);
        if (p instanceof TimedPeers t && t.inner() instanceof Mpi m) m.close();
        return all;
    }

    /**
     * Every rank's counters as one process's: a node's from the rank that runs it (the others only set it
     * up), the fabric's (the top's) added up, each rank's switch having counted its own ports' packets.
     * Collective.
     */
    static Counters counters(World w) {
        Counters all = w.sim.counters();
        Map<String, Long> top = new TreeMap<>(all.snapshot()); // totals, less every scope's own below
        List<String> lines = new ArrayList<>();
        for (String scope : all.scopes()) {
            if (scope.isEmpty()) continue;
            Map<String, Long> own = all.scope(scope).snapshot();
            own.forEach((k, v) -> top.merge(k, -v, Long::sum));
            Matcher m = NODE.matcher(scope);
            if (m.matches() && !w.isLocal(Integer.parseInt(m.group(1)))) continue;
            own.forEach((k, v) -> lines.add(scope + "\t" + k + "\t" + v));
        }
        top.forEach((k, v) -> { if (v != 0) lines.add("\t" + k + "\t" + v); });
        Counters merged = new Counters();
        for (String line : w.peers().gather(lines)) {
            String[] f = line.split("\t", 3);
            merged.scope(f[0]).counter(f[1]).add(Long.parseLong(f[2]));
        }
        return merged;
    }
}
