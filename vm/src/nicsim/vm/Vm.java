package nicsim.vm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Boots one node's guest: Debian's kernel and the project's initramfs under QEMU (TCG), on the
 * node's adapter through the QEMU bridge when serve runs and the bridge is built, with the guests'
 * closed network and the user's folder shared by 9p.
 */
public final class Vm {
    /** What the guest's init prints on the console after the command of --run, before the status. */
    static final String EXIT_MARKER = "NICSIM-VM-EXIT=";
    /** What it prints just before the command: the console is the command's from there on. */
    static final String START_MARKER = "NICSIM-VM-RUN";

    private static final Object PREPARING = new Object();

    private final VmOptions o;
    private final PrintStream out;
    private final Consumer<String> progress;

    public Vm(VmOptions options, PrintStream out, PrintStream err) {
        this.o = options;
        this.out = out;
        this.progress = line -> err.println("nicsim vm: " + line);
    }

    /** Node N's address on the guests' closed Ethernet, 10.77.0.(N+1) (attached programs know it as 127.77.0.(N+1)). */
    public static String address(int node) { return "10.77.0." + (node + 1); }

    /**
     * Prepares (or finds in the cache) the kernel and initramfs, then boots; returns the status of
     * the command of --run, or QEMU's when the guest ran a shell.
     */
    public int run() throws IOException, InterruptedException {
        o.check();
        Tools.require("qemu-system-x86_64", "qemu-system-x86");
        if (!o.forwards().out().isEmpty()) Tools.require("socat", "socat");
        o.forwards().checkFree(o.node());
        Path cache = o.cache().resolve("vm").resolve(o.release());
        Files.createDirectories(cache);
        GuestKernel kernel;
        Path initramfs;
        // one guest prepares the cache at a time, whether the others are processes (the file lock) or
        // threads of this one (a JVM holds a file's lock once: the monitor)
        synchronized (PREPARING) {
            Path lockFile = cache.resolve(".lock");
            try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock lock = ch.lock()) {
                DebianPackages debs = new DebianPackages(cache.resolve("debs"), progress);
                kernel = GuestKernel.prepare(o.release(), cache, debs, progress);
                initramfs = Initramfs.build(kernel, o.modules(), o.provider(), debs, cache, progress);
            }
        }
        Path runDir = Files.createTempDirectory("nicsim-vm-node" + o.node() + "-");
        try {
            return boot(kernel, initrd(initramfs, runDir), runDir);
        } finally {
            deleteTree(runDir);
        }
    }

    /**
     * The cached archive followed by a small one of this boot's own files (the command of --run):
     * the kernel unpacks concatenated archives in turn, so the large part is never rebuilt per boot.
     */
    private Path initrd(Path initramfs, Path runDir) throws IOException {
        Path initrd = runDir.resolve("initrd.cpio.gz");
        Files.copy(initramfs, initrd);
        if (o.run() != null)
            try (OutputStream a = Files.newOutputStream(initrd, StandardOpenOption.APPEND)) {
                Initramfs.write(null, Map.of("etc/nicsim/run", (o.run() + "\n").getBytes(StandardCharsets.UTF_8)), a);
            }
        return initrd;
    }

    private int boot(GuestKernel kernel, Path initrd, Path runDir) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        Map<String, String> env = new HashMap<>();
        Optional<String> withoutDevice = withoutDevice();
        if (withoutDevice.isEmpty()) {
            cmd.addAll(List.of(o.bridge().toString(), "--node", Integer.toString(o.node()), "--"));
            env.put("NICSIM_SOCKET", o.socket().toString());
            progress.accept("node " + o.node() + "'s adapter through " + o.bridge().getFileName() + " on "
                    + o.socket());
        } else {
            progress.accept("booting node " + o.node() + " without the adapter: " + withoutDevice.get());
        }
        cmd.addAll(qemu(kernel, initrd));
        progress.accept("booting node" + o.node() + " (QEMU, TCG; " + o.memoryMib() + " MiB; shared folder "
                + (o.share() == null ? "none" : o.share() + " at /host") + ")" + (o.run() == null
                ? "; Ctrl-A x ends QEMU" : "") + (o.gdb() == null ? "" : "; gdbstub on " + o.gdb().toAbsolutePath()));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(runDir.toFile());
        pb.environment().putAll(env);
        if (o.run() == null) return stopOnExit(pb.inheritIO().start(), runDir, p -> p.waitFor());
        Process qemu = pb.redirectInput(ProcessBuilder.Redirect.INHERIT)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        return stopOnExit(qemu, runDir, this::collect);
    }

    /** What is done with a running QEMU, and may be interrupted. */
    private interface WithQemu {
        int apply(Process qemu) throws IOException, InterruptedException;
    }

    /**
     * Runs {@code body} on QEMU, which is stopped if this JVM is (a signal, a test's timeout): it runs
     * in a process of its own, which nothing else would end; the boot's folder (a copy of the
     * initramfs) goes with it.
     */
    private static int stopOnExit(Process qemu, Path runDir, WithQemu body) throws IOException, InterruptedException {
        Thread hook = new Thread(() -> {
            qemu.destroy();
            try {
                qemu.waitFor(5, TimeUnit.SECONDS);
                deleteTree(runDir);
            } catch (IOException | InterruptedException e) { // the JVM is going: nothing more to do
            }
        }, "vm-stop-qemu");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return body.apply(qemu);
        } finally {
            try {
                if (!qemu.isAlive()) Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) { // the hook is running, or has run: nothing to undo
            }
        }
    }

    /** Copies the console while the guest runs the command of --run, and returns the status it reported. */
    private int collect(Process p) throws IOException, InterruptedException {
        Integer[] status = {null};
        Thread reader = new Thread(() -> status[0] = console(p), "vm-console");
        reader.start();
        boolean ended = o.timeoutSeconds() > 0 ? p.waitFor(o.timeoutSeconds(), TimeUnit.SECONDS) : p.waitFor() >= 0;
        if (!ended) {
            p.destroyForcibly().waitFor();
            reader.join();
            throw new IOException("node" + o.node() + "'s guest did not finish within --timeout " + o.timeoutSeconds()
                    + " s; QEMU was stopped");
        }
        reader.join();
        if (status[0] == null)
            throw new IOException("node" + o.node() + "'s guest ended (QEMU exit status " + p.exitValue()
                    + ") without reporting the command's status: the kernel or /init failed (output above)");
        return status[0];
    }

    /**
     * Copies the guest's console to out from the line the init prints before the command (firmware
     * and boot noise before it are kept back, and shown only if the guest never gets there, since
     * then they say why), and returns the status the init reported, or null if it reported none.
     */
    private Integer console(Process p) {
        Integer status = null;
        List<String> before = new ArrayList<>();
        boolean started = false;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                line = line.replace("\r", "");
                if (!started) {
                    if (line.contains(START_MARKER)) started = true;
                    else if (line.startsWith("nicsim-guest:")) out.println(line);
                    else before.add(line);
                    continue;
                }
                if (status != null) continue; // the guest powering off
                int at = line.indexOf(EXIT_MARKER);
                if (at >= 0 && line.substring(at + EXIT_MARKER.length()).trim().matches("\\d+")) {
                    status = Integer.parseInt(line.substring(at + EXIT_MARKER.length()).trim());
                    if (at > 0) out.println(line.substring(0, at));
                    continue;
                }
                out.println(line);
            }
        } catch (IOException e) {
            out.println("nicsim vm: lost the guest's console: " + e.getMessage());
        }
        if (!started) before.forEach(out::println);
        out.flush();
        return status;
    }

    /** Why the guest boots without the adapter, or empty when it boots with it. */
    Optional<String> withoutDevice() {
        if (o.noDevice()) return Optional.of("--no-device");
        if (!Files.isExecutable(o.bridge()))
            return Optional.of("the QEMU bridge is not built (" + o.bridge() + "; ./mill libnicsim.build builds it)");
        if (!serving(o.socket()))
            return Optional.of("no nicsim serve is listening on " + o.socket() + " (start ./nicsim serve)");
        return Optional.empty();
    }

    /** Whether something accepts connections on the socket: a file left by a stopped serve does not. */
    static boolean serving(Path socket) {
        if (!Files.exists(socket)) return false;
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            return ch.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            return false;
        }
    }

    /** QEMU's command line: TCG, shareable RAM (the bridge maps it), the console here, the guests' network, 9p. */
    List<String> qemu(GuestKernel kernel, Path initrd) {
        String mib = o.memoryMib() + "M";
        String mac = String.format("52:54:00:4e:00:%02x", o.node());
        List<String> q = new ArrayList<>(List.of("qemu-system-x86_64", "-accel", "tcg", "-nographic", "-no-reboot",
                "-m", mib, "-object", "memory-backend-memfd,id=ram,size=" + mib + ",share=on",
                "-machine", "q35,memory-backend=ram", "-smp", "1",
                "-kernel", kernel.vmlinuz().toString(), "-initrd", initrd.toString(),
                "-append", "console=ttyS0 quiet loglevel=3 panic=-1 nicsim.node=" + o.node()
                        + (o.share() != null ? " nicsim.share=1" : "")
                        + (o.forwards().any() ? " " + o.forwards().kernelArg() : "")
                        + (o.kernelArgs().isEmpty() ? "" : " " + o.kernelArgs()),
                // the guests' own Ethernet: a multicast group on the loopback interface only, so no frame
                // leaves the machine, and no route out (never -netdev user)
                "-netdev", "socket,id=net0,mcast=" + o.netGroup() + ",localaddr=127.0.0.1",
                "-device", "virtio-net-pci,netdev=net0,romfile=,mac=" + mac)); // no iPXE ROM: the kernel boots directly
        // after net0, so the guests' Ethernet stays eth0 and this one is eth1
        if (o.forwards().any()) q.addAll(o.forwards().qemu(o.node()));
        // QEMU's own gdbstub (Debian's kernel has no kgdb): any gdb attaches with `target remote PATH`
        if (o.gdb() != null)
            q.addAll(List.of("-chardev", "socket,id=gdb0,path=" + o.gdb().toAbsolutePath() + ",server=on,wait=off",
                    "-gdb", "chardev:gdb0"));
        if (o.share() != null)
            q.addAll(List.of("-virtfs", "local,path=" + o.share() + ",mount_tag=nicsim,security_model=none,id=share0"));
        return q;
    }

    /** Deletes a tree; safe to run twice at once (the boot's end and the JVM's shutdown hook may). */
    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) return;
        List<Path> paths;
        try (Stream<Path> s = Files.walk(root)) {
            paths = s.sorted(Comparator.reverseOrder()).toList();
        } catch (UncheckedIOException | NoSuchFileException gone) {
            return;
        }
        for (Path p : paths) Files.deleteIfExists(p);
    }
}
