package nicsim.abi;

import java.util.ArrayList;
import java.util.List;

/**
 * The bits of MODIFY_QP's attribute mask: which fields of the mailbox a modify sets, and the columns of
 * the transition table ({@link QpTransitions}). The device's own mask, to which the verbs library maps
 * ibv_qp_attr_mask; the bits are the kernel's ib_qp_attr_mask today.
 */
public final class QpModifyMask {
    private QpModifyMask() {}

    public static final int STATE = 1, CUR_STATE = 1 << 1, EN_SQD_ASYNC_NOTIFY = 1 << 2, ACCESS_FLAGS = 1 << 3,
            PKEY_INDEX = 1 << 4, PORT = 1 << 5, QKEY = 1 << 6, AV = 1 << 7, PATH_MTU = 1 << 8, TIMEOUT = 1 << 9,
            RETRY_CNT = 1 << 10, RNR_RETRY = 1 << 11, RQ_PSN = 1 << 12, MAX_QP_RD_ATOMIC = 1 << 13, ALT_PATH = 1 << 14,
            MIN_RNR_TIMER = 1 << 15, SQ_PSN = 1 << 16, MAX_DEST_RD_ATOMIC = 1 << 17, PATH_MIG_STATE = 1 << 18,
            CAP = 1 << 19, DEST_QPN = 1 << 20;

    private static final String[] NAMES = {"STATE", "CUR_STATE", "EN_SQD_ASYNC_NOTIFY", "ACCESS_FLAGS", "PKEY_INDEX",
            "PORT", "QKEY", "AV", "PATH_MTU", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "RQ_PSN", "MAX_QP_RD_ATOMIC",
            "ALT_PATH", "MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE", "CAP", "DEST_QPN"};

    /** The names of the bits set in {@code mask}, for error messages ("AV|PATH_MTU"); unknown bits as hex. */
    public static String names(int mask) {
        List<String> out = new ArrayList<>();
        for (int b = 0; b < 32; b++)
            if ((mask & (1 << b)) != 0) out.add(b < NAMES.length ? NAMES[b] : String.format("0x%x", 1 << b));
        return out.isEmpty() ? "(none)" : String.join("|", out);
    }
}
