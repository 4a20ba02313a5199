package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import nicsim.serve.Served;
import nicsim.sim.Counters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel storage ULP across the simulated fabric: NVMe over Fabrics with Debian's nvmet-rdma in guest 0 (a
 * subsystem whose namespace is a file in the guest's RAM, a port on ib0's address) and nvme-rdma in guest 1
 * (nvme-cli's `nvme connect -t rdma`). The host writes random bytes through its /dev/nvme0n1 and reads them
 * back; the target reads its backing file; all three checksums must agree. RDMA CM resolves the port's address
 * through IPoIB, so ib0 comes up first, as in {@link TwoGuestsIpoibTest}.
 */
class TwoGuestsNvmeofTest {
    @TempDir Path share;

    /** How many MiB the host writes and reads back; the target's file is twice that. */
    static final int MIB = 4;
    static final String NQN = "nqn.2026-12.org.nicsim:ramdisk";

    /** Both guests: ib0 at 192.168.77.(N+1), waiting for the broadcast join's carrier, which RDMA CM needs. */
    static String ib0(int node) {
        return String.join("\n",
                "N=" + node + "; P=" + (1 - node),
                Guests.XCHG,
                "ip addr add 192.168.77." + (node + 1) + "/24 dev ib0 && ip link set ib0 up || echo NO_IB0",
                "i=0; until [ \"$(cat /sys/class/net/ib0/carrier 2>/dev/null)\" = 1 ]; do",
                "  i=$((i + 1)); [ $i -gt 120 ] && break; sleep 1; done",
                "echo CARRIER=$(cat /sys/class/net/ib0/carrier 2>/dev/null)",
                BOUNDED, "");
    }

    /**
     * {@code bounded S CMD...} runs CMD, but if it has not ended after S seconds prints STUCK, the blocked tasks'
     * stacks (sysrq w) and the kernel's last lines, and powers the guest off: a ULP waiting on the adapter forever
     * then shows where, rather than the guest only timing out.
     */
    static final String BOUNDED = String.join("\n",
            "bounded() {",
            "  n=$1; shift; \"$@\" & b=$!; i=0",
            "  while kill -0 $b 2>/dev/null; do",
            "    [ $i -ge $n ] && { { echo \"STUCK: $*\"; echo w > /proc/sysrq-trigger; sleep 1;",
            "                        dmesg | tail -120; } >&2; poweroff -f; }",
            "    sleep 1; i=$((i + 1)); done; wait $b; }");

    /**
     * The target, through nvmet's configfs: a subsystem open to any host, namespace 1 on a file of tmpfs (buffered:
     * tmpfs takes no O_DIRECT in 6.1), an RDMA port on ib0's address, the subsystem linked to it. After the host
     * is done it prints the file's checksum and takes it all down, in the reverse order, and unloads the modules.
     */
    static String target() {
        String s = "/sys/kernel/config/nvmet/subsystems/" + NQN, p = "/sys/kernel/config/nvmet/ports/1";
        return ib0(0) + String.join("\n",
                "modprobe nvmet_rdma || echo NO_NVMET",
                "grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config",
                Guests.makeBacking(MIB),
                "mkdir " + s + " && echo 1 > " + s + "/attr_allow_any_host",
                "mkdir " + s + "/namespaces/1 && echo -n /tmp/backing.img > " + s + "/namespaces/1/device_path",
                "echo 1 > " + s + "/namespaces/1/buffered_io && echo 1 > " + s + "/namespaces/1/enable",
                "mkdir " + p + " && echo rdma > " + p + "/addr_trtype && echo ipv4 > " + p + "/addr_adrfam",
                "echo 192.168.77.1 > " + p + "/addr_traddr && echo 4420 > " + p + "/addr_trsvcid",
                "ln -s " + s + " " + p + "/subsystems/" + NQN + " && echo TARGET=up || echo TARGET=down",
                "xchg 7400 ready > /dev/null",
                "bounded 240 xchg 7410 finished > /dev/null   # the host has disconnected",
                "dmesg | grep -iE 'nvme|nicsim' | tail -30",
                Guests.backingSums(MIB),
                "bounded 60 rm " + p + "/subsystems/" + NQN + " && bounded 60 rmdir " + p,
                "echo 0 > " + s + "/namespaces/1/enable && rmdir " + s + "/namespaces/1 && rmdir " + s,
                "bounded 60 rmmod nvmet_rdma nvmet; echo TARGET_RMMOD=$?", "exit 0", "");
    }

    /**
     * The host: nvme-rdma connects to the target's port by nvme-cli, random bytes go to the namespace with dd and
     * come back with the page cache dropped (so the read crosses the fabric), then disconnect and unload.
     */
    static String host() {
        return ib0(1) + String.join("\n",
                "modprobe nvme_rdma || echo NO_NVME_RDMA",
                "xchg 7400 ready > /dev/null",
                "bounded 60 nvme discover -t rdma -a 192.168.77.1 -s 4420 | grep -E 'trtype|subnqn'",
                "bounded 60 nvme connect -t rdma -a 192.168.77.1 -s 4420 -n " + NQN
                        + " --hostnqn=nqn.2026-12.org.nicsim:node1 --ctrl-loss-tmo=20; echo CONNECT=$?",
                "i=0; until [ -b /dev/nvme0n1 ]; do i=$((i + 1)); [ $i -gt 30 ] && break; sleep 1; done",
                "if [ -b /dev/nvme0n1 ]; then",
                "  echo SIZE=$(cat /sys/block/nvme0n1/size) TRANSPORT=$(cat /sys/class/nvme/nvme0/transport)",
                Guests.writeReadBack("/dev/nvme0n1", MIB, 90),
                "  bounded 60 nvme disconnect -n " + NQN + "; echo DISCONNECT=$?",
                "else echo NO_NAMESPACE; fi",
                "dmesg | grep -iE 'nvme|nicsim' | tail -30",
                "xchg 7410 finished > /dev/null",
                "bounded 60 rmmod nvme_rdma nvme_fabrics; echo HOST_RMMOD=$?", "exit 0", "");
    }

    @Test void nvmeOverRdmaCarriesABlockDeviceBetweenTwoGuests() throws Exception {
        Served served = new Served("two-guests-nvmeof").start(Served.cluster());
        List<Guests.Ran> ran;
        try {
            ran = Guests.run(served, share, null, 300, target(), host());
            Guests.awaitBothLeft(served);
        } finally {
            served.stop();
        }
        System.out.println("--- serve's log:\n" + served.log());
        String target = ran.get(0).console(), host = ran.get(1).console();
        assertTrue(target.contains("TARGET=up"), "nvmet's subsystem, namespace and RDMA port were made: " + target);
        assertTrue(host.contains("CONNECT=0") && host.contains("TRANSPORT=rdma"),
                "nvme-rdma connected to the target over the fabric: " + host);
        assertEquals(String.valueOf(2L * MIB << 11), Guests.value(host, "SIZE").split(" ")[0],
                "the namespace is the target's file, in 512-byte sectors");
        String sent = Guests.value(host, "SENT");
        assertEquals(sent, Guests.value(host, "READ_BACK"), "the host read back what it wrote through the fabric");
        assertEquals(sent, Guests.value(target, "BACKING"), "the target's file holds what the host wrote");
        assertEquals("0", Guests.value(target, "TAIL"), "nothing was written past the host's " + MIB + " MiB");
        assertTrue(host.contains("WRITE=0") && host.contains("DISCONNECT=0") && host.contains("HOST_RMMOD=0"),
                "the host wrote, disconnected and unloaded nvme-rdma cleanly: " + host);
        assertTrue(target.contains("TARGET_RMMOD=0"), "the target unloaded nvmet-rdma cleanly: " + target);
        Counters n0 = served.world.sim.counters().scope("node0"), n1 = served.world.sim.counters().scope("node1");
        System.out.println("--- node0: " + n0.snapshot() + "\n--- node1: " + n1.snapshot());
        // a write is the target's RDMA READ of the host's pages, a read its RDMA WRITE into them: each adapter
        // moves the data once each way by DMA
        long bytes = (long) MIB << 20;
        for (Counters n : List.of(n0, n1))
            assertTrue(n.get("Firmware.dma_read_bytes") > bytes && n.get("Firmware.dma_write_bytes") > bytes,
                    "the adapters carried the blocks both ways: " + n.snapshot());
        Guests.assertBothDriversClean(served);
    }
}
