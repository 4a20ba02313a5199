package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Debian's unmodified ibverbs-utils binaries on simulated adapters: each runs through {@link
 * Attach} against a {@link Server} on a thread of this JVM, finds its node's device through
 * libibverbs, and its RDMA traffic crosses the simulated fabric.
 */
class AttachTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-attach").start(Served.cluster()); }

    @AfterEach
    void stopServing() throws Exception { served.stop(); }

    private Run start(int node, String... program) throws Exception { return start(node, false, program); }

    private Run start(int node, boolean simulatedTime, String... program) throws Exception {
        return Programs.start(served, node, simulatedTime, program);
    }

    private String serverLog() { return served.log(); }

    /**
     * The server's log once {@code p} is found in it, or as it stands after 30 s: the server writes
     * what a program did (its line, its QPs' table) on its own thread, after the program has exited.
     */
    private String logOnceItHas(Pattern p) throws InterruptedException {
        long t0 = System.nanoTime();
        String log;
        while (!p.matcher(log = serverLog()).find() && System.nanoTime() - t0 < 30_000_000_000L) Thread.sleep(20);
        return log;
    }

    @Test
    void ibvDevicesAndDevinfoSeeTheNodesAdapter() throws Exception {
        Run devices = start(1, "ibv_devices");
        assertEquals(0, devices.await(), devices.output());
        assertTrue(devices.output().contains("nicsim0"), "every node's adapter is nicsim0: " + devices.output());
        assertTrue(devices.output().contains(String.format("%016x", DeviceQueries.nodeGuid(1))), "node 1's GUID: "
                + devices.output());
        Run info = start(1, "ibv_devinfo", "-v");
        assertEquals(0, info.await(), info.output() + serverLog());
        String o = info.output();
        int lid = served.world.host(1).firmware.lid();
        assertTrue(o.contains("hca_id:\tnicsim0"), o);
        assertTrue(o.contains("PORT_ACTIVE (4)") && o.contains("port_lid:\t\t" + lid), o);
        assertTrue(o.contains("vendor_id:\t\t\t0x1de5"), "neither Mellanox's nor EFA's: " + o);
        assertTrue(o.contains("max_msg_sz:\t\t0x40000000"), "fw.max.msg.size of the profile: " + o);
        long g = DeviceQueries.nodeGuid(1); // GID[0]: the link-local prefix and the port GUID (IBA 4.1.1)
        assertTrue(o.contains(String.format("GID[  0]:\t\tfe80:0000:0000:0000:%04x:%04x:%04x:%04x",
                g >>> 48, (g >>> 32) & 0xffff, (g >>> 16) & 0xffff, g & 0xffff)), o);
    }

    @Test
    void ibvRcPingpongRunsBetweenTwoNodesAcrossTheFabric() throws Exception {
        long packetsBefore = served.world.sim.counters().get("Fabric.packets");
        Run srv = start(1, "ibv_rc_pingpong", "-n", "200", "-s", "4096", "-p", Integer.toString(Programs.port()));
        // the server listens on TCP before the client connects, as when a user starts them by hand
        Programs.awaitListening(srv, Programs.port());
        Run cli = start(0, "ibv_rc_pingpong", "-n", "200", "-s", "4096", "-p", Integer.toString(Programs.port()),
                "localhost");
        assertEquals(0, cli.await(), cli.output() + "\n--- server:\n" + srv.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, srv.await(), srv.output() + serverLog());
        for (Run r : List.of(srv, cli)) {
            assertTrue(r.output().contains("1638400 bytes in"), r.output()); // 4096 B x 200, each way
            assertTrue(r.output().contains("200 iters in"), r.output());
        }
        // each side sends 200 messages of 4 KiB in packets of the pingpong's default MTU, 1 KiB, each message ACKed
        // once
        assertEquals(2 * 200 * (4 + 1), served.world.sim.counters().get("Fabric.packets") - packetsBefore);
        served.awaitReleased(); // the server sees each program's socket close a moment after the program exits
        String log = logOnceItHas(Pattern.compile("ibv_rc_pingpong \\(pid .*exited after"));
        assertTrue(log.contains("ibv_rc_pingpong (pid ") && log.contains("exited after"), log);
    }

    @Test
    void completionEventsReachIbvGetCqEvent() throws Exception {
        Run srv = start(1, "ibv_rc_pingpong", "-e", "-n", "50", "-p", Integer.toString(Programs.port() + 1));
        Programs.awaitListening(srv, Programs.port() + 1);
        Run cli = start(0, "ibv_rc_pingpong", "-e", "-n", "50", "-p", Integer.toString(Programs.port() + 1),
                "localhost");
        assertEquals(0, cli.await(), cli.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, srv.await(), srv.output());
        assertTrue(cli.output().contains("50 iters in") && srv.output().contains("50 iters in"),
                cli.output() + srv.output());
    }

    @Test
    void perftestWriteBandwidthPrintsItsTable() throws Exception {
        long bytesBefore = served.world.sim.counters().get("Firmware.dma_write_bytes");
        Run srv = start(1, "ib_write_bw", "-n", "100", "-p", Integer.toString(Programs.port() + 2));
        Programs.awaitListening(srv, Programs.port() + 2);
        Run cli = start(0, "ib_write_bw", "-n", "100", "-p", Integer.toString(Programs.port() + 2), "localhost");
        assertEquals(0, cli.await(), cli.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, srv.await(), srv.output());
        for (Run r : List.of(srv, cli)) {
            assertTrue(r.output().contains("RDMA_Write BW Test"), r.output());
            assertTrue(r.output().matches("(?s).*\\n 65536\\s+100\\s+.*"), "the result row: " + r.output());
        }
        // perftest's default: 100 WRITEs of 64 KiB into the server's buffer, by DMA into its process memory
        assertTrue(served.world.sim.counters().get("Firmware.dma_write_bytes") - bytesBefore >= 100 * 65536L);
        // and the simulator's own table of the client's QP, in simulated time: near the model's link rate, not the wall
        // clock's
        Pattern rowOfClient = Pattern.compile("0x[0-9a-f]+\\s+RC\\s+65536\\s+100\\s+0\\s+([0-9.]+)");
        String log = logOnceItHas(rowOfClient);
        Matcher row = rowOfClient.matcher(log);
        assertTrue(row.find(), log);
        assertTrue(Double.parseDouble(row.group(1)) > 30, "simulated Gb/s: " + row.group(1));
    }

    /**
     * perftest's --odp registers its buffers ON_DEMAND once ibv_query_device_ex's odp_caps offer
     * the operation: SENDs into on-demand receive buffers and READ responses into an on-demand
     * buffer fault their pages in, and the tests finish with their tables.
     */
    @Test
    void perftestRunsWithOnDemandPaging() throws Exception {
        int p = Programs.port() + 9;
        for (String test : List.of("ib_send_bw", "ib_read_bw")) {
            long faults = served.world.sim.counters().get("Firmware.odp_page_faults");
            Run srv = start(1, test, "--odp", "-n", "40", "-s", "16384", "-p", Integer.toString(p));
            Programs.awaitListening(srv, p);
            Run cli = start(0, test, "--odp", "-n", "40", "-s", "16384", "-p", Integer.toString(p), "localhost");
            assertEquals(0, cli.await(),
                    cli.output() + "\n--- server:\n" + srv.output() + "\n--- serve:\n" + serverLog());
            assertEquals(0, srv.await(), srv.output());
            assertTrue(cli.output().matches("(?s).*\\n 16384\\s+40\\s+.*"), test + ", the result row: " + cli.output());
            assertTrue(served.world.sim.counters().get("Firmware.odp_page_faults") > faults,
                    test + ": on-demand pages faulted in");
            served.awaitReleased();
        }
    }

    @Test
    void killingAProgramMidRunLeavesTheSimulatorServingTheNext() throws Exception {
        Run srv = start(1, "ibv_rc_pingpong", "-n", "1000000", "-p", Integer.toString(Programs.port() + 3));
        Programs.awaitListening(srv, Programs.port() + 3);
        Run cli = start(0, "ibv_rc_pingpong", "-n", "1000000", "-p", Integer.toString(Programs.port() + 3),
                "localhost");
        long t0 = System.nanoTime();
        while (served.world.sim.counters().get("Fabric.packets") < 1000 && System.nanoTime() - t0 < 60_000_000_000L)
            Thread.sleep(50);
        assertTrue(served.world.sim.counters().get("Fabric.packets") >= 1000, "the pair got going: " + serverLog());
        cli.process().destroyForcibly().waitFor();
        srv.process().destroyForcibly().waitFor(); // its peer gone, it would wait forever
        served.awaitReleased();
        // a fresh pair on the same nodes
        Run srv2 = start(1, "ibv_rc_pingpong", "-n", "20", "-p", Integer.toString(Programs.port() + 4));
        Programs.awaitListening(srv2, Programs.port() + 4);
        Run cli2 = start(0, "ibv_rc_pingpong", "-n", "20", "-p", Integer.toString(Programs.port() + 4), "localhost");
        assertEquals(0, cli2.await(), cli2.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, srv2.await(), srv2.output());
    }

    /** More of Debian's programs, with their defaults and a short run: each side exits 0 and prints its result. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "ibv_uc_pingpong -n 50 | 50 iters in", "ibv_ud_pingpong -n 50 | 50 iters in",
            "ibv_srq_pingpong -n 50 | 50 iters in",
            "ib_send_bw -n 100 | 65536      100", "ib_read_bw -n 100 | 65536      100",
            "ib_send_lat -n 100 | 2       100",
            "ib_atomic_bw -n 100 | 8          100", "ibv_rc_pingpong -n 50 -m 2048 | 50 iters in",
            "ib_write_bw -q 4 -n 100 | 65536      400",
            "ib_read_lat -n 100 | 2       100", "ib_write_lat -n 50 | 2       50", "ib_write_bw -a -n 5 | 8388608    5",
            "ibv_xsrq_pingpong -n 20 | success"})
    void otherProgramsRunUnchanged(String command, String result) throws Exception {
        List<String> args = new ArrayList<>(List.of(command.split(" ")));
        args.addAll(List.of("-p", Integer.toString(Programs.port() + 5)));
        Run srv = start(1, args.toArray(String[]::new));
        Programs.awaitListening(srv, Programs.port() + 5);
        args.add("localhost");
        Run cli = start(0, args.toArray(String[]::new));
        assertEquals(0, cli.await(), cli.output() + "\n--- server:\n" + srv.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, srv.await(), srv.output() + serverLog());
        assertTrue(cli.output().contains(result), cli.output());
        assertTrue(served.world.sim.counters().get("Fabric.packets") >= 100,
                "the traffic crossed the simulated fabric");
    }

    /** ibstat and ibstatus read /sys/class/infiniband directly: attach shows the node's adapter there too. */
    @Test
    void ibstatAndIbstatusSeeTheNodesPort() throws Exception {
        int lid = served.world.host(1).firmware.lid();
        Run stat = start(1, "ibstat");
        assertEquals(0, stat.await(), stat.output());
        String o = stat.output();
        assertTrue(o.contains("CA 'nicsim0'") && o.contains("State: Active") && o.contains("Base lid: " + lid), o);
        assertTrue(o.contains(String.format("Node GUID: 0x%016x", DeviceQueries.nodeGuid(1))), o);
        Run status = start(1, "ibstatus");
        assertEquals(0, status.await(), status.output());
        assertTrue(status.output().contains("base lid:\t 0x" + Integer.toHexString(lid))
                && status.output().contains("4: ACTIVE"), status.output());
    }

    /**
     * A program polling its CQs in turn (as UCX does) sees a completion on one while it polls another
     * empty one, microseconds after it, in simulated time: not when the next far event (another
     * QP's ACK timeout, a second ahead) lets the simulation rest, as it did.
     */
    @Test
    void aCompletionOnAnotherCqIsSeenAtOnce() throws Exception {
        Path dir = compile("two-cqs", "-libverbs");
        Run r = start(0, true, dir.resolve("two-cqs").toString());
        assertEquals(0, r.await(), r.output() + "\n--- serve:\n" + serverLog());
        assertTrue(r.output().contains("write completion seen after"), r.output());
    }

    /**
     * The runs are made on a busy machine (two threads spinning beside them): a program's thread is then often woken
     * late, or looked at in /proc while it wakes, and none of that may move where its verbs land in simulated time.
     */
    @Test
    void withSimulatedTimeAPingpongPrintsTheSameFiguresOnEveryRun() throws Exception {
        AtomicBoolean busy = new AtomicBoolean(true);
        List<Thread> spinners = List.of(new Thread(() -> spin(busy)), new Thread(() -> spin(busy)));
        for (Thread t : spinners) {
            t.setDaemon(true);
            t.start();
        }
        try {
            pingpongTwice();
        } finally {
            busy.set(false);
            for (Thread t : spinners) t.join();
        }
    }

    private static void spin(AtomicBoolean busy) {
        long x = 0;
        while (busy.get()) x += System.nanoTime() & 1;
        if (x == -1) System.out.println(x); // keeps the loop's work
    }

    private void pingpongTwice() throws Exception {
        List<String> first = null;
        for (int run = 0; run < 2; run++) {
            if (run > 0) { served.stop(); served.start(Served.cluster()); }
            String port = Integer.toString(Programs.port() + 6);
            Run srv = start(1, true, "ibv_rc_pingpong", "-n", "300", "-s", "4096", "-p", port);
            Programs.awaitListening(srv, Programs.port() + 6);
            Run cli = start(0, true, "ibv_rc_pingpong", "-n", "300", "-s", "4096", "-p", port, "localhost");
            assertEquals(0, cli.await(), cli.output() + serverLog());
            assertEquals(0, srv.await(), srv.output());
            List<String> figures = new ArrayList<>();
            for (Run r : List.of(cli, srv))
                for (String line : r.output().split("\n"))
                    if (line.contains(" in ") && line.contains("seconds")) figures.add(line.strip());
            assertEquals(4, figures.size(), figures.toString());
            // simulated microseconds per iteration: a 4 KiB SEND each way and back, a few microseconds, not the wall
            // clock's
            double usec = Double.parseDouble(figures.get(1).replaceAll(".*= ([0-9.]+) usec/iter", "$1"));
            assertTrue(usec > 1 && usec < 50, figures.toString());
            if (first == null) first = figures;
            else assertEquals(first, figures, "the same figures on both runs");
        }
    }

    @Test
    void asynchronousEventsReachIbvGetAsyncEvent() throws Exception {
        // a program of the test's own, built as the provider is: warning-free
        Path dir = compile("async-events", "-libverbs");
        Run r = start(0, dir.resolve("async-events").toString());
        assertEquals(0, r.await(), r.output() + serverLog());
        // CQ overflow: CQ_ERR names the CQ and QP_FATAL the QP, by the program's own pointers
        assertTrue(r.output().contains("event CQ error cq"), r.output());
        assertTrue(r.output().contains("event local work queue catastrophic error qp"), r.output());
    }

    /**
     * Two programs on node 1 join one XRC domain by opening the same file (one makes the target QP
     * and an SRQ, the other only an SRQ), and one XRC connection from node 0 reaches both SRQs.
     */
    @Test
    void twoProgramsShareAnXrcDomainThroughAFile() throws Exception {
        Path dir = compile("xrc-share", "-libverbs");
        String prog = dir.resolve("xrc-share").toString(), file = dir.resolve("domain").toString();
        Run target = start(1, prog, "target", dir.toString(), file);
        Run other = start(1, prog, "srq", dir.toString(), file);
        Run sender = start(0, prog, "send", dir.toString());
        assertEquals(0, sender.await(), sender.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, target.await(), target.output() + serverLog());
        assertEquals(0, other.await(), other.output() + serverLog());
        assertTrue(sender.output().contains("sent 2 messages through one XRC connection"), sender.output());
        assertTrue(target.output().contains("target got \"to the target process\""), target.output());
        assertTrue(other.output().contains("srq got \"to the srq process\""), other.output());
    }

    /**
     * A C program written against mlx5's direct verbs (mlx5dv_create_qp with DC attributes, the
     * ibv_wr_* API, mlx5dv_wr_set_dc_addr) runs unchanged on simulated adapters: a DC initiator on
     * node 0 WRITEs, READs back and SENDs to a DC target on node 1, and a wrong DC key is refused;
     * the same ibv_wr_* API then SENDs on a UD QP. Through either of the provider's drivers.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void mlx5dvDcProgramRunsUnchanged(boolean cDriver) throws Exception {
        Path dir = compile("dc-write", "-lmlx5", "-libverbs");
        String prog = dir.resolve("dc-write").toString();
        Run target = start(1, Programs.withDriver(cDriver, prog, "target", dir.toString()));
        Run init = start(0, Programs.withDriver(cDriver, prog, "init", dir.toString()));
        assertEquals(0, init.await(), init.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, target.await(), target.output() + serverLog());
        assertTrue(init.output().contains("WRITE, READ and SEND over one DC connection, 3000 bytes read back equal"),
                init.output());
        assertTrue(init.output().contains("under a wrong DC key: remote access error"), init.output());
        assertTrue(target.output().contains("target got \"hello over DC\" (13 bytes"), target.output());
        assertTrue(init.output().contains("UD send through ibv_wr_*: success"), init.output());
        assertTrue(target.output().contains("target got \"hello over UD\" on its UD QP"), target.output());
        assertTrue(served.world.sim.counters().get("Firmware.dc_key_violations") >= 1,
                "the target counted the wrong key");
        assertEquals(cDriver, serverLog().contains("opened node 0's adapter as a user context"), serverLog());
    }

    /**
     * A C program on mlx5's indirect mkeys (mlx5dv_create_mkey, mlx5dv_wr_mr_interleaved and
     * mlx5dv_wr_mr_list on an RC QP from mlx5dv_create_qp) runs unchanged: node 0 WRITEs and READs a
     * matrix column on node 1 through one rkey, and node 1 SENDs bytes gathered from two buffers.
     * Through either of the provider's drivers.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void mlx5dvIndirectMkeyProgramRunsUnchanged(boolean cDriver) throws Exception {
        Path dir = compile("umr-column", "-lmlx5", "-libverbs");
        String prog = dir.resolve("umr-column").toString();
        Run owner = start(1, Programs.withDriver(cDriver, prog, "owner", dir.toString()));
        Run peer = start(0, Programs.withDriver(cDriver, prog, "peer", dir.toString()));
        assertEquals(0, peer.await(),
                peer.output() + "\n--- owner:\n" + owner.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, owner.await(), owner.output() + serverLog());
        assertTrue(owner.output().contains("owner: two indirect mkeys laid out (MLX5DV_WC_UMR)"), owner.output());
        assertTrue(peer.output().contains("peer: WRITE and READ through the column mkey, 256 bytes read back equal"),
                peer.output());
        assertTrue(owner.output().contains(
                "owner: the peer's WRITE changed column bytes 16..23 of all 32 rows and nothing else"), owner.output());
        assertTrue(peer.output().contains("peer: got \"hello world\" (11 bytes) gathered through the list mkey"),
                peer.output());
        assertEquals(cDriver, serverLog().contains("opened node 1's adapter as a user context"), serverLog());
    }

    /**
     * A C program on libibverbs' tag-matching verbs (ibv_create_srq_ex with IBV_SRQT_TM,
     * ibv_post_srq_ops, tm_types.h's headers) runs unchanged: an eager message and a rendezvous land
     * in their tagged buffers on node 1, and node 0 receives the FIN. Through either of the provider's
     * drivers.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void tagMatchingProgramRunsUnchanged(boolean cDriver) throws Exception {
        Path dir = compile("tm-tags", "-libverbs");
        String prog = dir.resolve("tm-tags").toString();
        Run recv = start(1, Programs.withDriver(cDriver, prog, "recv", dir.toString()));
        Run send = start(0, Programs.withDriver(cDriver, prog, "send", dir.toString()));
        assertEquals(0, send.await(), send.output() + "\n--- recv:\n" + recv.output() + "\n--- serve:\n" + serverLog());
        assertEquals(0, recv.await(), recv.output() + serverLog());
        assertTrue(recv.output().contains("recv: eager \"eager hello\" and a 20000-byte rendezvous in their tagged "
                + "buffers, tags read with ibv_wc_read_tm_info"), recv.output());
        assertTrue(send.output().contains("send: FIN received (opcode 2, tag 0xbeef)"), send.output());
        assertTrue(recv.output().contains("recv: tm_caps max_num_tags 256 max_ops 16"), recv.output());
        assertEquals(cDriver, serverLog().contains("opened node 1's adapter as a user context"), serverLog());
    }

    private static Path compile(String name, String... libs) throws Exception {
        return Programs.compile("serve", name, List.of("meet.h"), libs);
    }
}
