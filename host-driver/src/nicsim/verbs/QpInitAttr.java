package nicsim.verbs;

/** Queue pair creation attributes (struct ibv_qp_init_attr with its cap). */
public final class QpInitAttr {
    private QpType qpType = QpType.RC;
    private CompletionQueue sendCq, recvCq;
    private SharedReceiveQueue srq;
    private Xrcd xrcd;
    private int maxSendWr = 1, maxRecvWr = 1, maxSendSge = 1, maxRecvSge = 1, maxInlineData;
    private boolean sqSigAll, scatterToCqe;

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
    /** Small receives may be placed in the CQE instead of the buffer (MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE); the library copies them on. */
    public QpInitAttr scatterToCqe(boolean v) { scatterToCqe = v; return this; }
    public boolean scatterToCqe() { return scatterToCqe; }
    /** An XRC_RECV QP's XRC domain (ibv_qp_init_attr_ex's xrcd). */
    public QpInitAttr xrcd(Xrcd v) { xrcd = v; return this; }
    public Xrcd xrcd() { return xrcd; }

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
