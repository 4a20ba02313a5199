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
import java.util.Arrays;
import nicsim.verbs.Connect;
import nicsim.verbs.Mtu;
import nicsim.verbs.ProcessMemory;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QpType;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WrOpcode;

/**
 * What a verb costs a C program through {@code attach} against the same verb called from Java:
 * nicsim-verbcost (a C program of nicsim's, built with the provider) times ibv_query_port and
 * ibv_req_notify_cq through the provider and the simulator's socket; the Java side times
 * Context.queryPort and CompletionQueue.reqNotify on a node of its own. Both are verbs that answer
 * at once, so the figure is the crossing, not simulated work.
 */
public final class AttachBench {
    private AttachBench() {}

    /**
     * One verb's wall time per call, from Java and through attach: with the provider's Java driver
     * (each verb a request to the simulator) and its C driver (NICSIM_DRIVER=c: libnicsim's rings).
     */
    public record VerbCost(String verb, int calls, double javaNs, double attachNs, double cDriverNs) {
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
            double[] timed = Arrays.copyOfRange(t, 1, t.length); // the first warms the build check
            Arrays.sort(timed);
            return timed[timed.length / 2];
        });
    }

    /**
     * Each verb's cost from Java (the last of three rounds, after the JIT has seen the loops) and through attach
     * with either driver (the least of {@code runs} runs of nicsim-verbcost, one driver after the other in each:
     * a run is a few seconds, and noise on this shared machine only adds time).
     */
    public static List<VerbCost> verbCost(int calls, int runs) throws Exception {
        World w = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.parse("none"));
        Context ctx = new Device(w.host(0)).open();
        CompletionQueue cq = ctx.createCq(16);
        double[] java = new double[4];
        for (int round = 0; round < 3; round++) { // the last of three, after the JIT has seen the loops
            long t0 = System.nanoTime();
            for (int i = 0; i < calls; i++) ctx.queryPort(1);
            java[0] = (System.nanoTime() - t0) / (double) calls;
            t0 = System.nanoTime();
            for (int i = 0; i < calls; i++) cq.reqNotify(false);
            java[1] = (System.nanoTime() - t0) / (double) calls;
            double[] pp = postAndPoll(w, ctx, cq, Math.max(1, calls / 10));
            java[2] = pp[0];
            java[3] = pp[1];
        }
        double[] attach = null, c = null;
        for (int r = 0; r < runs; r++) {
            attach = least(attach, throughAttach(calls, false));
            c = least(c, throughAttach(calls, true));
        }
        String[] verbs = {"ibv_query_port", "ibv_req_notify_cq", "ibv_post_send", "ibv_poll_cq (a completion found)"};
        List<VerbCost> out = new ArrayList<>();
        for (int i = 0; i < verbs.length; i++)
            out.add(new VerbCost(verbs[i], i < 2 ? calls : Math.max(1, calls / 10), java[i], attach[i], c[i]));
        return out;
    }

    /**
     * {@code n} signalled 8-byte inline RDMA WRITEs between two QPs of one adapter, from Java: the
     * post's wall time, and the poll's that finds the completion (the simulation runs between them),
     * each the median of the calls, as nicsim-verbcost gives them.
     */
    private static double[] postAndPoll(World w, Context ctx, CompletionQueue cq, int n) {
        var pd = ctx.allocPd();
        var buf = new ProcessMemory(w.host(0)).alloc(4096);
        var mr = pd.regMr(buf, Connect.ALL_REMOTE);
        var init = new QpInitAttr().qpType(QpType.RC).sendCq(cq).recvCq(cq).maxSendWr(16)
                .maxRecvWr(1).maxSendSge(1).maxRecvSge(1).maxInlineData(64);
        var a = pd.createQp(init);
        var b = pd.createQp(init);
        for (var q : List.of(a, b)) {
            var other = q == a ? b : a;
            Connect.toInit(q, Connect.ALL_REMOTE);
            Connect.toRtr(q, Connect.Dest.of(ctx, other, 0), Mtu.MTU_1024);
            Connect.toRts(q, 0);
        }
        double[] post = new double[n], poll = new double[n];
        for (int i = 0; i < n; i++) {
            var wr = new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED | SendFlags.INLINE)
                    .sgList(new Sge(buf.addr(), 8, mr.lkey())).remoteAddr(buf.addr() + 2048)
                    .rkey(mr.rkey());
            long t0 = System.nanoTime();
            a.postSend(wr);
            post[i] = System.nanoTime() - t0;
            w.runUntilMemoryHolds(cq::ready, 1_000_000_000_000L);
            t0 = System.nanoTime();
            var got = cq.poll(1);
            poll[i] = System.nanoTime() - t0;
            if (got.size() != 1 || got.get(0).status() != WcStatus.SUCCESS)
                throw new IllegalStateException("the WRITE's completion: " + got);
        }
        a.close();
        b.close();
        mr.close();
        pd.close();
        return new double[]{WorkloadBench.median(post), WorkloadBench.median(poll)};
    }

    /** Each figure the least of the two ({@code best} null: the first run). */
    private static double[] least(double[] best, double[] got) {
        if (best == null) return got;
        for (int i = 0; i < best.length; i++) best[i] = Math.min(best[i], got[i]);
        return best;
    }

    private static double[] throughAttach(int calls, boolean cDriver) throws Exception {
        return BenchServe.with((socket, w) -> {
            String program = ProviderBuild.get().resolve(ProviderBuild.VERBCOST).toString();
            List<String> run = Attach.withDriver(cDriver ? "c" : "java", List.of(program, Integer.toString(calls)));
            String out = BenchServe.runToEnd(Attach.command(socket, 0, run), 10, "nicsim-verbcost");
            List<Double> ns = new ArrayList<>();
            for (String line : out.split("\n"))
                if (line.startsWith("ibv_")) ns.add(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
            if (ns.size() != 4) throw new IOException("nicsim-verbcost printed:\n" + out);
            return new double[]{ns.get(0), ns.get(1), ns.get(2), ns.get(3)};
        });
    }
}
