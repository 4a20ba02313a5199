package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.function.Supplier;
import nicsim.serve.PortControl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Port events in a real kernel: node 0's link taken down and brought back (nicsim port's PORT_LINK request) while
 * a guest's nicsim_ib runs. The adapter writes PORT_ERR, then PORT_ACTIVE, to its event queue; the driver takes
 * them, dispatches them through ib_dispatch_event and keeps the port's state, which the guest's sysfs shows
 * (ib_core asks query_port): DOWN and Polling in between, ACTIVE after.
 */
class GuestPortTest {
    @TempDir Path share;

    /** Waits (at most 300 s) for the port's state to read $1, else exits $2; markers built at run time. */
    private static final String SCRIPT = "s=/sys/class/infiniband/nicsim_0/ports/1; "
            + "wait_for() { n=0; until grep -q \"$1\" $s/state; do "
            + "n=$((n + 1)); [ $n -gt 300 ] && exit $2; sleep 1; done; }; "
            + "wait_for ACTIVE 2; echo PORTEV_$((6 * 7)); "
            + "wait_for DOWN 3; echo \"down: $(cat $s/state), $(cat $s/phys_state)\"; echo PORTEV_$((6 * 7 + 1)); "
            + "wait_for ACTIVE 4; echo \"up: $(cat $s/state), $(cat $s/phys_state)\"";

    @Test void aLinkDownAndUpReachesTheKernelDriverAsPortErrThenPortActive() throws Exception {
        GuestRun run = GuestRun.onNode0("guest-port", SCRIPT, share, null, 420, (served, console) -> {
            await(console, "PORTEV_42");
            PortControl.link(served.socket, 0, false);
            await(console, "PORTEV_43");
            PortControl.link(served.socket, 0, true);
        });
        String text = run.console();
        assertEquals(0, run.status(), "the guest saw its port go down and come back: " + text);
        assertTrue(text.contains("down: 1: DOWN, 2: Polling"), "query_port read DOWN after PORT_ERR: " + text);
        assertTrue(text.contains("up: 4: ACTIVE, 5: LinkUp"), "and ACTIVE after PORT_ACTIVE: " + text);
        var node0 = run.served().world.sim.counters().scope("node0");
        assertEquals(1, node0.get("Firmware.link_downs"), node0.snapshot().toString());
        assertEquals(1, node0.get("Firmware.link_ups"), node0.snapshot().toString());
        assertTrue(run.served().log().contains("node 0's link went down at ")
                && run.served().log().contains("node 0's link came up at "), run.served().log());
    }

    private static void await(Supplier<String> console, String marker) throws InterruptedException {
        long t0 = System.nanoTime();
        while (!console.get().contains(marker)) {
            if (System.nanoTime() - t0 > 400_000_000_000L) throw new AssertionError("no " + marker + " on the console");
            Thread.sleep(200);
        }
    }
}
