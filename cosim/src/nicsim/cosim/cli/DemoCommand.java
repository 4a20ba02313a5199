package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import nicsim.host.PcieEfficiency;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "demo", description = "The foundation's end-to-end demo: PCI probe, MMIO doorbells, the DoorbellFifo block, DMA into a host ring, MSI-X, byte-for-byte check.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--profile", defaultValue = Profiles.DEFAULT, description = "profile name or file (default: ${DEFAULT-VALUE})")
    String profile = Profiles.DEFAULT;

    @Option(names = "--doorbells", defaultValue = "32", description = "doorbells to ring (default: ${DEFAULT-VALUE})")
    int doorbells = 32;

    @Option(names = "--wave", defaultValue = "out/nicsim-demo.vcd.xz", description = "waveform file (.vcd, .vcd.gz, .vcd.xz; default: ${DEFAULT-VALUE})")
    Path wave = Path.of("out/nicsim-demo.vcd.xz");

    @Override public Integer call() throws Exception {
        if (doorbells < 1 || doorbells > 1_000_000)
            throw new IllegalArgumentException("--doorbells " + doorbells + " must be 1..1000000");
        Profile p = Profiles.load(profile);
        System.out.println("nicsim demo: the simulated host/PCI platform end to end (the RDMA adapter model is not built yet).");
        System.out.println("profile " + p.name() + ": " + p.description());
        PlatformDemo.Result r = PlatformDemo.run(p, doorbells, wave, System.out);
        System.out.printf("doorbells rung: %d, records DMA-written and verified byte for byte: %d%n", r.doorbells(), r.verified());
        System.out.printf("first doorbell -> record in host memory: %.3f us (MMIO write + FIFO + DMA write over %s)%n",
                r.firstLatency() / 1e6, p.text("pci.kind"));
        System.out.printf("all %d done in %.3f us; DoorbellFifo peak occupancy %d of 8%n", r.doorbells(), r.lastDone() / 1e6, r.fifoPeak());
        System.out.println("waveform of the DoorbellFifo ports: " + wave.toAbsolutePath() + "  (open with: gtkwave or surfer)");
        System.out.println();
        PcieEfficiency.print(p, System.out);
        if (!r.errors().isEmpty()) {
            r.errors().forEach(e -> System.out.println("ERROR: " + e));
            return 1;
        }
        return 0;
    }
}
