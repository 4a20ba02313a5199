package nicsim.vm;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.cpio.CpioArchiveEntry;
import org.apache.commons.compress.archivers.cpio.CpioArchiveOutputStream;
import org.apache.commons.compress.archivers.cpio.CpioConstants;

/**
 * The guest's initramfs, built from Debian packages: busybox for the shell and tools, rdma-core's
 * user space with the shared libraries it needs, the kernel modules the guest loads (with a
 * modules.dep depmod wrote for them), nicsim's own module when it was built, and /init. It is kept
 * in the cache under a hash of everything that went in, so a second boot starts at once.
 */
final class Initramfs {
    /** Packages unpacked into the guest: busybox, what an RDMA host's user space has, libgcc_s, which glibc
     * loads when a thread exits (rping's do; without it the program aborts at its end), and nvme-cli with its
     * libraries for NVMe over Fabrics (`nvme connect -t rdma`), srptools for SRP's discovery (ibsrpdm,
     * srp_daemon); last NFS's user space (exportfs, rpc.mountd, mount.nfs4; rpcbind, which NFSv3 would need) with
     * the libraries the host lacks and libtirpc's /etc/netconfig. */
    static final List<String> PACKAGES = List.of("busybox-static", "libibverbs1", "ibverbs-providers", "librdmacm1",
            "libibumad3", "rdma-core", "ibverbs-utils", "rdmacm-utils", "perftest", "qperf", "libnl-3-200",
            "libnl-route-3-200", "infiniband-diags", "libibmad5", "libibnetdisc5", "libgcc-s1", "nvme-cli",
            "libnvme1", "libjson-c5", "srptools",
            "nfs-kernel-server", "nfs-common", "rpcbind", "libnfsidmap1", "libwrap0", "libtirpc-common");
    /** Kernel modules the init loads: virtio for the network and shared folder, 9p, the kernel's RDMA stack. */
    static final List<String> MODULES = List.of("virtio_pci", "virtio_net", "9pnet_virtio", "9p", "ib_core",
            "ib_uverbs", "ib_umad", "ib_cm", "rdma_cm", "rdma_ucm", "ib_ipoib");
    /** Kernel modules carried but loaded only by the commands that want them (modprobe): NVMe over Fabrics'
     * target (nvmet, nvmet-rdma; a namespace may be a file) and host (nvme-rdma); SRP's target (LIO's core with
     * its file and block backstores, ib_srpt), initiator (ib_srp) and SCSI disk (sd_mod), and the RAM disk (brd);
     * NFS's server (nfsd), client (nfsv4) and RPC-over-RDMA transport (rpcrdma: xprtrdma and svcrdma); with their
     * dependencies. */
    static final List<String> ON_DEMAND = List.of("nvmet", "nvmet_rdma", "nvme_rdma", "target_core_mod",
            "target_core_file", "target_core_iblock", "ib_srpt", "ib_srp", "sd_mod", "brd", "nfsd", "nfsv4",
            "rpcrdma");
    /** Bump when the builder changes what it writes, so cached archives of the old layout are not reused. */
    private static final String LAYOUT = "2";
    /** Guests on one fabric know each other by these names: node N at 10.77.0.(N+1) on their Ethernet. */
    static final int MAX_NODES = 64;

    private Initramfs() { }

    /** Where Debian's libibverbs looks for a provider a driver file names by its short name. */
    static final String PROVIDER_DIR = "usr/lib/x86_64-linux-gnu/libibverbs";
    /** The ABI suffix of a provider for libibverbs 1.x's private ABI 34 (rdma-core 44). */
    private static final String PROVIDER_SUFFIX = "-rdmav34.so";

    /** A provider library's name as a libibverbs driver file gives it (libNAME-rdmav34.so), or null if it is none. */
    static String providerName(Path library) {
        String f = library.getFileName().toString();
        return f.startsWith("lib") && f.endsWith(PROVIDER_SUFFIX) && f.length() > 3 + PROVIDER_SUFFIX.length()
                ? f.substring(3, f.length() - PROVIDER_SUFFIX.length()) : null;
    }

    /**
     * The archive for {@code kernel} with nicsim's built modules {@code nicsim} (nicsim_ib.ko, and the
     * kernel selftest nicsim_selftest.ko, which the guest loads only when asked) and nicsim's libibverbs
     * {@code provider} (null: none), built into {@code cache} unless an archive of the same inputs is there.
     */
    static Path build(GuestKernel kernel, List<Path> nicsim, Path provider, DebianPackages debs, Path cache,
                      Consumer<String> progress) throws IOException {
        List<Path> packages = new ArrayList<>();
        for (String p : PACKAGES) packages.add(debs.fetch(p));
        byte[] init = resource("init");
        MessageDigest key = sha256();
        for (String part : List.of(LAYOUT, kernel.release(), String.join(",", MODULES),
                String.join(",", ON_DEMAND))) key.update(bytes(part + "\n"));
        for (Path p : packages) key.update(bytes(p.getFileName() + "\n"));
        key.update(init);
        for (Path m : nicsim) key.update(Files.readAllBytes(m));
        if (provider != null) key.update(Files.readAllBytes(provider));
        String hash = HexFormat.of().formatHex(key.digest()).substring(0, 16);
        Path out = cache.resolve("initramfs-" + hash + ".cpio.gz");
        if (Files.isRegularFile(out)) return out;

        progress.accept("building the initramfs (" + PACKAGES.size() + " Debian packages, " + MODULES.size()
                + " kernel modules and " + ON_DEMAND.size() + " on demand, with their dependencies"
                + nicsim.stream().map(m -> ", " + m.getFileName()).collect(Collectors.joining())
                + (provider != null ? ", " + provider.getFileName() : "") + ")");
        Path staging = Files.createTempDirectory(cache, "staging-");
        try {
            for (Path p : packages) DebianPackages.unpack(p, staging);
            modules(kernel, nicsim, staging);
            if (provider != null) provider(provider, staging);
            SharedLibraries.close(staging);
            etc(staging);
            Path initFile = staging.resolve("init");
            Files.write(initFile, init);
            Files.setPosixFilePermissions(initFile, perms(0755));
            for (String d : List.of("proc", "sys", "dev", "tmp", "run", "host", "root", "mnt", "etc/nicsim", "bin",
                    "sbin", "usr/bin", "usr/sbin"))
                Files.createDirectories(staging.resolve(d));
            Path tmp = Files.createTempFile(cache, "initramfs-", ".tmp");
            try (OutputStream o = Files.newOutputStream(tmp)) {
                write(staging, Map.of(), o);
            }
            Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Vm.deleteTree(staging);
        }
        progress.accept("initramfs: " + out + " (" + Files.size(out) / (1 << 20) + " MiB)");
        return out;
    }

    /** The modules the guest loads, their dependencies, nicsim's under extra/, and depmod's index of them. */
    private static void modules(GuestKernel kernel, List<Path> nicsim, Path staging) throws IOException {
        Path dest = staging.resolve("lib/modules/" + kernel.release());
        for (String rel : kernel.closure(Stream.concat(MODULES.stream(), ON_DEMAND.stream()).toList())) {
            Files.createDirectories(dest.resolve(rel).getParent());
            Files.copy(kernel.modules().resolve(rel), dest.resolve(rel));
        }
        for (String f : List.of("modules.builtin", "modules.builtin.modinfo", "modules.order"))
            Files.copy(kernel.modules().resolve(f), dest.resolve(f));
        Files.createDirectories(dest.resolve("extra"));
        for (Path m : nicsim) Files.copy(m, dest.resolve("extra").resolve(m.getFileName()));
        Tools.run(List.of(Tools.sbin("depmod"), "-b", staging.toString(), kernel.release()), null);
    }

    /**
     * nicsim's provider where Debian's own providers are, and the driver file that names it to libibverbs
     * (/etc/libibverbs.d/NAME.driver: "driver NAME"), as rdma-core installs each of its providers.
     */
    private static void provider(Path library, Path staging) throws IOException {
        String name = providerName(library);
        Path dir = Files.createDirectories(staging.resolve(PROVIDER_DIR));
        Files.copy(library, dir.resolve(library.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        Path drivers = Files.createDirectories(staging.resolve("etc/libibverbs.d"));
        Files.writeString(drivers.resolve(name + ".driver"), "driver " + name + "\n");
    }

    /** /etc/hosts naming every node a fabric may have, and the account files programs look themselves up in. */
    private static void etc(Path staging) throws IOException {
        StringBuilder hosts = new StringBuilder("127.0.0.1 localhost\n");
        for (int n = 0; n < MAX_NODES; n++) hosts.append(Vm.address(n)).append(" node").append(n).append('\n');
        Files.createDirectories(staging.resolve("etc"));
        Files.writeString(staging.resolve("etc/hosts"), hosts);
        Files.writeString(staging.resolve("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
        Files.writeString(staging.resolve("etc/group"), "root:x:0:\n");
    }

    /**
     * Writes {@code root}'s tree, and then {@code extra} files (name to contents), as a gzipped newc
     * archive the kernel unpacks. Owner root, time 0 and sorted names: the same tree gives the same
     * bytes. /dev/console is in it, since the kernel opens it for /init before anything mounts /dev.
     */
    static void write(Path root, Map<String, byte[]> extra, OutputStream target) throws IOException {
        GZIPOutputStream gz = new GZIPOutputStream(new BufferedOutputStream(target, 1 << 16), 1 << 16);
        try (CpioArchiveOutputStream cpio = new CpioArchiveOutputStream(gz, CpioConstants.FORMAT_NEW)) {
            long[] inode = {1};
            if (root != null) {
                List<Path> paths;
                try (Stream<Path> s = Files.walk(root)) {
                    paths = s.filter(p -> !p.equals(root)).sorted().toList();
                }
                for (Path p : paths) {
                    String name = root.relativize(p).toString();
                    if (Files.isSymbolicLink(p)) {
                        byte[] target2 = bytes(Files.readSymbolicLink(p).toString());
                        put(cpio, entry(name, CpioConstants.C_ISLNK | 0777, inode), target2);
                    } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                        put(cpio, entry(name, CpioConstants.C_ISDIR | mode(p), inode), new byte[0]);
                    } else {
                        put(cpio, entry(name, CpioConstants.C_ISREG | mode(p), inode), Files.readAllBytes(p));
                    }
                }
                CpioArchiveEntry console = entry("dev/console", CpioConstants.C_ISCHR | 0600, inode);
                console.setRemoteDeviceMaj(5);
                console.setRemoteDeviceMin(1);
                put(cpio, console, new byte[0]);
            }
            for (Map.Entry<String, byte[]> e : new TreeMap<>(extra).entrySet())
                put(cpio, entry(e.getKey(), CpioConstants.C_ISREG | 0644, inode), e.getValue());
        }
    }

    private static CpioArchiveEntry entry(String name, long mode, long[] inode) {
        CpioArchiveEntry e = new CpioArchiveEntry(CpioConstants.FORMAT_NEW, name);
        e.setMode(mode);
        e.setInode(inode[0]++);
        e.setNumberOfLinks((mode & CpioConstants.S_IFMT) == CpioConstants.C_ISDIR ? 2 : 1);
        e.setUID(0);
        e.setGID(0);
        e.setTime(0);
        return e;
    }

    private static void put(CpioArchiveOutputStream cpio, CpioArchiveEntry e, byte[] data) throws IOException {
        e.setSize(data.length);
        cpio.putArchiveEntry(e);
        cpio.write(data);
        cpio.closeArchiveEntry();
    }

    private static int mode(Path p) throws IOException {
        int m = 0;
        for (PosixFilePermission perm : Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS))
            m |= 0400 >> perm.ordinal();
        return m;
    }

    static Set<PosixFilePermission> perms(int mode) {
        Set<PosixFilePermission> s = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission perm : PosixFilePermission.values())
            if ((mode & (0400 >> perm.ordinal())) != 0) s.add(perm);
        return s;
    }

    static byte[] resource(String name) throws IOException {
        try (InputStream in = Initramfs.class.getResourceAsStream("/nicsim/vm/" + name)) {
            if (in == null) throw new IOException("resource nicsim/vm/" + name + " is missing from the build");
            return in.readAllBytes();
        }
    }

    private static byte[] bytes(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
