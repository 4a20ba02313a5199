package nicsim.verbs;

/** Queue pair creation attributes (struct ibv_qp_init_attr with its cap). */
public final class QpInitAttr {
    private QpType qpType = QpType.RC;
    private CompletionQueue sendCq, recvCq;
    private SharedReceiveQueue srq;
    private Xrcd xrcd;
    private int logStrideBytes, logNumStrides;
    private int maxSendWr = 1, maxRecvWr = 1, maxSendSge = 1, maxRecvSge = 1, maxInlineData;
    private boolean sqSigAll, scatterToCqe;
    private DcType dcType;
    private long dctAccessKey;
    private int specialQp = -1;

    public QpInitAttr qpType(QpType v) { qpType = v; return this; }
    public QpInitAttr sendCq(CompletionQueue v) { sendCq = v; return this; }
    public QpInitAttr recvCq(CompletionQueue v) { recvCq = v; return this; }
    public QpInitAttr srq(SharedReceiveQueue v) { srq = v; return this; }
    public QpInitAttr maxSendWr(int v) { maxSendWr = v; return this; }
    public QpInitAttr maxRecvWr(int v) { maxRecvWr = v; return this; }
    public QpInitAttr maxSendSge(int v) { maxSendSge = v; return this; }
    public QpInitAttr maxRecvSge(int v) { maxRecvSge = v; return this; }
    public QpInitAttr maxInlineData(int v) { maxInlineData = v; return this; }
    public QpInitAttr sqSigAll(boolean v) { sqSigAll = v; return this; }
    /**
     * Small receives may be placed in the CQE instead of the buffer (MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE); the
     * library copies them on.
     */
    public QpInitAttr scatterToCqe(boolean v) { scatterToCqe = v; return this; }
    public boolean scatterToCqe() { return scatterToCqe; }
    /**
     * A striding receive queue (UD; mlx5's multi-packet RQ, the seed's streaming receive): each
     * receive WQE is one buffer of 2^logNumStrides strides of 2^logStrideBytes bytes, and messages
     * fill it one after another, each taking only the strides it needs.
     */
    public QpInitAttr stridingRq(int logStrideBytes, int logNumStrides) {
        this.logStrideBytes = logStrideBytes;
        this.logNumStrides = logNumStrides;
        return this;
    }
    public int logStrideBytes() { return logStrideBytes; }
    public int logNumStrides() { return logNumStrides; }
    /** An XRC_RECV QP's XRC domain (ibv_qp_init_attr_ex's xrcd). */
    public QpInitAttr xrcd(Xrcd v) { xrcd = v; return this; }
    public Xrcd xrcd() { return xrcd; }

    /** A DRIVER QP's DC half (mlx5dv_qp_init_attr's dc_init_attr.dc_type). */
    public QpInitAttr dcType(DcType v) { dcType = v; return this; }
    public DcType dcType() { return dcType; }
    /** A DC target's access key, which every initiator's request must carry (dc_init_attr.dct_access_key). */
    public QpInitAttr dctAccessKey(long v) { dctAccessKey = v; return this; }
    public long dctAccessKey() { return dctAccessKey; }

    /**
     * The port's QP0 (0, the SMI) or QP1 (1, the GSI) for a kernel consumer's MAD layer: a UD QP made by CREATE_QP
     * of type 0 or 1, the kernel's IB_QPT_SMI and IB_QPT_GSI (libibverbs has no such type; -1: an ordinary QP).
     */
    public QpInitAttr specialQp(int v) { specialQp = v; return this; }
    public int specialQp() { return specialQp; }

    public QpType qpType() { return qpType; }
    public CompletionQueue sendCq() { return sendCq; }
    public CompletionQueue recvCq() { return recvCq; }
    public SharedReceiveQueue srq() { return srq; }
    public int maxSendWr() { return maxSendWr; }
    public int maxRecvWr() { return maxRecvWr; }
    public int maxSendSge() { return maxSendSge; }
    public int maxRecvSge() { return maxRecvSge; }
    public int maxInlineData() { return maxInlineData; }
    public boolean sqSigAll() { return sqSigAll; }
}
