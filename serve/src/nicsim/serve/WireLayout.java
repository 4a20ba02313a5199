package nicsim.serve;

import java.util.List;
import nicsim.serve.WireCodec.Count;

/**
 * The fixed parts of the messages, each declared once as a record: the simulator reads and writes
 * them as these records ({@link Wire.In#read}, {@link Wire.Out#put}), and the provider's C structs
 * are generated from them ({@link #cStructs}), so neither side can move, add or drop a field without
 * the other. How a record maps to bytes and to C: {@link WireCodec}.
 */
final class WireLayout {
    private WireLayout() {}

    record QueryDeviceReply(long nodeGuid, long sysImageGuid, long maxMrSize, long pageSizeCap, int vendorId,
                            int vendorPartId, int hwVer, int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe,
                            int maxMr, int maxPd, int maxQpRdAtom, int maxQpInitRdAtom, int maxSrq, int maxSrqWr,
                            int maxSrqSge, int maxAh, int atomicCap, int physPortCnt, int deviceCapFlags, String fwVer,
                            int tmMaxNumTags, int tmMaxOps, int tmMaxSge, int tmMaxRndvHdrSize, int tmFlags,
                            long odpGeneralCaps, int odpRcCaps, int odpUcCaps, int odpUdCaps, int odpXrcCaps,
                            long hcaCoreClock, long completionTimestampMask, long maxDmSize) {}

    record QueryPortReply(int state, int maxMtu, int activeMtu, int gidTblLen, int portCapFlags, int maxMsgSz, int lid,
                          int smLid, int lmc, int maxVlNum, int smSl, int activeWidth, int activeSpeed, int physState,
                          int linkLayer, int pkeyTblLen) {}

    record CreateQpRequest(int pd, int xrcd, int qpType, int sendCq, int recvCq, int srq, @Count int maxSendWr,
                           @Count int maxRecvWr, @Count int maxSendSge, @Count int maxRecvSge, @Count int maxInlineData,
                           boolean sqSigAll, int dcType, long dctAccessKey) {}

    /** create_qp's reply: the QP's handle and number, then what it got ({@link QpCaps}). */
    record CreateQpReply(int handle, int qpNum) {}

    /** What a QP got of the capacities asked for (struct ibv_qp_cap): create_qp's reply and query_qp's carry it. */
    record QpCaps(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {}

    /** struct ibv_qp_attr's fields that modify_qp takes and query_qp gives, in both directions. */
    record QpAttr(int qpState, int curQpState, int pathMtu, int qkey, int rqPsn, int sqPsn, int destQpNum,
                  int qpAccessFlags, int pkeyIndex, int portNum, int maxRdAtomic, int maxDestRdAtomic, int minRnrTimer,
                  int timeout, int retryCnt, int rnrRetry, boolean sqDraining, int ahDlid, int ahSl, int ahSrcPathBits,
                  int ahStaticRate, boolean ahIsGlobal, int ahPortNum) {}

    /** What query_qp gives last, after the attributes and the {@link QpCaps}: the rest of its init attributes. */
    record QpInitAttr(boolean sqSigAll) {}

    record CreateSrqRequest(int pd, @Count int maxWr, @Count int maxSge, @Count int srqLimit, int srqType, int xrcd,
                            int cq, @Count int tmMaxNumTags, @Count int tmMaxOps) {}

    record CreateSrqReply(int handle, int maxWr, int maxSge, int srqNum) {}

    /** A send work request's fixed part: its header and its destination (UD address, XRC SRQ, DC target). */
    record SendWr(long wrId, int opcode, int sendFlags, int immData, long remoteAddr, int rkey, long compareAdd,
                  long swap, int ah, int remoteQpn, int remoteQkey, int invalidateRkey, int remoteSrqn, int dcAh,
                  int dcRemoteDctn, long dcRemoteDcKey) {}

    /** One scatter/gather entry (struct ibv_sge). */
    record Sge(long addr, int length, int lkey) {}

    /** A send work request's layout UMR (mkey NONE: none), its entries following. */
    record Umr(int mkey, int access, int repeat, int entries) {}

    /** One entry of a layout UMR. */
    record UmrEntry(long addr, int length, int lkey, int skip) {}

    /** A send work request's window bind (mw NONE: none). */
    record WindowBind(int mw, int rkey, int mr, long addr, long length, int access) {}

    /** One completion of a poll_cq reply (struct ibv_wc, with the tag-matching and timestamp extras). */
    record WorkCompletion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int qpNum,
                          int srcQp, int wcFlags, int pkeyIndex, int slid, int sl, int dlidPathBits, long tmTag,
                          int tmPriv, long timestamp) {}

    /** Every declaration, in the order the C header gives them (one within another after it). */
    static final List<Class<? extends Record>> ALL = List.of(QueryDeviceReply.class, QueryPortReply.class,
            CreateQpRequest.class, CreateQpReply.class, QpCaps.class, QpAttr.class, QpInitAttr.class,
            CreateSrqRequest.class, CreateSrqReply.class, SendWr.class, Sge.class, Umr.class, UmrEntry.class,
            WindowBind.class, WorkCompletion.class);

    /** Every declaration as a packed C struct, with its size asserted. */
    static String cStructs() { return WireCodec.cStructs(ALL); }
}
