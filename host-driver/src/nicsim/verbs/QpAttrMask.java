package nicsim.verbs;

import nicsim.abi.QpModifyMask;

/** ibv_qp_attr_mask bits (identical in the kernel's ib_qp_attr_mask): which fields of a QpAttr a modify sets. */
public final class QpAttrMask {
    private QpAttrMask() {}

    public static final int STATE = 1, CUR_STATE = 1 << 1, EN_SQD_ASYNC_NOTIFY = 1 << 2, ACCESS_FLAGS = 1 << 3,
            PKEY_INDEX = 1 << 4, PORT = 1 << 5, QKEY = 1 << 6, AV = 1 << 7, PATH_MTU = 1 << 8, TIMEOUT = 1 << 9,
            RETRY_CNT = 1 << 10, RNR_RETRY = 1 << 11, RQ_PSN = 1 << 12, MAX_QP_RD_ATOMIC = 1 << 13, ALT_PATH = 1 << 14,
            MIN_RNR_TIMER = 1 << 15, SQ_PSN = 1 << 16, MAX_DEST_RD_ATOMIC = 1 << 17, PATH_MIG_STATE = 1 << 18,
            CAP = 1 << 19, DEST_QPN = 1 << 20;

    /** The names of the bits set in {@code mask}, for error messages ("AV|PATH_MTU"); unknown bits as hex. */
    public static String names(int mask) { return QpModifyMask.names(DeviceCodes.maskDown(mask)); }
}
