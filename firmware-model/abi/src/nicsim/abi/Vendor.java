package nicsim.abi;

/**
 * nicsim's vendor syndromes: the byte an error CQE carries in vendor_err_synd (wc.vendor_err),
 * naming exactly which check failed. One table for the firmware, which writes them, and the driver,
 * which turns them into {@code WorkCompletion.syndrome()} text together with the CQE's address,
 * key and PSN. Codes 1..5 are the WqeFetcher's own (WqeError.Code), 0x10 a WQE whose segments do
 * not parse, 0x20 + n translation check n failed (MttPorts.Status), 0x40.. the transport.
 */
public final class Vendor {
    private Vendor() {}

    public static final int SEGMENTS = 0x10;
    /** 0x20 + MttPorts.Status ordinal: a local (lkey) translation failed. */
    public static final int LOCAL_XLATE = 0x20;
    /** 0x30 + MttPorts.Status ordinal: a remote (rkey) translation failed at the responder. */
    public static final int REMOTE_XLATE = 0x30;
    public static final int FLUSHED = 0x40, OPCODE_FOR_QP_TYPE = 0x41, QP_ACCESS_DENIES = 0x42,
            MISALIGNED_ATOMIC = 0x43, RECV_TOO_SMALL = 0x44, NAK_INVALID_REQUEST = 0x45, NAK_REMOTE_ACCESS = 0x46,
            NAK_REMOTE_OP = 0x47, RETRY_EXCEEDED = 0x48, RNR_RETRY_EXCEEDED = 0x49, DMA_FAILED = 0x4a,
            BAD_RECV_WQE = 0x4b, OPCODE_SEQUENCE = 0x4c, MESSAGE_TOO_LONG = 0x4d, QP_NOT_READY = 0x4e,
            TOO_MANY_READS = 0x4f, CQ_OVERFLOW = 0x50, UD_TOO_LONG = 0x51, UNSUPPORTED_OPCODE = 0x52,
            MW_UNKNOWN = 0x53, MW_NOT_FREE = 0x54, MW_PD = 0x55, MW_BAD_MR = 0x56, MW_MR_NO_BIND = 0x57,
            MW_RANGE = 0x58, INV_UNKNOWN = 0x59, INV_NOT_WINDOW = 0x5a, INV_TYPE1 = 0x5b, MW_TYPE1_ZERO_BASED = 0x5c,
            XRC_SRQ_UNKNOWN = 0x5d, XRC_SRQ_DOMAIN = 0x5e, DC_KEY_REFUSED = 0x5f, DC_CNAK_RETRY_EXCEEDED = 0x60,
            DC_NO_TARGET = 0x61, TM_TAG_TAKEN = 0x62, TM_RNDV_BUFFER_SHORT = 0x63, UMR_NOT_INDIRECT = 0x64,
            UMR_NOT_FREE = 0x65, UMR_PD = 0x66, UMR_TOO_MANY_ENTRIES = 0x67, UMR_BAD_LAYOUT = 0x68;

    private static final String[] XLATE = {"ok", "mkey index has no context", "key byte does not match",
            "mkey belongs to another PD", "type-2 window not bound to this QP", "range outside the region",
            "access rights missing", "mkey not valid",
            "translation table entry could not be fetched", "page not present (on-demand paging)",
            "an indirect mkey's entry names another indirect mkey"};

    /** What vendor syndrome {@code code} means. */
    public static String text(int code) {
        int local = code - LOCAL_XLATE, remote = code - REMOTE_XLATE;
        if (local >= 0 && local < XLATE.length) return "local key check: " + XLATE[local];
        if (remote >= 0 && remote < XLATE.length) return "remote key check: " + XLATE[remote];
        return switch (code) {
            case 0 -> "no error";
            case 1 -> "WQE ctrl opcode not executable";
            case 2 -> "WQE ctrl DS is 0";
            case 3 -> "WQE ctrl names another QP";
            case 4 -> "WQE ctrl index is not the WQEBB counter";
            case 5 -> "DMA read of the send ring failed";
            case SEGMENTS -> "WQE segments do not parse";
            case FLUSHED -> "flushed: the QP is in the error state";
            case OPCODE_FOR_QP_TYPE -> "opcode not allowed on this QP type";
            case QP_ACCESS_DENIES -> "the responder QP's access flags do not allow the operation";
            case MISALIGNED_ATOMIC -> "atomic target not 8-byte aligned";
            case RECV_TOO_SMALL -> "message longer than the receive buffer";
            case NAK_INVALID_REQUEST -> "responder answered NAK invalid request";
            case NAK_REMOTE_ACCESS -> "responder answered NAK remote access error";
            case NAK_REMOTE_OP -> "responder answered NAK remote operational error";
            case RETRY_EXCEEDED -> "transport retry count exceeded (no ACK)";
            case RNR_RETRY_EXCEEDED -> "RNR retry count exceeded (no receive WQE at the responder)";
            case DMA_FAILED -> "host DMA failed";
            case BAD_RECV_WQE -> "receive WQE malformed";
            case OPCODE_SEQUENCE -> "packet opcode out of sequence";
            case MESSAGE_TOO_LONG -> "message longer than the port's maximum";
            case QP_NOT_READY -> "QP not in a state that executes work";
            case TOO_MANY_READS -> "more RDMA reads/atomics outstanding than max_dest_rd_atomic";
            case CQ_OVERFLOW -> "completion queue overflow";
            case UD_TOO_LONG -> "UD message longer than the path MTU";
            case DC_KEY_REFUSED -> "the DC target refused the connection: wrong DC access key";
            case DC_CNAK_RETRY_EXCEEDED -> "the DC target had no free responder (CNAK) for rnr_retry attempts";
            case DC_NO_TARGET -> "a DC initiator's remote work request names no target (mlx5dv_wr_set_dc_addr)";
            case TM_TAG_TAKEN -> "TAG_DEL: a message took the tagged buffer first";
            case TM_RNDV_BUFFER_SHORT ->
                    "rendezvous data longer than the tagged buffer: its headers are there, for software";
            case UMR_NOT_INDIRECT -> "UMR names a key that is not an indirect mkey";
            case UMR_NOT_FREE -> "UMR on an indirect mkey that is in use: invalidate it (LOCAL_INV) first";
            case UMR_PD -> "UMR on an indirect mkey of another protection domain";
            case UMR_TOO_MANY_ENTRIES -> "UMR layout has more entries than the indirect mkey was created for";
            case UMR_BAD_LAYOUT -> "UMR layout has no entries, an entry of zero bytes, a repeat count of zero, "
                    + "or a length past its entries or wrapping 2^64";
            case UNSUPPORTED_OPCODE -> "opcode not supported by this adapter";
            case MW_UNKNOWN -> "bind: no such memory window";
            case MW_NOT_FREE -> "bind: type-2 window is not free (already bound)";
            case MW_PD -> "bind: window and QP are in different PDs";
            case MW_BAD_MR -> "bind: no such memory region";
            case MW_MR_NO_BIND -> "bind: the MR lacks MW_BIND (or LOCAL_WRITE for a writable window) or is zero-based";
            case MW_RANGE -> "bind: the window does not lie inside the MR";
            case INV_UNKNOWN -> "invalidate: no such key (or not valid, or another PD)";
            case INV_NOT_WINDOW ->
                    "invalidate: the key is a memory region registered with reg_mr, which cannot be invalidated";
            case INV_TYPE1 -> "invalidate: a type-1 window cannot be invalidated";
            case MW_TYPE1_ZERO_BASED -> "bind: a type-1 window cannot be zero-based";
            case XRC_SRQ_UNKNOWN -> "XRC: the request's XRCETH names no XRC SRQ";
            case XRC_SRQ_DOMAIN -> "XRC: the SRQ the request names is not in the target QP's XRC domain";
            default -> String.format("vendor syndrome 0x%02x", code);
        };
    }
}
