package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.abi.Cmd;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The adapter as a QEMU guest's PCI function (libnicsim/qemu, nicsim-qemu-remote): a Debian kernel
 * under TCG finds vendor 0x1de5 device 0x10 with a 32-bit BAR0, reads the firmware revision through
 * BAR0, and runs QUERY_HCA_CAP by writing a command entry into its RAM and ringing the doorbell:
 * the adapter DMA-reads the entry and DMA-writes the answer into the guest's RAM, where the guest
 * reads it (with busybox devmem, in RAM the kernel was told to leave alone so /dev/mem may reach it).
 * Beside it the bridge's ivshmem-doorbell function, which carries the adapter's interrupts
 * (QemuBridgeEventsTest). A command entry the guest placed outside its RAM is told in serve's log, as
 * any driver's mistake.
 */
class QemuBridgeTest {
    /** Guest-physical address of the command entry; the input and output mailboxes follow at +4 and +8 KiB. */
    private static final long ENTRY = TestGuest.RESERVED;
    /** A guest-physical address past the guest's RAM (256 MiB) and below its PCI hole: no DMA may land there. */
    private static final long NOT_RAM = 0x4000_0000L;
    /** QUERY_HCA_CAP's output mailbox: two header words and a word per result. */
    private static final int OUT_BYTES = (2 + Cmd.HCA_CAP.fields().size()) * 8;

    /** The guest's /init: lists PCI functions, then drives ours by hand with devmem, and powers off. */
    private static String init(boolean mistake) {
        long in = ENTRY + 0x1000, out = ENTRY + 0x2000;
        return String.join("\n",
                "#!/bin/busybox sh",
                "/bin/busybox --install -s /bin",
                "mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev",
                "dev=",
                "for d in /sys/bus/pci/devices/*; do",
                "  echo \"pci: ${d##*/} [$(cat $d/vendor):$(cat $d/device)]\"",
                "  [ \"$(cat $d/vendor) $(cat $d/device)\" = \"0x1de5 0x0010\" ] && dev=$d",
                "done",
                "[ -n \"$dev\" ] || { echo 'guest: no nicsim function'; poweroff -f; }",
                "set -- $(head -n 1 $dev/resource); bar=$1",
                "echo \"guest: BAR0 $1..$2 flags $3 dword $(od -An -tx4 -j16 -N4 $dev/config)\"",
                // memory space and bus mastering (the command register), as a driver's probe does
                "printf '\\006\\000' | dd of=$dev/config bs=1 seek=4 count=2 conv=notrunc 2>/dev/null",
                "echo \"guest: command $(od -An -tx2 -j4 -N2 $dev/config)\"",
                "echo \"guest: firmware revision $(devmem $bar 32)\"",
                // the output mailbox holds a pattern the adapter's answer must replace
                "i=0; while [ $i -lt " + OUT_BYTES + " ]; do",
                "  devmem $((" + out + " + i)) 32 0xdeadbeef; i=$((i + 4)); done",
                "i=0; while [ $i -lt 64 ]; do devmem $((" + ENTRY + " + i)) 32 0; i=$((i + 4)); done",
                // the entry's fields are big-endian: each 32-bit value below is its bytes as a little-endian
                // CPU stores them
                word(ENTRY, 0x100), word(ENTRY + 8, (int) (in >>> 32)), word(ENTRY + 12, (int) in),
                word(ENTRY + 16, (int) (out >>> 32)), word(ENTRY + 20, (int) out), word(ENTRY + 24, OUT_BYTES),
                word(ENTRY + 60, 1), // ownership (byte 63): the adapter's
                String.format("devmem $((bar + 0x10)) 64 0x%016x", Long.reverseBytes(ENTRY)),
                String.format("devmem $((bar + 0x18)) 32 0x%08x", Integer.reverseBytes(1)),
                "n=0; while [ \"$(devmem " + (ENTRY + 60) + " 32)\" != 0x00000000 ] && [ $n -lt 500 ]; do",
                "  n=$((n + 1)); done",
                "echo \"guest: command done after $n looks, owner $(devmem " + (ENTRY + 60) + " 32)\"",
                "i=0; while [ $i -lt " + OUT_BYTES + " ]; do",
                "  echo \"guest: out $i $(devmem $((" + out + " + i)) 32) $(devmem $((" + out + " + i + 4)) 32)\"",
                "  i=$((i + 8)); done",
                // a driver's mistake: the command entry's address is RAM the guest does not have
                mistake ? String.format("devmem $((bar + 0x10)) 64 0x%016x", Long.reverseBytes(NOT_RAM)) : "",
                mistake ? String.format("devmem $((bar + 0x18)) 32 0x%08x", Integer.reverseBytes(1)) : "",
                "devmem $bar 32 >/dev/null", // a read returns once the writes before it were taken
                "echo 'guest: done'",
                "poweroff -f", "");
    }

    /** devmem's write of the big-endian 32-bit field {@code value} at guest-physical {@code addr}. */
    private static String word(long addr, int value) {
        return String.format("devmem %d 32 0x%08x", addr, Integer.reverseBytes(value));
    }

    /** QEMU's arguments for a guest running {@code init}, in {@code dir}. */
    private static List<String> guest(Path dir, String init) throws Exception {
        // the kernel leaves 64 KiB at ENTRY alone (memmap=...$...): /dev/mem may not touch the RAM it uses
        return TestGuest.qemuArgs(TestGuest.kernel(), TestGuest.initramfs(dir, init), 256,
                String.format("memmap=64K$0x%x", ENTRY));
    }

    @Test
    void aGuestKernelFindsTheFunctionAndTheAdaptersDmaLandsInItsRamOrIsReported() throws Exception {
        TestGuest.assumeTools();
        List<String> qemu = guest(Files.createTempDirectory("nicsim-qemu"), init(true));
        TestGuest.Ran ran = TestGuest.onNode0("nicsim-qemu", qemu);
        String out = ran.output();
        int status = ran.status();
        Served s = ran.served();
        assertEquals(0, status, out + "\n" + s.log());
        assertTrue(out.contains("[0x1de5:0x0010]"), "the guest enumerated vendor 0x1de5 device 0x10:\n" + out);
        // QEMU realizes the doorbell device only once the bridge's ivshmem server gave it its memory
        assertTrue(out.contains("[0x1af4:0x1110]"), "the guest has the interrupts' ivshmem-doorbell function:\n" + out);
        Matcher bar = Pattern.compile("guest: BAR0 0x(\\p{XDigit}+)\\.\\.0x(\\p{XDigit}+) flags 0x(\\p{XDigit}+) "
                + "dword\\s+(\\p{XDigit}+)").matcher(out);
        assertTrue(bar.find(), out);
        long start = Long.parseLong(bar.group(1), 16), end = Long.parseLong(bar.group(2), 16);
        long flags = Long.parseLong(bar.group(3), 16), dword = Long.parseLong(bar.group(4), 16);
        assertEquals(32L << 20, end - start + 1, "BAR0 is the profile's 32 MiB");
        assertTrue(end < 1L << 32, "BAR0 was placed below 4 GiB: " + bar.group());
        assertEquals(0, flags & 0x0010_0000L, "not a 64-bit BAR (IORESOURCE_MEM_64): " + bar.group());
        assertEquals(0, flags & 0x2000L, "not prefetchable (IORESOURCE_PREFETCH): " + bar.group());
        assertEquals(start, dword, "config space's BAR0: the base, low bits 0 (32-bit, non-prefetchable)");
        Matcher rev = Pattern.compile("guest: firmware revision 0x(\\p{XDigit}{8})").matcher(out);
        assertTrue(rev.find(), out);
        // the register is big-endian, as the device's structures are: a little-endian load sees it swapped
        assertEquals(0x10000, Integer.reverseBytes((int) Long.parseLong(rev.group(1), 16)), rev.group());
        assertTrue(out.contains("owner 0x00000000"), "the adapter gave the entry back:\n" + out);
        long[] words = outputWords(out);
        assertEquals(0, words[0], "QUERY_HCA_CAP's status and syndrome: OK\n" + out);
        var caps = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.NONE).host(0).driver().caps();
        assertEquals(caps.maxQp(), words[2], "maxQp, DMA-written by the adapter into the guest's RAM");
        assertEquals(caps.maxCq(), words[3], "maxCq");
        assertTrue(s.log().contains("opened node 0's adapter as a PCI function"), s.log());
        // the guest's mistake is told as any driver's: what the device saw, at its simulated time
        Matcher fault = Pattern.compile("nicsim-qemu-remote \\(pid \\d+\\), node 0: the device reports at "
                + "[\\d.]+ us: DMA read of 64 bytes at 0x40000000: not memory the driver mapped").matcher(s.log());
        assertTrue(fault.find(), s.log());
        assertTrue(s.log().contains("command entry at 0x40000000 unreadable"), s.log());
        assertEquals(2, s.log().split("the device reports", -1).length - 1, "that mistake's reports only: " + s.log());
        assertTrue(s.log().matches("(?s).*nicsim-qemu-remote \\(pid \\d+\\) closed its PCI function on node 0.*"),
                s.log());
    }

    @Test
    void twoGuestsDriveTheirOwnNodesAdaptersAtOnce() throws Exception {
        TestGuest.assumeTools();
        Served s = new Served("nicsim-qemu-two").start(Served.cluster());
        String[] out = new String[2];
        try {
            TestGuest.Booted[] g = new TestGuest.Booted[2];
            for (int node = 0; node < 2; node++)
                g[node] = TestGuest.boot(s.socket, node, guest(Files.createTempDirectory("nicsim-qemu"), init(false)));
            for (int node = 0; node < 2; node++) {
                int status = g[node].await(150);
                out[node] = g[node].output();
                assertEquals(0, status, out[node] + "\n" + s.log());
            }
            TestGuest.awaitClosed(s);
        } finally {
            assertTrue(s.stop());
        }
        long[] a = outputWords(out[0]), b = outputWords(out[1]);
        assertEquals(0, a[0], out[0]);
        assertEquals(0, b[0], out[1]);
        // word 10 of the results is the port's LID: each guest reached its own node's adapter
        assertNotEquals(a[2 + 10], b[2 + 10], "LIDs " + a[12] + " and " + b[12]);
        assertFalse(s.log().contains("the device reports"), s.log());
        for (int node = 0; node < 2; node++)
            assertTrue(s.log().contains("opened node " + node + "'s adapter as a PCI function"), s.log());
    }

    @Test
    void aNodeThatDoesNotExistIsRefusedBeforeQemuStarts() throws Exception {
        Served s = new Served("nicsim-qemu-bad").start(Served.cluster());
        try {
            var g = TestGuest.boot(s.socket, 5, List.of("qemu-system-x86_64", "-version"));
            assertEquals(1, g.await(30), g.output());
            assertTrue(g.output().contains("opening node 5's adapter"), g.output());
            assertTrue(s.log().contains("node 5 does not exist (nodes 0..1)"), s.log());
            assertFalse(g.output().contains("QEMU emulator"), "QEMU was not started: " + g.output());
        } finally {
            assertTrue(s.stop());
        }
    }

    /** The output mailbox's big-endian words, from the guest's "out" lines (two little-endian dwords each). */
    private static long[] outputWords(String out) {
        Matcher m = Pattern.compile("guest: out (\\d+) 0x(\\p{XDigit}{8}) 0x(\\p{XDigit}{8})").matcher(out);
        long[] words = new long[OUT_BYTES / 8];
        int n = 0;
        while (m.find()) {
            int hi = Integer.reverseBytes((int) Long.parseLong(m.group(2), 16));
            int lo = Integer.reverseBytes((int) Long.parseLong(m.group(3), 16));
            words[Integer.parseInt(m.group(1)) / 8] = (long) hi << 32 | Integer.toUnsignedLong(lo);
            n++;
        }
        assertEquals(OUT_BYTES / 8, n, "the guest printed the whole output mailbox:\n" + out);
        return words;
    }
}
