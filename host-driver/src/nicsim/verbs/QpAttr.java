package nicsim.verbs;

/** Queue pair attributes (struct ibv_qp_attr): what modify sets (per mask bit) and query returns. */
public final class QpAttr {
    private QpState qpState = QpState.RESET, curQpState = QpState.RESET;
    private int pkeyIndex, portNum = 1, qpAccessFlags, qkey, destQpNum, rqPsn, sqPsn, maxDestRdAtomic, maxRdAtomic,
            minRnrTimer, timeout, retryCnt, rnrRetry;
    private Mtu pathMtu = Mtu.MTU_1024;
    private AhAttr ahAttr = new AhAttr();
    private boolean enSqdAsyncNotify, sqDraining;

    public QpAttr qpState(QpState v) { qpState = v; return this; }
    public QpAttr curQpState(QpState v) { curQpState = v; return this; }
    public QpAttr pkeyIndex(int v) { pkeyIndex = v; return this; }
    public QpAttr portNum(int v) { portNum = v; return this; }
    public QpAttr qpAccessFlags(int v) { qpAccessFlags = v; return this; }
    public QpAttr qkey(int v) { qkey = v; return this; }
    public QpAttr pathMtu(Mtu v) { pathMtu = v; return this; }
    public QpAttr destQpNum(int v) { destQpNum = v; return this; }
    public QpAttr rqPsn(int v) { rqPsn = v; return this; }
    public QpAttr sqPsn(int v) { sqPsn = v; return this; }
    public QpAttr maxDestRdAtomic(int v) { maxDestRdAtomic = v; return this; }
    public QpAttr maxRdAtomic(int v) { maxRdAtomic = v; return this; }
    public QpAttr minRnrTimer(int v) { minRnrTimer = v; return this; }
    public QpAttr timeout(int v) { timeout = v; return this; }
    public QpAttr retryCnt(int v) { retryCnt = v; return this; }
    public QpAttr rnrRetry(int v) { rnrRetry = v; return this; }
    public QpAttr ahAttr(AhAttr v) { ahAttr = v; return this; }
    public QpAttr enSqdAsyncNotify(boolean v) { enSqdAsyncNotify = v; return this; }
    QpAttr sqDraining(boolean v) { sqDraining = v; return this; }

    public QpState qpState() { return qpState; }
    public QpState curQpState() { return curQpState; }
    public int pkeyIndex() { return pkeyIndex; }
    public int portNum() { return portNum; }
    public int qpAccessFlags() { return qpAccessFlags; }
    public int qkey() { return qkey; }
    public Mtu pathMtu() { return pathMtu; }
    public int destQpNum() { return destQpNum; }
    public int rqPsn() { return rqPsn; }
    public int sqPsn() { return sqPsn; }
    public int maxDestRdAtomic() { return maxDestRdAtomic; }
    public int maxRdAtomic() { return maxRdAtomic; }
    public int minRnrTimer() { return minRnrTimer; }
    public int timeout() { return timeout; }
    public int retryCnt() { return retryCnt; }
    public int rnrRetry() { return rnrRetry; }
    public AhAttr ahAttr() { return ahAttr; }
    public boolean enSqdAsyncNotify() { return enSqdAsyncNotify; }
    public boolean sqDraining() { return sqDraining; }
}
