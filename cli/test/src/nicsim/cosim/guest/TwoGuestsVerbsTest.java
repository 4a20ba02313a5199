package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.serve.ProviderBuild;
import nicsim.serve.Served;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 58's point 5 between two kernels: guests on nodes 0 and 1 of one serve, each with Debian's own
 * rdma-core on nicsim_ib (the provider's kern back end), run the usual programs against each other by node
 * name, their out-of-band exchange over the guests' network and their data across the simulated fabric:
 * ibv_rc_pingpong checking every buffer and sleeping on completion events, perftest's ib_write_bw and
 * ib_send_lat, and qperf.
 */
class TwoGuestsVerbsTest {
    @TempDir Path share;

    /** Each program: a name for its status lines, the command (the client adds node0), a port for the handshake. */
    private static final List<String[]> PROGRAMS = List.of(
            new String[] {"PINGPONG", "ibv_rc_pingpong -d nicsim_0 -i 1 -r 16 -n 16 -s 4096 --chk -e"},
            new String[] {"WRITE_BW", "ib_write_bw -d nicsim_0 -n 50 -s 65536"},
            new String[] {"SEND_LAT", "ib_send_lat -d nicsim_0 -n 50 -s 64"});

    /**
     * Node 0 serves each program, node 1 runs its client against node0; before each client the two swap a
     * line over the guest network (busybox nc), once the server listens. qperf's server stays up for its
     * client's two tests, then is killed. Each end's status is printed (NAME_SERVER=, NAME_CLIENT=).
     */
    static String script(int node) {
        StringBuilder s = new StringBuilder(String.join("\n",
                "N=" + node + "; P=" + (1 - node),
                Guests.XCHG,
                "ibv_devinfo | grep -E 'hca_id|state'", ""));
        int port = 7200;
        for (String[] p : PROGRAMS) {
            if (node == 0)
                s.append(p[1]).append(" > /tmp/server.txt 2>&1 & srv=$!; sleep 2; xchg ").append(port)
                        .append(" ready > /dev/null; wait $srv; echo ").append(p[0])
                        .append("_SERVER=$?; cat /tmp/server.txt\n");
            else
                s.append("xchg ").append(port).append(" go > /dev/null; ").append(p[1]).append(" node0; echo ")
                        .append(p[0]).append("_CLIENT=$?\n");
            port += 10;
        }
        if (node == 0)
            s.append("qperf > /tmp/qperf.txt 2>&1 & srv=$!; sleep 2; xchg ").append(port)
                    .append(" ready > /dev/null; xchg ").append(port + 10).append(" done > /dev/null; kill $srv\n");
        else
            s.append("xchg ").append(port).append(" go > /dev/null; qperf node0 -t 2 -m 4096 rc_bw rc_lat; ")
                    .append("echo QPERF_CLIENT=$?; xchg ").append(port + 10).append(" done > /dev/null\n");
        return s.append("exit 0\n").toString();
    }

    @Test void twoGuestsRunTheVerbsProgramsAgainstEachOther() throws Exception {
        Path provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
        Served served = new Served("two-guests-verbs").start(Served.cluster());
        List<Guests.Ran> ran;
        try {
            ran = Guests.run(served, share, provider, 420, script(0), script(1));
            for (int i = 0; i < 100 && served.log().split("DMA maps left", -1).length < 3; i++) Thread.sleep(100);
        } finally {
            served.stop();
        }
        System.out.println("--- serve's log:\n" + served.log());
        String server = ran.get(0).console(), client = ran.get(1).console();
        for (Guests.Ran r : ran) {
            assertEquals(0, r.status(), "node" + r.node() + "'s script ran: " + r.console());
            assertTrue(r.console().contains("PORT_ACTIVE"), "node" + r.node() + " sees nicsim_0 up: " + r.console());
        }
        for (String[] p : PROGRAMS) {
            assertTrue(server.contains(p[0] + "_SERVER=0"), p[0] + "'s server on node0: " + server);
            assertTrue(client.contains(p[0] + "_CLIENT=0"), p[0] + "'s client on node1: " + client);
        }
        // 16 round trips of 4096 bytes, every received buffer checked at both ends (--chk)
        assertEquals(1, rows(server, "131072 bytes in [0-9.]+ seconds"), "the pingpong's server: " + server);
        assertEquals(1, rows(client, "131072 bytes in [0-9.]+ seconds"), "the pingpong's client: " + client);
        assertEquals(1, rows(client, "65536\\s+50\\s+[0-9.]+\\s+[0-9.]+"), "ib_write_bw's 50 writes of 64 KiB: "
                + client);
        assertEquals(1, rows(client, "64\\s+50\\s+[0-9.]+"), "ib_send_lat's 50 round trips of 64 B: " + client);
        assertTrue(client.contains("QPERF_CLIENT=0") && rows(client, "bw\\s+=\\s+[0-9.]+ [KMG]B/sec") == 1
                && rows(client, "latency\\s+=\\s+[0-9.]+ [mun]?s") == 1, "qperf's rc_bw and rc_lat: " + client);
        var counters = served.world.sim.counters();
        for (String node : List.of("node0", "node1")) {
            var c = counters.scope(node);
            assertTrue(c.get("Firmware.packets_out") > 0 && c.get("Firmware.packets_in") > 0,
                    node + "'s adapter sent and received: " + c.snapshot());
        }
        long least = 2L * 16 * 4096 + 50L * 65536;
        assertTrue(counters.get("Fabric.bytes") >= least, "the programs' data crossed the fabric: "
                + counters.get("Fabric.bytes") + " bytes, at least " + least);
        Guests.assertBothDriversClean(served);
    }

    /** How many lines of {@code text} are a row starting with {@code row} (a regular expression). */
    private static int rows(String text, String row) {
        Matcher m = Pattern.compile("(?m)^\\s*" + row).matcher(text);
        int n = 0;
        while (m.find()) n++;
        return n;
    }
}
