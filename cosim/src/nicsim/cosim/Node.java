package nicsim.cosim;

import java.util.ArrayList;
import java.util.List;
import nicsim.driver.Host;
import nicsim.verbs.Context;
import nicsim.verbs.Device;
import nicsim.verbs.ProcessMemory;

/** One host of a {@link Cluster}: its devices (one adapter) and its memory. */
public final class Node implements AutoCloseable {
    private final Host host;
    private final Device device;
    private final ProcessMemory memory;

    Node(Host host) {
        this.host = host;
        this.device = new Device(host);
        this.memory = new ProcessMemory(host);
    }

    /** ibv_get_device_list. */
    public List<Device> devices() { return List.of(device); }
    public ProcessMemory memory() { return memory; }
    public Host host() { return host; }
    public int index() { return host.index; }

    @Override public void close() {}
}
