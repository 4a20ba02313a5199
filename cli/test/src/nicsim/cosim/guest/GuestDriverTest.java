package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel driver on the device, in a real Linux guest: `./nicsim vm`'s guest on node 0 of a serve, its
 * nicsim_ib probing the adapter through the QEMU bridge (config space, BAR0, DMA into guest RAM, nothing
 * else), and the driver's kernel selftest moving bytes through the adapter's queues and checking them.
 */
class GuestDriverTest {
    @TempDir Path share;

    /**
     * Runs the selftest with the driver taking the doorbell function's MSI-X vectors (as /init loaded it),
     * then again after reloading the driver with msix=0 (polling); waits for each verdict, then shows what
     * the driver and the selftest logged.
     */
    private static final String SELFTEST = "verdicts() { dmesg | grep -cE 'nicsim_selftest: nicsim_0: (PASS|FAIL)'; }; "
            + "await() { n=0; until [ $(verdicts) -ge $1 ]; do "
            + "n=$((n + 1)); [ $n -gt 240 ] && exit 3; sleep 1; done; }; "
            + "modprobe nicsim_selftest || exit 2; await 1; grep nicsim /proc/interrupts; "
            + "cat /sys/class/infiniband/nicsim_0/ports/1/state; "
            + "rmmod nicsim_selftest && rmmod nicsim_ib && modprobe nicsim_ib msix=0 || exit 4; "
            + "modprobe nicsim_selftest || exit 2; await 2; dmesg | grep -E 'nicsim'; "
            + "[ $(dmesg | grep -c 'nicsim_selftest: nicsim_0: PASS') = 2 ]";

    @Test void theKernelDriverProbesTheAdapterAndItsSelftestMovesBytes() throws Exception {
        GuestRun run = GuestRun.onNode0("guest-driver", SELFTEST, share, null, 420);
        String text = run.console();
        assertEquals(0, run.status(), "the selftest passed in the guest: " + text);
        assertTrue(text.contains("ACTIVE"), "the driver registered nicsim_0 with its port up: " + text);
        int polling = text.indexOf("no interrupts: polling every 1 ms");
        assertTrue(text.indexOf("MSI-X: adapter vectors 0..1 through") >= 0 && polling > 0,
                "the first run took the doorbell function's vectors, the second polled: " + text);
        var latency = Pattern.compile("completion event (\\d+) us after the post").matcher(text);
        List<String> msix = new ArrayList<>(), polled = new ArrayList<>();
        while (latency.find()) (latency.start() < polling ? msix : polled).add(latency.group(1));
        System.out.println("completion event latency (us, the guest's clock): MSI-X " + msix + ", polling " + polled);
        assertEquals(5, msix.size(), "five armed SENDs woken by the doorbell function's interrupt: " + text);
        assertEquals(5, polled.size(), "five woken by the poll: " + text);
        assertFalse(run.served().log().contains(" 0 interrupts"), "the adapter raised MSI-X messages: "
                + run.served().log());
        run.assertTheAdapterWasUsedCleanly();
    }
}
