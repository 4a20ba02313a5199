package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.serve.ProviderBuild;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guest's own rdma-core on the kernel driver: Debian's unmodified libibverbs and its programs in a
 * guest on node 0 of a serve, loading nicsim's provider, which picks its kern back end (the device is
 * a kernel uverbs device bound to nicsim_ib) and talks to the driver through uverbs alone: objects by
 * ibv_cmd_* with nicsim-abi.h's udata, rings and the UAR page mapped, WQEs, CQEs and doorbells its own.
 * kern-verbs.c adds what Debian's programs do not reach: CQ resize, ibv_wr_*, memory windows.
 */
class GuestVerbsTest {
    @TempDir Path share;

    /**
     * ibv_devinfo, then ibv_rc_pingpong's, ibv_uc_pingpong's, ibv_ud_pingpong's and ibv_srq_pingpong's
     * (two RC QPs receiving from one SRQ) server and client in the one guest over 127.0.0.1, each
     * validating the bytes it received (--chk), then perftest's ib_write_bw and ib_send_lat the same
     * way. Each step's status is printed, so a failure names it.
     */
    private static final String PROGRAMS = "ibv_devinfo -v; echo DEVINFO=$?; ./kern-verbs; echo KERNX=$?; "
            + pair("ibv_rc_pingpong -d nicsim_0 -i 1 -r 16 -n 8 -s 4096 --chk", "PINGPONG")
            + pair("ibv_uc_pingpong -d nicsim_0 -i 1 -r 16 -n 8 -s 1024 --chk", "UC")
            + pair("ibv_ud_pingpong -d nicsim_0 -i 1 -r 16 -n 8 -s 1024 --chk", "UD")
            + pair("ibv_srq_pingpong -d nicsim_0 -i 1 -q 2 -r 16 -n 8 -s 1024 --chk", "SRQ")
            + pair("ib_write_bw -d nicsim_0 -n 20 -s 4096", "WRITE_BW")
            + pair("ib_send_lat -d nicsim_0 -n 20 -s 64", "SEND_LAT")
            + "dmesg | grep -E 'nicsim' | tail -20";

    /** {@code program}'s server in the background, its client to 127.0.0.1, then both statuses (NAME_CLIENT=...). */
    private static String pair(String program, String name) {
        return program + " > /tmp/server.txt 2>&1 & srv=$!; sleep 3; " + program + " 127.0.0.1; echo " + name
                + "_CLIENT=$?; wait $srv; echo " + name + "_SERVER=$?; cat /tmp/server.txt; ";
    }

    /**
     * kern-verbs.c (test resources), what the kern back end offers beyond Debian's programs: CQ resize,
     * ibv_create_cq_ex and ibv_wr_*, memory windows of both types. Built here with the flags the
     * provider's build uses, into the shared folder, for the guest (Debian 12, as the host) to run.
     */
    private void buildKernVerbs() throws Exception {
        Path src = share.resolve("kern-verbs.c");
        try (var in = GuestVerbsTest.class.getResourceAsStream("kern-verbs.c")) {
            Files.copy(in, src);
        }
        Process cc = new ProcessBuilder("gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", src.toString(),
                "-libverbs", "-o", share.resolve("kern-verbs").toString()).redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, cc.waitFor(), "kern-verbs.c builds warning-free: " + out);
    }

    @Test void theGuestsRdmaCoreRunsOnTheKernelDriverThroughUverbs() throws Exception {
        buildKernVerbs();
        Path provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
        GuestRun run = GuestRun.onNode0("guest-verbs", PROGRAMS, share, provider, 300);
        String text = run.console();
        assertEquals(0, run.status(), "the guest ran the programs: " + text);
        assertTrue(text.contains("DEVINFO=0"), "ibv_devinfo found the device: " + text);
        assertTrue(text.contains("hca_id:\tnicsim_0"), "libibverbs took nicsim_0 with nicsim's provider: " + text);
        assertTrue(text.contains("vendor_id:\t\t\t0x1de5"), "the vendor id is docs/device.md's: " + text);
        assertTrue(text.contains("PORT_ACTIVE"), "its port is active: " + text);
        // the kern back end's CQ resize, extended CQ and ibv_wr_*, and memory windows (kern-verbs.c)
        for (String step : new String[] {"ibv_resize_cq with six completions waiting: ok",
                "RDMA WRITE through ibv_wr_*: ok", "type 1 window: ibv_bind_mw, WRITE through its rkey: ok",
                "type 2 window: ibv_wr_bind_mw, WRITE, ibv_wr_local_inv, a WRITE refused: ok"})
            assertTrue(text.contains("KERNX " + step), step + ": " + text);
        assertTrue(text.contains("KERNX=0"), "kern-verbs passed: " + text);
        for (String program : new String[] {"PINGPONG", "UC", "UD", "SRQ", "WRITE_BW", "SEND_LAT"})
            for (String end : new String[] {"_CLIENT=0", "_SERVER=0"})
                assertTrue(text.contains(program + end), program + end + ": " + text);
        // each pingpong end prints the bytes it moved, every received buffer checked (--chk)
        assertEquals(8, rows(text, "\\d+ bytes in [0-9.]+ seconds"), "four pingpongs, two ends each: " + text);
        assertEquals(2, rows(text, "65536 bytes in"), "RC: 8 round trips of 4096 bytes: " + text);
        assertEquals(6, rows(text, "16384 bytes in"), "UC, UD and SRQ: 8 round trips of 1024 bytes: " + text);
        // perftest's result rows, at both ends: the size and the iterations asked for, all completed
        assertEquals(2, rows(text, "4096\\s+20\\s+[0-9.]+\\s+[0-9.]+"), "ib_write_bw's 20 writes of 4096 B: " + text);
        assertEquals(2, rows(text, "64\\s+20\\s+[0-9.]+"), "ib_send_lat's 20 round trips of 64 B: " + text);
        run.assertTheAdapterWasUsedCleanly();
    }

    /** How many lines of {@code text} are a row starting with {@code row} (a regular expression). */
    private static int rows(String text, String row) {
        Matcher m = Pattern.compile("(?m)^\\s*" + row).matcher(text);
        int n = 0;
        while (m.find()) n++;
        return n;
    }
}
