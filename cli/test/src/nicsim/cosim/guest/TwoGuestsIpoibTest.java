package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import nicsim.serve.ProviderBuild;
import nicsim.serve.Served;
import nicsim.sim.Counters;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel ULP across the simulated fabric: Debian's ib_ipoib on nicsim_ib in two guests. Each guest's ib0
 * joins IPoIB's broadcast group through ib_sa (an MCMemberRecord Set to serve's SA, then ATTACH_MCAST on the
 * adapter), ARP goes by multicast through the fabric's switch, unicast by a PathRecord query; then ping over
 * ib0, and a TCP transfer of a file of random bytes (busybox httpd on node 1, wget on node 0: busybox nc stops
 * a bulk stream early, even over loopback) whose checksum both ends print.
 */
class TwoGuestsIpoibTest {
    @TempDir Path share;

    /** How many MiB the TCP stream carries. */
    static final int MIB = 4;

    /**
     * Node N's script: ib0 at 192.168.77.(N+1) in IPoIB's {@code mode} (datagram: UD QPs, MTU 4092; connected:
     * an RC QP a peer through ib_cm, MTU 65520), up once the broadcast join made its carrier; node 1 pings node 0
     * and serves the file; node 0 fetches it. The guests' Ethernet only paces them (xchg), no data on it.
     */
    static String script(int node, String mode) {
        String common = String.join("\n",
                "N=" + node + "; P=" + (1 - node),
                Guests.XCHG,
                "echo " + mode + " > /sys/class/net/ib0/mode || echo NO_MODE",
                "ip addr add 192.168.77." + (node + 1) + "/24 dev ib0 && ip link set ib0 up || echo NO_IB0",
                "echo MODE=$(cat /sys/class/net/ib0/mode) MTU=$(cat /sys/class/net/ib0/mtu)",
                "i=0; until [ \"$(cat /sys/class/net/ib0/carrier 2>/dev/null)\" = 1 ]; do",
                "  i=$((i + 1)); [ $i -gt 120 ] && break; sleep 1; done",
                "echo CARRIER=$(cat /sys/class/net/ib0/carrier 2>/dev/null)",
                "xchg 7300 up > /dev/null", "");
        if (node == 0)
            return common + String.join("\n",
                    "ibv_devinfo -v | grep mcast",
                    "xchg 7310 ready > /dev/null",
                    "t0=$(date +%s); wget -q -O /tmp/got http://192.168.77.2:8080/sent; echo WGET=$?",
                    "echo SECONDS=$(($(date +%s) - t0)) RX_BYTES=$(cat /sys/class/net/ib0/statistics/rx_bytes)",
                    "echo GOT=$(md5sum < /tmp/got | cut -d' ' -f1) $(wc -c < /tmp/got)",
                    "until echo received | nc node1 7331; do sleep 1; done  # node 1 keeps ib0 up until then",
                    "rping -s -a 192.168.77.1 -C 3 -v > /tmp/rping.txt 2>&1 & rs=$!",
                    "sleep 1; xchg 7340 ready > /dev/null; wait $rs; echo RPING_SERVER=$?; cat /tmp/rping.txt",
                    "ip link set ib0 down", "exit 0", "");
        return common + String.join("\n",
                "ping -c 3 -W 10 192.168.77.1; echo PING=$?",
                "mkdir -p /tmp/www; dd if=/dev/urandom of=/tmp/www/sent bs=1048576 count=" + MIB + " 2>/dev/null",
                "echo SENT=$(md5sum < /tmp/www/sent | cut -d' ' -f1) $(wc -c < /tmp/www/sent)",
                "httpd -p 192.168.77.2:8080 -h /tmp/www || echo NO_HTTPD",
                "nc -l -p 7331 > /tmp/done & d=$!",
                "xchg 7310 go > /dev/null",
                "wait $d; echo TX_BYTES=$(cat /sys/class/net/ib0/statistics/tx_bytes)",
                "echo TX_PACKETS=$(cat /sys/class/net/ib0/statistics/tx_packets)",
                "xchg 7340 go > /dev/null; rping -c -a 192.168.77.1 -C 3 -v; echo RPING_CLIENT=$?",
                "ip link set ib0 down", "exit 0", "");
    }

    @ParameterizedTest @ValueSource(strings = {"datagram", "connected"})
    void ipoibPingsAndCarriesATcpStreamBetweenTwoGuests(String mode) throws Exception {
        Path provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
        Served served = new Served("two-guests-ipoib-" + mode).start(Served.cluster());
        List<Guests.Ran> ran;
        try {
            ran = Guests.run(served, share, provider, 420, script(0, mode), script(1, mode));
            Guests.awaitBothLeft(served);
        } finally {
            served.stop();
        }
        System.out.println("--- serve's log:\n" + served.log());
        String server = ran.get(0).console(), client = ran.get(1).console();
        for (String c : List.of(server, client)) {
            assertTrue(c.contains("CARRIER=1"), "ib0 came up: its broadcast join answered by serve's SA: " + c);
            // connected mode takes IPoIB-CM's largest MTU: 16 receive SGEs of a page each on its SRQ, less 16
            int mtu = "connected".equals(mode) ? 65520 : 4092;
            assertEquals(mode + " MTU=" + mtu, Guests.value(c, "MODE"), "ib0's mode and MTU");
        }
        assertTrue(client.contains("3 packets transmitted, 3 packets received") && client.contains("PING=0"),
                "node 1's pings over ib0 were all answered: " + client);
        // query_device's multicast limits, the adapter's (docs/device.md, Multicast), through uverbs
        assertTrue(Pattern.compile("max_mcast_grp:\\s+4096\\s+max_mcast_qp_attach:\\s+240\\s+"
                + "max_total_mcast_qp_attach:\\s+983040").matcher(server).find(), "ibv_devinfo -v: " + server);
        assertTrue(server.contains("WGET=0"), "node 0's wget fetched the file over ib0: " + server);
        // rping: the kernel's rdma_cm resolves ib0's IP address to the peer's GID, ib_cm connects the user QPs
        assertTrue(client.contains("RPING_CLIENT=0") && server.contains("RPING_SERVER=0")
                && client.contains("ping data: rdma-ping-2"), "rping over the ib0 addresses: " + client + server);
        String sent = Guests.value(client, "SENT"), got = Guests.value(server, "GOT");
        assertEquals(sent, got, "node 0 received what node 1 sent, byte for byte (md5, length)");
        // connected mode's IP packets are up to 16 times datagram's, so node 1 sent far fewer of them
        long ipPackets = Long.parseLong(Guests.value(client, "TX_PACKETS"));
        assertTrue("connected".equals(mode) ? ipPackets < 400 : ipPackets > 1024,
                mode + " mode's IP packets for " + MIB + " MiB: " + ipPackets);
        assertTrue(sent.endsWith(" " + (MIB << 20)), "the stream was " + MIB + " MiB: " + sent);
        Counters n0 = served.world.sim.counters().scope("node0"), n1 = served.world.sim.counters().scope("node1");
        System.out.println("--- node0: " + n0.snapshot() + "\n--- node1: " + n1.snapshot());
        // at most 4092 bytes of IP a packet (IPoIB's MTU on the port's 4096-byte IB MTU): above 1024 packets
        long bytes = (long) MIB << 20, packets = bytes / 4096;
        assertTrue(n1.get("Firmware.packets_out") > packets && n0.get("Firmware.packets_in") > packets
                && n1.get("Firmware.dma_read_bytes") > bytes && n0.get("Firmware.dma_write_bytes") > bytes,
                "the adapters carried the file from node 1's memory to node 0's: " + n0.snapshot() + n1.snapshot());
        assertTrue(n0.get("Firmware.mcast_delivered") + n1.get("Firmware.mcast_delivered") > 0,
                "a multicast packet (ARP, IPv6 neighbour discovery) reached a group's QP: " + n0.snapshot());
        Guests.assertBothDriversClean(served);
    }
}
