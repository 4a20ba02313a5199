package nicsim.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A block's ports as the RTL twin's wires: {@code <port>_valid}, {@code <port>_ready} (streams),
 * {@code <port>_payload_<field>}, and plain signals, in port order, each with whether the block
 * receives it and how to read its value from the Java side. What the co-simulation copies into
 * the RTL (inputs) and compares with it (outputs).
 */
public final class PortWires {
    private PortWires() {}

    /**
     * One wire. {@code meaningful} is false for a payload field while its port is idle: the value is
     * "don't care" (read as 0 here), so an input gets 0 and an output is not compared.
     */
    public record Wire(String name, int width, boolean input, LongSupplier value, BooleanSupplier meaningful) {}

    public static List<Wire> of(Block block) {
        List<Wire> out = new ArrayList<>();
        for (Port p : block.ports()) {
            boolean in = p.direction() == Port.Direction.IN;
            if (p.channel() instanceof Stream<?> s) {
                out.add(new Wire(p.name() + "_valid", 1, in, () -> s.valid() ? 1 : 0, () -> true));
                out.add(new Wire(p.name() + "_ready", 1, !in, () -> s.ready() ? 1 : 0, () -> true));
                payload(out, p.name(), s.layout(), in, s::payload, s::valid);
            } else if (p.channel() instanceof Flow<?> f) {
                out.add(new Wire(p.name() + "_valid", 1, in, () -> f.valid() ? 1 : 0, () -> true));
                payload(out, p.name(), f.layout(), in, f::payload, f::valid);
            } else {
                Signal s = (Signal) p.channel();
                out.add(new Wire(s.name(), s.width(), in, s::value, () -> true));
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static <T> void payload(List<Wire> out, String port, Layout<T> layout, boolean in,
                                    Supplier<?> payload, BooleanSupplier valid) {
        if (layout == null)
            throw new IllegalArgumentException("port " + port + " has no layout: it cannot be matched with RTL wires");
        for (Layout.Field<T> f : layout.fields())
            out.add(new Wire(port + "_payload_" + f.name(), f.width(), in,
                    () -> { Object p = payload.get(); return p == null ? 0 : f.getter().applyAsLong((T) p); }, valid));
    }
}
