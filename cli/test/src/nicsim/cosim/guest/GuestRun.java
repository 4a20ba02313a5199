package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
        Served served = new Served(name).start(Served.cluster());
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        int status;
        try {
            VmOptions o = new VmOptions(0, script, false, served.socket, share, 384, ROOT, VmOptions.defaultCache(),
                    VmOptions.defaultNetPort(served.socket), timeoutSeconds, "", null, provider);
            status = new Vm(o, new PrintStream(console, true, StandardCharsets.UTF_8), System.err).run();
            // the bridge's socket closes with QEMU: serve then logs what the driver left behind
            for (int i = 0; i < 100 && !served.log().contains("DMA maps left"); i++) Thread.sleep(100);
        } finally {
            served.stop();
        }
        GuestRun run = new GuestRun(status, console.toString(StandardCharsets.UTF_8), served);
        System.out.println("--- node0's console:\n" + run.console + "\n--- serve's log:\n" + served.log());
        return run;
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
