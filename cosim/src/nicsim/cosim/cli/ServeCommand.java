package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import nicsim.cosim.Cluster;
import nicsim.cosim.serve.Attach;
import nicsim.cosim.serve.Server;
import nicsim.fabric.Faults;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve simulated adapters to unmodified libibverbs programs started with 'nicsim attach'; runs in the foreground "
                + "until interrupted, then prints what the programs did.")
final class ServeCommand implements Callable<Integer> {
    @Option(names = "--nodes", defaultValue = "2", description = "hosts in the cluster, each with one adapter (default: ${DEFAULT-VALUE})")
    int nodes;

    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--seed", defaultValue = "1", description = "seed of every random choice (faults; default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--faults", defaultValue = "none", description = "fault injection on the links, e.g. drop=0.01,reorder=0.01")
    String faults = "none";

    @Option(names = "--socket", description = "where to listen (default: /tmp/nicsim-<user>/serve.sock, where attach looks)")
    Path socket;

    @Option(names = "--grace-ms", defaultValue = "" + Server.DEFAULT_GRACE_MILLIS,
            description = "wall time a program may spend between verbs before simulated time moves without it (default: ${DEFAULT-VALUE})")
    long graceMillis;

    @Override public Integer call() throws Exception {
        if (nodes < 1 || nodes > 64) throw new IllegalArgumentException("--nodes " + nodes + " must be 1..64");
        if (graceMillis < 1) throw new IllegalArgumentException("--grace-ms " + graceMillis + " must be >= 1");
        Path sock = socket != null ? socket : Attach.defaultSocket();
        CountDownLatch stopped = new CountDownLatch(1), done = new CountDownLatch(1);
        // Ctrl-C stops the loop; the JVM waits for the summary before it exits
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopped.countDown();
            try { done.await(10, java.util.concurrent.TimeUnit.SECONDS); } catch (InterruptedException ignored) { }
        }));
        try (Cluster cluster = Cluster.builder().nodes(nodes).profile(profile.load()).seed(seed).faults(Faults.parse(faults)).build();
             Server server = new Server(cluster.world(), sock, graceMillis, System.out)) {
            System.out.printf("nicsim serve: %d nodes on %s, listening on %s%n", nodes, cluster.profile().name(), sock);
            System.out.printf("  run a program with: ./nicsim attach --node 0 -- ibv_devinfo%n");
            server.run(() -> stopped.getCount() == 0);
            server.close();
            server.summary(System.out);
            return server.failure() == null ? 0 : 1;
        } finally {
            done.countDown();
        }
    }
}
