package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import nicsim.serve.ProviderBuild;
import nicsim.serve.Served;
import nicsim.sim.Counters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel's RDMA CM over InfiniBand between two guests, with no IP on the fabric: rdmacm-utils' ucmatose
 * with AF_IB addresses (-f gid: each port's GID), so the guest kernel's rdma_cm resolves the route by a
 * PathRecord query to serve's SA through ib_sa, and ib_cm connects the QPs with REQ, REP and RTU MADs between
 * the guests' QP1s, then ucmatose moves its messages over the connection and disconnects (DREQ, DREP).
 */
class TwoGuestsCmTest {
    @TempDir Path share;

    /**
     * The server on node 0, bound to its GID (the prefix and its port GUID); the client on node 1 after the server
     * had time to listen.
     */
    private static final String SERVER = "timeout 150 ucmatose -f gid -b fe80::2:1de5:0:1 -C 1 -S 64; echo SERVER=$?";
    private static final String CLIENT = "sleep 15; timeout 120 ucmatose -f gid -b fe80::2:1de5:0:2"
            + " -s fe80::2:1de5:0:1 -C 1 -S 64; echo CLIENT=$?";

    @Test void ucmatoseConnectsThroughTheGuestKernelsRdmaCmAndIbCm() throws Exception {
        Path provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
        Served served = new Served("two-guests-cm").start(Served.cluster());
        List<Guests.Ran> ran;
        try {
            ran = Guests.run(served, share, provider, 240, SERVER, CLIENT);
            Guests.awaitBothLeft(served);
        } finally {
            served.stop();
        }
        System.out.println("--- serve's log:\n" + served.log());
        String server = ran.get(0).console(), client = ran.get(1).console();
        assertTrue(server.contains("SERVER=0") && server.contains("data transfers complete")
                && server.contains("disconnected"),
                "the server took the connection, exchanged, disconnected: " + server);
        assertTrue(client.contains("CLIENT=0") && client.contains("data transfers complete"),
                "the client resolved the route, connected and exchanged: " + client);
        Counters n0 = served.world.sim.counters().scope("node0"), n1 = served.world.sim.counters().scope("node1");
        System.out.println("--- node0: " + n0.snapshot() + "\n--- node1: " + n1.snapshot());
        // node 1: the PathRecord query (to the SA beside node 0), REQ, RTU; node 0: REP (and the DREQ or DREP)
        assertTrue(n1.get("Firmware.mads_from_driver") >= 3, "node 1's kernel sent its MADs: " + n1.snapshot());
        assertTrue(n0.get("Firmware.mads_from_driver") >= 1, "node 0's kernel answered REP: " + n0.snapshot());
        assertTrue(n0.get("Firmware.mads_to_driver") >= 2 && n1.get("Firmware.mads_to_driver") >= 2,
                "each guest's QP1 got the other's CM MADs: " + n0.snapshot() + n1.snapshot());
        assertTrue(n0.get("Firmware.packets_in") > n0.get("Firmware.mads_to_driver"),
                "data crossed besides the MADs: " + n0.snapshot());
        Guests.assertBothDriversClean(served);
    }
}
