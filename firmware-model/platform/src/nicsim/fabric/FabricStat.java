package nicsim.fabric;

import java.util.Locale;
import nicsim.sim.Stat;

/** The fabric's counters (its switch's), each dumped as "Fabric." + its name in lower case, at the top scope. */
public enum FabricStat implements Stat {
    PACKETS,
    BYTES,
    FLOW_CONTROL_WAITS,
    FLOW_CONTROL_WAIT_PS,
    UNROUTABLE,
    DROPPED,
    CORRUPTED,
    DUPLICATED,
    REORDERED,
    MULTICAST_PACKETS,
    MULTICAST_COPIES,
    SWITCH_MADS,
    SWITCH_MADS_DROPPED,
    LINK_DOWN_DROPS;

    @Override public String counterName() { return "Fabric." + name().toLowerCase(Locale.ROOT); }
}
