package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Pattern;
import nicsim.serve.Served;
import nicsim.vm.Vm;
import nicsim.vm.VmOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A guest that dies does not poison its node (docs/device.md, "Function-level reset"): on one serve, a
 * first guest resets its adapter through sysfs with nicsim_ib bound (Linux picks FLR; the driver goes
 * down before and comes back after), runs the selftest, and is killed hard (SIGKILL to QEMU) with the
 * adapter up; serve resets the function as its bridge's socket closes, and a second guest on the same
 * node brings the driver up and passes the selftest.
 */
class GuestResetTest {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", "."));
    private static final String DYING = "GUEST-RESET-TEST: killing me now";
    private static final String AWAIT_PASS = "await() { n=0; until [ $(dmesg | grep -c 'nicsim_selftest: nicsim_0: "
            + "PASS') -ge 1 ]; do n=$((n + 1)); [ $n -gt 240 ] && exit 3; dmesg | grep -q 'nicsim_0: FAIL' && exit 4; "
            + "sleep 1; done; }; ";
    /** The sysfs reset with the driver bound, the selftest on the adapter that came back, then death. */
    private static final String FIRST = AWAIT_PASS
            + "D=$(basename $(readlink /sys/class/infiniband/nicsim_0/device)); "
            + "echo reset_method: $(cat /sys/bus/pci/devices/$D/reset_method); "
            + "echo 1 > /sys/bus/pci/devices/$D/reset || exit 5; "
            + "echo port after the reset: $(cat /sys/class/infiniband/nicsim_0/ports/1/state); "
            + "modprobe nicsim_selftest || exit 2; await; dmesg | grep -E 'nicsim'; "
            + "echo '" + DYING + "'; sleep 600";
    private static final String SECOND = AWAIT_PASS
            + "modprobe nicsim_selftest || exit 2; await; dmesg | grep -E 'nicsim_ib|nicsim_selftest: nicsim_0: PASS'";

    @TempDir Path share;

    @Test void aGuestKilledWithTheAdapterUpLeavesItFreshForTheNext() throws Exception {
        Served served = new Served("guest-reset").start(Served.cluster());
        String first, second;
        int status;
        try {
            ByteArrayOutputStream console = new ByteArrayOutputStream();
            // the first guest's QEMU is killed once it says so: its --run never reports a status
            IOException died = assertThrows(IOException.class, () -> vm(served, new KillQemuOn(console)).run());
            first = console.toString(StandardCharsets.UTF_8);
            System.out.println("--- the first guest's console:\n" + first + "\n(" + died.getMessage() + ")");
            for (int i = 0; i < 100 && !served.log().contains("left; it left"); i++) Thread.sleep(100);
            ByteArrayOutputStream again = new ByteArrayOutputStream();
            status = vm(served, again).run();
            second = again.toString(StandardCharsets.UTF_8);
            System.out.println("--- the second guest's console:\n" + second);
        } finally {
            served.stop();
        }
        String log = served.log();
        System.out.println("--- serve's log:\n" + log);
        assertTrue(first.contains("reset_method: flr"), "Linux resets the function by FLR: " + first);
        assertTrue(first.contains("function reset: taking the adapter down"), "the driver went down first: " + first);
        assertTrue(first.contains("port after the reset: 4: ACTIVE"), "and came back registered: " + first);
        assertTrue(first.contains("nicsim_selftest: nicsim_0: PASS"), "its selftest passed after the reset: " + first);
        assertTrue(Pattern.compile("nicsim-qemu-remote \\(pid \\d+\\) initiated a function-level reset \\(FLR\\); "
                + "it left the adapter down").matcher(log).find(), "the guest's FLR reached serve: " + log);
        assertTrue(Pattern.compile("node 0's function was reset: its driver nicsim-qemu-remote \\(pid \\d+\\) left; "
                + "it left the adapter up with .*UARs \\d+.*, \\d+ DMA maps").matcher(log).find(),
                "the killed guest's adapter was up, and serve reset it: " + log);
        assertEquals(0, status, "the second guest's selftest passed on the same node: " + second);
        assertTrue(second.contains("nicsim_selftest: nicsim_0: PASS"), second);
        assertTrue(!log.contains("the device reports"), "no violation: " + log);
    }

    private VmOptions options(Served served, String script) {
        return new VmOptions(0, script, false, served.socket, share, 384, ROOT, VmOptions.defaultCache(),
                VmOptions.defaultNetPort(served.socket), 300, "", null, null);
    }

    private Vm vm(Served served, OutputStream console) {
        String script = console instanceof KillQemuOn ? FIRST : SECOND;
        return new Vm(options(served, script), new PrintStream(console, true, StandardCharsets.UTF_8), System.err);
    }

    /**
     * A console that, once the guest prints {@link #DYING}, kills this JVM's QEMU with SIGKILL, as a
     * crashed or killed hypervisor ends: no reboot, no driver remove, the bridge's socket simply closes.
     */
    private static final class KillQemuOn extends OutputStream {
        private final ByteArrayOutputStream copy;
        private final StringBuilder line = new StringBuilder();

        KillQemuOn(ByteArrayOutputStream copy) { this.copy = copy; }

        @Override public void write(int b) {
            copy.write(b);
            if (b != '\n') {
                line.append((char) b);
                return;
            }
            if (line.toString().contains(DYING))
                ProcessHandle.current().descendants().filter(p -> p.info().command().orElse("")
                        .endsWith("qemu-system-x86_64")).forEach(ProcessHandle::destroyForcibly);
            line.setLength(0);
        }
    }
}
