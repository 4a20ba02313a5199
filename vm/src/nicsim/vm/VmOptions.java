package nicsim.vm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What one guest boots with.
 *
 * @param node        the node whose adapter the guest gets, and its name (nodeN) and address on the guests' network
 * @param run         a shell command the guest runs in place of a shell, then powers off; null: a shell on the console
 * @param noDevice    boot without the adapter even when serve and the bridge are there
 * @param socket      serve's socket
 * @param share       a host folder the guest mounts at /host by 9p; null: none
 * @param memoryMib   guest RAM, shared with the bridge as a memfd
 * @param root        the project's checkout: kernel/RELEASE, and the module and bridge under out/
 * @param cache       where downloads and built initramfs archives are kept (its vm/ folder)
 * @param netPort     the UDP port of the guests' multicast group; guests on one fabric must share it
 * @param timeoutSeconds with run: stop QEMU after this long (0: never)
 * @param kernelArgs  more kernel command-line arguments
 * @param gdb         a Unix socket where QEMU's gdbstub waits for `target remote` (the guest runs meanwhile);
 *                    null: none
 * @param provider    nicsim's libibverbs provider ({@code lib<name>-rdmav34.so}) the guest's rdma-core loads,
 *                    built by the launcher; null: the guest has none (libibverbs then finds no nicsim device)
 * @param forwards    TCP between the guest and programs attached to the fabric (--forward-in, --forward-out)
 */
public record VmOptions(int node, String run, boolean noDevice, Path socket, Path share, int memoryMib, Path root,
                        Path cache, int netPort, int timeoutSeconds, String kernelArgs, Path gdb, Path provider,
                        Forwards forwards) {
    public VmOptions {
        if (forwards == null) forwards = Forwards.NONE;
    }

    /** Without a gdbstub, and without nicsim's provider. */
    public VmOptions(int node, String run, boolean noDevice, Path socket, Path share, int memoryMib, Path root,
                     Path cache, int netPort, int timeoutSeconds, String kernelArgs) {
        this(node, run, noDevice, socket, share, memoryMib, root, cache, netPort, timeoutSeconds, kernelArgs, null,
             null, Forwards.NONE);
    }

    /** With no forwards to attached programs. */
    public VmOptions(int node, String run, boolean noDevice, Path socket, Path share, int memoryMib, Path root,
                     Path cache, int netPort, int timeoutSeconds, String kernelArgs, Path gdb, Path provider) {
        this(node, run, noDevice, socket, share, memoryMib, root, cache, netPort, timeoutSeconds, kernelArgs, gdb,
             provider, Forwards.NONE);
    }

    /** The default port: one per serve socket, so two fabrics on one machine keep their guests apart. */
    public static int defaultNetPort(Path socket) {
        return 20000 + Math.floorMod(socket.toAbsolutePath().normalize().toString().hashCode(), 20000);
    }

    /** The cache folder nicsim uses for everything built once: NICSIM_CACHE, or ~/.cache/nicsim. */
    public static Path defaultCache() {
        String env = System.getenv("NICSIM_CACHE");
        return env != null && !env.isEmpty() ? Path.of(env)
                : Path.of(System.getProperty("user.home"), ".cache", "nicsim");
    }

    void check() {
        if (node < 0 || node >= Initramfs.MAX_NODES)
            throw new IllegalArgumentException("--node " + node + " must be 0.." + (Initramfs.MAX_NODES - 1));
        if (memoryMib < 128 || memoryMib > 16384)
            throw new IllegalArgumentException("--memory " + memoryMib + " must be 128..16384 (MiB)");
        if (netPort < 1024 || netPort > 65535)
            throw new IllegalArgumentException("--net-port " + netPort + " must be 1024..65535");
        if (timeoutSeconds < 0) throw new IllegalArgumentException("--timeout " + timeoutSeconds + " must be >= 0");
        if (share != null && !Files.isDirectory(share))
            throw new IllegalArgumentException("--share '" + share + "' is not a folder");
        if (share != null && share.toString().contains(","))
            throw new IllegalArgumentException("--share '" + share + "': QEMU cannot take a path with a comma");
        if (gdb != null && (gdb.toString().contains(",") || !Files.isDirectory(gdb.toAbsolutePath().getParent())))
            throw new IllegalArgumentException("--gdb '" + gdb + "' must be a path without a comma in a folder that "
                    + "exists");
        if (provider != null && !(Files.isRegularFile(provider) && Initramfs.providerName(provider) != null))
            throw new IllegalArgumentException("provider '" + provider + "' is not a lib<name>-rdmav34.so file");
        if (run != null && run.isBlank())
            throw new IllegalArgumentException("--run '' is empty: give a command, or leave --run out for a shell");
        forwards.check(node);
    }

    /** The guest kernel's release, written once in kernel/RELEASE. */
    String release() throws IOException {
        Path f = root.resolve("kernel/RELEASE");
        if (!Files.isRegularFile(f)) throw new IOException("no " + f + ": is " + root + " nicsim's checkout?");
        return Files.readString(f).strip();
    }

    /**
     * nicsim's kernel modules that were built: nicsim_ib.ko (./mill kernel.module) and the kernel selftest
     * nicsim_selftest.ko (./mill kernel.selftest); the launcher builds both before a guest boots.
     */
    List<Path> modules() {
        List<Path> built = new ArrayList<>();
        for (String task : List.of("module", "selftest")) {
            Path dest = root.resolve("out/kernel/" + task + ".dest");
            Path ko = dest.resolve(task.equals("module") ? "nicsim_ib.ko" : "nicsim_selftest.ko");
            if (Files.isRegularFile(ko)) built.add(ko);
        }
        return built;
    }

    /** The QEMU bridge, which ./mill libnicsim.build builds. */
    Path bridge() { return root.resolve("out/libnicsim/build.dest/nicsim-qemu-remote"); }

    /** The guests' Ethernet: a multicast group that QEMU binds to the loopback interface. */
    String netGroup() { return "230.77.0.1:" + netPort; }
}
