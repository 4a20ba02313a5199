package nicsim.cosim.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import nicsim.cosim.calibrate.Calibration;
import nicsim.cosim.calibrate.PerftestOutput;
import nicsim.profile.Param;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ./nicsim calibrate}: fits profile parameters to perftest outputs measured on the user's hardware. */
@Command(name = "calibrate", mixinStandardHelpOptions = true,
        description = "Fit a profile's parameters to perftest outputs measured on your hardware (ib_send_lat -a, "
                + "ib_write_bw -a... as perftest prints them); prints the fitted values and every point's error, and "
                + "writes the fitted profile.")
final class CalibrateCommand implements Callable<Integer> {
    @Mixin
    ProfileOption profile = new ProfileOption();

    @Option(names = "--fit", required = true, split = ",", paramLabel = "KEY",
            description = "a profile parameter to fit (repeatable, or comma-separated), e.g. --fit pci.link.latency")
    List<String> fit = new ArrayList<>();

    @Option(names = "--iters", defaultValue = "200",
            description = "iterations of each simulated point (default: ${DEFAULT-VALUE})")
    int iters;

    @Option(names = "--jobs",
            description = "worker threads simulating points side by side (default: the machine's cores)")
    Integer jobs;

    @Option(names = "--max-evaluations", defaultValue = "200",
            description = "evaluations (every point simulated once) the optimizer may take (default: ${DEFAULT-VALUE})")
    int maxEvaluations;

    @Option(names = "--out", description = "where to write the fitted profile (default: <profile>-fitted.profile here)")
    Path out;

    @Parameters(arity = "1..*", paramLabel = "FILE", description = "perftest outputs, as perftest printed them")
    List<Path> files = new ArrayList<>();

    @Override public Integer call() throws Exception {
        if (iters < 1) throw new IllegalArgumentException("--iters " + iters + " must be >= 1");
        if (maxEvaluations < 5) throw new IllegalArgumentException("--max-evaluations " + maxEvaluations
                + " must be >= 5");
        List<PerftestOutput.Point> points = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Path f : files) {
            if (!Files.isRegularFile(f)) throw new IllegalArgumentException(f + ": no such file");
            points.addAll(PerftestOutput.parse(Files.readString(f), f.toString()));
            names.add(f.getFileName().toString());
        }
        Profile base = profile.load();
        int threads = jobs != null ? jobs : Runtime.getRuntime().availableProcessors();
        Calibration c = new Calibration(base, fit, points, iters, threads);
        System.out.printf("nicsim calibrate: %d points from %s; fitting %s of %s (%s), %d threads%n", points.size(),
                String.join(", ", names), String.join(", ", fit), base.name(),
                        fit.size() == 1 ? "Brent" : "CMA-ES, then BOBYQA",
                threads);
        Calibration.Fit r = c.fit(maxEvaluations, line -> System.out.println("  " + line));
        System.out.printf("fitted after %d evaluations: rms error %.2f %% (the profile gave %.2f %%)%n",
                r.evaluations(),
                100 * r.rmsError(), 100 * r.startError());
        Profile fitted = c.profile(r.fitted());
        for (String k : fit) {
            Param was = base.param(k), now = fitted.param(k);
            System.out.printf("  %-28s %-16s -> %s (x%.3f)%n", k, was.display(), now.display(),
                    (double) now.value() / was.value());
        }
        System.out.printf("  %-10s %10s %14s %14s %9s%n", "test", "bytes", "measured", "simulated", "error");
        for (int i = 0; i < points.size(); i++) {
            PerftestOutput.Point p = points.get(i);
            System.out.printf("  %-10s %10d %11.3f %-4s %9.3f %-4s %+8.2f %%%n", p.workload(), p.bytes(), p.value(),
                    p.unit(),
                    r.simulated()[i], p.unit(), 100 * (r.simulated()[i] - p.value()) / p.value());
        }
        Path to = out != null ? out : Path.of(base.name() + "-fitted.profile");
        String ext = Profiles.BUILTIN.contains(profile.profile) ? profile.profile : Path.of(profile.profile)
                .toAbsolutePath().toString();
        Files.writeString(to, c.profileFile(r, ext, Profiles.load(profile.profile), String.join(", ", names)));
        System.out.printf("wrote %s: ./nicsim run --profile %s ...%n", to, to);
        return 0;
    }
}
