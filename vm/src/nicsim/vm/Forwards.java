package nicsim.vm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * A guest's TCP with the programs attached to the same fabric (docs/kernel.md, "Guests beside attached
 * programs"). Attached programs know node n as the loopback address 127.77.0.(n+1) of the machine; the guest
 * knows it as 10.77.0.(n+1) on its closed Ethernet. These forwards join the two through a second guest NIC
 * on QEMU's user-mode network with {@code restrict=on}, which routes nothing but the forwards:
 * <ul>
 * <li>{@code in}: ports of the guest's own servers. The host's 127.77.0.(N+1):PORT (node N's address, where
 *     attached programs reach {@code nodeN}) is forwarded into the guest's 10.77.0.(N+1):PORT.</li>
 * <li>{@code out}: attached nodes' ports. The guest's connections to 10.77.0.(M+1):PORT go, each through a
 *     {@code socat} of its own, to the host's 127.77.0.(M+1):PORT from 127.77.0.(N+1), as an attached program
 *     on node N would connect; the guest routes node M's address to that NIC.</li>
 * </ul>
 * Both ends on the host are loopback addresses: nothing of it leaves the machine.
 *
 * @param in  the guest's ports reached from the host at its node's address
 * @param out the attached nodes' ports the guest reaches by node name
 */
public record Forwards(List<Integer> in, List<Target> out) {
    /** No second NIC: the guest talks to guests only. */
    public static final Forwards NONE = new Forwards(List.of(), List.of());

    /** Where the guest's forwarder answers on its user-mode network: connections from the host come from it. */
    static final String FORWARDER = "10.77.0.254";

    /** A port of an attached node. */
    public record Target(int node, int port) {
        @Override public String toString() { return node + ":" + port; }
    }

    public Forwards {
        in = List.copyOf(in);
        out = List.copyOf(out);
    }

    /** Node n's address as attached programs know it: a loopback address of the machine (docs/attach.md). */
    public static String hostAddress(int node) { return "127.77.0." + (node + 1); }

    /** {@code --forward-in PORT[,PORT...]}; an error names the option and the value that is wrong. */
    public static List<Integer> parsePorts(String option, String text) {
        List<Integer> ports = new ArrayList<>();
        for (String p : items(option, text)) ports.add(port(option, p));
        return ports;
    }

    /** {@code --forward-out NODE:PORT[,NODE:PORT...]}; an error names the option and the value that is wrong. */
    public static List<Target> parseTargets(String option, String text) {
        List<Target> targets = new ArrayList<>();
        for (String t : items(option, text)) {
            String[] np = t.split(":", -1);
            if (np.length != 2)
                throw new IllegalArgumentException(option + " '" + t + "' must be NODE:PORT (e.g. 0:18515)");
            int node;
            try {
                node = Integer.parseInt(np[0]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + " '" + t + "': node '" + np[0] + "' is not a number");
            }
            targets.add(new Target(node, port(option, np[1])));
        }
        return targets;
    }

    private static List<String> items(String option, String text) {
        List<String> items = new ArrayList<>();
        for (String s : text.split(",", -1)) {
            if (s.isBlank()) throw new IllegalArgumentException(option + " '" + text + "' has an empty item");
            items.add(s.strip());
        }
        return items;
    }

    private static int port(String option, String text) {
        try {
            int p = Integer.parseInt(text);
            if (p >= 1 && p <= 65535) return p;
        } catch (NumberFormatException e) { // said below
        }
        throw new IllegalArgumentException(option + " port '" + text + "' must be a number 1..65535");
    }

    /** Whether the guest gets the second NIC at all. */
    public boolean any() { return !in.isEmpty() || !out.isEmpty(); }

    /** The attached nodes the guest routes to the forwarder, ascending. */
    List<Integer> attachedNodes() { return List.copyOf(new TreeSet<>(out.stream().map(Target::node).toList())); }

    /** Holds the rules to what QEMU and the guest can do for the guest on {@code node}. */
    void check(int node) {
        if (new TreeSet<>(in).size() != in.size())
            throw new IllegalArgumentException("--forward-in " + in + " names a port twice");
        if (new TreeSet<>(out.stream().map(Target::toString).toList()).size() != out.size())
            throw new IllegalArgumentException("--forward-out " + out + " names a target twice");
        for (Target t : out) {
            if (t.node() < 0 || t.node() >= Initramfs.MAX_NODES)
                throw new IllegalArgumentException("--forward-out " + t + ": node " + t.node() + " must be 0.."
                        + (Initramfs.MAX_NODES - 1));
            if (t.node() == node)
                throw new IllegalArgumentException("--forward-out " + t + ": node " + node + " is this guest's own"
                        + " node; its programs run here, not under attach");
        }
    }

    /**
     * Fails, naming the port, when something on the machine already listens where a {@code in} forward must:
     * QEMU would otherwise stop at start with a message of its own on stderr.
     */
    void checkFree(int node) throws IOException {
        for (int p : in)
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(hostAddress(node), p));
            } catch (IOException e) {
                throw new IOException("--forward-in " + p + ": " + hostAddress(node) + ":" + p + " is taken on this "
                        + "machine (" + e.getMessage() + "): a program there, or one bound to 0.0.0.0:" + p, e);
            }
    }

    /**
     * QEMU's options for the second NIC: user-mode networking on the guests' subnet with restrict=on (no route
     * out; only the forwards below pass), the forwarder at {@link #FORWARDER}, IPv6 off. A comma inside an option's
     * value is written twice, as QEMU's option syntax wants.
     */
    List<String> qemu(int node) {
        String me = Vm.address(node);
        StringBuilder net = new StringBuilder("user,id=net1,restrict=on,ipv6=off,net=10.77.0.0/24,host=" + FORWARDER
                + ",dns=10.77.0.253,dhcpstart=10.77.0.200");
        for (int p : in)
            net.append(",hostfwd=tcp:").append(hostAddress(node)).append(':').append(p).append('-').append(me)
                    .append(':').append(p);
        // libslirp runs the command with the connection as its stdin, stdout and stderr: socat's own messages
        // would land in the guest's stream, so they go nowhere; a refused connection is closed at once
        for (Target t : out)
            net.append(",guestfwd=tcp:").append(Vm.address(t.node())).append(':').append(t.port())
                    .append("-cmd:socat -lf /dev/null - TCP:").append(hostAddress(t.node())).append(':')
                    .append(t.port()).append(",,bind=").append(hostAddress(node));
        String mac = String.format("52:54:00:4e:01:%02x", node);
        return List.of("-netdev", net.toString(), "-device", "virtio-net-pci,netdev=net1,romfile=,mac=" + mac);
    }

    /** The kernel argument that tells /init to bring the NIC up and which nodes' addresses it routes there. */
    String kernelArg() {
        List<Integer> nodes = attachedNodes();
        return "nicsim.forward=" + (nodes.isEmpty() ? "none"
                : String.join(",", nodes.stream().map(String::valueOf).toList()));
    }
}
