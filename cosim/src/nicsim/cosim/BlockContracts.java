package nicsim.cosim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.adapter.AdapterConfig;
import nicsim.driver.DeviceManual;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.PortWires;
import nicsim.sim.Simulator;

/**
 * The port contract of each block an architect may replace with RTL of their own (docs/blocks.md):
 * every wire of the Java twin, as the lockstep drives and compares it, with its direction and
 * width, for a profile. Made from the twins' own ports ({@link PortWires}), the same list the
 * lockstep and the Verilator binding use; {@link #main} rewrites the page's tables and a test
 * checks they are current.
 */
public final class BlockContracts {
    private BlockContracts() {}

    /** The contract of every block, by name, for {@code profile}. */
    public static Map<String, String> sections(Profile profile) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String b : RtlInLoop.IN_SYSTEM) out.put("ports-" + b, ports(profile, b));
        return out;
    }

    private static String ports(Profile profile, String block) {
        BlockPairs.Pair pair = BlockPairs.get(profile, block);
        ClockDomain core = new Simulator().clockDomain("core", AdapterConfig.from(profile).corePeriodPs());
        Block twin = pair.twin().apply(core);
        List<List<String>> rows = new ArrayList<>();
        for (PortWires.Wire w : PortWires.of(twin)) {
            String kind = w.name().endsWith("_valid") || w.name().endsWith("_ready") ? "handshake"
                    : w.name().contains("_payload_") ? "payload (don't care while its port's _valid is low)" : "signal";
            rows.add(List.of("`" + w.name() + "`", w.input() ? "in" : "out", Integer.toString(w.width()), kind));
        }
        return "Twin `" + twin.name() + "` (clock `clk`, reset `reset`, active high):\n\n"
                + DeviceManual.table(List.of("port", "direction", "bits", "kind"), rows);
    }

    /** Rewrites the generated tables of the page at args[0] (default docs/blocks.md) for cx-gen3x16. */
    public static void main(String[] args) throws IOException {
        Path page = Path.of(args.length > 0 ? args[0] : "docs/blocks.md");
        Files.writeString(page, DeviceManual.render(Files.readString(page), sections(Profiles.load("cx-gen3x16"))));
    }
}
