package nicsim.cosim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import nicsim.adapter.AdapterConfig;
import nicsim.hw.rtl.RtlRunner;
import nicsim.profile.Profile;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.Simulator;

/** One random-stimulus lockstep run of a block: Verilated RTL against its Java twin. */
public final class CosimRun {
    private CosimRun() {}

    public static Lockstep.Result run(Profile profile, String block, long cycles, long seed, Path windowDir) {
        return run(BlockPairs.get(profile, block), profile, cycles, seed, windowDir);
    }

    /** Runs one pair; {@code pair} may be built by hand (a test injecting a bug into the twin). */
    public static Lockstep.Result run(BlockPairs.Pair pair, Profile profile, long cycles, long seed, Path windowDir) {
        RtlRunner.Compiled rtl = RtlRunner.compile(pair.rtlName(), pair.rtl(), false);
        Lockstep.Result[] result = new Lockstep.Result[1];
        rtl.run("cosim_" + seed, (int) seed, handle -> {
            Simulator jsim = new Simulator();
            ClockDomain core = jsim.clockDomain("core", AdapterConfig.from(profile).corePeriodPs());
            Block twin = pair.twin().apply(core);
            core.add(pair.stimulus().create(twin, seed));
            try {
                result[0] = Lockstep.run(handle, jsim, core, twin, cycles, seed, windowDir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        return result[0];
    }
}
