package nicsim.cosim.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import nicsim.serve.Attach;
import nicsim.serve.ProviderBuild;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Context;
import nicsim.verbs.Device;

/**
 * What a verb costs a C program through {@code attach} against the same verb called from Java:
 * nicsim-verbcost (a C program of nicsim's, built with the provider) times ibv_query_port and
 * ibv_req_notify_cq through the provider and the simulator's socket; the Java side times
 * Context.queryPort and CompletionQueue.reqNotify on a node of its own. Both are verbs that answer
 * at once, so the figure is the crossing, not simulated work.
 */
public final class AttachBench {
    private AttachBench() {}

    /** One verb's wall time per call, from Java and through attach. */
    public record VerbCost(String verb, int calls, double javaNs, double attachNs) {
        public double ratio() { return attachNs / javaNs; }
    }

    /**
     * The wall time {@code ./nicsim attach -- true} takes, start to exit, against a serve that is
     * up (the median of {@code runs}, after one to warm the build check): the start a user waits
     * for before a program runs. NaN when not run through the nicsim script (NICSIM_ROOT unset).
     */
    public static double attachStartSeconds(int runs) throws Exception {
        String root = System.getenv("NICSIM_ROOT");
        if (root == null) return Double.NaN;
        return BenchServe.with((socket, w) -> {
            double[] t = new double[runs + 1];
            for (int i = 0; i <= runs; i++) {
                long t0 = System.nanoTime();
                List<String> attach = List.of(Path.of(root, "nicsim").toString(), "attach", "--socket",
                        socket.toString(), "--", "true");
                BenchServe.runToEnd(attach, 5, "nicsim attach");
                t[i] = (System.nanoTime() - t0) / 1e9;
            }
            double[] timed = java.util.Arrays.copyOfRange(t, 1, t.length); // the first warms the build check
            java.util.Arrays.sort(timed);
            return timed[timed.length / 2];
        });
    }

    public static List<VerbCost> verbCost(int calls) throws Exception {
        World w = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.parse("none"));
        Context ctx = new Device(w.host(0)).open();
        CompletionQueue cq = ctx.createCq(16);
        double[] java = new double[2];
        for (int round = 0; round < 3; round++) { // the last of three, after the JIT has seen both loops
            long t0 = System.nanoTime();
            for (int i = 0; i < calls; i++) ctx.queryPort(1);
            java[0] = (System.nanoTime() - t0) / (double) calls;
            t0 = System.nanoTime();
            for (int i = 0; i < calls; i++) cq.reqNotify(false);
            java[1] = (System.nanoTime() - t0) / (double) calls;
        }
        double[] attach = throughAttach(calls);
        return List.of(new VerbCost("ibv_query_port", calls, java[0], attach[0]), new VerbCost("ibv_req_notify_cq", calls, java[1], attach[1]));
    }

    private static double[] throughAttach(int calls) throws Exception {
        return BenchServe.with((socket, w) -> {
            String program = ProviderBuild.get().resolve(ProviderBuild.VERBCOST).toString();
            List<String> cmd = Attach.command(socket, 0, List.of(program, Integer.toString(calls)));
            String out = BenchServe.runToEnd(cmd, 10, "nicsim-verbcost");
            List<Double> ns = new ArrayList<>();
            for (String line : out.split("\n"))
                if (line.startsWith("ibv_")) ns.add(Double.parseDouble(line.split(" ")[2]));
            if (ns.size() != 2) throw new IOException("nicsim-verbcost printed:\n" + out);
            return new double[]{ns.get(0), ns.get(1)};
        });
    }
}
