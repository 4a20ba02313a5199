package nicsim.cosim.cli;

import java.util.concurrent.Callable;
import nicsim.host.PcieEfficiency;
import nicsim.profile.Profiles;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "pcie", description = "Print DMA efficiency and throughput of a profile's host link vs TLP arithmetic (simulated, exact).")
final class PcieCommand implements Callable<Integer> {
    @Option(names = "--profile", defaultValue = Profiles.DEFAULT, description = "profile name or file (default: ${DEFAULT-VALUE})")
    String profile;

    @Override public Integer call() {
        PcieEfficiency.print(Profiles.load(profile), System.out);
        return 0;
    }
}
