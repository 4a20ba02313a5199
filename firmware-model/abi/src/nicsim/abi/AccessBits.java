package nicsim.abi;

/**
 * The access bits of an mkey and of a QP as the device takes them (CREATE_MKEY's and MODIFY_QP's access
 * field; mlx5 has its own, the mkey's lr/lw/rr/rw/a bits): the verbs library maps ibv_access_flags to
 * them. Local read is always allowed; REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE. The bits are
 * libibverbs' today.
 */
public final class AccessBits {
    private AccessBits() {}

    public static final int LOCAL_WRITE = 1, REMOTE_WRITE = 2, REMOTE_READ = 4, REMOTE_ATOMIC = 8, MW_BIND = 16,
            ZERO_BASED = 32, ON_DEMAND = 64;
    /** Every bit the device understands. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | MW_BIND | ZERO_BASED
            | ON_DEMAND;
}
