package nicsim.cosim.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import nicsim.driver.ErrnoException;
import nicsim.serve.Attach;
import nicsim.serve.PortControl;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "port", mixinStandardHelpOptions = true,
        description = "Take a node's link down or bring it up on a running serve, as a cable pulled and plugged back: "
                + "its adapter reports PORT_ERR or PORT_ACTIVE (ibv_get_async_event, the kernel's ib_dispatch_event), "
                + "its port reads DOWN meanwhile, and the fabric drops its packets (Fabric.link_down_drops).")
final class PortCommand implements Callable<Integer> {
    @Option(names = "--socket", description = "the serve to act on (default: /tmp/nicsim-<user>/serve.sock)")
    Path socket;

    @Option(names = "--node", required = true, description = "the node whose link changes")
    int node;

    @Parameters(paramLabel = "STATE", description = "down or up")
    String state;

    @Override public Integer call() throws Exception {
        if (!state.equals("down") && !state.equals("up"))
            throw new IllegalArgumentException("STATE '" + state + "' must be down or up");
        if (node < 0) throw new IllegalArgumentException("--node " + node + " must be >= 0");
        Path sock = socket != null ? socket : Attach.defaultSocket();
        try {
            PortControl.link(sock, node, state.equals("up"));
        } catch (IOException e) {
            System.err.println("nicsim port: no serve answers at " + sock + " (" + e.getMessage() + ")");
            return 1;
        } catch (ErrnoException e) {
            System.err.println("nicsim port: " + e.getMessage());
            return 1;
        }
        System.out.printf("nicsim port: node %d's link is %s%n", node, state);
        return 0;
    }
}
