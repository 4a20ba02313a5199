package nicsim.sim;

/**
 * A counter declared as a constant of its block's enum (FirmwareStat's way: {@code FabricStat}, {@code PciStat},
 * {@code AdapterStat}), so that a misspelt counter does not compile rather than make a new one, and every counter a
 * block has is listed in one place. Counted through {@link Counters#ref(Stat)}.
 */
public interface Stat {
    /** Its name in the dump, "<Block>.<what>" (e.g. "Fabric.packets"). */
    String counterName();
}
