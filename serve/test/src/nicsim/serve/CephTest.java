package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Ceph's {@code async+rdma} messenger between two nodes (docs/attach.md, "The Debian verbs ecosystem", R16), as Debian
 * 12's Ceph 16.2 runs it: a monitor on node 0, one OSD (memstore) on node 1, and the {@code ceph} and {@code rados}
 * clients on node 0, all speaking to each other over RC QPs on nicsim0. The cluster lives in a temporary folder (its
 * own conf, keyring, monmap, logs and run files; no systemd, no /etc/ceph, no /var/lib/ceph). ceph-mon, ceph-osd and
 * ceph-common (about 200 MB installed) are not installed by scripts/ensure-tools.sh: without them the test is skipped.
 */
class CephTest {
    /** Bytes of the object stored and read back: 16 of the messenger's 64 KiB receive buffers. */
    private static final int OBJECT_BYTES = 1 << 20;

    private Served served;
    private final List<Run> daemons = new ArrayList<>();

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-ceph").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception {
        stopDaemons();
        served.stop();
    }

    /** Stops the OSD, then the monitor: ceph-osd and ceph-mon shut down on SIGTERM. */
    private void stopDaemons() throws Exception {
        for (int i = daemons.size() - 1; i >= 0; i--) {
            Run d = daemons.get(i);
            d.process().destroy();
            if (!d.process().waitFor(30, TimeUnit.SECONDS)) d.process().destroyForcibly();
            d.await(30);
        }
        daemons.clear();
    }

    private static boolean installed(String program) throws Exception {
        return new ProcessBuilder("sh", "-c", "command -v " + program).start().waitFor() == 0;
    }

    /** Runs a Ceph tool that touches no network (keyrings, monmaps, the monitor's mkfs) on this host; its output. */
    private static String offline(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", cmd) + " still running");
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ":\n" + out);
        return out;
    }

    /**
     * The cluster's configuration: every daemon and client on the RDMA messenger over nicsim0, no authentication (no
     * keys to hand around), one copy of each object. The messenger's buffers are cut from their defaults (32768
     * receive buffers of 128 KiB, 4096 posted) to 64 KiB buffers, 128 posted to the SRQ, so each process registers
     * tens of MiB rather than gigabytes.
     */
    private static String conf(Path dir, String fsid) {
        return String.join("\n",
                "[global]",
                "fsid = " + fsid,
                "mon host = [v2:127.77.0.1:3300,v1:127.77.0.1:6789]",
                "auth cluster required = none",
                "auth service required = none",
                "auth client required = none",
                "ms type = async+rdma",
                "ms async rdma device name = nicsim0",
                "ms async rdma buffer size = 65536",
                "ms async rdma send buffers = 128",
                "ms async rdma receive buffers = 512",
                "ms async rdma receive queue len = 128",
                "run dir = " + dir.resolve("run"),
                "admin socket = " + dir.resolve("run") + "/$name.asok",
                "pid file = " + dir.resolve("run") + "/$name.pid",
                "log file = " + dir.resolve("log") + "/$name.log",
                "crash dir = " + dir.resolve("crash"),
                "keyring = " + dir.resolve("keyring"),
                "mon data = " + dir.resolve("mon") + "/$id",
                "osd data = " + dir.resolve("osd") + "/$id",
                "osd objectstore = memstore",
                "memstore device bytes = 268435456",
                "osd pool default size = 1",
                "osd pool default min size = 1",
                "osd pool default pg num = 8",
                "osd pool default pgp num = 8",
                "osd crush chooseleaf type = 0",
                "mon allow pool size one = true",
                "mon warn on pool no redundancy = false",
                "[mon.a]",
                "public addr = 127.77.0.1",
                "[osd.0]",
                "public addr = 127.77.0.2",
                "cluster addr = 127.77.0.2",
                "");
    }

    /**
     * A new cluster's files in a folder of its own, with {@code more} lines of configuration; its monitor made, not
     * started. The configuration's path.
     */
    private static String cluster(String... more) throws Exception {
        assumeTrue(installed("ceph-mon") && installed("ceph-osd") && installed("rados"),
                "ceph is not installed (apt-get install ceph-mon ceph-osd ceph-common)");
        Path dir = Files.createTempDirectory("nicsim-ceph");
        for (String d : List.of("run", "log", "crash", "mon/a", "osd/0")) Files.createDirectories(dir.resolve(d));
        String conf = dir.resolve("ceph.conf").toString();
        String fsid = UUID.randomUUID().toString();
        Files.writeString(Path.of(conf), conf(dir, fsid).replace("[mon.a]", String.join("\n", more) + "\n[mon.a]"));
        offline("ceph-authtool", "--create-keyring", dir.resolve("keyring").toString(), "--gen-key", "-n", "mon.",
                "--cap", "mon", "allow *");
        offline("monmaptool", "--create", "--fsid", fsid, "--addv", "a", "[v2:127.77.0.1:3300,v1:127.77.0.1:6789]",
                dir.resolve("monmap").toString());
        offline("ceph-mon", "-c", conf, "--mkfs", "-i", "a", "--monmap", dir.resolve("monmap").toString(),
                "--keyring", dir.resolve("keyring").toString());
        return conf;
    }

    @Test
    void radosStoresAndReadsAnObjectThroughAnOsdOnTheOtherNode() throws Exception {
        String conf = cluster();
        Path dir = Path.of(conf).getParent();
        // the RDMA messenger (without RDMA CM) listens on TCP and swaps its QP's number, PSN, LID and GID over it
        Run mon = Programs.start(served, 0, false, "ceph-mon", "-c", conf, "-i", "a", "-f");
        daemons.add(mon);
        Programs.awaitListening(mon, 3300);
        String osdUuid = UUID.randomUUID().toString();
        assertEquals("0", last(Programs.runOk(served, 0, "ceph", "-c", conf, "osd", "new", osdUuid)));
        Programs.runOk(served, 1, "ceph-osd", "-c", conf, "-i", "0", "--mkfs", "--osd-uuid", osdUuid);
        daemons.add(Programs.start(served, 1, false, "ceph-osd", "-c", conf, "-i", "0", "-f"));
        assertTrue(Programs.runOk(served, 0, "ceph", "-c", conf, "osd", "pool", "create", "bench", "8")
                .contains("pool 'bench' created"));

        // the put waits for the OSD to boot and its placement groups to peer, over the messenger, then sends it
        byte[] data = new byte[OBJECT_BYTES];
        new Random(57).nextBytes(data);
        Files.write(dir.resolve("object.bin"), data);
        Run put = Programs.start(served, 0, false, "rados", "-c", conf, "-p", "bench", "put", "object",
                dir.resolve("object.bin").toString());
        assertEquals(0, put.await(240), "rados put:\n" + put.output() + "\nosd:\n" + daemons.get(1).output()
                + "\n--- serve:\n" + served.log());
        Programs.runOk(served, 0, "rados", "-c", conf, "-p", "bench", "get", "object",
                dir.resolve("read.bin").toString());
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("read.bin")), "the object's bytes, read back");
        String stat = Programs.runOk(served, 0, "rados", "-c", conf, "-p", "bench", "stat", "object");
        assertTrue(stat.contains("size " + OBJECT_BYTES), stat);

        // the object went into the OSD's receive buffers on node 1 and came back out of them by its adapter
        var node1 = served.world.sim.counters().scope("node1");
        assertTrue(node1.get("Firmware.dma_write_bytes") >= OBJECT_BYTES, "node 1's writes: " + node1.snapshot());
        assertTrue(node1.get("Firmware.packets_out") >= OBJECT_BYTES / 4096, "node 1's packets: " + node1.snapshot());
        assertTrue(served.log().contains("ceph-osd (pid ") && served.log().contains("opened node 1's adapter"),
                served.log());
        stopDaemons();
        served.awaitReleased();
    }

    /**
     * The messenger's RDMA CM mode (Ceph takes it for {@code iwarp} devices, but RDMA CM is the same on IB): the
     * monitor listens through RDMA CM, and each client's connection is a REQ it answers from its event loop, its
     * threads asleep on each other between reading the REQ and accepting. Simulated time ran on to the client's REQ
     * timeout meanwhile, and Ceph logged "rdma connection rejected" and connected again (docs/attach.md R16); now
     * that timeout waits for an answer owed ({@link RdmaCm#answerHorizon}).
     */
    @Test
    void monitorAnswersEveryConnectionRequestInRdmaCmMode() throws Exception {
        String conf = cluster("ms async rdma cm = true", "ms async rdma type = iwarp");
        Run mon = Programs.start(served, 0, false, "ceph-mon", "-c", conf, "-i", "a", "-f");
        daemons.add(mon);
        for (int i = 0; i < 600 && !served.log().contains("port 3300 (RDMA CM, node 0)"); i++) {
            assertTrue(mon.process().isAlive(), "ceph-mon ended:\n" + mon.output());
            Thread.sleep(50);
        }
        assertTrue(served.log().matches("(?s).*ceph-mon \\(pid \\d+\\) listens on 127\\.77\\.0\\.1, port 3300 "
                + "\\(RDMA CM, node 0\\).*"), served.log());
        // each run connects twice: to learn the monitor's map, then for its command
        for (int node : new int[]{1, 0, 1}) {
            String status = Programs.runOk(served, node, "ceph", "-c", conf, "-s");
            assertTrue(status.contains("quorum a"), status);
            assertFalse(status.contains("rdma connection rejected"), "a connection timed out:\n" + status
                    + "\n--- serve:\n" + served.log());
        }
    }

    /** The last line of {@code out}, ignoring the messenger's warning that the memlock limit is not infinite. */
    private static String last(String out) {
        String[] lines = out.strip().split("\n");
        return lines[lines.length - 1].strip();
    }
}
