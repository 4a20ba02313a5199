package nicsim.abi;

import java.util.Arrays;
import java.util.Locale;
import nicsim.abi.BigEndian;
import nicsim.sim.Layout;

/**
 * The adapter's command interface, one definition for the driver (which writes commands) and the
 * firmware (which executes them). mlx5-like: the driver writes the 64-bit address of a 64-byte
 * command entry to {@link #REG_CMDQ_ADDR} once, then for each command fills the entry and an input
 * mailbox in host memory and writes 1 to {@link #REG_CMD_DOORBELL}. The firmware DMA-reads the
 * entry and the mailbox, executes, DMA-writes the output mailbox (word 0: status << 32 | syndrome,
 * word 1: the offending value, then the command's results), and last clears the entry's ownership
 * byte. Opcode and status numbers are mlx5's where mlx5 has the command; {@link #MODIFY_QP} is one
 * command for every transition (mlx5 has one per transition).
 *
 * <p>Each command's input and output are records with a {@link Layout}: field i travels as
 * big-endian 64-bit word i, and the width of the field is checked on both sides.
 */
public final class Cmd {
    private Cmd() {}

    // --- the PCI function
    /** Config-space vendor and device IDs: neither Mellanox's nor EFA's, so tools treat the device generically. */
    public static final int PCI_VENDOR = 0x1de5, PCI_DEVICE = 0x0010;
    /**
     * BAR0 offset of the MSI-X table (16 bytes an entry), in the initialization page; vector 0 is the async event
     * queue's.
     */
    public static final long REG_MSIX_TABLE = 0x800;
    public static final int MSIX_VECTORS = 64;

    // --- initialization segment registers (BAR0 page 0)
    /** Read: firmware revision (major << 16 | minor). */
    public static final long REG_FW_REV = 0x00;
    /** Write, 8 bytes big-endian: host address of the 64-byte command entry. */
    public static final long REG_CMDQ_ADDR = 0x10;
    /** Write, 4 bytes: ring the command doorbell (execute the entry). */
    public static final long REG_CMD_DOORBELL = 0x18;
    /** Read, 4 bytes: commands refused because they were malformed (bad entry, opcode or length). */
    public static final long REG_CMD_ERRORS = 0x1c;
    /** Read: 0 while healthy. */
    public static final long REG_HEALTH = 0x20;
    /**
     * Write, 4 bytes: the MSI-X vector for translation misses the host fills ({@code mtt.fill =
     * "interrupt"}, KVIA's scheme: docs/sources.md#kvia-translation).
     */
    public static final long REG_XLATE_VECTOR = 0x28;
    /**
     * Read, 8 bytes big-endian: the oldest translation miss waiting for the host, bit 63 set, MTT index below; 0 if
     * none.
     */
    public static final long REG_XLATE_MISS = 0x30;
    /**
     * Write, 16 bytes big-endian: MTT index, then its 8-byte entry: answers the oldest miss, which must have that
     * index.
     */
    public static final long REG_XLATE_FILL = 0x38;
    public static final int FW_REV = 0x0001_0000;

    // --- the command entry (big-endian)
    public static final int ENTRY_BYTES = 64, ENTRY_OPCODE = 0, ENTRY_IN_LEN = 4, ENTRY_IN_ADDR = 8,
            ENTRY_OUT_ADDR = 16, ENTRY_OUT_LEN = 24, ENTRY_TOKEN = 28, ENTRY_OWNER = 63;
    /** Ownership byte: 1 while the adapter owns the entry. */
    public static final int OWNER_HW = 1;
    /** Output mailbox words before the results: status/syndrome, then the offending value. */
    public static final int OUT_HEADER_WORDS = 2;

    // --- opcodes
    public static final int QUERY_HCA_CAP = 0x100, INIT_HCA = 0x102, TEARDOWN_HCA = 0x103, CREATE_MKEY = 0x200,
            QUERY_MKEY = 0x201, DESTROY_MKEY = 0x202,
            ALLOC_MW = 0x203, DEALLOC_MW = 0x204,
            CREATE_CQ = 0x400, DESTROY_CQ = 0x401,
            CREATE_QP = 0x500, DESTROY_QP = 0x501, QUERY_QP = 0x50b, MODIFY_QP = 0x50f,
            CREATE_SRQ = 0x700, DESTROY_SRQ = 0x701, ARM_SRQ = 0x703,
            ALLOC_PD = 0x800, DEALLOC_PD = 0x801, ALLOC_UAR = 0x802, DEALLOC_UAR = 0x803,
            ALLOC_XRCD = 0x80e, DEALLOC_XRCD = 0x80f, CREATE_XRC_SRQ = 0x705, CREATE_TM_SRQ = 0x706, TM_OP = 0x707,
            ODP_PREFETCH = 0x205, ODP_INVALIDATE = 0x206, CREATE_INDIRECT_MKEY = 0x207, REREG_MKEY = 0x208,
            ALLOC_DM = 0x209, DEALLOC_DM = 0x20a, RESIZE_CQ = 0x402, ODP_PREFETCH_FLUSH = 0x20b, QUERY_SRQ = 0x702,
            CREATE_IMPLICIT_MKEY = 0x20c, ATTACH_MCAST = 0x806, DETACH_MCAST = 0x807, MODIFY_PORT = 0x761,
            ALLOC_Q_COUNTER = 0x771, DEALLOC_Q_COUNTER = 0x772, QUERY_Q_COUNTER = 0x773, SET_QP_COUNTER = 0x51f;

    public static String opcodeName(int op) {
        return switch (op) {
            case QUERY_HCA_CAP -> "QUERY_HCA_CAP"; case INIT_HCA -> "INIT_HCA"; case TEARDOWN_HCA -> "TEARDOWN_HCA";
            case CREATE_MKEY -> "CREATE_MKEY";
            case QUERY_MKEY -> "QUERY_MKEY"; case DESTROY_MKEY -> "DESTROY_MKEY";
            case ALLOC_MW -> "ALLOC_MW"; case DEALLOC_MW -> "DEALLOC_MW";
            case CREATE_CQ -> "CREATE_CQ"; case DESTROY_CQ -> "DESTROY_CQ";
            case CREATE_QP -> "CREATE_QP"; case DESTROY_QP -> "DESTROY_QP";
            case QUERY_QP -> "QUERY_QP"; case MODIFY_QP -> "MODIFY_QP";
            case ALLOC_PD -> "ALLOC_PD"; case DEALLOC_PD -> "DEALLOC_PD";
            case ALLOC_UAR -> "ALLOC_UAR"; case DEALLOC_UAR -> "DEALLOC_UAR"; case CREATE_SRQ -> "CREATE_SRQ";
            case DESTROY_SRQ -> "DESTROY_SRQ"; case ARM_SRQ -> "ARM_SRQ";
            case ALLOC_XRCD -> "ALLOC_XRCD"; case DEALLOC_XRCD -> "DEALLOC_XRCD";
            case CREATE_XRC_SRQ -> "CREATE_XRC_SRQ"; case CREATE_TM_SRQ -> "CREATE_TM_SRQ"; case TM_OP -> "TM_OP";
            case ODP_PREFETCH -> "ODP_PREFETCH"; case ODP_INVALIDATE -> "ODP_INVALIDATE";
            case CREATE_INDIRECT_MKEY -> "CREATE_INDIRECT_MKEY";
            case REREG_MKEY -> "REREG_MKEY"; case ALLOC_DM -> "ALLOC_DM"; case DEALLOC_DM -> "DEALLOC_DM";
            case RESIZE_CQ -> "RESIZE_CQ"; case ODP_PREFETCH_FLUSH -> "ODP_PREFETCH_FLUSH";
            case QUERY_SRQ -> "QUERY_SRQ"; case CREATE_IMPLICIT_MKEY -> "CREATE_IMPLICIT_MKEY";
            case ATTACH_MCAST -> "ATTACH_MCAST"; case DETACH_MCAST -> "DETACH_MCAST";
            case MODIFY_PORT -> "MODIFY_PORT";
            case ALLOC_Q_COUNTER -> "ALLOC_Q_COUNTER"; case DEALLOC_Q_COUNTER -> "DEALLOC_Q_COUNTER";
            case QUERY_Q_COUNTER -> "QUERY_Q_COUNTER"; case SET_QP_COUNTER -> "SET_QP_COUNTER";
            default -> String.format("0x%x", op);
        };
    }

    /** mlx5 command statuses, with the errno mlx5_cmd_status_to_err gives each. */
    public enum Status {
        OK(0x00, 0), INT_ERR(0x01, 5), BAD_OP(0x02, 22), BAD_PARAM(0x03, 22), BAD_SYS_STATE(0x04, 5),
        BAD_RESOURCE(0x05, 22), RESOURCE_BUSY(0x06, 16), EXCEED_LIM(0x08, 12), BAD_RES_STATE(0x09, 22),
        BAD_INDEX(0x0a, 22), NO_RESOURCES(0x0f, 11),
        BAD_QP_STATE(0x10, 22), BAD_SIZE(0x40, 22), BAD_INPUT_LEN(0x50, 5), BAD_OUTPUT_LEN(0x51, 5);

        public final int code, errno;

        Status(int code, int errno) { this.code = code; this.errno = errno; }

        public static Status of(int code) {
            for (Status s : values()) if (s.code == code) return s;
            return INT_ERR;
        }
    }

    /**
     * Why a command failed: its status, and a text the driver puts in its exception together with
     * the offending value from output word 1.
     */
    public enum Syndrome {
        NONE(Status.OK, "ok"),
        BAD_OPCODE(Status.BAD_OP, "unknown command opcode"),
        BAD_INPUT_LENGTH(Status.BAD_INPUT_LEN, "input mailbox length does not match the command"),
        BAD_OUTPUT_LENGTH(Status.BAD_OUTPUT_LEN, "output mailbox too short for the command"),
        MAILBOX_DMA(Status.INT_ERR, "the command's mailbox could not be read or written by DMA"),
        NOT_INITIALIZED(Status.BAD_SYS_STATE, "INIT_HCA has not run"),
        ALREADY_INITIALIZED(Status.BAD_SYS_STATE, "INIT_HCA has already run"),
        UNKNOWN_UAR(Status.BAD_RESOURCE, "no such UAR page"),
        UNKNOWN_PD(Status.BAD_RESOURCE, "no such protection domain"),
        UNKNOWN_CQ(Status.BAD_RESOURCE, "no such completion queue"),
        UNKNOWN_QP(Status.BAD_RESOURCE, "no such queue pair"),
        UNKNOWN_MKEY(Status.BAD_RESOURCE, "no such memory key"),
        UNKNOWN_SRQ(Status.BAD_RESOURCE, "no such shared receive queue"),
        OUT_OF_SRQS(Status.EXCEED_LIM, "shared receive queue table full"),
        SRQ_IN_USE(Status.RESOURCE_BUSY, "shared receive queue still used by a queue pair"),
        BAD_LIMIT(Status.BAD_PARAM, "SRQ limit larger than the queue"),
        OUT_OF_UARS(Status.EXCEED_LIM, "every UAR page of the doorbell window is allocated"),
        OUT_OF_PDS(Status.EXCEED_LIM, "protection domain table full"),
        OUT_OF_CQS(Status.EXCEED_LIM, "completion queue table full"),
        OUT_OF_QPS(Status.EXCEED_LIM, "queue pair table full"),
        OUT_OF_MKEYS(Status.EXCEED_LIM, "memory key table full"),
        OUT_OF_MTT(Status.EXCEED_LIM, "translation table full"),
        OUT_OF_DM(Status.EXCEED_LIM, "device memory full"),
        BAD_DM_SIZE(Status.BAD_PARAM, "device memory length 0 or larger than all of it"),
        UNKNOWN_DM(Status.BAD_RESOURCE, "no device memory allocated there"),
        BAD_QP_TYPE(Status.BAD_PARAM, "queue pair type not supported"),
        BAD_QUEUE_SIZE(Status.BAD_SIZE, "queue size out of range"),
        BAD_ADDRESS(Status.BAD_PARAM, "queue or page-list address not aligned"),
        BAD_PAGE_SHIFT(Status.BAD_PARAM, "page shift out of range (12..21)"),
        BAD_ACCESS(Status.BAD_PARAM, "access flags not supported"),
        BAD_VECTOR(Status.BAD_PARAM, "MSI-X vector out of range"),
        BAD_TRANSITION(Status.BAD_QP_STATE, "state transition or attribute mask not allowed for this QP type"),
        CUR_STATE_MISMATCH(Status.BAD_QP_STATE, "CUR_STATE does not match the QP's state"),
        BAD_ATTRIBUTE(Status.BAD_PARAM, "attribute value out of range"),
        CQ_TOO_SMALL(Status.BAD_SIZE, "the new ring holds fewer entries than the completions not yet polled"),
        CQ_RESIZING(Status.RESOURCE_BUSY, "the completion queue is being resized"),
        CQ_IN_USE(Status.RESOURCE_BUSY, "completion queue still used by a queue pair"),
        PD_IN_USE(Status.RESOURCE_BUSY, "protection domain still used"),
        UAR_IN_USE(Status.RESOURCE_BUSY, "UAR page still used by a queue"),
        MR_HAS_WINDOWS(Status.RESOURCE_BUSY, "memory region still has memory windows bound to it"),
        BAD_MW_TYPE(Status.BAD_PARAM, "memory window type must be 1 or 2"),
        UNKNOWN_XRCD(Status.BAD_RESOURCE, "no such XRC domain"),
        OUT_OF_XRCDS(Status.EXCEED_LIM, "XRC domain table full"),
        XRCD_IN_USE(Status.RESOURCE_BUSY, "XRC domain still used by an XRC SRQ or XRC target QP"),
        XRC_SRQ_MISUSE(Status.BAD_PARAM, "an XRC SRQ serves XRC target QPs only, through the XRCETH of their requests"),
        DC_NOT_SUPPORTED(Status.BAD_PARAM, "DC transport is not offered by this adapter profile (no dc.dcr.pool)"),
        BAD_DC_TYPE(Status.BAD_PARAM, "a DRIVER QP must be a DC target (1) or a DC initiator (2)"),
        DCT_NEEDS_SRQ(Status.BAD_PARAM, "a DC target takes its receives from an SRQ: none was given"),
        TM_NOT_SUPPORTED(Status.BAD_PARAM, "tag matching is not offered by this adapter profile (no tm.max.tags)"),
        TM_LIST_FULL(Status.EXCEED_LIM, "the tag-matching SRQ's tag list is full"),
        BAD_TM_OP(Status.BAD_PARAM, "tag-list operation: an opcode that is not TAG_ADD, TAG_DEL or TAG_SYNC,"
                + " or an SRQ that does not match tags"),
        TM_TOO_MANY_OPS(Status.EXCEED_LIM, "more tag-list operations outstanding than the SRQ's max_ops"),
        UMR_NOT_SUPPORTED(Status.BAD_PARAM,
                "indirect mkeys (UMR) are not offered by this adapter profile (no umr.klm.cycles)"),
        OUT_OF_KLMS(Status.EXCEED_LIM,
                "the MttWalker's KLM table has no run of free entries that long (mtt.klm.entries)"),
        OBJECTS_LEFT(Status.RESOURCE_BUSY, "objects still exist (the value: how many); destroy every QP, CQ, SRQ, "
                + "mkey, window, PD, UAR, XRC domain and device memory first"),
        SPECIAL_QP_TAKEN(Status.RESOURCE_BUSY, "the port's QP0 (type 0, SMI) or QP1 (type 1, GSI) is already "
                + "a driver's: one of each per port (the value: the type)"),
        BAD_MGID(Status.BAD_PARAM,
                "not a multicast GID: its first byte must be 0xff (the value: the GID's first 8 bytes)"),
        NOT_ATTACHED(Status.BAD_PARAM, "the queue pair is not attached to that multicast group"),
        OUT_OF_MCAST_GROUPS(Status.EXCEED_LIM, "every multicast group the adapter holds is in use"),
        MCAST_GROUP_FULL(Status.EXCEED_LIM, "the multicast group has as many queue pairs attached as it may"),
        UNKNOWN_PORT(Status.BAD_PARAM, "no such port: the adapter has port 1 only (the value: the port asked)"),
        UNKNOWN_Q_COUNTER(Status.BAD_RESOURCE, "no such q counter set (the value: the set asked)"),
        OUT_OF_Q_COUNTERS(Status.EXCEED_LIM, "every q counter set of the adapter is allocated (QCounter.MAX_SETS)"),
        Q_COUNTER_IN_USE(Status.RESOURCE_BUSY, "q counter set still bound to a queue pair (the value: that QPN)");

        public final Status status;
        public final String text;

        Syndrome(Status status, String text) { this.status = status; this.text = text; }
    }

    // --- inputs and outputs

    public record Empty() {}
    public static final Layout<Empty> EMPTY = Layout.<Empty>builder("Empty").build(v -> new Empty());

    /** A single handle: UAR, PD, CQN, QPN or mkey. */
    public record Handle(long handle) {}
    public static final Layout<Handle> HANDLE = Layout.<Handle>builder("Handle").field("handle", 32, Handle::handle)
            .build(v -> new Handle(v[0]));

    /**
     * What the adapter offers (QUERY_HCA_CAP). {@code bfSize}: the most bytes of a lone WQE a send
     * doorbell may carry whole through a BlueFlame register, so the adapter need not read it from the
     * ring (0: the adapter keeps none; the doorbell's first 8 bytes are all it takes). {@code smLid}: the
     * subnet manager's LID, as the port's PortInfo.MasterSMLID says (what ib_core's port attributes report);
     * {@code nodeGuid}: the GUID burnt into the adapter, its node's and its port's, as the SMA's NodeInfo says.
     */
    public record HcaCap(long maxQp, long maxCq, long maxMkey, long maxPd, long maxUar, long maxQpWr, long maxCqe,
                         long maxSge, long maxInline, long maxMtu, long lid, long maxRdAtomic, long maxMsgSize,
                         long maxDm, long uarBase, long uarPageSize, long dmBase, long bfSize, long maxPageShift,
                         long smLid, long nodeGuid) {}
    public static final Layout<HcaCap> HCA_CAP = Layout.<HcaCap>builder("HcaCap")
            .field("maxQp", 32, HcaCap::maxQp).field("maxCq", 32, HcaCap::maxCq).field("maxMkey", 32, HcaCap::maxMkey)
            .field("maxPd", 32, HcaCap::maxPd).field("maxUar", 32, HcaCap::maxUar).field("maxQpWr", 32, HcaCap::maxQpWr)
            .field("maxCqe", 32, HcaCap::maxCqe).field("maxSge", 32, HcaCap::maxSge)
            .field("maxInline", 32, HcaCap::maxInline)
            .field("maxMtu", 4, HcaCap::maxMtu).field("lid", 16, HcaCap::lid)
            .field("maxRdAtomic", 8, HcaCap::maxRdAtomic)
            .field("maxMsgSize", 32, HcaCap::maxMsgSize).field("maxDm", 32, HcaCap::maxDm)
            .field("uarBase", 64, HcaCap::uarBase).field("uarPageSize", 32, HcaCap::uarPageSize)
            .field("dmBase", 64, HcaCap::dmBase).field("bfSize", 16, HcaCap::bfSize)
            .field("maxPageShift", 8, HcaCap::maxPageShift).field("smLid", 16, HcaCap::smLid)
            .field("nodeGuid", 64, HcaCap::nodeGuid)
            .build(v -> new HcaCap(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12],
                    v[13], v[14], v[15], v[16], v[17], v[18], v[19], v[20]));

    /**
     * ATTACH_MCAST and DETACH_MCAST (ibv_attach_mcast, mlx5's ATTACH_TO_MCG): UD QP {@code qpn} joins or leaves
     * multicast group {@code gidHi:gidLo} (the MGID, big-endian halves).
     */
    public record McastAttach(long qpn, long gidHi, long gidLo) {}
    public static final Layout<McastAttach> MCAST_ATTACH_IN = Layout.<McastAttach>builder("McastAttach")
            .field("qpn", 24, McastAttach::qpn).field("gidHi", 64, McastAttach::gidHi)
            .field("gidLo", 64, McastAttach::gidLo)
            .build(v -> new McastAttach(v[0], v[1], v[2]));
    /**
     * MODIFY_PORT (ib_modify_port; mlx5 carries the same bits in MODIFY_HCA_VPORT_CONTEXT's cap_mask1, whose
     * opcode it takes): sets, then clears, bits of port {@code port}'s CapabilityMask (PortInfo, IBA 14.2.5.6)
     * as the SMA reports it. A bit both set and cleared ends clear. {@code set} and {@code clear} 0 only read it.
     */
    public record ModifyPort(long port, long set, long clear) {}
    public static final Layout<ModifyPort> MODIFY_PORT_IN = Layout.<ModifyPort>builder("ModifyPort")
            .field("port", 8, ModifyPort::port).field("set", 32, ModifyPort::set)
            .field("clear", 32, ModifyPort::clear)
            .build(v -> new ModifyPort(v[0], v[1], v[2]));
    /** MODIFY_PORT's answer: the port's CapabilityMask now, as the SMA's PortInfo reports it. */
    public record PortCaps(long capabilityMask) {}
    public static final Layout<PortCaps> PORT_CAPS = Layout.<PortCaps>builder("PortCaps")
            .field("capabilityMask", 32, PortCaps::capabilityMask).build(v -> new PortCaps(v[0]));

    /**
     * QUERY_Q_COUNTER: q counter set {@code set}'s counts; {@code clear} 1 zeroes them once read (mlx5's
     * clear bit).
     */
    public record QCounterQuery(long set, long clear) {}
    public static final Layout<QCounterQuery> Q_COUNTER_QUERY_IN = Layout.<QCounterQuery>builder("QCounterQuery")
            .field("set", 16, QCounterQuery::set).field("clear", 1, QCounterQuery::clear)
            .build(v -> new QCounterQuery(v[0], v[1]));
    /** QUERY_Q_COUNTER's answer: one word per {@link QCounter}, in its order. */
    public record QCounterValues(long[] values) {
        public long get(QCounter c) { return values[c.ordinal()]; }
    }
    public static final Layout<QCounterValues> Q_COUNTER_VALUES = qCounterValues();

    private static Layout<QCounterValues> qCounterValues() {
        var b = Layout.<QCounterValues>builder("QCounterValues");
        for (QCounter c : QCounter.values())
            b.field(c.name().toLowerCase(Locale.ROOT), 64, v -> v.values()[c.ordinal()]);
        return b.build(v -> new QCounterValues(v.clone()));
    }

    /**
     * SET_QP_COUNTER: QP {@code qpn}'s transport events count in q counter set {@code set} too (0: in none).
     * mlx5 carries the set in the QP context (counter_set_id, set by a modify); here it is a command of its own,
     * as MODIFY_QP is one for every transition.
     */
    public record QpCounter(long qpn, long set) {}
    public static final Layout<QpCounter> QP_COUNTER_IN = Layout.<QpCounter>builder("QpCounter")
            .field("qpn", 24, QpCounter::qpn).field("set", 16, QpCounter::set)
            .build(v -> new QpCounter(v[0], v[1]));

    /** Multicast groups an adapter holds, and QPs one group takes (max_mcast_grp, max_mcast_qp_attach). */
    public static final int MAX_MCAST_GROUPS = 4096, MAX_MCAST_QP_ATTACH = 240;

    /**
     * ALLOC_DM: {@code length} bytes of device memory aligned to 2^{@code logAlign}; the output handle is their offset.
     */
    public record AllocDm(long length, long logAlign) {}
    public static final Layout<AllocDm> ALLOC_DM_IN = Layout.<AllocDm>builder("AllocDm")
            .field("length", 32, AllocDm::length).field("logAlign", 6, AllocDm::logAlign)
            .build(v -> new AllocDm(v[0], v[1]));

    /**
     * INIT_HCA: the async event queue (64-byte EQEs, MSI-X vector 0), the MTT table, the QP context
     * table (256 bytes per entry of the doorbell decoder's queue table) and the mkey context table
     * (64 bytes per mkey) in host memory, where the adapter reads a context its hardware tables do
     * not hold (0: no such table).
     */
    public record InitHca(long eqAddr, long eqLogSize, long mttAddr, long mttEntries, long qpcAddr, long mkcAddr) {
        public InitHca(long eqAddr, long eqLogSize, long mttAddr, long mttEntries) {
            this(eqAddr, eqLogSize, mttAddr, mttEntries, 0, 0);
        }
    }
    public static final Layout<InitHca> INIT_HCA_IN = Layout.<InitHca>builder("InitHca")
            .field("eqAddr", 64, InitHca::eqAddr).field("eqLogSize", 5, InitHca::eqLogSize)
            .field("mttAddr", 64, InitHca::mttAddr)
            .field("mttEntries", 32, InitHca::mttEntries).field("qpcAddr", 64, InitHca::qpcAddr)
            .field("mkcAddr", 64, InitHca::mkcAddr)
            .build(v -> new InitHca(v[0], v[1], v[2], v[3], v[4], v[5]));

    /**
     * CREATE_MKEY: an MR of {@code length} bytes at virtual {@code start} in {@code pd}, whose pages
     * (2^pageShift bytes) are listed as 8-byte big-endian physical addresses at {@code pageList};
     * {@code pageOffset} is where start lies in the first page.
     */
    public record CreateMkey(long pd, long start, long length, long access, long pageShift, long pageOffset, long pages,
                             long pageList) {}

    /** The translation pages CREATE_MKEY takes: 4 KiB (pageShift 12) to 2 MB (21). */
    public static final int MIN_PAGE_SHIFT = 12, MAX_PAGE_SHIFT = 21;
    public static final Layout<CreateMkey> CREATE_MKEY_IN = Layout.<CreateMkey>builder("CreateMkey")
            .field("pd", 24, CreateMkey::pd).field("start", 64, CreateMkey::start)
            .field("length", 64, CreateMkey::length)
            .field("access", 16, CreateMkey::access).field("pageShift", 6, CreateMkey::pageShift)
            .field("pageOffset", 32, CreateMkey::pageOffset).field("pages", 32, CreateMkey::pages)
            .field("pageList", 64, CreateMkey::pageList)
            .build(v -> new CreateMkey(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]));

    /**
     * REREG_MKEY (ibv_rereg_mr): MR {@code mkey} takes the translation, PD and access of {@code
     * to}, keeping its key: remote peers and posted work go on naming it.
     */
    public record ReregMkey(long mkey, CreateMkey to) {}
    public static final Layout<ReregMkey> REREG_MKEY_IN = Layout.<ReregMkey>builder("ReregMkey")
            .field("mkey", 32, ReregMkey::mkey).field("pd", 24, r -> r.to().pd())
            .field("start", 64, r -> r.to().start())
            .field("length", 64, r -> r.to().length()).field("access", 16, r -> r.to().access())
            .field("pageShift", 6, r -> r.to().pageShift()).field("pageOffset", 32, r -> r.to().pageOffset())
            .field("pages", 32, r -> r.to().pages()).field("pageList", 64, r -> r.to().pageList())
            .build(v -> new ReregMkey(v[0], new CreateMkey(v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8])));

    /** ALLOC_MW: a memory window of {@code type} (1 or 2) in {@code pd}; answers its rkey (index << 8 | key). */
    public record AllocMw(long pd, long type) {}
    public static final Layout<AllocMw> ALLOC_MW_IN = Layout.<AllocMw>builder("AllocMw")
            .field("pd", 24, AllocMw::pd).field("type", 2, AllocMw::type).build(v -> new AllocMw(v[0], v[1]));

    /**
     * CREATE_INDIRECT_MKEY (mlx5dv_create_mkey with MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT): an mkey of
     * {@code pd} whose layout a UMR work request sets later, of at most {@code maxEntries} KLM
     * entries; it starts FREE. Answers its key (index << 8 | key byte), lkey and rkey alike.
     */
    public record CreateIndirectMkey(long pd, long maxEntries) {}
    public static final Layout<CreateIndirectMkey> CREATE_INDIRECT_MKEY_IN =
            Layout.<CreateIndirectMkey>builder("CreateIndirectMkey")
            .field("pd", 24, CreateIndirectMkey::pd).field("maxEntries", 16, CreateIndirectMkey::maxEntries)
            .build(v -> new CreateIndirectMkey(v[0], v[1]));

    /**
     * CREATE_CQ: 2^logSize CQEs at {@code ring} (owned by {@code uar}), events on MSI-X {@code vector}, doorbell record
     * at {@code dbrec}.
     */
    /**
     * RESIZE_CQ (ibv_resize_cq): CQ {@code cqn} moves to a new ring at {@code ring} of 2^logSize
     * entries; the completions software has not polled move with it, first in the new ring.
     */
    public record ResizeCq(long cqn, long ring, long logSize) {}
    public static final Layout<ResizeCq> RESIZE_CQ_IN = Layout.<ResizeCq>builder("ResizeCq")
            .field("cqn", 24, ResizeCq::cqn).field("ring", 64, ResizeCq::ring).field("logSize", 5, ResizeCq::logSize)
            .build(v -> new ResizeCq(v[0], v[1], v[2]));

    public record CreateCq(long uar, long ring, long logSize, long vector, long dbrec) {}
    public static final Layout<CreateCq> CREATE_CQ_IN = Layout.<CreateCq>builder("CreateCq")
            .field("uar", 24, CreateCq::uar).field("ring", 64, CreateCq::ring).field("logSize", 5, CreateCq::logSize)
            .field("vector", 11, CreateCq::vector).field("dbrec", 64, CreateCq::dbrec)
            .build(v -> new CreateCq(v[0], v[1], v[2], v[3], v[4]));

    /**
     * CREATE_QP: type (ibv_qp_type number, or 0 / 1: the port's special QP0 / QP1 as the kernel's
     * IB_QPT_SMI / IB_QPT_GSI, a UD QP otherwise), PD, CQs, UAR page; send ring of 2^sqLogSize WQEBBs; receive
     * ring of 2^rqLogSize WQEs of 2^rqStrideLog bytes (16-byte data segments); doorbell record
     * (word 0: receive counter, word 1: send counter, big-endian 32-bit); {@code srq} (0 for none)
     * replaces the receive ring.
     */
    /** CREATE_QP's types of the port's special QPs: QP0 (the SMI), QP1 (the GSI), as the kernel's IB_QPT_*. */
    public static final int QPT_SMI = 0, QPT_GSI = 1;

    public record CreateQp(long type, long pd, long sendCq, long recvCq, long uar, long sqAddr, long sqLogSize,
                           long rqAddr, long rqLogSize, long rqStrideLog, long dbrec, long flags, long srq) {
        /**
         * {@code flags}: bit 0 every send WQE completes (sq_sig_all), bit 1 small receives may be
         * scattered to the CQE, bits 2..3 a DRIVER QP's DC half (mlx5dv_dc_type: 1 DCT, 2 DCI),
         * bits 8..11 and 16..20 a striding receive queue's log2 stride bytes and log2 strides per
         * WQE (0: not striding).
         */
        public static final long SQ_SIG_ALL = 1, SCATTER_TO_CQE = 2;

        public long sqSigAll() { return flags & SQ_SIG_ALL; }
        public boolean scatterToCqe() { return (flags & SCATTER_TO_CQE) != 0; }
        public int logStrideBytes() { return (int) (flags >>> 8 & 0xF); }
        public int logStrides() { return (int) (flags >>> 16 & 0x1F); }
        /** The DC half of a DRIVER QP (mlx5dv_dc_type; 0: none). */
        public int dcType() { return (int) (flags >>> 2 & 3); }

        /** These flags for a DRIVER QP of DC half {@code dcType} (mlx5dv_dc_type). */
        public static long withDcType(long flags, int dcType) { return flags | (long) (dcType & 3) << 2; }

        /** The flags field for these settings. */
        public static long flags(boolean sqSigAll, boolean scatterToCqe, int logStrideBytes, int logStrides) {
            long strides = (long) logStrideBytes << 8 | (long) logStrides << 16;
            return (sqSigAll ? SQ_SIG_ALL : 0) | (scatterToCqe ? SCATTER_TO_CQE : 0) | strides;
        }

        /**
         * An XRC target (XRC_RECV) has no PD, no CQs and no queues: {@code pd} names its XRC domain instead (a union,
         * as mlx5's QPC has).
         */
        public long xrcd() { return pd; }

        /** A DC target has no send queue: {@code sqAddr} carries its DC access key instead. */
        public long dctAccessKey() { return sqAddr; }
    }
    public static final Layout<CreateQp> CREATE_QP_IN = Layout.<CreateQp>builder("CreateQp")
            .field("type", 8, CreateQp::type).field("pd", 24, CreateQp::pd).field("sendCq", 24, CreateQp::sendCq)
            .field("recvCq", 24, CreateQp::recvCq).field("uar", 24, CreateQp::uar).field("sqAddr", 64, CreateQp::sqAddr)
            .field("sqLogSize", 5, CreateQp::sqLogSize).field("rqAddr", 64, CreateQp::rqAddr)
            .field("rqLogSize", 5, CreateQp::rqLogSize)
            .field("rqStrideLog", 4, CreateQp::rqStrideLog).field("dbrec", 64, CreateQp::dbrec)
            .field("flags", 21, CreateQp::flags)
            .field("srq", 24, CreateQp::srq)
            .build(v -> new CreateQp(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]));

    /**
     * CREATE_SRQ: a receive ring of 2^logSize WQEs of 2^strideLog bytes at {@code ring}, its producer counter at {@code
     * dbrec}, and the limit (0 = disarmed).
     */
    public record CreateSrq(long pd, long ring, long logSize, long strideLog, long dbrec, long limit) {}
    public static final Layout<CreateSrq> CREATE_SRQ_IN = Layout.<CreateSrq>builder("CreateSrq")
            .field("pd", 24, CreateSrq::pd).field("ring", 64, CreateSrq::ring).field("logSize", 5, CreateSrq::logSize)
            .field("strideLog", 4, CreateSrq::strideLog).field("dbrec", 64, CreateSrq::dbrec)
            .field("limit", 16, CreateSrq::limit)
            .build(v -> new CreateSrq(v[0], v[1], v[2], v[3], v[4], v[5]));

    /**
     * CREATE_XRC_SRQ: as CREATE_SRQ, for an SRQ of XRC domain {@code xrcd} whose receives complete to CQ {@code cq}.
     */
    public record CreateXrcSrq(long pd, long ring, long logSize, long strideLog, long dbrec, long limit, long xrcd,
                               long cq) {}
    public static final Layout<CreateXrcSrq> CREATE_XRC_SRQ_IN = Layout.<CreateXrcSrq>builder("CreateXrcSrq")
            .field("pd", 24, CreateXrcSrq::pd).field("ring", 64, CreateXrcSrq::ring)
            .field("logSize", 5, CreateXrcSrq::logSize)
            .field("strideLog", 4, CreateXrcSrq::strideLog).field("dbrec", 64, CreateXrcSrq::dbrec)
            .field("limit", 16, CreateXrcSrq::limit)
            .field("xrcd", 24, CreateXrcSrq::xrcd).field("cq", 24, CreateXrcSrq::cq)
            .build(v -> new CreateXrcSrq(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]));

    /**
     * CREATE_TM_SRQ: as CREATE_SRQ, for a tag-matching SRQ of at most {@code maxTags} tagged buffers whose completions
     * go to CQ {@code cq}.
     */
    public record CreateTmSrq(long pd, long ring, long logSize, long strideLog, long dbrec, long limit, long cq,
                              long maxTags, long maxOps) {}
    public static final Layout<CreateTmSrq> CREATE_TM_SRQ_IN = Layout.<CreateTmSrq>builder("CreateTmSrq")
            .field("pd", 24, CreateTmSrq::pd).field("ring", 64, CreateTmSrq::ring)
            .field("logSize", 5, CreateTmSrq::logSize)
            .field("strideLog", 4, CreateTmSrq::strideLog).field("dbrec", 64, CreateTmSrq::dbrec)
            .field("limit", 16, CreateTmSrq::limit)
            .field("cq", 24, CreateTmSrq::cq).field("maxTags", 16, CreateTmSrq::maxTags)
            .field("maxOps", 16, CreateTmSrq::maxOps)
            .build(v -> new CreateTmSrq(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]));

    /**
     * TM_OP: one tag-list operation (ibv_ops_wr) on tag-matching SRQ {@code srqn}: {@code opcode}
     * TAG_ADD (a buffer of {@code length} bytes at {@code addr} under {@code lkey} for messages whose
     * tag matches {@code tag} under {@code mask}), TAG_DEL (entry {@code handle}) or TAG_SYNC; the
     * software's count of unexpected messages; {@code flags} bit 0 asks for a completion, which
     * names {@code opIndex}. The output is the new entry's handle (TAG_ADD).
     */
    public record TmOp(long srqn, long opcode, long flags, long handle, long unexpectedCnt, long tag, long mask,
                       long addr, long length, long lkey, long opIndex) {}
    public static final Layout<TmOp> TM_OP_IN = Layout.<TmOp>builder("TmOp")
            .field("srqn", 24, TmOp::srqn).field("opcode", 2, TmOp::opcode).field("flags", 2, TmOp::flags)
            .field("handle", 16, TmOp::handle)
            .field("unexpectedCnt", 32, TmOp::unexpectedCnt).field("tag", 64, TmOp::tag).field("mask", 64, TmOp::mask)
            .field("addr", 64, TmOp::addr).field("length", 32, TmOp::length).field("lkey", 32, TmOp::lkey)
            .field("opIndex", 16, TmOp::opIndex)
            .build(v -> new TmOp(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]));

    /**
     * ODP_PREFETCH (ibv_advise_mr): the pages of {@code length} bytes at {@code addr} of MR
     * {@code lkey} of PD {@code pd} brought in ahead. ODP_INVALIDATE takes the same fields: those
     * pages are being taken away by the OS.
     */
    public record OdpPrefetch(long pd, long lkey, long addr, long length) {}
    public static final Layout<OdpPrefetch> ODP_PREFETCH_IN = Layout.<OdpPrefetch>builder("OdpPrefetch")
            .field("pd", 24, OdpPrefetch::pd).field("lkey", 32, OdpPrefetch::lkey).field("addr", 64, OdpPrefetch::addr)
            .field("length", 32, OdpPrefetch::length).build(v -> new OdpPrefetch(v[0], v[1], v[2], v[3]));

    /** ARM_SRQ: sets the limit (0 disarms). */
    public record ArmSrq(long srqn, long limit) {}
    public static final Layout<ArmSrq> ARM_SRQ_IN = Layout.<ArmSrq>builder("ArmSrq")
            .field("srqn", 24, ArmSrq::srqn).field("limit", 16, ArmSrq::limit).build(v -> new ArmSrq(v[0], v[1]));

    /**
     * MODIFY_QP input and QUERY_QP output: the attribute mask (ibv_qp_attr_mask), states as
     * ibv_qp_state numbers, and the attributes; a field counts only when its mask bit is set.
     */
    public record QpAttrs(long qpn, long mask, long curState, long state, long access, long qkey, long pathMtu,
                          long destQpn, long rqPsn, long sqPsn, long dlid, long timeout, long retryCnt, long rnrRetry,
                          long minRnrTimer, long maxRdAtomic, long maxDestRdAtomic, long port, long pkeyIndex,
                          long sqDraining) {}
    public static final Layout<QpAttrs> QP_ATTRS = Layout.<QpAttrs>builder("QpAttrs")
            .field("qpn", 24, QpAttrs::qpn).field("mask", 32, QpAttrs::mask).field("curState", 3, QpAttrs::curState)
            .field("state", 3, QpAttrs::state).field("access", 16, QpAttrs::access).field("qkey", 32, QpAttrs::qkey)
            .field("pathMtu", 3, QpAttrs::pathMtu).field("destQpn", 24, QpAttrs::destQpn)
            .field("rqPsn", 24, QpAttrs::rqPsn)
            .field("sqPsn", 24, QpAttrs::sqPsn).field("dlid", 16, QpAttrs::dlid).field("timeout", 5, QpAttrs::timeout)
            .field("retryCnt", 3, QpAttrs::retryCnt).field("rnrRetry", 3, QpAttrs::rnrRetry)
            .field("minRnrTimer", 5, QpAttrs::minRnrTimer)
            .field("maxRdAtomic", 8, QpAttrs::maxRdAtomic).field("maxDestRdAtomic", 8, QpAttrs::maxDestRdAtomic)
            .field("port", 8, QpAttrs::port).field("pkeyIndex", 16, QpAttrs::pkeyIndex)
            .field("sqDraining", 1, QpAttrs::sqDraining)
            .build(v -> new QpAttrs(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12],
                    v[13], v[14], v[15], v[16], v[17], v[18], v[19]));

    /** The words of a record, as the mailbox carries them. */
    public static <T> byte[] encode(Layout<T> layout, T value) {
        long[] v = layout.values(value);
        byte[] b = new byte[v.length * 8];
        for (int i = 0; i < v.length; i++) BigEndian.put64(b, i * 8, v[i]);
        return b;
    }

    /** A record from mailbox words starting at byte {@code at}; each word is checked against its field's width. */
    public static <T> T decode(Layout<T> layout, byte[] b, int at) {
        int n = layout.fields().size();
        if (b.length - at < n * 8)
            throw new IllegalArgumentException(layout.name() + " needs " + n * 8 + " bytes, got " + (b.length - at));
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
            v[i] = BigEndian.get64(b, at + i * 8);
            Layout.Field<T> f = layout.fields().get(i);
            if ((v[i] & ~f.mask()) != 0)
                throw new IllegalArgumentException(layout.name() + "." + f.name() + " = 0x" + Long.toHexString(v[i])
                        + " does not fit in " + f.width() + " bits");
        }
        return layout.make(v);
    }

    /** Bytes of an input layout. */
    public static int bytes(Layout<?> layout) { return layout.fields().size() * 8; }

    /** The output mailbox of a result: header (status, syndrome, detail) then the result's words. */
    public static <T> byte[] output(Syndrome s, long detail, Layout<T> layout, T result) {
        byte[] body = result == null ? new byte[0] : encode(layout, result);
        byte[] out = Arrays.copyOf(new byte[OUT_HEADER_WORDS * 8], OUT_HEADER_WORDS * 8 + body.length);
        BigEndian.put64(out, 0, (long) s.status.code << 32 | s.ordinal());
        BigEndian.put64(out, 8, detail);
        System.arraycopy(body, 0, out, OUT_HEADER_WORDS * 8, body.length);
        return out;
    }
}
