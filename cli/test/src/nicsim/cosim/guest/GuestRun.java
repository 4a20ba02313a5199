package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.function.Supplier;
import nicsim.serve.Served;
import nicsim.vm.Vm;
import nicsim.vm.VmOptions;

/**
 * One `./nicsim vm` guest on node 0 of a fresh 2-node serve, running a script to its end: the guest's
 * exit status, its console, and the serve it ran on (stopped, its log and counters kept).
 */
record GuestRun(int status, String console, Served served) {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", "."));

    /** Boots the guest (384 MiB; {@code provider}: nicsim's libibverbs provider, or null), runs {@code script}. */
    static GuestRun onNode0(String name, String script, Path share, Path provider, int timeoutSeconds)
            throws Exception {
        return onNode0(name, script, share, provider, timeoutSeconds, null);
    }

    /**
     * As above, with {@code operator} run beside the guest on a thread of its own (the fabric's operator: a link
     * taken down, say), given the serve and the console so far; what it throws fails the run.
     */
    static GuestRun onNode0(String name, String script, Path share, Path provider, int timeoutSeconds,
            Operator operator) throws Exception {
        Served served = new Served(name).start(Served.cluster());
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        int status;
        Thread beside = null;
        Throwable[] failed = new Throwable[1];
        if (operator != null) {
            beside = new Thread(() -> {
                try {
                    operator.run(served, () -> console.toString(StandardCharsets.UTF_8));
                } catch (Throwable t) {
                    failed[0] = t;
                }
            }, name + "-operator");
            beside.setDaemon(true);
            beside.start();
        }
        try {
            VmOptions o = new VmOptions(0, script, false, served.socket, share, 384, ROOT, VmOptions.defaultCache(),
                    VmOptions.defaultNetPort(served.socket), timeoutSeconds, "", null, provider);
            status = new Vm(o, new PrintStream(console, true, StandardCharsets.UTF_8), System.err).run();
            // the bridge's socket closes with QEMU: serve then logs what the driver left behind
            for (int i = 0; i < 100 && !served.log().contains("DMA maps left"); i++) Thread.sleep(100);
        } finally {
            served.stop();
        }
        if (beside != null) beside.join(10_000);
        if (failed[0] != null) throw new AssertionError("beside the guest: " + failed[0], failed[0]);
        GuestRun run = new GuestRun(status, console.toString(StandardCharsets.UTF_8), served);
        System.out.println("--- node0's console:\n" + run.console + "\n--- serve's log:\n" + served.log());
        return run;
    }

    /** What runs beside a guest: the serve it runs on, and its console so far. */
    interface Operator {
        void run(Served served, Supplier<String> console) throws Exception;
    }

    /** The guest's work crossed node 0's adapter, broke none of the device's rules, and left nothing mapped. */
    void assertTheAdapterWasUsedCleanly() {
        var node0 = served.world.sim.counters().scope("node0");
        assertTrue(node0.get("Firmware.packets_out") > 0, "the guest's work crossed node 0's adapter: "
                + node0.snapshot());
        assertFalse(served.log().contains("the device reports") || served.log().contains("violations"),
                "the driver broke none of the device's rules: " + served.log());
        assertTrue(served.log().contains(" 0 DMA maps left"), "the driver's remove left nothing mapped: "
                + served.log());
    }
}
