package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Programs of Debian's verbs ecosystem that work on nicsim and no other test runs (docs/attach.md, "The
 * Debian verbs ecosystem"), each unchanged as Debian ships it: rdmacm-utils' rcopy (rsockets), fio's rdma
 * engine, libfabric's fi_pingpong over the verbs provider (msg, dgram, and rdm over rxm), MPICH, and dapl2-utils'
 * dapltest and dtest (over dapl's UD and socket CMs). fio, libfabric-bin,
 * mpich and dapl2-utils are installed by scripts/ensure-tools.sh --rdma: without one, its test is skipped, saying
 * which is missing.
 */
class EcosystemTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-eco").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception { served.stop(); }

    private static boolean installed(String program) throws Exception {
        return new ProcessBuilder("sh", "-c", "command -v " + program).start().waitFor() == 0;
    }

    private static int count(String text, String what) { return text.split(Pattern.quote(what), -1).length - 1; }

    /** Starts {@code server} on node 1 and waits until serve's log says one more program listens (RDMA CM). */
    private Run listening(String... server) throws Exception {
        int before = count(served.log(), "listens on");
        Run srv = Programs.start(served, 1, false, server);
        for (int i = 0; i < 600 && count(served.log(), "listens on") == before && srv.process().isAlive(); i++)
            Thread.sleep(50);
        assertTrue(srv.process().isAlive(), "the server ended before listening:\n" + srv.output());
        return srv;
    }

    @Test
    void rcopyCopiesAFileOverRsockets() throws Exception {
        Path dir = Files.createTempDirectory("nicsim-rcopy");
        byte[] data = new byte[1 << 20];
        new Random(57).nextBytes(data);
        Files.write(dir.resolve("src.bin"), data);
        // rcopy's server serves copies for ever: it is stopped once the client's copy is done
        Run srv = listening("rcopy", "-p", "7480");
        Run cli = Programs.start(served, 0, false, "rcopy", dir.resolve("src.bin").toString(),
                "node1:" + dir.resolve("dst.bin"), "-p", "7480");
        int status = cli.await(120);
        srv.process().destroy();
        srv.await(30);
        assertEquals(0, status, cli.output() + "\nserver:\n" + srv.output() + "\n--- serve:\n" + served.log());
        assertTrue(srv.output().contains((1 << 20) + " bytes...closing...done"), srv.output());
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("dst.bin")), "the copy's bytes");
        served.awaitReleased();
    }

    @Test
    void riostreamWritesThroughRsocketsIoMaps() throws Exception {
        // riostream polls its rsockets with a zero timeout, in user space, from both sides: on this loaded machine
        // neither got 3/4 of a CPU, so they were not taken for spinners and time stood still (R4); 20 transfers, as
        // each costs about a second of wall time here (one look at the programs per DMA write into the spinner)
        Run srv = listening("riostream", "-b", "0.0.0.0", "-S", "4096", "-C", "20", "-p", "7472");
        Run cli = Programs.start(served, 0, false, "riostream", "-s", "node1", "-S", "4096", "-C", "20", "-p", "7472");
        int c = cli.await(120), s = srv.await(60);
        assertEquals(0, c, cli.output() + "\nserver:\n" + srv.output() + "\n--- serve:\n" + served.log());
        assertEquals(0, s, srv.output());
        // "custom 4k 20 1 160k ...": 20 transfers of 4 KiB, written into the peer's mapped buffer
        for (String out : List.of(cli.output(), srv.output()))
            assertTrue(Pattern.compile("(?m)^custom\\s+4k\\s+20\\s+1\\s+160k").matcher(out).find(), out);
        served.awaitReleased();
    }

    /** fio's rdma engine between node 0 (the sender) and node 1, over RDMA CM, both at {@code depth}; their output. */
    private String[] fio(String verb, int port, int depth) throws Exception {
        Run srv = listening("fio", "--name=receiver", "--ioengine=rdma", "--port=" + port, "--rw=read", "--bs=64k",
                "--size=4m", "--iodepth=" + depth);
        Run cli = Programs.start(served, 0, false, "fio", "--name=sender", "--ioengine=rdma", "--hostname=node1",
                "--port=" + port, "--verb=" + verb, "--rw=write", "--bs=64k", "--size=4m", "--iodepth=" + depth);
        int c = cli.await(180), s = srv.await(60);
        assertEquals(0, c, "fio --verb=" + verb + ":\n" + cli.output() + "\nserver:\n" + srv.output()
                + "\n--- serve:\n" + served.log());
        assertEquals(0, s, srv.output());
        return new String[]{cli.output(), srv.output()};
    }

    @Test
    void fioRdmaEngineWritesAndReads() throws Exception {
        assumeTrue(installed("fio"), "fio is not installed (apt-get install fio)");
        for (String verb : List.of("write", "read")) {
            String[] out = verb.equals("write") ? fio(verb, 5555, 1) : fio(verb, 5556, 1);
            // 64 blocks of 64 KiB, each a verb on the adapter; fio counts an error on any bad completion
            assertTrue(out[0].contains("err= 0") && out[0].contains("io=4096KiB"), out[0]);
            assertTrue(out[0].contains("issued rwts: total=0,64,0,0"), out[0]);
        }
        assertTrue(served.world.sim.counters().get("Fabric.packets") >= 2 * 4096 / 4, "the blocks crossed the fabric");
    }

    /**
     * fio's SENDs: the receiver posts a receive per block it has queued (its iodepth) and RDMA CM gives the sender's
     * QP the RNR retry count fio asks, 0, so the receiver must queue as deep as the sender, as on any device: with
     * fewer, the first RNR NAK ends the sender's QP (docs/attach.md R8). Four SENDs in flight, each received whole.
     */
    @Test
    void fioRdmaEngineSendsToPostedReceives() throws Exception {
        assumeTrue(installed("fio"), "fio is not installed (apt-get install fio)");
        String[] out = fio("send", 5557, 4);
        assertTrue(out[0].contains("err= 0") && out[0].contains("issued rwts: total=0,64,0,0"), out[0]);
        assertTrue(out[1].contains("err= 0") && out[1].contains("issued rwts: total=64,0,0,0"), out[1]);
        assertTrue(served.world.sim.counters().scope("node1").get("Firmware.packets_in") >= 64 * 65536 / 4096,
                "the SENDs' packets reached node 1: " + served.world.sim.counters().scope("node1").snapshot());
    }

    /** fi_pingpong over libfabric's {@code provider} and endpoint type {@code ep}: server on node 1, client on 0. */
    private void fiPingpong(String provider, String ep, int port) throws Exception {
        Run srv = Programs.start(served, 1, false, "fi_pingpong", "-p", provider, "-e", ep, "-I", "100", "-S", "1024",
                "-B", Integer.toString(port));
        Programs.awaitListening(srv, port);
        Run cli = Programs.start(served, 0, false, "fi_pingpong", "-p", provider, "-e", ep, "-I", "100", "-S", "1024",
                "-P", Integer.toString(port), "node1");
        int c = cli.await(120), s = srv.await(60);
        assertEquals(0, c, provider + " " + ep + ":\n" + cli.output() + "\nserver:\n" + srv.output()
                + "\n--- serve:\n" + served.log());
        assertEquals(0, s, srv.output());
        // 100 ping-pongs of 1 KiB, each acknowledged: "1k 100 =100 200k ..."
        assertTrue(Pattern.compile("(?m)^1k\\s+100\\s+=100\\s+200k").matcher(cli.output()).find(), cli.output());
    }

    @Test
    void fiPingpongOverLibfabricsVerbsProvider() throws Exception {
        assumeTrue(installed("fi_pingpong"), "libfabric-bin is not installed (apt-get install libfabric-bin)");
        // fi_pingpong exchanges addresses over TCP to the server's name, node1, then its endpoints' over libfabric.
        // msg: RC through RDMA CM, the server's endpoint given no address: libfabric binds it to localhost, which
        // RDMA CM takes as any address, and advertises its device's address (ib0's) instead, as on a cluster.
        // dgram: UD. rdm: rxm's RC connections, made by RDMA CM on the first message while its peer polls its CQ.
        int port = Programs.port() + 57;
        fiPingpong("verbs", "msg", port);
        fiPingpong("verbs", "dgram", port + 1);
        fiPingpong("verbs;ofi_rxm", "rdm", port + 2);
        assertTrue(served.log().matches("(?s).*fi_pingpong \\(pid \\d+\\) listens on 127\\.77\\.0\\.2, port \\d+ "
                + "\\(RDMA CM, node 1\\).*"), "the msg server listens on node 1's address:\n" + served.log());
        for (String node : List.of("node0", "node1"))
            assertTrue(served.world.sim.counters().scope(node).get("Firmware.packets_out") >= 3 * 100,
                    "the ping-pongs went through " + node + "'s adapter: "
                            + served.world.sim.counters().scope(node).snapshot());
    }

    @Test
    void mpichRunsAPingPongWithItsPmiOverAPort() throws Exception {
        assumeTrue(installed("mpiexec.mpich") && installed("mpicc.mpich"), "mpich is not installed (apt-get install"
                + " mpich)");
        Path dir = MpiJobs.compilePingpong("mpicc.mpich");
        // -pmi-port: hydra gives each rank its PMI as a TCP port on this machine and its rank as PMI_ID (the
        // descriptor way, PMI_FD through attach, is AttachCliTest's)
        Path perRank = MpiJobs.perRankScript(dir, "PMI_ID", 2,
                r -> Attach.command(served.socket, r, List.of(dir.resolve("mpi-pingpong").toString())));
        String out = MpiJobs.run(List.of("mpiexec.mpich", "-pmi-port", "-n", "2", perRank.toString()), served);
        // every byte of 1 B to 1 MiB checked by the program; the ranks' RC QPs carried it between the nodes
        assertTrue(out.contains("allreduce over 2 ranks; 0 wrong"), out);
        served.awaitReleased();
        MpiJobs.assertSentOverRc(served, 2);
    }

    @Test
    void dapltestSendsAndReceivesOverRdmaCm() throws Exception {
        assumeTrue(installed("dapltest"), "dapl2-utils is not installed (apt-get install dapl2-utils)");
        // as dapl2-utils ships it: attach's /etc/dat.conf names each node's nicsim0, its RDMA CM provider
        // (libdaplofa) by the node's address (ofa-v2-nicsim0), as a cluster's names a host's IPoIB address
        Run srv = listening("dapltest", "-T", "S", "-D", "ofa-v2-nicsim0");
        // its control connection, then one for the test, which the server accepts after taking the first down
        // while its main thread polls a CQ: the client's connect must not time out meanwhile (R10)
        Run cli = Programs.start(served, 0, false, "dapltest", "-T", "T", "-s", "node1", "-D",
                "ofa-v2-nicsim0", "-i", "100", "-t", "1", "-w", "1", "client", "SR", "4096", "server", "SR", "4096");
        int c = cli.await(120);
        srv.process().destroyForcibly();
        srv.await(30);
        assertEquals(0, c, cli.output());
        assertFalse(cli.output().contains("CONN_ERR") || cli.output().contains("UNREACHABLE"), cli.output()
                + "\nserver:\n" + srv.output() + "\n--- serve:\n" + served.log());
        // 100 SENDs of 4 KiB each way: dapltest checks every one and prints its figures only when all came
        assertTrue(cli.output().contains("Total Send       :       0.40 MB"), cli.output());
        assertTrue(cli.output().contains("Total Recv       :       0.40 MB"), cli.output());
        assertTrue(served.world.sim.counters().scope("node1").get("Firmware.packets_out") >= 100,
                "the SENDs went through node 1's adapter: " + served.world.sim.counters().scope("node1").snapshot());
    }

    @Test
    void dtestWritesReadsAndPingPongsOverDaplsUdCm() throws Exception {
        // dapl's UD-based CM (libdaploucm) on each node's nicsim0 port 1, as attach's /etc/dat.conf names it
        dtest("ofa-v2-nicsim0-1u");
    }

    @Test
    void dtestWritesReadsAndPingPongsOverDaplsSocketCm() throws Exception {
        // dapl's socket CM (libdaploscm, Debian's ofa-v2-mlx4_0-1): QPs exchanged over TCP from the address of the
        // interface DAPL_SCM_NETDEV names, which attach sets to the node's ib0; it crashed (inet_ntop of the port
        // GID into dapl's NULL gid_str, which only a GID as short as fe80::2 fits) and gave the machine's address
        Run[] ends = dtest("ofa-v2-nicsim0-1");
        assertTrue(ends[1].output().contains("Local Address AF_INET - 127.77.0.2 port"), ends[1].output());
        assertTrue(ends[0].output().contains("Server Net Address: 127.77.0.2 port"), ends[0].output());
    }

    /**
     * dtest between node 1 (server) and node 0 with provider {@code provider}: the server hands its address to the
     * client over TCP (port 15828, to node1). dtest's defaults move 1000 WRITEs of 4 MiB each way (8 GB, half an
     * hour of wall time here: docs/attach.md R13), so 20 of 64 KiB, then its READs and 100 ping-pongs. The client's
     * run and the server's.
     */
    private Run[] dtest(String provider) throws Exception {
        assumeTrue(installed("dtest"), "dapl2-utils is not installed (apt-get install dapl2-utils)");
        List<String> args = List.of("dtest", "-P", provider, "-B", "20", "-b", "65536");
        Run srv = Programs.start(served, 1, false, args.toArray(new String[0]));
        Programs.awaitListening(srv, 15828);
        Run cli = Programs.start(served, 0, false, concat(args, List.of("-h", "node1")));
        int c = cli.await(120), s = srv.await(60);
        for (Run r : List.of(cli, srv)) {
            assertTrue(r.output().contains("DAPL Test Complete. PASSED"), r.output() + "\n--- serve:\n" + served.log());
            // "RDMA write (bi-direction): ... 40 x 65536": 20 WRITEs each way, counted by the program
            assertTrue(r.output().contains("RDMA write (bi-direction)") && r.output().contains("40 x 65536"),
                    r.output());
        }
        assertEquals(0, c, cli.output());
        assertEquals(0, s, srv.output());
        assertTrue(cli.output().contains("CLIENT: RCV RDMA read buffer contains: server RDMA read data"), cli.output());
        // each wait with nothing in flight used to run simulated time on to a dead ACK timer (4.29 s, dapl's
        // timeout 20) before the poll was answered empty; the whole run is milliseconds of the adapters' time
        assertTrue(served.world.now() < 1_000_000_000_000L, "simulated " + served.world.now() + " ps");
        assertEquals(0, served.world.sim.counters().get("Firmware.retransmits"), "nothing was lost");
        assertTrue(served.world.sim.counters().scope("node1").get("Firmware.packets_out") >= 20 * 65536 / 4096,
                "node 1's WRITEs: " + served.world.sim.counters().scope("node1").snapshot());
        return new Run[]{cli, srv};
    }

    private static String[] concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all.toArray(new String[0]);
    }
}
