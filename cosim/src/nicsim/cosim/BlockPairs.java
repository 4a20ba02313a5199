package nicsim.cosim;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import nicsim.adapter.CqeWriter;
import nicsim.adapter.DmaEngine;
import nicsim.adapter.DoorbellDecoder;
import nicsim.adapter.MttWalker;
import nicsim.adapter.WqeFetcher;
import nicsim.adapter.stim.MttStimulus;
import nicsim.adapter.stim.WqeStimulus;
import nicsim.adapter.stim.CqeStimulus;
import nicsim.adapter.stim.DmaStimulus;
import nicsim.adapter.stim.DoorbellStimulus;
import nicsim.profile.Profile;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import spinal.core.Component;
import java.util.function.Supplier;

/**
 * The blocks that exist twice, as a Java model and as RTL, by their command-line names: how to
 * build each side from a profile, and the random stimulus that exercises it.
 */
public final class BlockPairs {
    /** Both sides of one block, for one profile. */
    public record Pair(String name, String rtlName, Supplier<Component> rtl, Function<ClockDomain, Block> twin,
                       StimulusFactory stimulus) {}

    /** Builds the seeded stimulus for a twin. */
    public interface StimulusFactory { Clocked create(Block twin, long seed); }

    private BlockPairs() {}

    /** Command-line name -> pair, in a fixed order. */
    public static Map<String, Pair> all(Profile p) {
        Map<String, Pair> m = new LinkedHashMap<>();
        DoorbellDecoder.Config db = DoorbellDecoder.Config.from(p);
        m.put("doorbell", new Pair("doorbell", rtlName(DoorbellDecoder.NAME, db),
                () -> new nicsim.hw.DoorbellDecoder(db), d -> new DoorbellDecoder(d, db),
                (twin, seed) -> new DoorbellStimulus((DoorbellDecoder) twin, seed)));
        WqeFetcher.Config wqe = WqeFetcher.Config.from(p);
        m.put("wqe", new Pair("wqe", rtlName(WqeFetcher.NAME, wqe), () -> new nicsim.hw.WqeFetcher(wqe),
                d -> new WqeFetcher(d, wqe), (twin, seed) -> new WqeStimulus((WqeFetcher) twin, seed)));
        MttWalker.Config mtt = MttWalker.Config.from(p);
        m.put("mtt", new Pair("mtt", rtlName(MttWalker.NAME, mtt), () -> new nicsim.hw.MttWalker(mtt),
                d -> new MttWalker(d, mtt), (twin, seed) -> new MttStimulus((MttWalker) twin, seed)));
        CqeWriter.Config cqe = CqeWriter.Config.from(p);
        m.put("cqe", new Pair("cqe", rtlName(CqeWriter.NAME, cqe), () -> new nicsim.hw.CqeWriter(cqe),
                d -> new CqeWriter(d, cqe), (twin, seed) -> new CqeStimulus((CqeWriter) twin, seed)));
        DmaEngine.Config dma = DmaEngine.Config.from(p);
        m.put("dma", new Pair("dma", rtlName(DmaEngine.NAME, dma), () -> new nicsim.hw.DmaEngine(dma),
                d -> new DmaEngine(d, dma), (twin, seed) -> new DmaStimulus((DmaEngine) twin, seed)));
        return m;
    }

    /**
     * The key compiled RTL is cached under: the block and every parameter it was built with (two
     * profiles may share a name).
     */
    private static String rtlName(String block, Record config) { return block + " " + config; }

    public static Pair get(Profile p, String name) {
        Pair pair = all(p).get(name);
        if (pair == null)
            throw new IllegalArgumentException("unknown block '" + name + "' (blocks: "
                    + String.join(", ", all(p).keySet()) + ")");
        return pair;
    }
}
