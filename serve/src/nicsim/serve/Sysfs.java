package nicsim.serve;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import nicsim.driver.Host;
import nicsim.firmware.SubnetAgent;

/**
 * The sysfs tree through which libibverbs finds a node's simulated adapter (it reads SYSFS_PATH
 * when the kernel has no RDMA netlink): class/infiniband_verbs/uverbs0 names the device
 * ({@link #deviceName}) and its character device, class/infiniband/nicsim0 its node type,
 * GUID and port 1 (state, LID, GID, P_Key), agreeing with what the adapter reports through verbs.
 * The character device is 1:3, /dev/null's: libibverbs opens it and checks its number, and the
 * provider never uses it.
 */
final class Sysfs {
    private Sysfs() {}

    /**
     * The device name node {@code node}'s adapter has: nicsim0 on every node, as every host of a
     * cluster has its mlx5_0, so one command line (an MPI job's) names the device for every rank.
     * Nodes tell apart by their GUID and LID.
     */
    static String deviceName(int node) { return "nicsim0"; }

    /** Writes node {@code host}'s tree under {@code root} (replacing one there). */
    static void write(Path root, Host host) throws IOException {
        remove(root);
        String dev = deviceName(host.index);
        Path verbs = root.resolve("class/infiniband_verbs");
        file(verbs.resolve("abi_version"), "6");
        file(verbs.resolve("uverbs0/ibdev"), dev);
        file(verbs.resolve("uverbs0/dev"), "1:3");
        file(verbs.resolve("uverbs0/abi_version"), "1");
        Path ib = root.resolve("class/infiniband").resolve(dev);
        long guid = DeviceQueries.nodeGuid(host.index);
        file(ib.resolve("node_type"), "1: CA");
        file(ib.resolve("node_guid"), guidText(guid));
        file(ib.resolve("sys_image_guid"), guidText(guid));
        file(ib.resolve("board_id"), "NICSIM-" + host.profile.name());
        file(ib.resolve("fw_ver"), "1.0.0");
        file(ib.resolve("hw_rev"), "0");
        file(ib.resolve("hca_type"), "nicsim");
        file(root.resolve("class/infiniband_mad/abi_version"), "5"); // libibumad (ibstat) checks it
        // the port's umad file (interpose/nicsim-umad.c stands in for it): libibumad finds it by ibdev and port
        Path umad = root.resolve("class/infiniband_mad/umad0");
        file(umad.resolve("ibdev"), dev);
        file(umad.resolve("port"), "1");
        file(umad.resolve("dev"), "231:0");
        Path issm = root.resolve("class/infiniband_mad/issm0");
        file(issm.resolve("ibdev"), dev);
        file(issm.resolve("port"), "1");
        file(issm.resolve("dev"), "231:64");
        // librdmacm checks it
        file(root.resolve("class/misc/rdma_cm/abi_version"), Integer.toString(CmAbi.ABI_VERSION));
        file(root.resolve("class/misc/rdma_cm/dev"), "10:58");
        int lid = host.firmware.lid();
        Path port = ib.resolve("ports/1");
        file(port.resolve("lid"), String.format("0x%x", lid));
        file(port.resolve("sm_lid"), "0x1");
        file(port.resolve("lid_mask_count"), "0");
        portState(root, host.firmware.linkUp());
        file(port.resolve("rate"), "100 Gb/sec (4X EDR)");
        file(port.resolve("cap_mask"), String.format("0x%08x", SubnetAgent.capabilityMask(lid == 1))); // the SMA's
        file(port.resolve("sm_sl"), "0");
        file(port.resolve("link_layer"), "InfiniBand");
        // GID[0]: the link-local prefix and the port's GUID, the node GUID (as the SMA's NodeInfo says)
        file(port.resolve("gids/0"), "fe80:0000:0000:0000:" + guidText(guid));
        file(port.resolve("gid_attrs/types/0"), "IB/RoCE v1");
        file(port.resolve("pkeys/0"), "0xffff");
    }

    /** Port 1's state files under {@code root}, as ib_core shows an ACTIVE port or one whose link is down. */
    static void portState(Path root, boolean active) throws IOException {
        Path port = root.resolve("class/infiniband").resolve(deviceName(0)).resolve("ports/1");
        file(port.resolve("state"), active ? "4: ACTIVE" : "1: DOWN");
        file(port.resolve("phys_state"), active ? DeviceQueries.PHYS_LINK_UP + ": LinkUp"
                : DeviceQueries.PHYS_POLLING + ": Polling");
    }

    /** Deletes a tree written here (nothing if there is none). */
    static void remove(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (var w = Files.walk(root)) {
            for (Path p : w.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }

    private static String guidText(long g) {
        return String.format("%04x:%04x:%04x:%04x", (g >>> 48) & 0xffff, (g >>> 32) & 0xffff, (g >>> 16) & 0xffff,
                g & 0xffff);
    }

    private static void file(Path p, String text) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, text + "\n");
    }
}
