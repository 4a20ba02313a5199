package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import nicsim.serve.ProviderBuild;
import nicsim.serve.Served;
import nicsim.sim.Counters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SCSI over the simulated fabric: the SCSI RDMA Protocol with Linux's LIO target and ib_srpt in guest 0 (a LUN on a
 * file of the guest's RAM, configured by writing configfs) and ib_srp in guest 1, which finds the target as
 * srptools do: ibsrpdm asks the SA for the ports whose CapabilityMask has IsDeviceManagementSupported (the bit
 * ib_srpt sets through modify_port, which the adapter's SMA reports), then asks ib_srpt's device management agent
 * through QP1 for its I/O controller and service entries, and prints the line ib_srp's add_target takes. The
 * initiator writes random bytes through the SCSI disk that appears and reads them back; the target reads its file.
 */
class TwoGuestsSrpTest {
    @TempDir Path share;

    /** How many MiB the initiator writes and reads back; the target's file is twice that. */
    static final int MIB = 4;
    static final String PORT = "/sys/class/infiniband/nicsim_0/ports/1";

    /** Both guests: N and P, xchg and bounded, and G: the port's GID's interface ID as LIO names ports (a:b:c:d). */
    static String common(int node) {
        return String.join("\n", "N=" + node + "; P=" + (1 - node), Guests.XCHG, TwoGuestsNvmeofTest.BOUNDED,
                "G=$(cut -d: -f5-8 " + PORT + "/gids/0)", "");
    }

    /**
     * The target: LIO's file backstore on tmpfs, ib_srpt's port named by its GUID, one portal group with LUN 0 and
     * an ACL for the initiator's port (its GUID, which it sends over the guests' network), mapped to LUN 0. After
     * the initiator is done it prints the file's checksum and takes it all down in reverse order.
     */
    static String target() {
        String t = "/sys/kernel/config/target", d = t + "/core/fileio_0/disk0", w = t + "/srpt/$G", g = w + "/tpgt_1";
        return common(0) + String.join("\n",
                "modprobe target_core_file && modprobe ib_srpt || echo NO_SRPT",
                "grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config",
                "echo CAP_MASK=$(cat " + PORT + "/cap_mask)",
                "I=$(xchg 7500 $G)   # the initiator's port GUID, for its ACL",
                Guests.makeBacking(MIB),
                "mkdir -p " + d,
                "echo fd_dev_name=/tmp/backing.img,fd_dev_size=" + (2L * MIB << 20) + " > " + d + "/control",
                "echo 1 > " + d + "/enable",
                "mkdir " + t + "/srpt " + w + " " + g + " " + g + "/lun/lun_0 && ln -s " + d + " " + g
                        + "/lun/lun_0/disk0   # mkdir srpt registers the fabric with LIO",
                "mkdir " + g + "/acls/$I " + g + "/acls/$I/lun_0 && ln -s " + g + "/lun/lun_0 " + g
                        + "/acls/$I/lun_0/lun0",
                "echo 1 > " + g + "/enable && echo TARGET=up || echo TARGET=down",
                "ls -R " + t + "/srpt | head -30",
                "xchg 7510 ready > /dev/null",
                "bounded 300 xchg 7520 finished > /dev/null   # the initiator has removed the target",
                "dmesg | grep -iE 'srpt|nicsim|target' | tail -30",
                Guests.backingSums(MIB),
                "echo 0 > " + g + "/enable",
                "rm " + g + "/acls/$I/lun_0/lun0 && rmdir " + g + "/acls/$I/lun_0 " + g + "/acls/$I",
                "rm " + g + "/lun/lun_0/disk0 && rmdir " + g + "/lun/lun_0 " + g + " " + w + " " + t + "/srpt "
                        + d + " " + t + "/core/fileio_0",
                "bounded 60 rmmod ib_srpt target_core_file; echo TARGET_RMMOD=$?",
                "ls /sys/kernel/config/target; sleep 2",
                "rmmod target_core_mod; echo CORE_RMMOD=$? $(cat /sys/module/target_core_mod/refcnt 2>/dev/null)",
                "echo CAP_MASK_AFTER=$(cat " + PORT + "/cap_mask)", "exit 0", "");
    }

    /**
     * The initiator: node 0's PortInfo by its SMA across the fabric, ibsrpdm's discovery, add_target, then random
     * bytes through the SCSI disk with the page cache dropped before they are read back; the target removed
     * through its SRP remote port, and ib_srp unloaded.
     */
    static String initiator() {
        return common(1) + String.join("\n",
                "modprobe ib_srp && modprobe sd_mod || echo NO_SRP",
                "xchg 7500 $G > /dev/null",
                "xchg 7510 ready > /dev/null",
                "echo PEER_CAP_MASK=$(smpquery portinfo 1 | sed -n 's/^CapMask:\\.*//p')",
                "bounded 60 ibsrpdm -c > /tmp/targets; echo IBSRPDM=$?",
                "echo TARGET_LINE=$(head -1 /tmp/targets)",
                "bounded 60 ibsrpdm | head -20",
                "bounded 60 srp_daemon -o -c -i nicsim_0 -p 1 > /tmp/daemon; echo SRP_DAEMON=$?",
                "echo DAEMON_LINE=$(grep id_ext= /tmp/daemon | head -1)",
                "# at most 40 sectors a command: 2 fast-registration MRs of 6 pages each, so ib_srp's pool of 64",
                "# commands fits the adapter's 1024 KLM entries (its default, 1024 sectors, would want 23 MRs each)",
                "echo \"$(head -1 /tmp/targets),max_sect=40\" > /sys/class/infiniband_srp/srp-nicsim_0-1/add_target",
                "echo ADD=$?",
                "i=0; until ls /sys/class/scsi_disk/*/device/block 2>/dev/null | grep -q sd; do",
                "  i=$((i + 1)); [ $i -gt 60 ] && break; sleep 1; done",
                "S=$(ls /sys/class/scsi_disk/*/device/block 2>/dev/null | grep sd | head -1)",
                "if [ -n \"$S\" ] && [ -b /dev/$S ]; then",
                "  echo DISK=$S SIZE=$(cat /sys/block/$S/size)",
                Guests.writeReadBack("/dev/$S", MIB, 120),
                "else echo NO_DISK; fi",
                "for r in /sys/class/srp_remote_ports/*; do echo 1 > $r/delete; done; echo REMOVE=$?",
                "dmesg | grep -iE 'srp|scsi|sd |nicsim' | tail -30",
                "bounded 60 rmmod ib_srp scsi_transport_srp; echo INITIATOR_RMMOD=$?",
                "xchg 7520 finished > /dev/null", "exit 0", "");
    }

    @Test void srpCarriesAScsiDiskBetweenTwoGuestsFoundByIbsrpdm() throws Exception {
        Served served = new Served("two-guests-srp").start(Served.cluster());
        List<Guests.Ran> ran;
        try {
            // ibsrpdm opens the port through libibverbs: the guests' rdma-core with nicsim's provider
            Path provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
            ran = Guests.run(served, share, provider, 420, target(), initiator());
            Guests.awaitBothLeft(served);
        } finally {
            served.stop();
        }
        System.out.println("--- serve's log:\n" + served.log());
        String target = ran.get(0).console(), ini = ran.get(1).console();
        assertTrue(target.contains("TARGET=up"), "LIO's backstore, srpt port, LUN and ACL were made: " + target);
        long dm = 1 << 19;
        assertEquals(dm, Long.decode(Guests.value(target, "CAP_MASK")) & dm,
                "ib_srpt's IsDeviceManagementSupported reached the port's mask (sysfs): " + target);
        assertEquals(dm, Long.decode(Guests.value(ini, "PEER_CAP_MASK")) & dm,
                "node 0's SMA reports it to smpquery across the fabric: " + ini);
        String line = Guests.value(ini, "TARGET_LINE");
        assertTrue(line.startsWith("id_ext=") && line.contains("ioc_guid=00021de500000001")
                && line.contains("dgid=fe8000000000000000021de500000001"), "ibsrpdm found node 0's target: " + ini);
        assertEquals(line, Guests.value(ini, "DAEMON_LINE"), "srp_daemon -o -c finds the same target: " + ini);
        assertTrue(ini.contains("ADD=0"), "ib_srp logged in to the target: " + ini);
        assertEquals(String.valueOf(2L * MIB << 11), Guests.value(ini, "DISK").replaceAll(".*SIZE=", ""),
                "the SCSI disk is the target's file, in 512-byte sectors");
        String sent = Guests.value(ini, "SENT");
        assertEquals(sent, Guests.value(ini, "READ_BACK"), "the initiator read back what it wrote through the fabric");
        assertEquals(sent, Guests.value(target, "BACKING"), "the target's file holds what the initiator wrote");
        assertEquals("0", Guests.value(target, "TAIL"), "nothing was written past the initiator's " + MIB + " MiB");
        assertTrue(ini.contains("WRITE=0") && ini.contains("REMOVE=0") && ini.contains("INITIATOR_RMMOD=0"),
                "the initiator wrote, removed the target and unloaded ib_srp cleanly: " + ini);
        assertTrue(target.contains("TARGET_RMMOD=0"),
                "the target unloaded ib_srpt and LIO's file backstore cleanly: " + target);
        assertEquals(0, Long.decode(Guests.value(target, "CAP_MASK_AFTER")) & dm,
                "ib_srpt's removal cleared the bit: " + target);
        Counters n0 = served.world.sim.counters().scope("node0"), n1 = served.world.sim.counters().scope("node1");
        System.out.println("--- node0: " + n0.snapshot() + "\n--- node1: " + n1.snapshot());
        long bytes = (long) MIB << 20;
        for (Counters n : List.of(n0, n1))
            assertTrue(n.get("Firmware.dma_read_bytes") > bytes && n.get("Firmware.dma_write_bytes") > bytes,
                    "the adapters carried the blocks both ways: " + n.snapshot());
        Guests.assertBothDriversClean(served);
    }
}
