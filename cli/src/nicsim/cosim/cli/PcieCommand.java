package nicsim.cosim.cli;

import java.util.concurrent.Callable;
import nicsim.host.PcieEfficiency;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "pcie", mixinStandardHelpOptions = true,
        description = "Print DMA efficiency and throughput of a profile's host link vs TLP arithmetic "
                + "(simulated, exact).")
final class PcieCommand implements Callable<Integer> {
    @Mixin
    ProfileOption profile = new ProfileOption();

    @Override public Integer call() {
        PcieEfficiency.print(profile.load(), System.out);
        return 0;
    }
}
