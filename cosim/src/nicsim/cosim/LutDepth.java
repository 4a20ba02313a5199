package nicsim.cosim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The logic depth of a netlist mapped to Xilinx 7-series cells (Yosys's {@code synth_xilinx}, written
 * with {@code write_json}): the most LUTs a signal passes through between two flip-flops, memories or
 * ports. A LUT (LUT1 to LUT6) is one level; the slice's wide multiplexers (MUXF7, MUXF8) and carry
 * chain (CARRY4) are passed through without adding one, since they sit inside the slice beside the
 * LUT and take a fraction of a LUT and its route; every other cell (FD*, block RAM, LUT RAM, a memory
 * kept as a black box, BUFG) ends a path. A path through a memory is therefore cut at it.
 */
public final class LutDepth {
    private LutDepth() {}

    /** The deepest path's LUT count and the signal it ends on (a named net where Yosys kept one). */
    public record Depth(int levels, String endpoint) {}

    /** The depth of module {@code top} in the JSON netlist {@code json}. */
    public static Depth of(Path json, String top) throws IOException {
        JsonNode module = new ObjectMapper().readTree(json.toFile()).path("modules").path(top);
        if (module.isMissingNode()) throw new IOException("yosys's netlist " + json + " has no module " + top);
        JsonNode cells = module.path("cells");
        Map<Long, String> driver = new HashMap<>(); // bit -> the combinational cell driving it
        for (Iterator<Map.Entry<String, JsonNode>> it = cells.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> c = it.next();
            if (weight(c.getValue()) < 0) continue;
            for (Map.Entry<String, JsonNode> port : fields(c.getValue().path("connections")))
                if (output(port.getKey()))
                    for (JsonNode bit : port.getValue())
                        if (bit.isIntegralNumber()) driver.put(bit.asLong(), c.getKey());
        }
        Map<String, Integer> memo = new HashMap<>();
        String deepest = null;
        int best = 0;
        for (String cell : driver.values()) {
            int d = level(cells, driver, memo, cell);
            // ties go to the first by name: the same netlist always names the same endpoint
            if (d > best || d == best && d > 0 && cell.compareTo(deepest) < 0) {
                best = d;
                deepest = cell;
            }
        }
        return new Depth(best, deepest == null ? "" : name(module, cells.path(deepest)));
    }

    /** LUT levels up to and including {@code cell}'s output. */
    private static int level(JsonNode cells, Map<Long, String> driver, Map<String, Integer> memo, String cell)
            throws IOException {
        Integer known = memo.get(cell);
        if (known != null) {
            if (known < 0) throw new IOException("combinational loop through cell " + cell);
            return known;
        }
        memo.put(cell, -1); // on the stack: meeting it again is a loop
        JsonNode c = cells.path(cell);
        int in = 0;
        for (Map.Entry<String, JsonNode> port : fields(c.path("connections")))
            if (!output(port.getKey()))
                for (JsonNode bit : port.getValue()) {
                    String from = bit.isIntegralNumber() ? driver.get(bit.asLong()) : null;
                    if (from != null) in = Math.max(in, level(cells, driver, memo, from));
                }
        int d = in + weight(c);
        memo.put(cell, d);
        return d;
    }

    /**
     * Whether a port of a LUT, MUXF7/8 or CARRY4 is an output (O; CARRY4's CO too). The netlist is written
     * without the cell library, so it carries no port directions: these are the cells' own, from UG474.
     */
    private static boolean output(String port) { return port.equals("O") || port.equals("CO"); }

    /** Levels a cell adds: 1 for a LUT, 0 for the slice's muxes and carry chain, -1 for a cell that ends paths. */
    private static int weight(JsonNode cell) {
        String type = cell.path("type").asText();
        if (type.matches("LUT[1-6]")) return 1;
        if (type.equals("MUXF7") || type.equals("MUXF8") || type.equals("CARRY4")) return 0;
        return -1;
    }

    /** The name of the net {@code cell}'s first output drives, preferring one the source named. */
    private static String name(JsonNode module, JsonNode cell) {
        long bit = -1;
        for (Map.Entry<String, JsonNode> port : fields(cell.path("connections")))
            if (output(port.getKey()) && port.getValue().size() > 0)
                bit = port.getValue().get(0).asLong(-1);
        String fallback = "";
        for (Map.Entry<String, JsonNode> n : fields(module.path("netnames"))) {
            JsonNode bits = n.getValue().path("bits");
            for (int i = 0; i < bits.size(); i++)
                if (bits.get(i).isIntegralNumber() && bits.get(i).asLong() == bit) {
                    String label = bits.size() == 1 ? n.getKey() : n.getKey() + "[" + i + "]";
                    if (n.getValue().path("hide_name").asInt(1) == 0) return label;
                    if (fallback.isEmpty()) fallback = label;
                }
        }
        return fallback;
    }

    private static Iterable<Map.Entry<String, JsonNode>> fields(JsonNode n) { return n::fields; }
}
