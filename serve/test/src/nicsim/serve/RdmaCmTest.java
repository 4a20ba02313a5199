package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.fabric.Grh;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Debian's RDMA CM programs, unchanged, between two nodes through attach: the server on node 1,
 * the client on node 0 naming it by its name (node1, from attach's /etc/hosts). Connection setup
 * crosses the simulated fabric as CM MADs; the data the programs check crosses it after.
 */
class RdmaCmTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-rdmacm").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception { served.stop(); }

    /** Runs {@code server} on node 1 until it listens (serve's log says so),
            then {@code client} on node 0; both must end well. */
    private String[] pair(List<String> server, List<String> client) throws Exception {
        int listening = count(served.log(), "listens on");
        Run srv = Programs.start(served, 1, false, server.toArray(String[]::new));
        for (int i = 0; i < 600 && count(served.log(), "listens on") == listening && srv.process().isAlive(); i++)
            Thread.sleep(50);
        Run cli = Programs.start(served, 0, false, client.toArray(String[]::new));
        int c = cli.await(300), s = srv.await(300);
        String out = cli.output(), sout = srv.output();
        assertEquals(0, c, "client:\n" + out + "\nserver:\n" + sout + "\n--- serve:\n" + served.log());
        assertEquals(0, s, "server:\n" + sout + "\n--- serve:\n" + served.log());
        return new String[]{out, sout};
    }

    private static int count(String text, String what) { return text.split(Pattern.quote(what), -1).length - 1; }

    @Test
    void rpingCarriesTenPingsAndChecksThem() throws Exception {
        String[] out = pair(List.of("rping", "-s", "-v", "-C", "10", "-a", "0.0.0.0", "-p", "7174"),
                List.of("rping", "-c", "-v", "-C", "10", "-a", "node1", "-p", "7174"));
        // the client prints what came back by the server's RDMA WRITE; rping itself compares it with what it sent
        for (int i = 0; i < 10; i++) assertTrue(out[0].contains("ping data: rdma-ping-" + i + ": "), out[0]);
        assertEquals(10, count(out[1], "server ping data: rdma-ping-"), out[1]);
        assertFalse(out[0].contains("mismatch"), out[0]);
        assertTrue(served.log().contains("rping (pid ") && served.log().contains("listens on any address, port 7174"),
                served.log());
    }

    @Test
    void ucmatoseUdaddyAndTheRdmaServerClientPair() throws Exception {
        String[] rc = pair(List.of("ucmatose", "-c", "2"), List.of("ucmatose", "-c", "2", "-s", "node1"));
        assertTrue(rc[0].contains("data transfers complete") && rc[0].contains("return status 0"), rc[0]);
        String[] ud = pair(List.of("udaddy", "-c", "2"), List.of("udaddy", "-c", "2", "-s", "node1"));
        assertTrue(ud[0].contains("data transfers complete") && ud[0].contains("return status 0"), ud[0]);
        String[] api = pair(List.of("rdma_server"), List.of("rdma_client", "-s", "node1"));
        assertTrue(api[0].contains("rdma_client: end 0"), api[0]);
        assertTrue(api[1].contains("rdma_server: end 0"), api[1]);
    }

    /**
     * rdmacm-utils' other ways of running its connection tests: more connections, messages and bytes, the
     * IB port space, migrating identifiers between event channels (-m), IPv6 (an IPv4-mapped node address),
     * UD in the IPoIB port space; and cmtime's client, timing 20 connections (its server, by design, does
     * not exit: it is stopped).
     */
    @Test
    void rdmacmUtilsVariantsRun() throws Exception {
        List<List<List<String>>> pairs = List.of(
                List.of(List.of("ucmatose", "-c", "4", "-C", "50", "-S", "4096", "-p", "7320"),
                        List.of("ucmatose", "-c", "4", "-C", "50", "-S", "4096", "-p", "7320", "-s", "node1")),
                List.of(List.of("ucmatose", "-P", "ib", "-p", "7321"), List.of("ucmatose", "-P", "ib", "-p", "7321",
                        "-s", "node1")),
                List.of(List.of("ucmatose", "-m", "-p", "7322"),
                        List.of("ucmatose", "-m", "-p", "7322", "-s", "node1")),
                List.of(List.of("ucmatose", "-f", "ipv6", "-b", "::ffff:127.77.0.2", "-p", "7323"),
                        List.of("ucmatose", "-f", "ipv6", "-p", "7323", "-s", "::ffff:127.77.0.2")),
                List.of(List.of("udaddy", "-c", "4", "-C", "50", "-S", "1024"),
                        List.of("udaddy", "-c", "4", "-C", "50", "-S", "1024", "-s", "node1")),
                List.of(List.of("udaddy", "-P", "ipoib"), List.of("udaddy", "-P", "ipoib", "-s", "node1")));
        for (List<List<String>> p : pairs) {
            String[] out = pair(p.get(0), p.get(1));
            assertTrue(out[0].contains("data transfers complete") && out[0].contains("return status 0"),
                    String.join(" ", p.get(1)) + ":\n" + out[0]);
            assertTrue(out[1].contains("return status 0"), String.join(" ", p.get(0)) + ":\n" + out[1]);
        }
        assertTrue(served.log().contains("ucmatose"), served.log());
        int listening = count(served.log(), "listens on");
        Run srv = Programs.start(served, 1, false, "cmtime", "-c", "20", "-p", "7324");
        for (int i = 0; i < 600 && count(served.log(), "listens on") == listening && srv.process().isAlive(); i++)
            Thread.sleep(50);
        Run cli = Programs.start(served, 0, false, "cmtime", "-c", "20", "-p", "7324", "-s", "node1");
        int c = cli.await(120);
        srv.process().destroy();
        srv.await(30);
        assertEquals(0, c, cli.output() + "\n--- serve:\n" + served.log());
        assertTrue(Pattern.compile("(?m)^connect\\s*:\\s+[0-9.]+").matcher(cli.output()).find(), cli.output());
    }

    /**
     * cmtime on both sides with the simulated clock (attach --sim-time): its client's event thread reads the clock as
     * it takes each event while its main thread yields until that thread has counted the event. Time held for the
     * next event to be read, the reading for time to move, and neither program ever ended (before 2026-12-06).
     */
    @Test
    void cmtimeRunsOnTheSimulatedClock() throws Exception {
        Run srv = Programs.start(served, 1, true, "cmtime", "-c", "20", "-p", "7325");
        for (int i = 0; i < 600 && !served.log().contains("port 7325") && srv.process().isAlive(); i++)
            Thread.sleep(50);
        Run cli = Programs.start(served, 0, true, "cmtime", "-c", "20", "-p", "7325", "-s", "node1");
        try {
            assertEquals(0, cli.await(120), cli.output() + "\n--- server:\n" + srv.output() + "\n--- serve:\n"
                    + served.log());
        } finally {
            cli.process().destroy();
            srv.process().destroy();
            srv.await(30);
        }
        // the connections' figures are simulated ones: 20 connections take milliseconds, not the test's minutes
        Matcher m = Pattern.compile("(?m)^connect\\s*:\\s+([0-9.]+)").matcher(cli.output());
        assertTrue(m.find(), cli.output());
        assertTrue(Double.parseDouble(m.group(1)) < 1000, cli.output());
        // every reading is simulated, those before its device opened too: no span (resolve addr's begins before
        // the device opens) comes out negative, as it did (-8.5e11 ms) while the host's clock answered until then
        Matcher row = Pattern.compile("(?m)^(\\w[\\w ]*\\w)\\s*:\\s+(-?[0-9][-0-9.e+ ]*)$").matcher(cli.output());
        int rows = 0;
        for (; row.find(); rows++)
            for (String figure : row.group(2).trim().split("\\s+"))
                assertTrue(Double.parseDouble(figure) >= 0, row.group(1) + " is negative:\n" + cli.output());
        assertTrue(rows >= 7, cli.output()); // rdma-core 44: create id to destroy
    }

    /**
     * librdmacm's rdma_xserver/rdma_xclient: an RC QP made by rdma_create_ep with max_inline_data 0 still takes
     * the client's 16-byte inline SEND, as on mlx5 (the QP's WQE holds 76); and XRC through RDMA CM (-c x): an
     * XRC_SEND QP from rdma_create_ep connects in the IB port space to an XRC_RECV QP librdmacm makes when the
     * request comes, and the SEND lands in the XRC SRQ whose number the server's accept carried.
     */
    @Test
    void rdmaXserverAndXclientOverRcAndXrc() throws Exception {
        for (String type : List.of("r", "x")) {
            String port = type.equals("r") ? "7330" : "7331";
            String[] out = pair(List.of("rdma_xserver", "-c", type, "-p", port),
                    List.of("rdma_xclient", "-c", type, "-p", port, "-s", "node1"));
            assertTrue(out[0].contains("rdma_xclient: end 0"), type + ":\n" + out[0]);
            assertTrue(out[1].contains("rdma_xserver: end 0"), type + ":\n" + out[1]);
        }
        // serve's tables of the programs' QPs, once both have gone: the XRC initiator sent 16 bytes, the XRC
        // target received the one message
        served.awaitReleased();
        assertTrue(Pattern.compile("XRC_SEND\\s+16\\s+1\\s+0\\s").matcher(served.log()).find(), served.log());
        assertTrue(Pattern.compile("XRC_RECV\\s+0\\s+0\\s+1\\s").matcher(served.log()).find(), served.log());
    }

    @Test
    void perftestConnectsThroughRdmaCm() throws Exception {
        String[] bw = pair(List.of("ib_write_bw", "-R", "-n", "200"), List.of("ib_write_bw", "-R", "-n", "200",
                "node1"));
        Matcher m = Pattern.compile("(?m)^\\s*65536\\s+200\\s+([0-9.]+)\\s+([0-9.]+)").matcher(bw[0]);
        assertTrue(m.find() && Double.parseDouble(m.group(2)) > 0, bw[0]);
        String[] lat = pair(List.of("ib_send_lat", "-R", "-n", "200"), List.of("ib_send_lat", "-R", "-n", "200",
                "node1"));
        assertTrue(Pattern.compile("(?m)^\\s*2\\s+200\\s+[0-9.]+").matcher(lat[0]).find(), lat[0]);
    }

    /**
     * AF_IB addresses (-f gid: a port's GID, the port in the service ID), which librdmacm takes once its start-up
     * AF_IB bind succeeds: ucmatose's RC connections to a listener on any GID and udaddy's UD exchange (SIDR) with
     * one bound to node 1's GID; then an IP client reaches an AF_IB listener, as the kernel's RDMA CM lets it.
     */
    @Test
    void afIbAddressesConnectByGid() throws Exception {
        // node 1's port GID: the link-local prefix and its port GUID, 0x00021de500000002
        String gid = "fe80::2:1de5:0:2";
        String[] rc = pair(List.of("ucmatose", "-f", "gid", "-p", "7340"),
                List.of("ucmatose", "-f", "gid", "-p", "7340", "-s", gid));
        assertTrue(rc[0].contains("data transfers complete") && rc[0].contains("return status 0"), rc[0]);
        assertTrue(served.log().contains("listens on any GID (AF_IB, service ID 0x1061cac), port 7340"),
                served.log());
        String[] ud = pair(List.of("udaddy", "-f", "gid", "-b", gid), List.of("udaddy", "-f", "gid", "-s", gid));
        assertTrue(ud[0].contains("data transfers complete") && ud[0].contains("return status 0"), ud[0]);
        String full = Grh.text(0xfe80_0000_0000_0000L, served.world.host(1).firmware.management().guid());
        assertTrue(served.log().contains("listens on GID " + full + " (AF_IB, service ID 0x1111c06), port 7174"),
                served.log());
        String[] mixed = pair(List.of("ucmatose", "-f", "gid", "-p", "7341"),
                List.of("ucmatose", "-p", "7341", "-s", "node1"));
        assertTrue(mixed[0].contains("data transfers complete") && mixed[0].contains("return status 0"), mixed[0]);
    }

    @Test
    void aPortNoOneListensOnIsRejected() throws Exception {
        Run cli = Programs.start(served, 0, false, "rping", "-c", "-a", "node1", "-p", "7175", "-C", "1");
        int status = cli.await(120);
        assertNotEquals(0, status, cli.output());
        // the peer's CM answers the REQ with a REJ: invalid service ID (8)
        assertTrue(cli.output().contains("RDMA_CM_EVENT_REJECTED, error 8"), cli.output());
    }

    /** Our slow-accept server started on node 1 in {@code mode} and listening; the client started on node 0. */
    private Run[] slowAccept(String mode) throws Exception {
        String prog = Programs.compile("serve", "slow-accept", List.of(), "-lrdmacm", "-libverbs", "-lpthread")
                .resolve("slow-accept").toString();
        Run srv = Programs.start(served, 1, false, prog, "server", "7176", mode);
        for (int i = 0; i < 600 && !served.log().contains("port 7176") && srv.process().isAlive(); i++)
            Thread.sleep(50);
        return new Run[]{srv, Programs.start(served, 0, false, prog, "client", "node1", "7176")};
    }

    /**
     * A server that, between reading the REQ and accepting, has every thread asleep for 200 ms of wall time (one
     * waiting for another) while a third polls an empty CQ, then registers memory and makes its QP: the poll let
     * simulated time run on to the client's REQ timeout (68.7 s) and the client had UNREACHABLE (docs/attach.md R16,
     * Ceph's monitor in RDMA CM mode). Now time moves short of that timeout while the answer is owed.
     */
    @Test
    void aServerThatSleepsBeforeAcceptingIsNotOvertakenByTheClientsTimeout() throws Exception {
        Run[] r = slowAccept("slow");
        int c = r[1].await(120), s = r[0].await(120);
        assertEquals(0, c, "client:\n" + r[1].output() + "\nserver:\n" + r[0].output() + "\n--- serve:\n"
                + served.log());
        assertEquals(0, s, "server:\n" + r[0].output() + "\n--- serve:\n" + served.log());
        assertTrue(r[1].output().contains("sent"), r[1].output());
        assertTrue(r[0].output().contains("received: hello after a slow accept"), r[0].output());
        assertTrue(served.world.now() < CmExchange.REQ_WAIT_PICOS, "simulated time ran to " + served.world.now()
                + " ps");
    }

    /**
     * A server that holds the REQ and never answers: once it has had it for Activities.ANSWER_NANOS of wall time, the
     * client's REQ times out as on a fabric (UNREACHABLE, ETIMEDOUT), while the server still runs.
     */
    @Test
    void aRequestNeverAnsweredStillTimesOut() throws Exception {
        Run[] r = slowAccept("never");
        try {
            assertEquals(1, r[1].await(120), "client:\n" + r[1].output() + "\n--- serve:\n" + served.log());
            assertTrue(r[1].output().contains("event RDMA_CM_EVENT_UNREACHABLE, status -110"), r[1].output());
            assertTrue(r[0].process().isAlive(), "server:\n" + r[0].output());
            assertTrue(served.world.now() >= CmExchange.REQ_WAIT_PICOS, "simulated time: " + served.world.now()
                    + " ps");
        } finally {
            r[0].process().destroy();
            r[0].await(30);
        }
    }
    private static String timers() throws Exception {
        return Programs.compile("serve", "cm-timers", List.of(), "-lrdmacm", "-libverbs").resolve("cm-timers")
                .toString();
    }

    /** The milliseconds of simulated time cm-timers printed {@code event} after. */
    private static long after(String out, String event) {
        Matcher m = Pattern.compile("event " + event + ", status (-?\\d+), after (\\d+) ms").matcher(out);
        assertTrue(m.find(), event + " in:\n" + out);
        assertEquals("-110", m.group(1), out); // ETIMEDOUT
        return Long.parseLong(m.group(2));
    }

    /**
     * An address in the nodes' subnet that no node has: no one answers ARP, so, as in Linux's addr.c, the address
     * query waits its timeout (60 s here) in simulated time and ends RDMA_CM_EVENT_ADDR_ERROR, ETIMEDOUT; the
     * identifier is bound again, and resolves a node's address after. A program alone in rdma_get_cm_event used to
     * wait for ever (time moved only through events less than 1 ms ahead). An address outside the subnet has no
     * route and fails at once (ENETUNREACH), as Linux's route lookup does.
     */
    @Test
    void anAddressNoNodeHasTimesOutInSimulatedTime() throws Exception {
        String prog = timers();
        Run r = Programs.start(served, 0, true, prog, "unreached", "127.77.0.9", "60000", "127.77.0.2");
        assertEquals(0, r.await(60), r.output() + "\n--- serve:\n" + served.log());
        long ms = after(r.output(), "RDMA_CM_EVENT_ADDR_ERROR");
        assertTrue(ms >= 60000 && ms <= 60001, r.output());
        assertTrue(r.output().contains("event RDMA_CM_EVENT_ADDR_RESOLVED, status 0"), r.output());
        Run none = Programs.start(served, 0, true, prog, "unreached", "10.1.2.3", "2000", "127.77.0.2");
        assertEquals(0, none.await(60), none.output());
        assertTrue(none.output().contains("resolve_addr failed: errno 101"), none.output());
    }

    /**
     * A client that takes the server's REP and never answers it with the RTU (it connects without a QP, so librdmacm
     * hands it CONNECT_RESPONSE, and it holds that): once it has owed the answer for Activities.ANSWER_NANOS of wall
     * time, the REP's wait, the REQ's Local CM Response Timeout for each of its 16 tries (68.7 s of simulated time),
     * runs out, and the server gets what Linux's RDMA CM gives for the IB CM's REP_ERROR: UNREACHABLE, ETIMEDOUT.
     * Before, its wait for ESTABLISHED never ended.
     */
    @Test
    void aReplyNeverAcknowledgedTimesOutAtTheServer() throws Exception {
        String prog = timers();
        Run srv = Programs.start(served, 1, true, prog, "server", "7177");
        for (int i = 0; i < 600 && !served.log().contains("port 7177") && srv.process().isAlive(); i++)
            Thread.sleep(50);
        Run cli = Programs.start(served, 0, true, prog, "holder", "node1", "7177");
        try {
            assertEquals(1, srv.await(120), "server:\n" + srv.output() + "\nclient:\n" + cli.output()
                    + "\n--- serve:\n" + served.log());
            long ms = after(srv.output(), "RDMA_CM_EVENT_UNREACHABLE");
            assertTrue(Math.abs(ms * 1_000_000_000L - CmExchange.REQ_WAIT_PICOS) <= 1_000_000_000L, srv.output());
            assertTrue(cli.output().contains("holding the reply") && cli.process().isAlive(), cli.output());
        } finally {
            cli.process().destroy();
            cli.await(30);
        }
    }
}
