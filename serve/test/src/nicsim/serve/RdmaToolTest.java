package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * iproute2's `rdma` tool, as Debian ships it, on an attached program's RDMA netlink
 * (interpose/nicsim-netlink.c): the device and its port as the node's adapter reports them, the
 * adapter's objects with the processes that own them, as the kernel's resource tracking lists them, and
 * its counters, the port's and those QPs are bound to (`rdma statistic qp`, the adapter's q counter sets).
 */
class RdmaToolTest {
    static Served served;

    @BeforeAll
    static void serve() throws Exception { served = new Served("nicsim-rdma").start(Served.cluster()); }

    @AfterAll
    static void stop() throws Exception { served.stop(); }

    private static String rdma(int node, String... args) throws Exception {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "rdma";
        System.arraycopy(args, 0, cmd, 1, args.length);
        Programs.Run r = Programs.start(served, node, false, cmd);
        assertEquals(0, r.await(60), "rdma " + String.join(" ", args) + ":\n" + r.output());
        return r.output();
    }

    private static String guid(long g) {
        return String.format("%04x:%04x:%04x:%04x", g >>> 48 & 0xffff, g >>> 32 & 0xffff, g >>> 16 & 0xffff,
                g & 0xffff);
    }

    @Test
    void devAndLinkShowEachNodesAdapter() throws Exception {
        for (int node = 0; node < 2; node++) {
            String dev = rdma(node, "dev", "show");
            String g = guid(DeviceQueries.nodeGuid(node));
            assertTrue(dev.startsWith("0: nicsim0: node_type ca fw 1.0.0 node_guid " + g + " sys_image_guid " + g),
                    "node " + node + "'s rdma dev:\n" + dev);
            String link = rdma(node, "link", "show");
            int lid = served.world.host(node).firmware.lid();
            assertTrue(link.startsWith("link nicsim0/1 subnet_prefix fe80:0000:0000:0000 lid " + lid
                    + " sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP"),
                    "node " + node + "'s rdma link:\n" + link);
        }
        assertTrue(rdma(0, "system", "show").startsWith("netns shared copy-on-fork on"));
        // libibverbs finds the device through the same netlink now (its GET and GET_CHARDEV): it must still open it
        Programs.Run devinfo = Programs.start(served, 1, false, "ibv_devinfo");
        assertEquals(0, devinfo.await(60), devinfo.output());
        assertTrue(devinfo.output().contains("node_guid:\t\t\t" + guid(DeviceQueries.nodeGuid(1))), devinfo.output());
    }

    @Test
    void resShowsAProgramsObjectsWithItsPidAndNothingAfterItGoes() throws Exception {
        int port = Programs.port() + 57;
        // line-buffered, so its "local address" line (with its QPN) shows before a client comes
        Programs.Run srv = Programs.start(served, 1, false, "stdbuf", "-oL", "ibv_rc_pingpong", "-p",
                Integer.toString(port));
        Programs.awaitListening(srv, port);
        long qpn = Long.parseLong(Programs.waitFor(srv::output, Pattern.compile("QPN 0x([0-9a-f]+)"), 30), 16);
        long pid = srv.process().pid();
        String qps = rdma(1, "res", "show", "qp");
        assertTrue(qps.contains("link nicsim0/1 lqpn " + qpn + " rqpn 0 type RC state INIT rq-psn 0 sq-psn 0 ")
                && qps.contains("pid " + pid + " comm ibv_rc_pingpong"),
                "its QP, in INIT until a client comes:\n" + qps);
        String cqs = rdma(1, "res", "show", "cq");
        assertTrue(cqs.matches("(?s).*dev nicsim0 cqn \\d+ cqe \\d+ users 1 poll-ctx DIRECT adaptive-moderation off "
                + "pid " + pid + " comm ibv_rc_pingpong.*"), cqs);
        String mrs = rdma(1, "res", "show", "mr");
        assertTrue(mrs.matches("(?s).*dev nicsim0 mrn \\d+ rkey 0x[0-9a-f]+ lkey 0x[0-9a-f]+ iova 0x[0-9a-f]+ "
                + "mrlen 4096 pdn \\d+ pid " + pid + " comm ibv_rc_pingpong.*"), mrs);
        String pds = rdma(1, "res", "show", "pd");
        assertTrue(pds.matches("(?s).*dev nicsim0 pdn \\d+ users 2 pid " + pid + " comm ibv_rc_pingpong.*"),
                "its PD holds its QP and its MR:\n" + pds);
        String summary = rdma(1, "res", "show");
        assertTrue(summary.matches("(?s)0: nicsim0: pd [1-9]\\d* cq [1-9]\\d* qp [1-9]\\d* mr [1-9]\\d*\\s*"), summary);
        // node 0's adapter holds none of it
        assertFalse(rdma(0, "res", "show", "qp").contains("pid " + pid), "node 0 lists node 1's QP");
        srv.process().destroy();
        srv.await(30);
        String after = rdma(1, "res", "show", "qp") + rdma(1, "res", "show", "mr");
        // serve sees the program's socket close a moment after it exits
        for (int i = 0; i < 50 && after.contains("pid " + pid); i++) {
            Thread.sleep(100);
            after = rdma(1, "res", "show", "qp") + rdma(1, "res", "show", "mr");
        }
        assertFalse(after.contains("pid " + pid), "objects of a program that ended:\n" + after);
    }

    /** `rdma statistic show` after a pingpong: node 1's adapter counters, each the value the model counted. */
    @Test
    void statisticShowsTheAdaptersCounters() throws Exception {
        int port = Programs.port() + 58;
        Programs.Run srv = Programs.start(served, 1, false, "ibv_rc_pingpong", "-p", Integer.toString(port), "-n",
                "50");
        Programs.awaitListening(srv, port);
        Programs.Run cli = Programs.start(served, 0, false, "ibv_rc_pingpong", "-p", Integer.toString(port), "-n", "50",
                "localhost");
        assertEquals(0, cli.await(60), cli.output());
        assertEquals(0, srv.await(60), srv.output());
        String stat = rdma(1, "statistic", "show").trim();
        assertTrue(stat.startsWith("link nicsim0/1 "), stat);
        var counted = served.world.sim.counters().scope("node1");
        Matcher m = Pattern.compile("(\\S+) (\\d+)").matcher(stat.substring("link nicsim0/1 ".length()));
        int shown = 0;
        long total = 0;
        while (m.find()) {
            assertEquals(counted.get(m.group(1)), Long.parseLong(m.group(2)), m.group(1) + " in:\n" + stat);
            shown++;
            total += Long.parseLong(m.group(2));
        }
        assertTrue(shown > 0 && total > 0, "node 1 counted its pingpong's traffic:\n" + stat);
    }

    /** Node 1's `rdma statistic mr` line of MR {@code mrn} ("" if it lists none). */
    private static String mrStat(long mrn) throws Exception {
        for (String line : rdma(1, "statistic", "mr").split("\n"))
            if (line.startsWith("dev nicsim0 mrn " + mrn + " ")) return line.trim();
        return "";
    }

    /** The MR number of node 1's MR owned by {@code pid}, from `rdma res show mr`. */
    private static long mrnOf(long pid) throws Exception {
        String mrs = rdma(1, "res", "show", "mr");
        Matcher m = Pattern.compile("mrn (\\d+) .* pid " + pid + " ").matcher(mrs);
        assertTrue(m.find(), "an MR of pid " + pid + ":\n" + mrs);
        return Long.parseLong(m.group(1));
    }

    /**
     * `rdma statistic mr`: an on-demand MR's page faults, invalidations and prefetches, by mlx5's names. An
     * ibv_rc_pingpong server registering its buffer on demand (-o) has none until its client's first ping lands
     * in a page not present; one that prefetches it (-P) shows the prefetch at once. The MR goes with its program.
     * The port has no optional counters (`statistic mode supported` lists none).
     */
    @Test
    void statisticMrCountsAnOnDemandRegionsPaging() throws Exception {
        int port = Programs.port() + 61;
        Programs.Run srv = Programs.start(served, 1, false, "stdbuf", "-oL", "ibv_rc_pingpong", "-o", "-p",
                Integer.toString(port), "-n", "1000000");
        Programs.Run cli = null, ahead = null;
        try {
            Programs.awaitListening(srv, port);
            long mrn = mrnOf(srv.process().pid());
            assertEquals("dev nicsim0 mrn " + mrn + " page_faults 0 page_invalidations 0 page_prefetch 0",
                    mrStat(mrn), "nothing touched its pages yet");
            cli = Programs.start(served, 0, false, "ibv_rc_pingpong", "-p", Integer.toString(port), "-n", "1000000",
                    "localhost");
            String faulted = mrStat(mrn);
            for (int i = 0; i < 300 && faulted.contains(" page_faults 0 "); i++) {
                Thread.sleep(100);
                faulted = mrStat(mrn);
            }
            // one buffer of one page: the first ping faults it in, and it stays (nothing invalidates it)
            assertEquals("dev nicsim0 mrn " + mrn + " page_faults 1 page_invalidations 0 page_prefetch 0", faulted);
            assertEquals(faulted, rdma(1, "statistic", "mr", "mrn", Long.toString(mrn)).trim(), "one MR by its number");
            int port2 = port + 100;
            ahead = Programs.start(served, 1, false, "ibv_rc_pingpong", "-o", "-P", "-p", Integer.toString(port2));
            Programs.awaitListening(ahead, port2);
            long prefetched = mrnOf(ahead.process().pid());
            assertEquals("dev nicsim0 mrn " + prefetched + " page_faults 0 page_invalidations 0 page_prefetch 1",
                    mrStat(prefetched));
            cli.process().destroy();
            srv.process().destroy();
            srv.await(30);
            String after = mrStat(mrn);
            for (int i = 0; i < 50 && !after.isEmpty(); i++) {
                Thread.sleep(100);
                after = mrStat(mrn);
            }
            assertEquals("", after, "the MR goes with its program");
        } finally {
            for (Programs.Run r : Arrays.asList(cli, srv, ahead)) if (r != null) r.process().destroy();
        }
        String modes = rdma(1, "statistic", "mode", "supported");
        assertFalse(modes.contains("optional-counters"), "no optional counters:\n" + modes);
    }

    /** `rdma statistic qp show` on node 1: each counter's line by the LQPNs it lists ("" if none lists {@code qpn}). */
    private static String counterOf(long qpn) throws Exception {
        for (String c : rdma(1, "statistic", "qp", "show").split("(?=link nicsim0/1 cntn)"))
            if (c.matches("(?s).*LQPN: <([0-9,]*,)?" + qpn + "(,[0-9,]*)?>.*")) return c;
        return "";
    }

    private static Map<String, Long> values(String counter) {
        Map<String, Long> v = new HashMap<>();
        Matcher m = Pattern.compile("(Firmware\\.\\w+) (\\d+)").matcher(counter);
        while (m.find()) v.put(m.group(1), Long.parseLong(m.group(2)));
        return v;
    }

    /** Polls node 1's counter of {@code qpn} until its {@code name} passes {@code above}; the counter's text. */
    private static String counterPast(long qpn, String name, long above) throws Exception {
        String c = counterOf(qpn);
        for (int i = 0; i < 300 && values(c).getOrDefault(name, -1L) <= above; i++) {
            Thread.sleep(100);
            c = counterOf(qpn);
        }
        assertTrue(values(c).getOrDefault(name, -1L) > above, name + " stayed at most " + above + ":\n" + c);
        return c;
    }

    /**
     * Auto mode by QP type on node 1: ibv_rc_pingpong's QP is bound to a counter as it enters INIT, whose
     * counts are zero until a client comes and then move with the traffic while the adapter's own counters
     * count it too; the counter goes with the QP.
     */
    @Test
    void autoModeGivesAPingpongsQpACounterThatMovesWithItsTraffic() throws Exception {
        assertTrue(rdma(1, "statistic", "qp", "mode").contains("link nicsim0/1 mode qp auto off"));
        rdma(1, "statistic", "qp", "set", "link", "nicsim0/1", "auto", "type", "on");
        Programs.Run srv = null, cli = null;
        try {
            assertTrue(rdma(1, "statistic", "qp", "mode").contains("link nicsim0/1 mode qp auto type on"));
            int port = Programs.port() + 59;
            srv = Programs.start(served, 1, false, "stdbuf", "-oL", "ibv_rc_pingpong", "-p", Integer.toString(port),
                    "-n", "1000000");
            Programs.awaitListening(srv, port);
            Programs.Run s = srv;
            long qpn = Long.parseLong(Programs.waitFor(s::output, Pattern.compile("QPN 0x([0-9a-f]+)"), 30), 16);
            String idle = counterOf(qpn);
            assertTrue(idle.matches("(?s)link nicsim0/1 cntn \\d+ qp-type RC .*"), "bound in INIT:\n" + idle);
            assertEquals(0L, values(idle).get("Firmware.packets_in"), idle);
            assertEquals(0L, values(idle).get("Firmware.dma_write_bytes"), idle);
            cli = Programs.start(served, 0, false, "ibv_rc_pingpong", "-p", Integer.toString(port), "-n", "1000000",
                    "localhost");
            Map<String, Long> first = values(counterPast(qpn, "Firmware.packets_in", 0));
            Map<String, Long> later = values(counterPast(qpn, "Firmware.packets_in", first.get("Firmware.packets_in")));
            assertTrue(later.get("Firmware.packets_out") > first.get("Firmware.packets_out"),
                    later + " after " + first);
            assertTrue(later.get("Firmware.dma_write_bytes") > first.get("Firmware.dma_write_bytes"),
                    "the pings land in its receive buffers: " + later + " after " + first);
            assertTrue(later.get("Firmware.dma_read_bytes") > 0, "its pongs are read from its buffer: " + later);
            long adapter = served.world.sim.counters().scope("node1").get("Firmware.packets_in");
            assertTrue(adapter >= later.get("Firmware.packets_in"), "the adapter counts it too: " + adapter);
            cli.process().destroy();
            srv.process().destroy();
            srv.await(30);
            String after = counterOf(qpn);
            for (int i = 0; i < 50 && !after.isEmpty(); i++) {
                Thread.sleep(100);
                after = counterOf(qpn);
            }
            assertEquals("", after, "the counter goes with its last QP");
        } finally {
            if (cli != null) cli.process().destroy();
            if (srv != null) srv.process().destroy();
            rdma(1, "statistic", "qp", "set", "link", "nicsim0/1", "auto", "off");
        }
    }

    /** Manual mode: a QP bound by hand, then unbound; what cannot be bound is refused with the kernel's errno. */
    @Test
    void manualBindAndUnbindAQpByItsNumber() throws Exception {
        int port = Programs.port() + 60;
        Programs.Run srv = Programs.start(served, 1, false, "stdbuf", "-oL", "ibv_rc_pingpong", "-p",
                Integer.toString(port));
        try {
            Programs.awaitListening(srv, port);
            long qpn = Long.parseLong(Programs.waitFor(srv::output, Pattern.compile("QPN 0x([0-9a-f]+)"), 30), 16);
            assertEquals("", counterOf(qpn), "no counter before a bind");
            rdma(1, "statistic", "qp", "bind", "link", "nicsim0/1", "lqpn", Long.toString(qpn));
            String bound = counterOf(qpn);
            Matcher id = Pattern.compile("cntn (\\d+) ").matcher(bound);
            assertTrue(id.find(), "bound by hand:\n" + bound);
            assertTrue(bound.contains("LQPN: <" + qpn + ">"), bound);
            Programs.Run twice = Programs.start(served, 1, false, "rdma", "statistic", "qp", "bind", "link",
                    "nicsim0/1", "lqpn", Long.toString(qpn));
            assertNotEquals(0, twice.await(60), "a QP is bound once:\n" + twice.output());
            Programs.Run none = Programs.start(served, 1, false, "rdma", "statistic", "qp", "bind", "link",
                    "nicsim0/1", "lqpn", "999999");
            assertNotEquals(0, none.await(60), none.output());
            assertTrue(none.output().contains("No such file or directory"), "ENOENT:\n" + none.output());
            rdma(1, "statistic", "qp", "unbind", "link", "nicsim0/1", "cntn", id.group(1), "lqpn", Long.toString(qpn));
            assertEquals("", counterOf(qpn), "unbound, its counter gone");
        } finally {
            srv.process().destroy();
        }
    }
}
