package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * iSCSI over iSER between two nodes, as Debian ships both ends (docs/attach.md R14): tgt's target ({@code tgtd}, its
 * iser driver) on node 1 with a LUN backed by a file, libiscsi's initiator tools on node 0. The login, the SCSI
 * commands and their status go by SEND; the data by the target's RDMA READs (writes) and WRITEs (reads) of the
 * initiator's registered buffers. tgt and libiscsi-bin are installed by scripts/ensure-tools.sh --rdma.
 */
class IserTest {
    private static final String TARGET = "iqn.2026-12.nicsim:disk1";
    private static final String INITIATOR = "iqn.2026-12.nicsim:init0";
    /** iscsi-test-cu logs a second initiator in for some tests; its name must pass the ACL too. */
    private static final String INITIATOR_2 = "iqn.2026-12.nicsim:init1";
    private static final int DISK_BYTES = 4 << 20;
    /** What libiscsi's WRITE16 test writes: 1 to 256 blocks of 0xa6 at the start of the LUN, then at its end. */
    private static final int WRITTEN = 256 * 512;

    private Served served;
    private Run tgtd;
    /** tgtd's management socket is /var/run/tgtd/socket.N, one per machine: a number of this test's own. */
    private final int control = Programs.port() + 300;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-iser").start(Served.cluster()); }

    @AfterEach
    void stop() throws Exception {
        if (tgtd != null) {
            // tgtd takes SIGTERM through its signalfd and goes on (R11), and tgtadm's "--op delete --mode system"
            // is refused while it has a target: killed
            tgtd.process().destroyForcibly();
            tgtd.await(30);
            served.awaitReleased();
        }
        served.stop();
    }

    private static boolean installed(String program) throws Exception {
        return new ProcessBuilder("sh", "-c", "command -v " + program).start().waitFor() == 0;
    }

    /** tgtadm on the host (tgtd's socket is in the host's /var/run), for this test's tgtd; its status and output. */
    private String tgtadm(int[] status, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("tgtadm", "-C", Integer.toString(control)));
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "tgtadm " + String.join(" ", args) + " hangs");
        status[0] = p.exitValue();
        return out;
    }

    private String tgtadm(String... args) throws Exception { return tgtadm(new int[1], args); }

    private void tgtadmOk(String... args) throws Exception {
        int[] status = new int[1];
        String out = tgtadm(status, args);
        assertEquals(0, status[0], "tgtadm " + String.join(" ", args) + ":\n" + out + "\ntgtd:\n" + tgtd.output());
    }

    /** libiscsi program {@code args} on node 0, to its end; asserts it exits 0; its output. */
    private String initiator(String... args) throws Exception {
        Run r = Programs.start(served, 0, false, args);
        int status = r.await(180);
        assertEquals(0, status, String.join(" ", args) + ":\n" + r.output() + "\ntgtd:\n" + tgtd.output()
                + "\n--- serve:\n" + served.log());
        return r.output();
    }

    @Test
    void libiscsiLogsInWritesAndReadsBackOverIser() throws Exception {
        assumeTrue(installed("tgtd") && installed("tgtadm"), "tgt is not installed (apt-get install tgt)");
        assumeTrue(installed("iscsi-test-cu"), "libiscsi-bin is not installed (apt-get install libiscsi-bin)");
        Path dir = Files.createTempDirectory("nicsim-iser");
        Path disk = dir.resolve("disk.img");
        byte[] before = new byte[DISK_BYTES];
        new Random(57).nextBytes(before);
        Files.write(disk, before);
        // the iser driver listens on RDMA CM port 3260 of node 1 (both IP versions, R11); its iscsi (TCP) driver's
        // portal, a real socket, is put on node 1's address at a port of this test's, away from the machine's 3260
        tgtd = Programs.start(served, 1, false, "tgtd", "-f", "-C", Integer.toString(control),
                "--iscsi", "portal=127.77.0.2:" + (Programs.port() + 301));
        int[] status = {1};
        for (int i = 0; i < 300 && status[0] != 0 && tgtd.process().isAlive(); i++) {
            tgtadm(status, "--op", "show", "--mode", "target");
            if (status[0] != 0) Thread.sleep(100);
        }
        assertEquals(0, status[0], "tgtd never answered tgtadm:\n" + tgtd.output());
        tgtadmOk("--lld", "iser", "--mode", "target", "--op", "new", "--tid", "1", "--targetname", TARGET);
        tgtadmOk("--lld", "iser", "--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "1",
                "--backing-store", disk.toString());
        tgtadmOk("--lld", "iser", "--mode", "target", "--op", "bind", "--tid", "1", "--initiator-address", "ALL");
        // tgt 1.0.85's iSER login wants the initiator's address AND its name in the ACLs (its TCP login either):
        // with the address alone every login is "Target not found" (R14; tgt fixed it in 1.0.95)
        for (String name : List.of(INITIATOR, INITIATOR_2))
            tgtadmOk("--lld", "iser", "--mode", "target", "--op", "bind", "--tid", "1", "--initiator-name", name);
        String lun = "iser://127.77.0.2/" + TARGET + "/1";

        String inq = initiator("iscsi-inq", "-i", INITIATOR, lun);
        assertTrue(inq.contains("Peripheral Device Type:DIRECT_ACCESS") && inq.contains("Vendor:IET")
                && inq.contains("Product:VIRTUAL-DISK"), inq);
        String capacity = initiator("iscsi-readcapacity16", "-i", INITIATOR, lun);
        assertTrue(capacity.contains("RETURNED LOGICAL BLOCK ADDRESS:" + (DISK_BYTES / 512 - 1))
                && capacity.contains("Total size:" + DISK_BYTES), capacity);

        // 512 WRITE16s (1 to 256 blocks at each end of the LUN), their data read by tgtd from node 0's buffers
        String write = testCu("ALL.Write16.Simple");
        assertTrue(Pattern.compile("asserts\\s+512\\s+512\\s+512\\s+0").matcher(write).find(), write);
        byte[] after = Files.readAllBytes(disk);
        for (int i = 0; i < DISK_BYTES; i++) {
            boolean written = i < WRITTEN || i >= DISK_BYTES - WRITTEN;
            assertEquals(written ? (byte) 0xa6 : before[i], after[i], "byte " + i + " of the LUN's file");
        }
        // 512 READ16s, each followed by a VERIFY16 that sends back what was read for tgtd to compare with the file
        // (BYTCHK 1): a byte read wrong is a MISCOMPARE, the command's failure
        String verify = testCu("ALL.Verify16.Simple");
        assertTrue(Pattern.compile("asserts\\s+1024\\s+1024\\s+1024\\s+0").matcher(verify).find(), verify);
        assertTrue(tgtd.output().contains("127.77.0.1 -> 127.77.0.2, established"), tgtd.output());
        // each test moves 1 + 2 + ... + 256 blocks at each end of the LUN: tgtd's RDMA READs of the written blocks
        // land in node 1's memory, its RDMA WRITEs of the blocks read in node 0's
        long moved = 2L * 512 * (256 * 257 / 2);
        assertTrue(served.world.sim.counters().scope("node1").get("Firmware.dma_write_bytes") >= moved,
                "node 1's adapter: " + served.world.sim.counters().scope("node1").snapshot());
        assertTrue(served.world.sim.counters().scope("node0").get("Firmware.dma_write_bytes") >= moved,
                "node 0's adapter: " + served.world.sim.counters().scope("node0").snapshot());
    }

    /** One test of libiscsi's SCSI suite against the LUN, destructive ones allowed; its summary. */
    private String testCu(String test) throws Exception {
        return initiator("iscsi-test-cu", "-d", "-s", "-i", INITIATOR, "-I", INITIATOR_2, "-t", test,
                "iser://127.77.0.2/" + TARGET + "/1");
    }
}
