package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What happens to a QEMU guest's function besides BAR accesses and DMA (QemuBridgeTest): the
 * adapter's interrupts, carried by the bridge's ivshmem-doorbell function, and the resets of a reboot.
 * The guests drive the adapter from their shell with busybox devmem, in RAM their kernel leaves alone.
 */
class QemuBridgeEventsTest {
    private static final long RESERVED = TestGuest.RESERVED;

    /**
     * A guest /init that brings the adapter up by hand and makes it raise an interrupt: INIT_HCA, a UD QP
     * taken RESET -> INIT -> RTR -> RTS -> SQD with the drained event asked for. The event queue's entry
     * comes with MSI-X vector 0, whose table entry says "doorbell vector 0"; the doorbell function's
     * vector 0 is set to deliver CPU vector 0xd0, which has no handler: the guest's kernel says so.
     */
    private static final String INTERRUPT_INIT = """
            #!/bin/busybox sh
            /bin/busybox --install -s /bin
            mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
            R=%d; E=$R; IN=$((R + 0x1000)); OUT=$((R + 0x2000)); EQ=$((R + 0x3000)); CQR=$((R + 0x4000))
            SQ=$((R + 0x5000)); RQ=$((R + 0x6000)); DB=$((R + 0x7000)); MTT=$((R + 0x10000))
            QPC=$((R + 0x100000)); MKC=$((R + 0x600000))
            for d in /sys/bus/pci/devices/*; do
              case "$(cat $d/vendor):$(cat $d/device)" in 0x1de5:0x0010) nic=$d;; 0x1af4:0x1110) irq=$d;; esac
            done
            set -- $(head -n 1 $nic/resource); BAR=$1
            set -- $(sed -n 2p $irq/resource); IRQ_TABLE=$1
            # the device's structures are big-endian; devmem stores a 32-bit value little-endian
            sw() {
              v=$(($1 & 0xffffffff))
              echo $(( (v >> 24 & 0xff) | (v >> 8 & 0xff00) | (v << 8 & 0xff0000) | (v << 24 & 0xff000000) ))
            }
            put64() { devmem $1 32 $(sw $(($2 >> 32))); devmem $(($1 + 4)) 32 $(sw $2); }
            get32() { sw $(devmem $1 32); }
            cmd() { # opcode, output words, input words...
              op=$1; nout=$2; shift 2; n=0
              for w in "$@"; do put64 $((IN + 8 * n)) $w; n=$((n + 1)); done
              i=0; while [ $i -lt 64 ]; do devmem $((E + i)) 32 0; i=$((i + 4)); done
              devmem $E 32 $(sw $op); devmem $((E + 4)) 32 $(sw $((8 * n)))
              put64 $((E + 8)) $IN; put64 $((E + 16)) $OUT; devmem $((E + 24)) 32 $(sw $((16 + 8 * nout)))
              devmem $((E + 60)) 32 0x01000000
              devmem $((BAR + 0x18)) 32 0x01000000
              while [ "$(devmem $((E + 60)) 32)" != 0x00000000 ]; do :; done
              status=$(get32 $OUT); result=$(get32 $((OUT + 20)))
              echo "guest: command $op status $status syndrome $(get32 $((OUT + 4))) result $result"
            }
            cfg() { printf "$2" | dd of=$1/config bs=1 seek=$3 count=$4 conv=notrunc 2>/dev/null; }
            cfg $nic '\006\000' 4 2
            cfg $nic '\000\200' 66 2   # MSI-X enable (message control bit 15)
            # the adapter's MSI-X entry 0: the platform's MSI address, data 0: the doorbell function's vector 0
            devmem $((BAR + 0x800)) 32 0xfee00000; devmem $((BAR + 0x804)) 32 0
            devmem $((BAR + 0x808)) 32 0; devmem $((BAR + 0x80c)) 32 0
            # the doorbell function: bus mastering, MSI-X on, its vector 0 to CPU vector 0xd0 (no handler)
            cfg $irq '\006\000' 4 2
            cap=$(od -An -tu1 -j52 -N1 $irq/config)
            while [ "$(od -An -tu1 -j$cap -N1 $irq/config)" -ne 17 ]; do # the MSI-X capability's ID
              cap=$(od -An -tu1 -j$((cap + 1)) -N1 $irq/config)
            done
            cfg $irq '\000\200' $((cap + 2)) 2
            devmem $IRQ_TABLE 32 0xfee00000; devmem $((IRQ_TABLE + 4)) 32 0
            devmem $((IRQ_TABLE + 8)) 32 0xd0; devmem $((IRQ_TABLE + 12)) 32 0
            devmem $((BAR + 0x10)) 64 0x$(printf %%08x $(sw $E))00000000
            cmd 0x102 0 $EQ 2 $MTT 16 $QPC $MKC
            cmd 0x802 1; UAR=$result
            cmd 0x800 1; PD=$result
            cmd 0x400 1 $UAR $CQR 2 1 $DB; CQ=$result
            cmd 0x500 1 4 $PD $CQ $CQ $UAR $SQ 2 $RQ 2 5 $((DB + 64)) 0 0; QP=$result
            cmd 0x50f 0 $QP 113 0 1 0 0x11111111 0 0 0 0 0 0 0 0 0 0 0 1 0 0
            cmd 0x50f 0 $QP 1 1 2 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0
            cmd 0x50f 0 $QP 65537 2 3 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0
            cmd 0x50f 0 $QP 5 3 4 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 1
            n=0; while [ $(( $(devmem $((EQ + 60)) 32) >> 31 & 1 )) = 0 ] && [ $n -lt 200 ]; do n=$((n + 1)); done
            echo "guest: event type $(( $(devmem $EQ 32) & 0xff )) resource $(get32 $((EQ + 4))) qp $QP"
            sleep 1
            echo "guest: kernel says: $(dmesg | grep -o 'No irq handler for vector' | head -n 1)"
            echo 'guest: done'
            poweroff -f
            """;

    @Test
    void anAdapterInterruptReachesTheGuestThroughTheDoorbellFunction() throws Exception {
        TestGuest.assumeTools();
        Path dir = Files.createTempDirectory("nicsim-qemu-irq");
        List<String> qemu = TestGuest.qemuArgs(TestGuest.kernel(),
                TestGuest.initramfs(dir, String.format(INTERRUPT_INIT, RESERVED)), 256,
                String.format("memmap=32M$0x%x", RESERVED));
        TestGuest.Ran ran = TestGuest.onNode0("nicsim-qemu-irq", qemu);
        String out = ran.output();
        int status = ran.status();
        Served s = ran.served();
        assertEquals(0, status, out + "\n" + s.log());
        Matcher cmd = Pattern.compile("guest: command (0x\\p{XDigit}+) status (\\d+)").matcher(out);
        int commands = 0;
        for (; cmd.find(); commands++) assertEquals("0", cmd.group(2), cmd.group(1) + " failed:\n" + out);
        assertEquals(9, commands, "INIT_HCA, ALLOC_UAR, ALLOC_PD, CREATE_CQ, CREATE_QP, 4 x MODIFY_QP:\n" + out);
        assertTrue(out.contains("guest: event type 5"), "the QP's SQ_DRAINED event in the guest's event queue:\n"
                + out);
        assertTrue(out.contains("1 MSI-X messages (1 raised a doorbell vector, 0 dropped)"),
                "the bridge raised the doorbell vector for the adapter's MSI-X message:\n" + out);
        assertTrue(out.contains("guest: kernel says: No irq handler for vector"),
                "the interrupt reached the guest's CPU as vector 0xd0:\n" + out);
    }

    /**
     * A guest that reboots once: QEMU's machine reset reaches the bridge as DEVICE_RESET, and the
     * rebooted kernel finds the function again, assigned anew, and reads BAR0. A mark in RAM the
     * kernel leaves alone (a reset keeps RAM) tells the second boot from the first.
     */
    private static final String REBOOT_INIT = """
            #!/bin/busybox sh
            /bin/busybox --install -s /bin
            mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
            for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor)" = 0x1de5 ] && nic=$d; done
            set -- $(head -n 1 $nic/resource); BAR=$1
            if [ "$(devmem %d 32)" != 0x600DB007 ]; then
              devmem %d 32 0x600DB007
              printf '\\006\\000' | dd of=$nic/config bs=1 seek=4 count=2 conv=notrunc 2>/dev/null
              echo "guest: first boot, command $(od -An -tx2 -j4 -N2 $nic/config)"
              reboot -f
            fi
            echo "guest: second boot, command $(od -An -tx2 -j4 -N2 $nic/config), BAR0 $BAR"
            echo "guest: firmware revision $(devmem $BAR 32)"
            poweroff -f
            """;

    @Test
    void aRebootResetsTheFunctionAndTheGuestFindsItAgain() throws Exception {
        TestGuest.assumeTools();
        Path dir = Files.createTempDirectory("nicsim-qemu-reboot");
        List<String> qemu = new ArrayList<>(TestGuest.qemuArgs(TestGuest.kernel(),
                TestGuest.initramfs(dir, String.format(REBOOT_INIT, RESERVED, RESERVED)), 256,
                String.format("memmap=64K$0x%x", RESERVED)));
        assertTrue(qemu.remove("-no-reboot"), "the guest reboots for real");
        TestGuest.Ran ran = TestGuest.onNode0("nicsim-qemu-reboot", qemu);
        String out = ran.output();
        int status = ran.status();
        Served s = ran.served();
        assertEquals(0, status, out + "\n" + s.log());
        assertTrue(out.contains("guest: first boot, command  0006"), out);
        // after the reboot the firmware placed BAR0 and enabled memory space again; bus mastering waits for a driver
        assertTrue(out.contains("guest: second boot, command  0002"), out);
        assertTrue(out.contains("guest: firmware revision 0x00000100"), "BAR0 answers after the reset:\n" + out);
        Matcher resets = Pattern.compile(" (\\d+) resets,").matcher(out);
        assertTrue(resets.find() && Integer.parseInt(resets.group(1)) >= 2,
                "QEMU reset the function at start and at the reboot:\n" + out);
        assertEquals(1, s.log().split("opened node 0's adapter", -1).length - 1, "one function throughout: " + s.log());
    }

}
