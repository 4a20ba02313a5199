package nicsim.serve;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A test-sized QEMU guest: Debian's own kernel for the release in kernel/RELEASE (its package
 * downloaded with apt-get and unpacked once into ~/.cache/nicsim/vm/, never installed) and a busybox
 * initramfs whose /init is the test's script. Tests that need QEMU or busybox are skipped, saying
 * how to install them, only where they are absent (scripts/ensure-tools.sh --vm installs them).
 */
final class TestGuest {
    static final String QEMU = "qemu-system-x86_64";
    static final Path BUSYBOX = Path.of("/bin/busybox");
    /**
     * Guest-physical RAM the test guests' kernel is told to leave alone (memmap=SIZE$ADDR), so /dev/mem
     * (busybox devmem) may reach it: the kernel's STRICT_DEVMEM keeps programs off the RAM it uses.
     */
    static final long RESERVED = 0x700_0000L;

    private TestGuest() {}

    static Path root() { return Path.of(System.getProperty("nicsim.root", ".")); }

    /** Skips the test unless QEMU and a static busybox are here. */
    static void assumeTools() throws Exception {
        boolean qemu = run(List.of("sh", "-c", "command -v " + QEMU), null, 10) == 0;
        Assumptions.assumeTrue(qemu, QEMU + " is not installed: run scripts/ensure-tools.sh --vm (Debian's "
                + "qemu-system-x86) to run the guest tests");
        Assumptions.assumeTrue(Files.isExecutable(BUSYBOX), "no " + BUSYBOX + ": run scripts/ensure-tools.sh --vm "
                + "(Debian's busybox-static, which the guest's initramfs runs) to run the guest tests");
    }

    /** The guest kernel's vmlinuz, downloaded and unpacked on first use. */
    static Path kernel() throws Exception {
        String release = Files.readString(root().resolve("kernel/RELEASE")).trim();
        Path cache = Path.of(System.getProperty("user.home"), ".cache", "nicsim", "vm");
        Path vmlinuz = cache.resolve("vmlinuz-" + release);
        if (Files.exists(vmlinuz)) return vmlinuz;
        Path work = Files.createDirectories(cache.resolve("download-" + release));
        int rc = run(List.of("sh", "-c", "rm -rf unpacked *.deb && apt-get download linux-image-" + release
                + " && dpkg-deb -x linux-image-" + release + "_*.deb unpacked"), work.toFile(), 300);
        Path unpacked = work.resolve("unpacked/boot/vmlinuz-" + release);
        if (rc != 0 || !Files.exists(unpacked))
            throw new IOException("could not download and unpack linux-image-" + release + " into " + work);
        Files.copy(unpacked, cache.resolve("vmlinuz-" + release + ".part"), StandardCopyOption.REPLACE_EXISTING);
        Files.move(cache.resolve("vmlinuz-" + release + ".part"), vmlinuz, StandardCopyOption.ATOMIC_MOVE);
        run(List.of("rm", "-rf", work.toString()), null, 60); // the modules and the package: not needed here
        return vmlinuz;
    }

    /** An initramfs (newc cpio) in {@code dir}: busybox and {@code init} as /init. */
    static Path initramfs(Path dir, String init) throws Exception {
        Path tree = Files.createDirectories(dir.resolve("initramfs"));
        for (String d : List.of("bin", "proc", "sys", "dev")) Files.createDirectories(tree.resolve(d));
        Files.copy(BUSYBOX, tree.resolve("bin/busybox"), StandardCopyOption.REPLACE_EXISTING);
        Files.writeString(tree.resolve("init"), init);
        tree.resolve("init").toFile().setExecutable(true);
        Path cpio = dir.resolve("initramfs.cpio");
        if (run(List.of("sh", "-c", "find . | cpio -o -H newc --quiet > '" + cpio + "'"), tree.toFile(), 60) != 0)
            throw new IOException("cpio could not pack " + tree);
        run(List.of("rm", "-rf", tree.toString()), null, 60); // the archive holds it
        cpio.toFile().deleteOnExit();
        dir.toFile().deleteOnExit();
        return cpio;
    }

    /**
     * QEMU's arguments for a TCG guest of {@code megs} MiB of shareable RAM (as the bridge needs),
     * the console on stdio, no default devices (no network: nothing leaves the machine).
     */
    static List<String> qemuArgs(Path kernel, Path initramfs, int megs, String cmdline) {
        return List.of(QEMU, "-machine", "q35,accel=tcg,memory-backend=ram", "-m", megs + "M",
                "-object", "memory-backend-memfd,id=ram,size=" + megs + "M,share=on",
                "-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio", "-no-reboot",
                "-kernel", kernel.toString(), "-initrd", initramfs.toString(),
                "-append", "console=ttyS0 panic=-1 " + cmdline);
    }

    /** A guest booting through nicsim-qemu-remote: its console and the bridge's messages, as they come. */
    static final class Booted {
        private final Process process;
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final Thread reader;

        private Booted(Process process) {
            this.process = process;
            reader = new Thread(() -> {
                try {
                    process.getInputStream().transferTo(out);
                } catch (IOException ignored) { // the process ended
                }
            });
            reader.start();
        }

        /** Waits for the guest to power off: QEMU's status through the bridge; AssertionError if it did not. */
        int await(int seconds) throws Exception {
            boolean ended = process.waitFor(seconds, TimeUnit.SECONDS);
            if (!ended) process.destroyForcibly();
            reader.join(5000);
            if (!ended) throw new AssertionError("the guest did not power off within " + seconds + " s:\n" + output());
            return process.exitValue();
        }

        String output() {
            synchronized (out) {
                return out.toString(StandardCharsets.UTF_8);
            }
        }
    }

    /** Boots QEMU with {@code qemuArgs} through the bridge on node {@code node} of the serve at {@code socket}. */
    static Booted boot(Path socket, int node, List<String> qemuArgs) throws IOException {
        Path bridge = Path.of(System.getProperty("nicsim.libnicsim"), "nicsim-qemu-remote");
        List<String> cmd = new ArrayList<>(List.of(bridge.toString(), "--node", Integer.toString(node), "--"));
        cmd.addAll(qemuArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("NICSIM_SOCKET", socket.toString());
        return new Booted(pb.start());
    }

    /** A guest's run on node 0 of a serve of its own: QEMU's status, the console, and the serve (stopped). */
    record Ran(int status, String output, Served served) { }

    /**
     * Boots {@code qemuArgs} through the bridge on node 0 of a fresh two-node serve named {@code name}, waits
     * (150 s at most) for the guest to power off and for serve to log the function's summary, then stops serve.
     */
    static Ran onNode0(String name, List<String> qemuArgs) throws Exception {
        Served s = new Served(name).start(Served.cluster());
        try {
            Booted g = boot(s.socket, 0, qemuArgs);
            int status = g.await(150);
            String out = g.output();
            awaitClosed(s);
            return new Ran(status, out, s);
        } finally {
            Assertions.assertTrue(s.stop(), "serve's loop ended");
        }
    }

    /** Waits (10 s at most) for serve to see a bridge's socket close, so its log has the function's summary. */
    static void awaitClosed(Served s) throws InterruptedException {
        for (int i = 0; i < 500 && !s.log().contains("closed its PCI function"); i++) Thread.sleep(20);
    }

    private static int run(List<String> cmd, File dir, int seconds) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }
}
