package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import nicsim.cosim.Cluster;
import nicsim.serve.Attach;
import nicsim.serve.Server;
import nicsim.fabric.Faults;
import nicsim.wave.VcdWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import nicsim.serve.Recorder;
import nicsim.wave.GtkwSave;

@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve simulated adapters to unmodified libibverbs programs started with 'nicsim attach'; "
                + "runs in the foreground until interrupted (Ctrl-C, SIGTERM), then prints what the programs did.")
final class ServeCommand implements Callable<Integer> {
    @Option(names = "--nodes", defaultValue = "2",
            description = "hosts in the cluster, each with one adapter (default: ${DEFAULT-VALUE})")
    int nodes;

    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--seed", defaultValue = "1",
            description = "seed of every random choice (faults; default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--faults", defaultValue = "none",
            description = "fault injection on the links, e.g. drop=0.01,reorder=0.01")
    String faults = "none";

    @Option(names = "--rtl", description = "node 0's blocks also run as Verilated RTL in lockstep with their Java "
            + "twins: doorbell, wqe, mtt, dma, cqe, or all (BLOCK=FILE[+FILE...]: your own Verilog in its place, "
            + "docs/blocks.md); the first divergence stops the simulation, naming the cycle and wire")
    String rtl;

    @Option(names = "--wave", description = "waveform of node 0's blocks' ports while programs run "
            + "(.vcd, .vcd.gz, .vcd.xz), with a GTKWave save file beside it")
    Path wave;

    @Option(names = "--timeline",
            description = "timeline of the programs' send WQEs as Perfetto/Chrome JSON, written when serve stops")
    Path timeline;

    @Option(names = "--socket",
            description = "where to listen (default: /tmp/nicsim-<user>/serve.sock, where attach looks)")
    Path socket;

    @Option(names = "--grace-ms", defaultValue = "" + Server.DEFAULT_GRACE_MILLIS,
            description = "for a program whose threads /proc does not show (no ptrace access): wall time it may "
                    + "spend between verbs before simulated time moves without it (default: ${DEFAULT-VALUE})")
    long graceMillis;

    @Option(names = "--watchdog-ms", defaultValue = "1000",
            description = "report a program's QP that retries (timeouts, RNR NAKs) with no progress for this much "
                    + "simulated time, in ms; 0: never (default: ${DEFAULT-VALUE})")
    long watchdogMillis;

    @Option(names = "--strict", description = "stop a C driver on the PCI face (libnicsim) at the first violation the "
            + "device sees (a doorbell for no queue, a malformed WQE, a write to no register...), with its report; "
            + "otherwise the device goes on as silicon would, and the log has each report")
    boolean strict;

    @Option(names = "--record", paramLabel = "FILE", description = "keep what the programs ask of the adapters, the "
            + "moves of simulated time and the program memory the adapters read, gzip-compressed, for 'nicsim replay "
            + "FILE' to do the run again without the programs (docs/attach.md)")
    Path record;

    @Override public Integer call() throws Exception {
        if (nodes < 1 || nodes > 64) throw new IllegalArgumentException("--nodes " + nodes + " must be 1..64");
        if (graceMillis < 1) throw new IllegalArgumentException("--grace-ms " + graceMillis + " must be >= 1");
        if (watchdogMillis < 0)
            throw new IllegalArgumentException("--watchdog-ms " + watchdogMillis + " must be >= 0");
        if (record != null && rtl != null)
            throw new IllegalArgumentException("--record with --rtl " + rtl + ": a replay runs the Java model only; "
                    + "record without --rtl");
        Path sock = socket != null ? socket : Attach.defaultSocket();
        CountDownLatch stopped = new CountDownLatch(1), done = new CountDownLatch(1);
        // Ctrl-C stops the loop; the JVM waits for the summary before it exits
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopped.countDown();
            try { done.await(10, TimeUnit.SECONDS); } catch (InterruptedException ignored) { }
        }));
        try (Cluster cluster = Cluster.builder().nodes(nodes).profile(profile.load()).seed(seed)
                .faults(Faults.parse(faults)).rtl(Observe.rtlBlocks(rtl)).ownRtl(Observe.ownRtl(rtl)).build();
             Server server = new Server(cluster.world(), sock, graceMillis, watchdogMillis * 1_000_000_000L, System.out)
                     .strict(strict)) {
            Recorder recorder = record == null ? null : new Recorder(record, recording());
            if (recorder != null) server.record(recorder);
            if (timeline != null) Observe.recordTimeline(cluster.world().sim.trace());
            VcdWriter vcd = wave != null ? Observe.wave(cluster.world().host(0).adapter, wave) : null;
            String alsoRtl = cluster.rtl().isEmpty() ? ""
                    : " (node 0's " + String.join(", ", cluster.rtl()) + " also as RTL)";
            System.out.printf("nicsim serve: %d nodes on %s%s, listening on %s%n", nodes, cluster.profile().name(),
                    alsoRtl, sock);
            System.out.printf("  IP addresses (RDMA CM; attach resolves the names too): %s%n", server.addresses());
            System.out.printf("  run a program with: ./nicsim attach --node 0 -- ibv_devinfo%n");
            server.run(() -> stopped.getCount() == 0);
            server.close();
            server.summary(System.out);
            if (recorder != null) System.out.println("  recorded (" + recorder.summary() + "): "
                    + record.toAbsolutePath()
                    + "\n  replay it with: ./nicsim replay " + record);
            if (!cluster.rtl().isEmpty())
                System.out.printf("  RTL in the loop (node 0): %s edges, every output wire equal to the Java twin's%n",
                        cluster.rtlEdges());
            if (vcd != null) {
                vcd.advanceTo(cluster.world().now());
                vcd.close();
                System.out.println("  waveform of node 0's " + Observe.WAVE_BLOCKS + " ports: " + wave.toAbsolutePath()
                        + "\n  open it with: gtkwave " + GtkwSave.beside(wave));
            }
            if (timeline != null) {
                Observe.writeTimeline(cluster.world().sim.trace(), timeline);
                System.out.println("  timeline (open it in ui.perfetto.dev): " + timeline.toAbsolutePath());
            }
            return server.failure() == null ? 0 : 1;
        } finally {
            done.countDown();
        }
    }

    /** What a replay makes its World of: this serve's options. */
    private Map<String, String> recording() {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("profile", profile.profile);
        for (int i = 0; i < profile.overrides.size(); i++) o.put("set." + (i + 1), profile.overrides.get(i));
        o.put("seed", Long.toString(seed));
        o.put("nodes", Integer.toString(nodes));
        o.put("faults", faults);
        o.put("grace-ms", Long.toString(graceMillis));
        o.put("watchdog-ps", Long.toString(watchdogMillis * 1_000_000_000L));
        o.put("strict", Boolean.toString(strict));
        return Recorder.header(o);
    }
}
