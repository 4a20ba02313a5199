package nicsim.verbs;

import nicsim.driver.Host;

/** An RDMA device (ibv_device): one adapter on a node. */
public final class Device {
    private final Host host;

    public Device(Host host) { this.host = host; }

    public String name() { return "nicsim" + host.index; }

    /** ibv_open_device: a context with its own UAR page. */
    public Context open() { return new Context(host.driver()); }

    Host host() { return host; }

    @Override public String toString() { return name(); }
}
