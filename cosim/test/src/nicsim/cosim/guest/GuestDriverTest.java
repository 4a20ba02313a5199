package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import nicsim.serve.Served;
import nicsim.vm.Vm;
import nicsim.vm.VmOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel driver on the device, in a real Linux guest: `./nicsim vm`'s guest on node 0 of a serve, its
 * nicsim_ib probing the adapter through the QEMU bridge (config space, BAR0, DMA into guest RAM, nothing
 * else), and the driver's kernel selftest moving bytes through the adapter's queues and checking them.
 */
class GuestDriverTest {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", "."));

    @TempDir Path share;

    /** Waits for the selftest's verdict, then shows what the driver and the selftest logged. */
    private static final String SELFTEST = "modprobe nicsim_selftest || exit 2; n=0; "
            + "until dmesg | grep -qE 'nicsim_selftest: nicsim_0: (PASS|FAIL)'; do "
            + "n=$((n + 1)); [ $n -gt 240 ] && exit 3; sleep 1; done; "
            + "cat /sys/class/infiniband/nicsim_0/ports/1/state; dmesg | grep -E 'nicsim'; "
            + "dmesg | grep -q 'nicsim_selftest: nicsim_0: PASS'";

    @Test void theKernelDriverProbesTheAdapterAndItsSelftestMovesBytes() throws Exception {
        Served served = new Served("guest-driver").start(Served.cluster());
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        int status;
        try {
            VmOptions o = new VmOptions(0, SELFTEST, false, served.socket, share, 384, ROOT,
                    VmOptions.defaultCache(), VmOptions.defaultNetPort(served.socket), 420, "");
            status = new Vm(o, new PrintStream(console, true, StandardCharsets.UTF_8), System.err).run();
            // the bridge's socket closes with QEMU: serve then logs what the driver left behind
            for (int i = 0; i < 100 && !served.log().contains("DMA maps left"); i++) Thread.sleep(100);
        } finally {
            served.stop();
        }
        String text = console.toString(StandardCharsets.UTF_8);
        System.out.println("--- node0's console:\n" + text + "\n--- serve's log:\n" + served.log());
        assertEquals(0, status, "the selftest passed in the guest: " + text);
        assertTrue(text.contains("ACTIVE"), "the driver registered nicsim_0 with its port up: " + text);
        var node0 = served.world.sim.counters().scope("node0");
        assertTrue(node0.get("Firmware.packets_out") > 0, "the guest's work crossed node 0's adapter: "
                + node0.snapshot());
        assertFalse(served.log().contains("the device reports") || served.log().contains("violations"),
                "the driver broke none of the device's rules: " + served.log());
        assertTrue(served.log().contains(" 0 DMA maps left"), "the driver's remove left nothing mapped: "
                + served.log());
    }
}
