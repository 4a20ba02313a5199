package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel driver on the device, in a real Linux guest: `./nicsim vm`'s guest on node 0 of a serve, its
 * nicsim_ib probing the adapter through the QEMU bridge (config space, BAR0, DMA into guest RAM, nothing
 * else), and the driver's kernel selftest moving bytes through the adapter's queues and checking them.
 */
class GuestDriverTest {
    @TempDir Path share;

    /** Waits for the selftest's verdict, then shows what the driver and the selftest logged. */
    private static final String SELFTEST = "modprobe nicsim_selftest || exit 2; n=0; "
            + "until dmesg | grep -qE 'nicsim_selftest: nicsim_0: (PASS|FAIL)'; do "
            + "n=$((n + 1)); [ $n -gt 240 ] && exit 3; sleep 1; done; "
            + "cat /sys/class/infiniband/nicsim_0/ports/1/state; dmesg | grep -E 'nicsim'; "
            + "dmesg | grep -q 'nicsim_selftest: nicsim_0: PASS'";

    @Test void theKernelDriverProbesTheAdapterAndItsSelftestMovesBytes() throws Exception {
        GuestRun run = GuestRun.onNode0("guest-driver", SELFTEST, share, null, 420);
        assertEquals(0, run.status(), "the selftest passed in the guest: " + run.console());
        assertTrue(run.console().contains("ACTIVE"), "the driver registered nicsim_0 with its port up: "
                + run.console());
        run.assertTheAdapterWasUsedCleanly();
    }
}
