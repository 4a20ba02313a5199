package nicsim.cosim.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import nicsim.hw.rtl.Toolchain;
import nicsim.serve.ProviderBuild;

/** The {@code nicsim} command line. With no arguments it runs the default demo. */
@Command(name = "nicsim", mixinStandardHelpOptions = true, version = "nicsim 0.1",
        description = "Pre-silicon platform for RDMA network adapters: a cycle-approximate Java model co-simulated "
                + "with SpinalHDL RTL.",
        subcommands = {RunCommand.class, DemoCommand.class, ProfilesCommand.class, PcieCommand.class,
                CosimCommand.class, BenchCommand.class, ServeCommand.class, AttachCommand.class, ReplayCommand.class,
                SweepCommand.class, HwCommand.class, CalibrateCommand.class, VmCommand.class, PortCommand.class})
public final class Main implements Runnable {
    /** What {@code ./nicsim} with no arguments runs: a latency and a bandwidth test on the default profile. */
    static final String[] DEFAULT_RUN = {"send_lat", "write_bw", "--iters", "1000", "--wave", "out/nicsim-run.vcd.gz",
            "--timeline", "out/nicsim-run-timeline.json"};

    @Override public void run() {
        System.out.println("nicsim: no command given, so running the default workload: ./nicsim run "
                + String.join(" ", DEFAULT_RUN));
        System.out.println("(./nicsim --help lists the commands; ./nicsim run --help the workloads and options)");
        exit = new CommandLine(new RunCommand()).execute(DEFAULT_RUN);
    }

    private int exit;

    public static int run(String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setParameterExceptionHandler((ex, a) -> {
            // one line naming the flag and what it accepts, then the usage hint
            ex.getCommandLine().getErr().println("nicsim: " + ex.getMessage());
            String name = ex.getCommandLine().getCommandName();
            String sub = name.equals("nicsim") ? "" : name + " ";
            ex.getCommandLine().getErr().println("Try 'nicsim " + sub + "--help'.");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, c, p) -> {
            for (Throwable t = ex; t != null; t = t.getCause())
                if (t instanceof Toolchain.MissingTool missing) { // one line, wherever the RTL was first needed
                    c.getErr().println("nicsim: " + missing.getMessage());
                    return 2;
                }
            if (ex instanceof IllegalArgumentException || ex instanceof ProviderBuild.Missing) {
                c.getErr().println("nicsim: " + ex.getMessage());
                return 2;
            }
            if (ex instanceof UnsupportedOperationException) { // asked for something not built yet
                c.getErr().println("nicsim: " + ex.getMessage());
                return 3;
            }
            throw ex;
        });
        int rc = cl.execute(args);
        return args.length == 0 ? ((Main) cl.getCommand()).exit : rc;
    }

    public static void main(String[] args) { System.exit(run(args)); }
}
