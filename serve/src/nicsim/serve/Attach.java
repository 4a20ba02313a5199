package nicsim.serve;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs an unmodified libibverbs program with a node's simulated adapter as its only RDMA device.
 * The program starts in a private mount namespace ({@code unshare -m}) where /dev is an overlay
 * holding /dev/infiniband/uverbs0, so the host's /dev is never touched; libibverbs finds the
 * device through the node's sysfs tree (SYSFS_PATH) and loads nicsim's provider (RDMAV_DRIVERS),
 * which is also preloaded so its completion-channel verbs replace those that need the kernel.
 *
 * <p>Needs root (or unprivileged user namespaces with overlay mounts, Linux 5.11 or later). A
 * kernel with RDMA devices of its own changes nothing: libibverbs then lists those too (found
 * through netlink), and nicsim's device is the one named {@code nicsim0}.
 */
public final class Attach {
    private Attach() {}

    /**
     * Serve's files for a socket sit beside it, named after it ({@code S.sysfs/nodeN}, {@code S.hosts}), so two
     * serves whose sockets share a folder (/tmp/a.sock, /tmp/b.sock) neither see nor remove each other's nodes.
     */
    public static Path sysfsRoot(Path socket, int node) { return beside(socket, ".sysfs").resolve("node" + node); }

    /** The nodes' names and IP addresses serve writes beside its socket, as /etc/hosts lines. */
    public static Path hostsFile(Path socket) { return beside(socket, ".hosts"); }

    private static Path beside(Path socket, String suffix) {
        Path s = socket.toAbsolutePath();
        return s.resolveSibling(s.getFileName() + suffix);
    }

    /** The socket {@code serve} and {@code attach} use unless told otherwise. */
    public static Path defaultSocket() {
        // the socket attach gives its programs: a script run under attach (or a shell that exported it) that starts
        // attach or vm again reaches the same serve
        String env = System.getenv("NICSIM_SOCKET");
        if (env != null && !env.isEmpty()) return Path.of(env);
        return Path.of(System.getProperty("java.io.tmpdir"), "nicsim-" + System.getProperty("user.name"), "serve.sock");
    }

    /**
     * Makes /dev/infiniband/uverbs0 in a private /dev, shows the node's sysfs tree ($2) under
     * /sys/class too (for tools that read /sys/class/infiniband directly, as ibstat and ibstatus do)
     * and gives the node its own boot id and host name (the node is $1), then runs the program (the rest of "$@")
     * with the environment given.
     */
    private static final String SETUP = String.join("\n",
            "set -e",
            "node=$1; sysfs=$2; hosts=$3; shift 3",
            "mount --make-rprivate /",
            "d=$(mktemp -d)",
            "mount -t tmpfs nicsim-dev \"$d\"",
            "mkdir \"$d/upper\" \"$d/work\" \"$d/host\"",
            "mount --rbind /dev \"$d/host\"",
            "mount -t overlay overlay -o lowerdir=/dev,upperdir=\"$d/upper\",workdir=\"$d/work\" /dev",
            // the overlay shows /dev's own files; its mounts (pts, shm, mqueue) come back from the host's view
            "for m in pts shm mqueue hugepages; do if mountpoint -q \"$d/host/$m\"; then"
                    + " mount --rbind \"$d/host/$m\" \"/dev/$m\"; fi; done",
            "mkdir -p /dev/infiniband",
            ": > /dev/infiniband/uverbs0",
            "mount --bind /dev/null /dev/infiniband/uverbs0",
            // librdmacm's file, which the provider stands in for (nicsim-rdmacm.c); its presence is what tools look for
            ": > /dev/infiniband/rdma_cm",
            "mount --bind /dev/null /dev/infiniband/rdma_cm",
            // libibumad's file of port 1 (the provider stands in for it: nicsim-umad.c)
            ": > /dev/infiniband/umad0",
            "mount --bind /dev/null /dev/infiniband/umad0",
            // the nodes' names resolve to their RDMA CM addresses: /etc/hosts with serve's lines added
            "if [ -f \"$hosts\" ]; then cat /etc/hosts \"$hosts\" > \"$d/hosts\";"
                    + " mount --bind \"$d/hosts\" /etc/hosts; fi",
            // dapl's providers (libdat2 reads /etc/dat.conf): Debian's lines name real adapters only, so the node's
            // nicsim0 is added as an admin adds a new adapter's: its RDMA CM provider by the node's address (where
            // Debian's ofa-v2-ib0 names the IPoIB interface, which the node has not), the socket CM and the UD CM
            // ones by port (Debian's ofa-v2-mlx4_0-1 and -1u); awk 1 ends each line in a newline (Debian's file
            // has none after its last)
            "if [ -f /etc/dat.conf ]; then",
            "  a=$(awk -v n=\"node$node\" '$2 == n { print $1 }' \"$hosts\" 2>/dev/null || true)",
            "  { awk 1 /etc/dat.conf; echo \"# nicsim: node $node's adapter\"",
            "    echo \"ofa-v2-nicsim0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \\\"$a 0\\\" \\\"\\\"\"",
            "    echo 'ofa-v2-nicsim0-1 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 \"nicsim0 1\" \"\"'",
            "    echo 'ofa-v2-nicsim0-1u u2.0 nonthreadsafe default libdaploucm.so.2 dapl.2.0 \"nicsim0 1\" \"\"'",
            "  } > \"$d/dat.conf\"",
            "  mount --bind \"$d/dat.conf\" /etc/dat.conf",
            "fi",
            // each node is a host of its own to those who ask the kernel's boot id (UCX: whether a peer
            // shares its memory, so shared-memory transports stay within a node and the adapter carries the rest)
            "b=$(cat /proc/sys/kernel/random/boot_id)",
            "printf '%s%08x\\n' \"${b%????????}\" \"$node\" > \"$d/boot_id\"",
            "mount --bind \"$d/boot_id\" /proc/sys/kernel/random/boot_id",
            // and by its name: a UTS namespace of its own named node<K>, as its address is (MPICH pairs ranks by
            // host name, ibsysstat reports it)
            "hostname \"node$node\"",
            // /sys/class with the node's classes above the host's: an overlay, so everything else stays
            "mount -t overlay nicsim-class -o lowerdir=\"$sysfs/class\":/sys/class /sys/class 2>/dev/null || true",
            "exec \"$@\"");

    /**
     * Whether a TCP socket is in LISTEN on {@code port} (the kernel's tables: connecting to ask would
     * take the one accept a program such as perftest makes): when an attached server is ready.
     */
    public static boolean listening(int port) throws IOException {
        String hexPort = String.format(":%04X ", port);
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6"))
            for (String line : Files.readAllLines(Path.of(table)))
                if (line.contains(hexPort) && line.trim().split("\\s+")[3].equals("0A")) return true; // 0A: LISTEN
        return false;
    }

    /** The provider's drivers: "c" (libnicsim, the default) and "java" (each verb a request to Java verbs). */
    public static final List<String> DRIVERS = List.of("c", "java");

    /**
     * {@code program} run with the provider on {@code driver} (NICSIM_DRIVER in its environment, whatever the
     * caller's): "c" or "java", else IllegalArgumentException naming it.
     */
    public static List<String> withDriver(String driver, List<String> program) {
        if (!DRIVERS.contains(driver))
            throw new IllegalArgumentException("--driver '" + driver + "' is neither 'c' nor 'java'");
        List<String> out = new ArrayList<>(List.of("env", "NICSIM_DRIVER=" + driver));
        out.addAll(program);
        return out;
    }

    /** The command that runs {@code program} on node {@code node} of the simulator serving {@code socket}. */
    public static List<String> command(Path socket, int node, List<String> program) {
        return command(socket, node, false, program);
    }

    /**
     * As above; with {@code simulatedTime}, the program's gettimeofday and clock_gettime read the
     * simulation's time (nicsim-time.c), so what it prints from its own clock is simulated.
     */
    public static List<String> command(Path socket, int node, boolean simulatedTime, List<String> program) {
        if (program.isEmpty())
            throw new IllegalArgumentException("attach: no program given (nicsim attach --node K -- PROGRAM ARGS...)");
        Path sysfs = sysfsRoot(socket, node);
        if (!Files.exists(socket))
            throw new IllegalArgumentException("attach: no simulator listens at " + socket
                    + " (start ./nicsim serve first, or give --socket)");
        if (!Files.isDirectory(sysfs))
            throw new IllegalArgumentException("attach: the simulator at " + socket + " has no node " + node
                    + " (serve --nodes more than " + node + ")");
        Path provider = ProviderBuild.get();
        List<String> cmd = new ArrayList<>();
        boolean root = "root".equals(System.getProperty("user.name"));
        cmd.addAll(root ? List.of("unshare", "-m", "-u") : List.of("unshare", "-r", "-m", "-u"));
        cmd.addAll(List.of("sh", "-c", SETUP, "nicsim-attach", Integer.toString(node), sysfs.toString(),
                hostsFile(socket).toString(), "env",
                "SYSFS_PATH=" + sysfs,
                "RDMAV_DRIVERS=" + provider.resolve("libnicsim"),
                "LD_PRELOAD=" + provider.resolve(ProviderBuild.LIBRARY)
                        + (simulatedTime ? " " + provider.resolve(ProviderBuild.CLOCK_LIBRARY) : ""),
                "NICSIM_SOCKET=" + socket.toAbsolutePath(),
                "NICSIM_NODE=" + node));
        // Open MPI's UCX layer takes only devices named mlx* unless told otherwise, as a site's
        // openmpi-mca-params.conf would tell it for its own adapters: nicsim's are named too
        boolean told = System.getenv("OMPI_MCA_pml_ucx_devices") != null
                || System.getenv("OMPI_MCA_opal_common_ucx_devices") != null;
        if (!told) cmd.add("OMPI_MCA_pml_ucx_devices=mlx*,nicsim*");
        // dapl's socket CM takes the first interface whose name is not ib* for its address (the machine's own
        // here, the same on every node) unless told which, as a site whose hosts' address is on IPoIB tells it
        if (System.getenv("DAPL_SCM_NETDEV") == null) cmd.add("DAPL_SCM_NETDEV=ib0");
        cmd.addAll(program);
        return cmd;
    }
}
