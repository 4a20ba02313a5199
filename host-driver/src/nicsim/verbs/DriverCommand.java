package nicsim.verbs;

import nicsim.driver.Driver;
import nicsim.driver.ErrnoException;
import nicsim.sim.Layout;

/** The verbs library's one way into the driver's commands: what the driver refuses, the verbs call refuses. */
final class DriverCommand {
    private DriverCommand() {}

    /** {@link Driver#command}, its failure passed on as a {@link VerbsException} with the same errno and message. */
    static <I, O> O run(Driver driver, int opcode, Layout<I> inLayout, I input, Layout<O> outLayout) {
        try {
            return driver.command(opcode, inLayout, input, outLayout);
        } catch (ErrnoException e) {
            throw VerbsException.of(e);
        }
    }
}
