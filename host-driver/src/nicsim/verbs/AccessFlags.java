package nicsim.verbs;

/** ibv_access_flags bits. Local read is always allowed; REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE. */
public final class AccessFlags {
    private AccessFlags() {}

    public static final int LOCAL_WRITE = 1, REMOTE_WRITE = 2, REMOTE_READ = 4, REMOTE_ATOMIC = 8, MW_BIND = 16,
            ZERO_BASED = 32, ON_DEMAND = 64;
    /** Every bit nicsim understands. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | MW_BIND | ZERO_BASED
            | ON_DEMAND;
}
