package nicsim.serve;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.sim.Simulator;

/**
 * A fault inside the model while serving (a stream contract broken, an exception in a block or the
 * firmware) is the fatal error of the adapter whose event threw it, not the simulator's: the programs
 * on that adapter get what a real device gives when it dies (IBV_EVENT_DEVICE_FATAL on their async
 * file, EIO on every later verb, poll and WAIT), the log names the fault, the node and the simulated
 * time, and the node is reset at once ({@link World#reset}): a fresh adapter that the next program
 * attaches to, while the old one's events never run again. Every other node carries on untouched.
 * A fault in no node's event (the fabric's switch) resets every node.
 */
final class AdapterFaults {
    /** Stack frames the log keeps of a fault: where in the model it came from. */
    static final int FRAMES = 4;

    private final World world;
    private final PrintStream log;
    private final PciFace pci;
    private final RdmaCm cm;
    private final Map<Integer, XrcDomains> domains;
    private final Supplier<Collection<Session>> sessions;
    private RuntimeException first;
    private long resets;

    AdapterFaults(World world, PrintStream log, PciFace pci, RdmaCm cm, Map<Integer, XrcDomains> domains,
            Supplier<Collection<Session>> sessions) {
        this.world = world;
        this.log = log;
        this.pci = pci;
        this.cm = cm;
        this.domains = domains;
        this.sessions = sessions;
    }

    /** The fault {@code f} that an event threw: its node goes fatal and is reset (every node, if it was no node's). */
    void fault(Simulator.Fault f) {
        if (first == null) first = f.cause();
        Host h = world.hostOf(f);
        if (h != null) {
            fatal(h, f);
            return;
        }
        if (f.scope() != null) return; // a node's adapter already reset (by an earlier fault): its events are gone
        log.printf("nicsim serve: the fabric faulted at %d ps: %s; every adapter is reset%n", f.time(),
                where(f.cause()));
        for (Host each : world.hosts()) fatal(each, f);
    }

    private void fatal(Host old, Simulator.Fault f) {
        resets++;
        String why = "node " + old.index + "'s adapter faulted at " + f.time() + " ps: " + f.cause();
        log.printf("nicsim serve: node %d's adapter faulted at %d ps: %s; its programs get IBV_EVENT_DEVICE_FATAL "
                + "and EIO, and the adapter is reset%n", old.index, f.time(), where(f.cause()));
        for (Session s : sessions.get()) if (s.host == old && s.fatal == null) s.fatal(why);
        pci.fatal(old, why);
        reset(old);
    }

    /**
     * Node {@code old}'s adapter replaced by a fresh one ({@link World#reset}), and what follows it there:
     * RDMA CM's ids on it, its XRC domains, the listeners on its management QPs. Its programs must have
     * been told already. The fresh host.
     */
    Host reset(Host old) {
        cm.reset(old.index);
        domains.remove(old.index);
        Host fresh = world.reset(old.index);
        afterReset.accept(old.index);
        return fresh;
    }

    /** What else must follow a node's adapter to its reset one (the subnet manager's listener). */
    IntConsumer afterReset = n -> { };

    /** The exception and its first {@link #FRAMES} stack frames. */
    static String where(Throwable e) {
        StackTraceElement[] at = e.getStackTrace();
        return e + (at.length == 0 ? "" : " at " + Arrays.asList(at).subList(0, Math.min(FRAMES, at.length)));
    }

    /** The first fault, or null. */
    RuntimeException first() { return first; }

    /** Adapters reset after a fault so far. */
    long resets() { return resets; }
}
