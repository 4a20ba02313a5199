package nicsim.vm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Boots real guests: Debian's kernel and the project's initramfs under QEMU (TCG), without the
 * adapter. The first run downloads the kernel and packages into the cache; later runs boot from it.
 */
class VmTest {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", "."));

    @TempDir Path share;

    /** A guest's run: the status --run returns and what its console showed. */
    private record Ran(int status, String console) { }

    private Ran boot(int node, String command, Path socket) throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        VmOptions o = new VmOptions(node, command, true, socket, share, 384, ROOT, VmOptions.defaultCache(),
                VmOptions.defaultNetPort(socket), 180, "");
        int status = new Vm(o, new PrintStream(console, true, StandardCharsets.UTF_8), System.err).run();
        String text = console.toString(StandardCharsets.UTF_8);
        System.out.println("--- node" + node + "'s console:\n" + text);
        return new Ran(status, text);
    }

    @Test void aGuestRunsTheCommandOnTheSharedFolderAndReturnsItsStatus() throws Exception {
        Files.writeString(share.resolve("from-host.txt"), "written on the host\n");
        String release = Files.readString(ROOT.resolve("kernel/RELEASE")).strip();
        Ran r = boot(1, "cat /proc/version; ls /sys/class/net; hostname; cat from-host.txt; "
                + "test -d /sys/module/ib_uverbs && echo uverbs loaded; "
                + "echo made in the guest > from-guest.txt; exit 7",
                share.resolve("serve.sock"));
        assertEquals(7, r.status(), "the command's own exit status");
        assertTrue(r.console().contains("Linux version " + release), "kernel/RELEASE's kernel: " + r.console());
        assertTrue(r.console().contains("eth0"), "the guests' network interface");
        assertTrue(r.console().contains("node1\n"), "the guest is named for its node");
        assertTrue(r.console().contains("written on the host"), "the shared folder is the command's folder");
        assertTrue(r.console().contains("uverbs loaded"), "the kernel's RDMA stack (ib_uverbs) is loaded");
        assertEquals("made in the guest\n", Files.readString(share.resolve("from-guest.txt")),
                "the guest writes into the share");
        assertFalse(r.console().contains("Booting from ROM"),
                "firmware noise is kept back when the guest gets to the command");
    }

    @Test void twoGuestsReachEachOtherByNameOnANetworkWithNoWayOut() throws Exception {
        // no serve there: both guests boot without the adapter, on the network of this socket path
        Path socket = share.resolve("fabric.sock");
        CompletableFuture<Ran> server = CompletableFuture.supplyAsync(() -> {
            try {
                return boot(0, "ip route; echo listening; nc -l -p 5000", socket);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        // node1 waits for node0's address to answer (ping by name), then for its listener
        Ran client = boot(1, "ip route | grep default && exit 3; n=0; until ping -c 1 -W 1 node0 >/dev/null; do "
                + "n=$((n + 1)); [ $n -gt 90 ] && exit 4; done; echo node0 answers; n=0; "
                + "until echo hello from node1 | nc node0 5000; do "
                + "n=$((n + 1)); [ $n -gt 90 ] && exit 5; sleep 1; done",
                socket);
        Ran srv = server.get();
        assertEquals(0, client.status(),
                "node1 found no default route, pinged node0 by name and connected: " + client.console());
        assertTrue(client.console().contains("node0 answers"));
        assertEquals(0, srv.status());
        assertTrue(srv.console().contains("hello from node1"), "node0 got node1's bytes over TCP: " + srv.console());
        assertTrue(srv.console().contains("10.77.0.0/24 dev eth0"), "node0 is 10.77.0.1/24: " + srv.console());
        assertFalse(srv.console().contains("default"), "no route out of the guests' network: " + srv.console());
    }

    @Test void withoutServeTheGuestBootsWithoutTheAdapterAndSaysWhy() throws Exception {
        Path socket = share.resolve("nobody.sock");
        VmOptions o = new VmOptions(0, null, false, socket, null, 512, ROOT, VmOptions.defaultCache(), 30000, 0, "");
        String why = new Vm(o, System.out, System.err).withoutDevice().orElseThrow();
        assertTrue(why.contains("bridge is not built")
                || why.contains("no nicsim serve is listening on " + socket), why);
    }
}
