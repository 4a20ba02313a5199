package nicsim.adapter;

import java.util.Locale;
import nicsim.sim.Stat;

/**
 * The adapter's own counters, beside its blocks' (which are their port wires, {@link nicsim.sim.CounterOut}): each
 * dumped as "Adapter." + its name in lower case, under the adapter's node.
 */
public enum AdapterStat implements Stat {
    BLUEFLAME_CONTINUATIONS,
    BLUEFLAME_WRITES,
    BLUEFLAME_FETCHES_SKIPPED,
    DOORBELLS_POLLED,
    DOORBELL_POLL_WAIT_PS,
    MMIO_OUTSIDE_DOORBELL_WINDOW,
    /** Counted by the firmware stand-in of block tests (stim.NopFirmware), which runs no WQE. */
    WQES_NOT_EXECUTED;

    @Override public String counterName() { return "Adapter." + name().toLowerCase(Locale.ROOT); }
}
