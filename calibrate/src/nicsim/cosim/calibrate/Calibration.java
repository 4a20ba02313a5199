package nicsim.cosim.calibrate;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Param;
import nicsim.profile.Profile;
import nicsim.profile.Unit;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import org.apache.commons.math3.optim.InitialGuess;
import org.apache.commons.math3.optim.MaxEval;
import org.apache.commons.math3.optim.PointValuePair;
import org.apache.commons.math3.optim.SimpleBounds;
import org.apache.commons.math3.optim.nonlinear.scalar.GoalType;
import org.apache.commons.math3.optim.nonlinear.scalar.ObjectiveFunction;
import org.apache.commons.math3.exception.TooManyEvaluationsException;
import org.apache.commons.math3.optim.nonlinear.scalar.noderiv.BOBYQAOptimizer;
import org.apache.commons.math3.optim.nonlinear.scalar.noderiv.CMAESOptimizer;
import org.apache.commons.math3.random.MersenneTwister;
import org.apache.commons.math3.optim.univariate.BrentOptimizer;
import org.apache.commons.math3.optim.univariate.SearchInterval;
import org.apache.commons.math3.optim.univariate.UnivariateObjectiveFunction;
import org.apache.commons.math3.optim.univariate.UnivariatePointValuePair;
import java.util.concurrent.ExecutionException;

/**
 * Fits profile parameters to measured perftest figures: each parameter is scaled by a factor
 * (1 = the profile's value, bounded to [1/20, 20]), every measured point is simulated with the
 * scaled values (points side by side on worker threads; each one a deterministic run of its own),
 * and the factors that minimise the root mean square of the relative errors are searched with
 * Apache Commons Math: CMA-ES (seeded, so deterministic) over the logarithms of the factors, then
 * BOBYQA (Powell's bound-constrained, derivative-free method) from its best; Brent's method for one
 * parameter. The same inputs give the same fit on any number of threads.
 */
public final class Calibration {
    /** What the fit found: the values, each point's simulated figure, the error, and how many evaluations it took. */
    public record Fit(List<String> keys, long[] start, long[] fitted, double[] simulated, double rmsError,
                      double startError, int evaluations) {}

    static final double LOW = 0.05, HIGH = 20;
    private static final Set<Unit.Dimension> NUMERIC = Set.of(Unit.Dimension.TIME, Unit.Dimension.FREQUENCY,
            Unit.Dimension.SIZE, Unit.Dimension.RATE, Unit.Dimension.CYCLES, Unit.Dimension.COUNT,
            Unit.Dimension.WIDTH);

    private final Profile base;
    private final List<String> keys;
    private final List<PerftestOutput.Point> points;
    private final int iters, jobs;
    private final long[] start;
    private int evaluations;

    public Calibration(Profile base, List<String> keys, List<PerftestOutput.Point> points, int iters, int jobs) {
        if (keys.isEmpty()) throw new IllegalArgumentException("--fit: name at least one parameter of the profile");
        if (points.isEmpty()) throw new IllegalArgumentException("no measured points");
        this.base = base;
        this.keys = List.copyOf(keys);
        this.points = List.copyOf(points);
        this.iters = iters;
        this.jobs = Math.max(1, jobs);
        start = new long[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            String k = keys.get(i);
            if (!base.has(k)) throw new IllegalArgumentException("--fit " + k + ": profile " + base.name()
                    + " has no such parameter (./nicsim profiles " + base.name() + " lists them)");
            Param p = base.param(k);
            if (!NUMERIC.contains(p.dimension()) || p.value() <= 0)
                throw new IllegalArgumentException("--fit " + k + ": " + p.written()
                        + " is not a positive number with a unit");
            start[i] = p.value();
        }
        for (PerftestOutput.Point pt : points)
            if (!Workloads.NAMES.contains(pt.workload()))
                throw new IllegalArgumentException(pt.where() + ": test " + pt.workload() + " is not one nicsim runs");
    }

    /** The profile with parameter i at {@code values[i]} (in its canonical unit). */
    public Profile profile(long[] values) {
        Profile p = base;
        for (int i = 0; i < keys.size(); i++) {
            Param old = base.param(keys.get(i));
            String unit = Unit.canonicalSymbol(old.dimension());
            p = p.with(keys.get(i), values[i] + (unit.isEmpty() ? "" : " " + unit));
        }
        return p;
    }

    private long[] values(double[] factors) {
        long[] v = new long[factors.length];
        for (int i = 0; i < v.length; i++) v[i] = Math.max(1, Math.round(start[i] * factors[i]));
        return v;
    }

    /** Every point simulated with the parameters at {@code values}, in the points' order. */
    public double[] simulate(long[] values) {
        Profile p = profile(values);
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(jobs, points.size()));
        try {
            List<Future<Double>> runs = new ArrayList<>();
            for (PerftestOutput.Point pt : points) runs.add(pool.submit(() -> figure(p, pt)));
            double[] out = new double[points.size()];
            for (int i = 0; i < out.length; i++) out[i] = runs.get(i).get();
            evaluations++;
            return out;
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw c instanceof RuntimeException r ? r : new IllegalStateException(c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            pool.shutdownNow();
        }
    }

    private double figure(Profile p, PerftestOutput.Point pt) {
        World w = new World(2, p, 1, Faults.NONE);
        Options o = Options.defaults().with(set -> set.size(pt.bytes()).iters(iters));
        Result r = Workloads.run(pt.workload(), w, o, new PrintStream(OutputStream.nullOutputStream()));
        if (!r.ok()) throw new IllegalStateException(pt.workload() + " of " + pt.bytes() + " B failed: " + r.errors()
                .get(0));
        Result.Row row = r.rows().get(r.rows().size() - 1);
        return pt.latency() ? row.latTypicalUs() : row.bwAvgGbps();
    }

    /** The root mean square of the points' relative errors. */
    public double rmsError(double[] simulated) {
        double sum = 0;
        for (int i = 0; i < simulated.length; i++) {
            double e = (simulated[i] - points.get(i).value()) / points.get(i).value();
            sum += e * e;
        }
        return Math.sqrt(sum / simulated.length);
    }

    /**
     * Fits the parameters, reporting each evaluation's error to {@code progress}. A parameter that moves
     * no figure of these tests (doubling it changes nothing) is refused first, naming it.
     */
    public Fit fit(int maxEvaluations, Consumer<String> progress) {
        double[] at1 = simulate(start);
        for (int i = 0; i < keys.size(); i++) {
            double[] f = new double[keys.size()];
            Arrays.fill(f, 1);
            f[i] = 2;
            if (Arrays.equals(simulate(values(f)), at1))
                throw new IllegalArgumentException("--fit " + keys.get(i)
                        + ": doubling it changes none of these tests' "
                        + "figures, so they cannot fit it");
        }
        progress.accept(String.format("start: rms error %.2f %% over %d points", 100 * rmsError(at1), points.size()));
        double[] best;
        if (keys.size() == 1) {
            UnivariatePointValuePair r = new BrentOptimizer(1e-4, 1e-6).optimize(new MaxEval(maxEvaluations),
                    new UnivariateObjectiveFunction(x -> objective(new double[]{x}, progress)), GoalType.MINIMIZE,
                    new SearchInterval(LOW, HIGH, 1));
            best = new double[]{r.getPoint()};
        } else {
            // in log-factor space, where a scale parameter's halving and doubling are as far: first CMA-ES, which
            // sees past the plateaus integer parameters (cycles, counts) make, then BOBYQA to polish
            int n = keys.size();
            double[] lo = new double[n], hi = new double[n], x0 = new double[n], sigma = new double[n];
            Arrays.fill(lo, Math.log(LOW));
            Arrays.fill(hi, Math.log(HIGH));
            Arrays.fill(sigma, 0.3);
            ObjectiveFunction f = new ObjectiveFunction(x -> objective(exp(x), progress));
            int population = 4 + (int) (3 * Math.log(n));
            PointValuePair global = new CMAESOptimizer(Math.max(1, maxEvaluations * 2 / 3 / population), 0, true, 0, 0,
                    new MersenneTwister(1), false, null).optimize(new MaxEval(maxEvaluations * 2 / 3), f,
                    GoalType.MINIMIZE, new InitialGuess(x0), new SimpleBounds(lo, hi), new CMAESOptimizer.Sigma(sigma),
                    new CMAESOptimizer.PopulationSize(population));
            PointValuePair local;
            try {
                local = new BOBYQAOptimizer(2 * n + 1, 0.1, 1e-4).optimize(new MaxEval(Math.max(2 * n + 3,
                        maxEvaluations / 3)), f, GoalType.MINIMIZE, new InitialGuess(global.getPoint()),
                        new SimpleBounds(lo, hi));
            } catch (TooManyEvaluationsException e) {
                local = global;
            }
            best = exp(local.getValue() <= global.getValue() ? local.getPoint() : global.getPoint());
        }
        long[] fitted = polishCounts(values(best), progress);
        double[] sim = simulate(fitted);
        return new Fit(keys, start.clone(), fitted, sim, rmsError(sim), rmsError(at1), evaluations);
    }

    /**
     * Integer parameters (cycles, counts) make the error a staircase a continuous search can stop on
     * a step of: each is tried one and two steps either way, the others held, while that lowers the error.
     */
    private long[] polishCounts(long[] values, Consumer<String> progress) {
        long[] best = values.clone();
        double err = rmsError(simulate(best));
        for (boolean better = true; better; ) {
            better = false;
            for (int i = 0; i < keys.size(); i++) {
                Unit.Dimension d = base.param(keys.get(i)).dimension();
                if (d != Unit.Dimension.CYCLES && d != Unit.Dimension.COUNT) continue;
                for (long step : new long[]{-2, -1, 1, 2}) {
                    long[] v = best.clone();
                    v[i] += step;
                    if (v[i] < 1) continue;
                    double e = rmsError(simulate(v));
                    if (e < err) {
                        progress.accept(String.format("polish: %s %d -> %d, rms error %.3f %%", keys.get(i),
                                best[i], v[i],
                                100 * e));
                        err = e;
                        best = v;
                        better = true;
                    }
                }
            }
        }
        return best;
    }

    private static double[] exp(double[] x) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) out[i] = Math.exp(x[i]);
        return out;
    }

    private double objective(double[] factors, Consumer<String> progress) {
        double e = rmsError(simulate(values(factors)));
        StringBuilder b = new StringBuilder(String.format("evaluation %d: rms error %.3f %% at", evaluations, 100 * e));
        for (int i = 0; i < factors.length; i++) b.append(String.format(" %s x%.4f", keys.get(i), factors[i]));
        progress.accept(b.toString());
        return e;
    }

    public List<PerftestOutput.Point> points() { return points; }

    /**
     * A profile file that {@code --profile} accepts: it extends {@code extendsName} (the profile as
     * given: a built-in name or a file) and sets every parameter of {@code fitted}'s profile that
     * differs from it, the fitted ones saying where their value came from.
     */
    public String profileFile(Fit fit, String extendsName, Profile extended, String sources) {
        Profile p = profile(fit.fitted());
        StringBuilder b = new StringBuilder();
        b.append(String.format("# Fitted by ./nicsim calibrate to %d measured points (%s): rms error %.2f %% "
                + "(the profile gave %.2f %%).%n", points.size(), sources, 100 * fit.rmsError(),
                100 * fit.startError()));
        b.append("profile ").append(base.name()).append("-fitted\n");
        b.append("about ").append(base.description()).append(" Fitted to measured perftest figures.\n");
        b.append("extends ").append(extendsName).append("\n");
        for (Param q : p.params().values()) {
            Param was = extended.has(q.name()) ? extended.param(q.name()) : null;
            int i = keys.indexOf(q.name());
            if (i < 0 && was != null && was.equals(q)) continue;
            String written = i >= 0 ? fit.fitted()[i] + " " + Unit.canonicalSymbol(q.dimension()) : q.written();
            String source = i >= 0 ? "fitted by nicsim calibrate to " + sources + " (the profile had "
                    + base.param(q.name())
                    .written() + ")" : q.source();
            b.append(q.name()).append(" = ").append(written.strip()).append(" | ").append(q.description()).append(" | ")
                    .append(source).append('\n');
        }
        return b.toString();
    }
}
