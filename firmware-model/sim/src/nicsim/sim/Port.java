package nicsim.sim;

/**
 * One port of a block as seen from the block: its name (SpinalHDL's: io_mmio, io_doorbell, ...),
 * whether the block receives or sends on it, and the Stream, Flow or Signal behind it. A block
 * that lists its ports can be traced, driven and compared against its RTL twin by name alone.
 */
public record Port(String name, Direction direction, Object channel) {
    public enum Direction { IN, OUT }

    public Port {
        if (!(channel instanceof Stream || channel instanceof Flow || channel instanceof Signal))
            throw new IllegalArgumentException("port " + name + ": " + channel + " is not a Stream, Flow or Signal");
    }

    public static Port in(Stream<?> s) { return new Port(s.name(), Direction.IN, s); }
    public static Port in(Flow<?> f) { return new Port(f.name(), Direction.IN, f); }
    public static Port out(Stream<?> s) { return new Port(s.name(), Direction.OUT, s); }
    public static Port out(Flow<?> f) { return new Port(f.name(), Direction.OUT, f); }
    public static Port out(Signal s) { return new Port(s.name(), Direction.OUT, s); }
}
