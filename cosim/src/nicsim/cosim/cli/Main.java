package nicsim.cosim.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code nicsim} command line. With no arguments it runs the default demo. */
@Command(name = "nicsim", mixinStandardHelpOptions = true, version = "nicsim 0.1",
        description = "Pre-silicon platform for RDMA network adapters: a cycle-approximate Java model co-simulated with SpinalHDL RTL.",
        subcommands = {DemoCommand.class, ProfilesCommand.class, PcieCommand.class, CosimCommand.class, BenchCommand.class})
public final class Main implements Runnable {
    @Override public void run() { new CommandLine(new DemoCommand()).execute(); }

    public static int run(String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setParameterExceptionHandler((ex, a) -> {
            // one line naming the flag and what it accepts, then the usage hint
            ex.getCommandLine().getErr().println("nicsim: " + ex.getMessage());
            ex.getCommandLine().getErr().println("Try 'nicsim " + (ex.getCommandLine().getCommandName().equals("nicsim") ? "" : ex.getCommandLine().getCommandName() + " ") + "--help'.");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, c, p) -> {
            if (ex instanceof IllegalArgumentException) {
                c.getErr().println("nicsim: " + ex.getMessage());
                return 2;
            }
            throw ex;
        });
        return cl.execute(args);
    }

    public static void main(String[] args) { System.exit(run(args)); }
}
