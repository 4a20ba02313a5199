package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import nicsim.serve.Served;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two kernels, two adapters, one fabric: `./nicsim vm --node 0` and `--node 1` on one 2-node serve, each
 * guest's nicsim_ib on its node's adapter through the QEMU bridge. The kernel selftest's two-node mode makes
 * one RC QP on each side; the guests swap "qpn lid rkey addr" over their own network (busybox nc), connect,
 * then each RDMA WRITEs 4096 bytes and SENDs 1000 bytes to the other and checks the other's bytes. Node 1
 * first unloads and reloads the driver twice: the adapter's reset as the guest sees it.
 */
class TwoGuestsTest {
    @TempDir Path share;

    /** Busybox sh run in guest {@code node}: the exit status says which step failed. */
    static String script(int node) {
        int peer = 1 - node;
        return String.join("\n",
                "N=" + node + "; P=" + peer + "; S=/sys/module/nicsim_selftest/parameters",
                "echo \"uptime at the command: $(cut -d' ' -f1 /proc/uptime) s\"",
                Guests.XCHG,
                node == 1 ? "for i in 1 2; do rmmod nicsim_ib && modprobe nicsim_ib || exit 9; done; "
                        + "echo reloaded twice; cat /sys/class/infiniband/nicsim_0/ports/1/state || exit 9" : ":",
                "modprobe nicsim_selftest two_node=1 || exit 2",
                "me=$(cat $S/local); [ -n \"$me\" ] || { dmesg | grep nicsim; exit 3; }",
                "peer=$(xchg 7100 \"$me\") || exit 4",
                "echo \"local $me, peer $peer\"",
                "echo \"$peer\" > $S/peer || { dmesg | grep nicsim; exit 5; }",
                "xchg 7110 connected > /dev/null || exit 6",
                "echo 1 > $S/run; rc=$?",
                "dmesg | grep -E 'nicsim'",
                // neither side destroys its QP before the other has its acknowledgements
                "xchg 7120 done > /dev/null || exit 8",
                "echo \"uptime at the end: $(cut -d' ' -f1 /proc/uptime) s\"",
                "exit $rc");
    }

    @Test void twoGuestsWriteAndSendToEachOtherAcrossTheFabric() throws Exception {
        Served served = new Served("two-guests").start(Served.cluster());
        List<Guests.Ran> ran;
        try {
            ran = Guests.run(served, share, 240, script(0), script(1));
            // both bridges' sockets close with their QEMUs: serve then logs what each driver left behind
            Guests.awaitBothLeft(served);
        } finally {
            served.stop();
        }
        System.out.println("--- serve's log:\n" + served.log());
        for (Guests.Ran r : ran) {
            assertEquals(0, r.status(), "node" + r.node() + "'s exchange passed: " + r.console());
            assertTrue(r.console().contains("two-node WRITE of 4096 and SEND of 1000 bytes each way: PASS"),
                    r.console());
        }
        assertTrue(ran.get(1).console().contains("reloaded twice\n4: ACTIVE"),
                "node1's driver came back up after two rmmod/modprobe: " + ran.get(1).console());
        var counters = served.world.sim.counters();
        for (String node : List.of("node0", "node1")) {
            var c = counters.scope(node);
            assertTrue(c.get("Firmware.packets_out") > 0 && c.get("Firmware.packets_in") > 0,
                    node + "'s adapter sent and received: " + c.snapshot());
        }
        assertTrue(counters.get("Fabric.bytes") >= 2 * (4096 + 1000), "both WRITEs and SENDs crossed the fabric: "
                + counters.get("Fabric.bytes"));
        Guests.assertBothDriversClean(served);
    }
}
