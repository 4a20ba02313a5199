package nicsim.cosim.sweep;

import java.io.Serializable;
import java.util.Map;
import java.util.stream.Collectors;

/** One point of a sweep: a value for each varied parameter, and a seed. */
public record Point(Map<String, String> params, long seed) implements Serializable {
    /** A stable name of the point ("dma.channels=4 size=65536 seed=1"): how a resumed sweep knows it ran. */
    public String key() {
        return params.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "))
                + " seed=" + seed;
    }

    @Override public String toString() { return key(); }
}
