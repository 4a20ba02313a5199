package nicsim.verbs;

/**
 * What on-demand paging the adapter offers (struct ibv_odp_caps): {@code generalCaps} has
 * {@link #SUPPORT} when ON_DEMAND MRs can be registered at all; each transport's mask says which
 * operations may use an on-demand MR on that transport (libibverbs' IBV_ODP_SUPPORT_* values).
 * A profile without on-demand paging reports zeros and refuses ON_DEMAND MRs.
 */
public record OdpCaps(long generalCaps, int rcOdpCaps, int ucOdpCaps, int udOdpCaps, int xrcOdpCaps) {
    /** General capabilities (ibv_odp_general_caps): on-demand MRs, and implicit ones (the whole address space). */
    public static final long SUPPORT = 1, SUPPORT_IMPLICIT = 2;
    /** Per-transport capabilities (ibv_odp_transport_cap_bits). */
    public static final int SEND = 1, RECV = 2, WRITE = 4, READ = 8, ATOMIC = 16, SRQ_RECV = 32;

    /** None: the profile has no on-demand paging. */
    public static final OdpCaps NONE = new OdpCaps(0, 0, 0, 0, 0);

    /**
     * nicsim's: on RC every operation, on either side (a requester's WQE waits for its pages, a
     * responder answers RNR), receives through an SRQ too; on UD sends, and receives (a datagram
     * whose buffer page is missing is dropped while the page comes in); on XRC (reliable, as RC:
     * a responder answers RNR) sends and every RDMA operation, receives through the XRC SRQs. UC is
     * not offered. Implicit on-demand MRs (ProtectionDomain#regMrImplicit) are offered.
     */
    public static final OdpCaps NICSIM = new OdpCaps(SUPPORT | SUPPORT_IMPLICIT,
            SEND | RECV | WRITE | READ | ATOMIC | SRQ_RECV, 0, SEND | RECV | SRQ_RECV,
            SEND | WRITE | READ | ATOMIC | SRQ_RECV);

    public boolean supported() { return (generalCaps & SUPPORT) != 0; }
}
