package nicsim.cosim.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.serve.Attach;
import nicsim.serve.ProviderBuild;
import nicsim.vm.Forwards;
import nicsim.vm.Tools;
import nicsim.vm.Vm;
import nicsim.vm.VmOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "vm", mixinStandardHelpOptions = true,
        description = "Boot a QEMU guest (TCG) on a node: Debian's kernel, an initramfs with busybox, rdma-core "
                + "and nicsim's kernel module, the node's adapter through the QEMU bridge when serve runs, the "
                + "console on this terminal. Guests reach each other by name (node0, node1...) on a network "
                + "closed to the machine.")
final class VmCommand implements Callable<Integer> {
    @Option(names = "--node", defaultValue = "0", description = "the node: its adapter, name (nodeN) and address "
            + "(10.77.0.N+1) (default: ${DEFAULT-VALUE})")
    int node;

    @Option(names = "--run", paramLabel = "CMD", description = "run CMD (a shell command) in the guest's /host "
            + "instead of a shell, then power off; exits with CMD's status")
    String run;

    @Option(names = "--no-device", description = "boot without the adapter, even if serve runs")
    boolean noDevice;

    @Option(names = "--socket",
            description = "serve's socket (default: /tmp/nicsim-<user>/serve.sock, where serve listens)")
    Path socket;

    @Option(names = "--share", paramLabel = "DIR",
            description = "host folder the guest mounts at /host by 9p (default: the current folder)")
    Path share;

    @Option(names = "--no-share", description = "no shared folder")
    boolean noShare;

    @Option(names = "--memory", paramLabel = "MiB", defaultValue = "512",
            description = "guest RAM in MiB (default: ${DEFAULT-VALUE})")
    int memory;

    @Option(names = "--net-port", description = "UDP port of the guests' network on the loopback interface; "
            + "guests that talk share it (default: one derived from the socket path, so one per fabric)")
    Integer netPort;

    @Option(names = "--timeout", paramLabel = "S", defaultValue = "0",
            description = "with --run: stop the guest after S seconds (default: never)")
    int timeout;

    @Option(names = "--kernel-args", defaultValue = "", description = "more kernel command-line arguments (e.g. "
            + "loglevel=7 to see the kernel's messages)")
    String kernelArgs;

    @Option(names = "--gdb", paramLabel = "SOCKET", description = "QEMU's gdbstub on this Unix socket: "
            + "gdb's 'target remote SOCKET' stops the guest's CPU (docs/kernel.md, Debugging)")
    Path gdb;

    @Option(names = "--forward-in", paramLabel = "PORT[,PORT...]", description = "TCP ports of the guest's servers "
            + "that programs under attach reach at nodeN (127.77.0.N+1) (docs/kernel.md, Guests beside attached "
            + "programs)")
    String forwardIn;

    @Option(names = "--forward-out", paramLabel = "NODE:PORT[,...]", description = "TCP ports of programs under "
            + "attach on other nodes that the guest's programs reach by node name (nodeM:PORT)")
    String forwardOut;

    @Override public Integer call() throws Exception {
        Path sock = socket != null ? socket : Attach.defaultSocket();
        String rootEnv = System.getenv("NICSIM_ROOT");
        Path root = Path.of(rootEnv != null ? rootEnv : System.getProperty("nicsim.root", ".")).toAbsolutePath();
        Path dir = noShare ? null : (share != null ? share : Path.of("")).toAbsolutePath().normalize();
        Path provider;
        try { // the guest's rdma-core loads it; a guest without it still boots, its programs find no nicsim device
            provider = ProviderBuild.get().resolve(ProviderBuild.LIBRARY);
        } catch (ProviderBuild.Missing e) {
            System.err.println("nicsim vm: the guest gets no nicsim provider: " + e.getMessage());
            provider = null;
        }
        Forwards forwards = new Forwards(
                forwardIn == null ? List.of() : Forwards.parsePorts("--forward-in", forwardIn),
                forwardOut == null ? List.of() : Forwards.parseTargets("--forward-out", forwardOut));
        VmOptions o = new VmOptions(node, run, noDevice, sock, dir, memory, root, VmOptions.defaultCache(),
                netPort != null ? netPort : VmOptions.defaultNetPort(sock), timeout, kernelArgs, gdb, provider,
                forwards);
        try {
            return new Vm(o, System.out, System.err).run();
        } catch (IOException e) { // a download, a host tool or the guest failed: one line naming it
            System.err.println("nicsim vm: " + e.getMessage());
            return e instanceof Tools.MissingTool ? 2 : 1;
        }
    }
}
