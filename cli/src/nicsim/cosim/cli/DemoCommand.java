package nicsim.cosim.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import nicsim.adapter.AdapterConfig;
import nicsim.host.PcieEfficiency;
import nicsim.profile.Profile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "demo", mixinStandardHelpOptions = true, description = "The adapter's send path end to end: a host "
        + "posts WQEs and rings doorbells over PCI; the adapter decodes, fetches and checks them; each is compared "
        + "byte for byte.")
final class DemoCommand implements Callable<Integer> {
    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--wqes", defaultValue = "64", description = "send WQEs to post (default: ${DEFAULT-VALUE})")
    int wqes = 64;

    @Option(names = "--wave", defaultValue = "out/nicsim-demo.vcd.gz",
            description = "waveform of the blocks' ports (.vcd, .vcd.gz, .vcd.xz; default: ${DEFAULT-VALUE})")
    Path wave = Path.of("out/nicsim-demo.vcd.gz");

    @Option(names = "--timeline", defaultValue = "out/nicsim-demo-timeline.json",
            description = "per-WQE timeline, Perfetto/Chrome JSON (default: ${DEFAULT-VALUE})")
    Path timeline = Path.of("out/nicsim-demo-timeline.json");

    @Override public Integer call() throws Exception {
        if (wqes < 1 || wqes > 100_000) throw new IllegalArgumentException("--wqes " + wqes + " must be 1..100000");
        Profile p = profile.load();
        System.out.print("""
                nicsim demo: the adapter's send and completion paths at block level (doorbell -> WQE fetch over PCI ->
                checked WQEs; NOP -> CQE in the host ring -> MSI-X), driven by a test host without firmware. The whole
                stack (verbs, driver, firmware, fabric) runs with ./nicsim run; the RTL twins with ./nicsim cosim all.
                """);
        System.out.println("profile " + p.name() + ": " + p.description());
        PlatformDemo.Result r = PlatformDemo.run(p, wqes, wave, timeline);
        double period = AdapterConfig.from(p).corePeriodPs();
        System.out.printf("%nWQEs posted %d, delivered to the firmware inbox and identical byte for byte: %d%n",
                r.posted(), r.verified());
        System.out.printf("signaled NOPs completed: %d CQEs polled from the host CQ ring by owner bit, after %d MSI-X "
                + "interrupt(s)%n", r.completions(), r.interrupts());
        System.out.println("mean latency per stage:");
        for (int k = 0; k < PlatformDemo.Result.STAGES.length; k++)
            System.out.printf("  %-30s %9.3f us  (%,.0f core cycles)%n", PlatformDemo.Result.STAGES[k],
                    r.stageMeanPicos()[k] / 1e6, r.stageMeanPicos()[k] / period);
        System.out.println("block and PCI counters:");
        int w = r.counters().keySet().stream().mapToInt(String::length).max().orElse(10);
        List<String> shown = List.of("DoorbellDecoder.", "WqeFetcher.", "CqeWriter.", "pci.");
        for (Map.Entry<String, Long> e : r.counters().entrySet())
            if (shown.stream().anyMatch(e.getKey()::startsWith))
                System.out.printf("  %-" + w + "s %,d%n", e.getKey(), e.getValue());
        System.out.println("waveform of the DoorbellDecoder and WqeFetcher ports (RTL names): "
                + wave.toAbsolutePath());
        System.out.println("per-WQE timeline (open in ui.perfetto.dev): " + timeline.toAbsolutePath());
        System.out.println();
        PcieEfficiency.print(p, System.out);
        if (!r.errors().isEmpty()) {
            r.errors().forEach(e -> System.out.println("ERROR: " + e));
            return 1;
        }
        return 0;
    }
}
