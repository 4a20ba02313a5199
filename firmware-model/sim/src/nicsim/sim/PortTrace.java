package nicsim.sim;

import java.util.List;
import nicsim.wave.VcdWriter;

/**
 * Writes one port's wires to a VCD under the names SpinalHDL gives them: {@code <port>_valid},
 * {@code <port>_ready} (streams only) and {@code <port>_payload_<field>}. Values are stamped at the
 * edge that samples them; the co-simulation samples the RTL twin's ports at the same edges, so the
 * two traces line up signal for signal and time for time.
 */
final class PortTrace<T> {
    private final VcdWriter writer;
    private final VcdWriter.Wire valid;
    private final VcdWriter.Wire ready;
    private final VcdWriter.Wire[] fields;
    private final Layout<T> layout;

    PortTrace(VcdWriter writer, String scope, String port, Layout<T> layout, boolean hasReady) {
        this.writer = writer;
        this.layout = layout;
        this.valid = writer.wire(scope, port + "_valid", 1);
        this.ready = hasReady ? writer.wire(scope, port + "_ready", 1) : null;
        List<Layout.Field<T>> fs = layout == null ? List.of() : layout.fields();
        this.fields = new VcdWriter.Wire[fs.size()];
        for (int i = 0; i < fs.size(); i++)
            fields[i] = writer.wire(scope, port + "_payload_" + fs.get(i).name(), fs.get(i).width());
    }

    void sample(ClockDomain d, long cycle, boolean v, boolean r, T payload) {
        long t = d.picosOfCycle(cycle);
        writer.set(t, valid, v ? 1 : 0);
        if (ready != null) writer.set(t, ready, r ? 1 : 0);
        if (payload != null && layout != null) {
            long[] vals = layout.values(payload);
            for (int i = 0; i < fields.length; i++) writer.set(t, fields[i], vals[i]);
        }
    }
}
