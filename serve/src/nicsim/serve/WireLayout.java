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
                            long hcaCoreClock, long completionTimestampMask, long maxDmSize, int maxMcastGrp,
                            int maxMcastQpAttach) {}

    record QueryPortReply(int state, int maxMtu, int activeMtu, int gidTblLen, int portCapFlags, int maxMsgSz, int lid,
                          int smLid, int lmc, int maxVlNum, int smSl, int activeWidth, int activeSpeed, int physState,
                          int linkLayer, int pkeyTblLen) {}

    record CreateQpRequest(int pd, int xrcd, int qpType, int sendCq, int recvCq, int srq, @Count int maxSendWr,
                           @Count int maxRecvWr, @Count int maxSendSge, @Count int maxRecvSge, @Count int maxInlineData,
                           boolean sqSigAll, int dcType, long dctAccessKey) {}

    /** What a QP got of the capacities asked for (struct ibv_qp_cap): create_qp's reply and query_qp's carry it. */
    record QpCaps(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {}

    /** create_qp's reply: the QP's handle and number, and what it got. */
    record CreateQpReply(int handle, int qpNum, QpCaps cap) {}

    /** struct ibv_qp_attr's fields that modify_qp takes and query_qp gives, in both directions. */
    record QpAttr(int qpState, int curQpState, int pathMtu, int qkey, int rqPsn, int sqPsn, int destQpNum,
                  int qpAccessFlags, int pkeyIndex, int portNum, int maxRdAtomic, int maxDestRdAtomic, int minRnrTimer,
                  int timeout, int retryCnt, int rnrRetry, boolean sqDraining, int ahDlid, int ahSl, int ahSrcPathBits,
                  int ahStaticRate, boolean ahIsGlobal, int ahPortNum) {}

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

    /** One object named by its handle: a destroy's request, an allocation's reply. */
    record Handle(int handle) {}

    record QueryPortRequest(int port) {}

    /** modify_qp: the attributes under attr_mask count. */
    record ModifyQpRequest(int qp, int attrMask, QpAttr attr) {}

    record QueryQpRequest(int qp, int attrMask) {}

    /** query_qp's reply: the attributes, what the QP got, and the rest of its init attributes. */
    record QueryQpReply(QpAttr attr, QpCaps cap, boolean sqSigAll) {}

    record RegMrRequest(int pd, long addr, long length, long iova, int access) {}

    /** A new MR (reg_mr, reg_dm_mr): its handle and keys. */
    record MrReply(int handle, int lkey, int rkey) {}

    /** rereg_mr: pd counts only under IBV_REREG_MR_CHANGE_PD (NONE otherwise). */
    record ReregMrRequest(int mr, int flags, int pd, long addr, long length, int access) {}

    record MrKeys(int lkey, int rkey) {}

    record RegDmMrRequest(int pd, int dm, long dmOffset, long length, int access) {}

    /** advise_mr: num_sge {@link Sge}s follow. */
    record AdviseMrRequest(int pd, int advice, int flags) {}

    record AllocDmRequest(long length, int logAlignReq) {}

    /** memcpy_to_dm (length bytes follow) and memcpy_from_dm (the reply: u32 length, the bytes). */
    record DmCopyRequest(int dm, long dmOffset, @Count int length) {}

    /** create_ah: the GRH's destination GID, 16 bytes, follows. */
    record CreateAhRequest(int pd, int dlid, int sl, int portNum, boolean isGlobal) {}

    /** attach_mcast (attach) or detach_mcast: the QP and the group's LID; the MGID's 16 bytes follow. */
    record McastRequest(int qp, boolean attach, int lid) {}

    /** open_xrcd: by file (its device and inode) or of the program's own. */
    record OpenXrcdRequest(boolean file, long dev, long ino, int oflags) {}

    record OpenXrcdReply(int handle, int xrcdn) {}

    record CreateMkeyRequest(int pd, @Count int maxEntries, int createFlags) {}

    record CreateMkeyReply(int handle, int lkey) {}

    record AllocMwRequest(int pd, int type) {}

    record AllocMwReply(int handle, int rkey) {}

    record ImportMrReply(int lkey, int rkey, long length) {}

    record ImportDmReply(long length) {}

    /** create_cq: channel is the completion channel's socket number in the program (NONE: none). */
    record CreateCqRequest(@Count int cqe, int channel) {}

    record CreateCqReply(int handle, int cqe) {}

    record ResizeCqRequest(int cq, @Count int cqe) {}

    /** resize_cq's reply: what the CQ got. */
    record CqSize(int cqe) {}

    /** poll_cq: its reply is u32 n and n {@link WorkCompletion}s. */
    record PollCqRequest(int cq, @Count int max) {}

    record ReqNotifyCqRequest(int cq, boolean solicited) {}

    /** TIME's reply: the simulated clock. */
    record Time(long ps) {}

    record ModifySrqRequest(int srq, int srqAttrMask, int maxWr, int srqLimit) {}

    /** query_srq's reply. */
    record SrqAttr(int maxWr, int maxSge, int srqLimit) {}

    /**
     * A post (post_send, post_recv, post_srq_recv, post_srq_ops): the QP or SRQ, then n work requests.
     * A refusal's reply is u32: the index of the first one not posted.
     */
    record PostRequest(int target, int n) {}

    /** A receive work request: num_sge {@link Sge}s follow (u32 num_sge first). */
    record RecvWr(long wrId) {}

    /** One ibv_post_srq_ops operation: num_sge {@link Sge}s follow (u32 num_sge first). */
    record SrqOp(long wrId, int opcode, int flags, int unexpectedCnt, int handle, long recvWrId, long tag, long mask) {}

    record ConfigOffset(int offset) {}

    record ConfigValue(int value) {}

    record ConfigWrite(int offset, int value) {}

    /** A BAR0 access: PCI_MMIO_WRITE's length bytes follow, PCI_MMIO_READ's reply is {@link MmioReadStatus}. */
    record BarAccess(int bar, long offset, int length) {}

    /** 0, or 1 when the read was refused (a UR completion); the bytes read follow. */
    record MmioReadStatus(int status) {}

    /** PCI_DMA_MAP: with PCI_DMA_FIXED in flags, the {@link Iova} wanted follows. */
    record DmaMapRequest(long address, long length, int flags) {}

    record Iova(long iova) {}

    record PciWaitRequest(long picoseconds) {}

    /** PCI_WAIT's reply: the simulated time, then n u32 MSI-X vectors that fired. */
    record Interrupts(long now, int n) {}

    record PostedRingRequest(int fd, int ringBytes) {}

    record CqChannelRequest(int cqn, int channel) {}

    record UctxImportRequest(int kind, int handle) {}

    record UctxImportReply(long length) {}

    /** UCTX_CMD: inputWords u64 follow, then u32 the output words wanted; the reply is u64 words. */
    record UctxCmdRequest(int opcode, @Count int inputWords) {}

    /** UMAD_CMD: which command (Umad.REGISTER...), its fields following. */
    record UmadCommand(int kind) {}

    /** ib_user_mad_reg_req's fields: an agent for a management class's methods on QP0 or QP1. */
    record UmadRegister(int qpn, int mgmtClass, int classVersion, long methodsLo, long methodsHi, int rmppVersion) {}

    /** REGISTER's reply, UNREGISTER's request. */
    record UmadAgent(int agent) {}

    /** A MAD sent on an agent: struct ib_user_mad's header fields (in host order), then length MAD bytes. */
    record UmadSend(int agent, int timeoutMs, int retries, int lid, int qpn, int qkey, int length) {}

    /** UMAD_EVENTS: the file the connection reads MADs for, and its process. */
    record UmadEventsRequest(int file, int pid) {}

    /** RDMA_RES, RDMA_STAT: the node whose adapter is asked about. */
    record NodeRequest(int node) {}

    /**
     * RDMA_RES's reply, per kind a u32 count and the rows: a QP (its type and state in the verbs' numbers), a CQ,
     * an MR (by its key) and a PD; users counts what holds the object, pid its owner (0: the kernel's).
     */
    record ResQp(int qpn, int type, int state, int pd, int destQpn, int sqPsn, int rqPsn, int pid) {}

    record ResCq(int cqn, int cqe, int users, int pid) {}

    /** An MR, and what on-demand paging did to it (`rdma statistic mr`'s counters, as mlx5 keeps them per MR). */
    record ResMr(int key, int pd, long start, long length, int pid, long pageFaults, long pageInvalidations,
                 long pagePrefetches) {}

    record ResPd(int pdn, int users, int pid) {}

    /**
     * One of RDMA_STAT's rows: a counter of the node's adapter by its name in the model (Firmware.retransmits...;
     * a name is cut at {@link WireCodec#TEXT_BYTES} less its NUL, as any text field) and its value.
     */
    record StatCounter(String name, long value) {}

    /** RDMA_QSTAT: the node, what to do (RdmaCounters.SHOW...), and its QPN, counter (-1: a new one) and mask. */
    record QstatRequest(int node, int action, int qpn, int counter, int mask) {}

    /** RDMA_QSTAT SHOW's reply: the port's counter mode and auto mask, and how many {@link QstatCounter}s follow. */
    record QstatShow(int mode, int mask, int counters) {}

    /**
     * One counter of SHOW's reply: its id, mode and mask, the QP type and pid it gathers by in auto mode, and how
     * many QPs it holds (their QPNs follow, u32 each, then u32 n and n {@link StatCounter}s, its values).
     */
    record QstatCounter(int id, int mode, int mask, int qpType, int pid, int qps) {}

    /** RDMA_QSTAT BIND's reply: the counter the QP was bound to. */
    record QstatBound(int counter) {}

    /** PORT_LINK: the node whose link changes, and whether it goes up (1) or down (0). */
    record PortLinkRequest(int node, int up) {}

    /** One context of CONTEXTS' reply (u32 n, n of these): its session, opener, command file there, node. */
    record ContextEntry(int session, int pid, int cmdFd, int node) {}

    /** EVENTS and CHANNEL: the context's session and the process; CHANNEL's {@link ChannelNumber} follows. */
    record EventFileRequest(int session, int pid) {}

    /** A completion channel's number: its socket's in the program, which CQs name it by. */
    record ChannelNumber(int channel) {}

    /** CM_EVENTS: the RDMA CM file's channel and its process. */
    record CmEventsRequest(int channel, int pid) {}

    /** CM_CMD: a write(2) to the rdma_cm file: struct rdma_ucm_cmd_hdr's fields; in bytes follow. */
    record CmCommand(int command, int out, int in) {}

    /** SET_OPTION's value, after its command: optlen bytes follow. */
    record OptionLength(int optlen) {}

    /** HELLO: a program's context; the program's path (u32 length, bytes) and an {@link OpenArgument} follow. */
    record HelloRequest(int version, int node, int pid, int socketFd, int cmdFd) {}

    /** After an opening's program path: HELLO's and PCI_OPEN's flags, or UCTX_OPEN's session. */
    record OpenArgument(int value) {}

    /** What an opening made: HELLO's session, UMAD_OPEN's file, CM_OPEN's channel. */
    record Opened(int number) {}

    /** JOIN: the session a process shares; the program's path follows. */
    record JoinRequest(int session, int parentPid, int pid, int socketFd) {}

    /** PCI_OPEN and UCTX_OPEN: the program's path and an {@link OpenArgument} follow. */
    record PciOpenRequest(int version, int node, int pid, int socketFd) {}

    record PciOpenReply(int configBytes, long bar0Size, int msixVectors, long msiAddress) {}

    /** UMAD_OPEN: the file's number in the program; the program's path follows. */
    record UmadOpenRequest(int node, int port, int pid, int file) {}

    /**
     * CM_OPEN: the numbers of the file's event socket and of its commands' socket in the program (a thread asleep
     * reading the latter waits for a command's answer: it runs); the program's path follows.
     */
    record CmOpenRequest(int node, int pid, int eventFile, int commandFile) {}

    /**
     * An op's messages: its request's and its reply's fixed parts (null: nothing fixed), and what
     * follows them, in words ("" for nothing). An op not yet declared here is {@link #byHand}.
     */
    record Message(Class<? extends Record> request, Class<? extends Record> reply, String rest) {
        /** An op whose fields both sides still read and write one by one, and why. */
        static Message byHand(String why) { return new Message(null, null, BY_HAND + why); }

        boolean declared() { return !rest.startsWith(BY_HAND); }
    }

    private static final String BY_HAND = "by hand: ";

    /** What follows an opening's fixed fields. */
    private static final String PATH = "request: the program's path (u32 length, bytes)";

    /** Each op's messages. A switch without default: an op added to {@link Wire.Op} does not compile until here. */
    static Message of(Wire.Op op) {
        String posted = "n work requests; a refusal's reply: u32 index of the first not posted";
        String sges = "u32 num_sge, num_sge Sge";
        return switch (op) {
            case QUERY_DEVICE -> new Message(null, QueryDeviceReply.class, "");
            case QUERY_PORT -> new Message(QueryPortRequest.class, QueryPortReply.class, "");
            case ALLOC_PD -> new Message(null, Handle.class, "");
            case DEALLOC_PD, DEREG_MR, DESTROY_CQ, DESTROY_QP, DESTROY_AH, DESTROY_SRQ, CLOSE_XRCD, DESTROY_MKEY,
                 DEALLOC_MW, FREE_DM, IMPORT_PD -> new Message(Handle.class, null, "");
            case REG_MR -> new Message(RegMrRequest.class, MrReply.class, "");
            case REREG_MR -> new Message(ReregMrRequest.class, MrKeys.class, "");
            case REG_DM_MR -> new Message(RegDmMrRequest.class, MrReply.class, "");
            case ADVISE_MR -> new Message(AdviseMrRequest.class, null, "request: " + sges);
            case ALLOC_DM -> new Message(AllocDmRequest.class, Handle.class, "");
            case MEMCPY_TO_DM -> new Message(DmCopyRequest.class, null, "request: length bytes");
            case MEMCPY_FROM_DM -> new Message(DmCopyRequest.class, null, "reply: u32 length, length bytes");
            case CREATE_AH -> new Message(CreateAhRequest.class, Handle.class,
                    "request: the GRH's destination GID, 16 bytes");
            case MCAST -> new Message(McastRequest.class, null, "request: the MGID, 16 bytes");
            case OPEN_XRCD -> new Message(OpenXrcdRequest.class, OpenXrcdReply.class, "");
            case CREATE_MKEY -> new Message(CreateMkeyRequest.class, CreateMkeyReply.class, "");
            case ALLOC_MW -> new Message(AllocMwRequest.class, AllocMwReply.class, "");
            case IMPORT_MR -> new Message(Handle.class, ImportMrReply.class, "");
            case IMPORT_DM -> new Message(Handle.class, ImportDmReply.class, "");
            case CREATE_CQ -> new Message(CreateCqRequest.class, CreateCqReply.class, "");
            case RESIZE_CQ -> new Message(ResizeCqRequest.class, CqSize.class, "");
            case POLL_CQ -> new Message(PollCqRequest.class, null, "reply: u32 n, n WorkCompletion");
            case REQ_NOTIFY_CQ -> new Message(ReqNotifyCqRequest.class, null, "");
            case TIME -> new Message(null, Time.class, "");
            case CREATE_QP -> new Message(CreateQpRequest.class, CreateQpReply.class, "");
            case MODIFY_QP -> new Message(ModifyQpRequest.class, null, "");
            case QUERY_QP -> new Message(QueryQpRequest.class, QueryQpReply.class, "");
            case POST_SEND -> new Message(PostRequest.class, null, posted + ", each SendWr, " + sges
                    + " (with IBV_SEND_INLINE, then their bytes), Umr and its entries UmrEntry, WindowBind");
            case POST_RECV, POST_SRQ_RECV -> new Message(PostRequest.class, null, posted + ", each RecvWr, " + sges);
            case CREATE_SRQ -> new Message(CreateSrqRequest.class, CreateSrqReply.class, "");
            case MODIFY_SRQ -> new Message(ModifySrqRequest.class, null, "");
            case QUERY_SRQ -> new Message(Handle.class, SrqAttr.class, "");
            case POST_SRQ_OPS -> new Message(PostRequest.class, null, posted + ", each SrqOp, " + sges
                    + "; the reply: u32 per operation, a TAG_ADD's handle");
            case HELLO -> new Message(HelloRequest.class, Opened.class, PATH + ", OpenArgument (flags)");
            case JOIN -> new Message(JoinRequest.class, null, PATH);
            case EVENTS -> new Message(EventFileRequest.class, null, "no reply: events, written as uverbs writes them");
            case CHANNEL -> new Message(EventFileRequest.class, null, "request: ChannelNumber; the reply, once, "
                    + "before events written as uverbs writes them");
            case CONTEXTS -> new Message(null, null, "reply: u32 n, n ContextEntry");
            case RDMA_RES -> new Message(NodeRequest.class, null, "reply: u32 n, n ResQp; u32 n, n ResCq; "
                    + "u32 n, n ResMr; u32 n, n ResPd");
            case RDMA_STAT -> new Message(NodeRequest.class, null, "reply: u32 n, n StatCounter");
            case RDMA_QSTAT -> new Message(QstatRequest.class, null, "reply: SHOW's QstatShow, each QstatCounter, "
                    + "its QPNs u32, u32 n, n StatCounter; BIND's QstatBound; nothing for the others");
            case PORT_LINK -> new Message(PortLinkRequest.class, null, "");
            case CM_EVENTS -> new Message(CmEventsRequest.class, null, "no reply: a byte per event ready");
            case CM_CMD -> new Message(CmCommand.class, null, "request: in bytes, the kernel's struct rdma_ucm_* "
                    + "(CmLayout), then SET_OPTION's OptionLength and value, MIGRATE_ID's source ChannelNumber; reply: "
                    + "the command's response, out bytes at most");
            case CM_OPEN -> new Message(CmOpenRequest.class, Opened.class, PATH);
            case UMAD_CMD -> new Message(UmadCommand.class, null, "request, by kind: UmadRegister (its reply "
                    + "UmadAgent), UmadAgent (unregister), UmadSend and its MAD bytes, nothing (enable P_Keys)");
            case UMAD_EVENTS -> new Message(UmadEventsRequest.class, null, "then, unasked, each MAD the file reads "
                    + "(struct ib_user_mad)");
            case UMAD_OPEN -> new Message(UmadOpenRequest.class, Opened.class, PATH);
            case PCI_CONFIG_READ -> new Message(ConfigOffset.class, ConfigValue.class, "");
            case PCI_CONFIG_WRITE -> new Message(ConfigWrite.class, null, "");
            case PCI_MMIO_READ -> new Message(BarAccess.class, MmioReadStatus.class, "reply: length bytes");
            case PCI_MMIO_WRITE -> new Message(BarAccess.class, null, "request: length bytes; no reply (posted)");
            case PCI_DMA_MAP -> new Message(DmaMapRequest.class, Iova.class, "request: Iova with PCI_DMA_FIXED");
            case PCI_DMA_UNMAP -> new Message(Iova.class, null, "");
            case PCI_WAIT -> new Message(PciWaitRequest.class, Interrupts.class, "reply: n u32 vectors");
            case PCI_POSTED_RING -> new Message(PostedRingRequest.class, null, "");
            case UCTX_CQ_CHANNEL -> new Message(CqChannelRequest.class, null, "");
            case UCTX_IMPORT -> new Message(UctxImportRequest.class, UctxImportReply.class, "");
            case UCTX_CMD -> new Message(UctxCmdRequest.class, null, "request: inputWords u64, u32 output words "
                    + "wanted; reply: the output header and words, u64 each");
            case PCI_OPEN, UCTX_OPEN -> new Message(PciOpenRequest.class, PciOpenReply.class, PATH
                    + ", OpenArgument (PCI_OPEN: flags; UCTX_OPEN: the session)");
        };
    }

    /** Every declaration, in the order the C header gives them (one within another after it). */
    static final List<Class<? extends Record>> ALL = List.of(QueryDeviceReply.class, QueryPortReply.class,
            CreateQpRequest.class, QpCaps.class, CreateQpReply.class, QpAttr.class, CreateSrqRequest.class,
            CreateSrqReply.class, SendWr.class, Sge.class, Umr.class, UmrEntry.class, WindowBind.class,
            WorkCompletion.class, Handle.class, QueryPortRequest.class, ModifyQpRequest.class, QueryQpRequest.class,
            QueryQpReply.class, RegMrRequest.class, MrReply.class, ReregMrRequest.class, MrKeys.class,
            RegDmMrRequest.class, AdviseMrRequest.class, AllocDmRequest.class, DmCopyRequest.class,
            CreateAhRequest.class, McastRequest.class, OpenXrcdRequest.class, OpenXrcdReply.class,
            CreateMkeyRequest.class, CreateMkeyReply.class, AllocMwRequest.class, AllocMwReply.class,
            ImportMrReply.class, ImportDmReply.class, CreateCqRequest.class, CreateCqReply.class, ResizeCqRequest.class,
            CqSize.class, PollCqRequest.class, ReqNotifyCqRequest.class, Time.class, ModifySrqRequest.class,
            SrqAttr.class, PostRequest.class, RecvWr.class, SrqOp.class, ConfigOffset.class, ConfigValue.class,
            ConfigWrite.class, BarAccess.class, MmioReadStatus.class, DmaMapRequest.class, Iova.class,
            PciWaitRequest.class, Interrupts.class, PostedRingRequest.class, CqChannelRequest.class,
            UctxImportRequest.class, UctxImportReply.class, UctxCmdRequest.class, UmadCommand.class, UmadRegister.class,
            UmadAgent.class, UmadSend.class, UmadEventsRequest.class, NodeRequest.class, ResQp.class, ResCq.class,
            ResMr.class, ResPd.class, StatCounter.class, QstatRequest.class, QstatShow.class, QstatCounter.class,
            QstatBound.class, PortLinkRequest.class, ContextEntry.class,
            EventFileRequest.class, ChannelNumber.class, CmEventsRequest.class, CmCommand.class, OptionLength.class,
            HelloRequest.class, OpenArgument.class, Opened.class, JoinRequest.class, PciOpenRequest.class,
            PciOpenReply.class, UmadOpenRequest.class, CmOpenRequest.class);

    /** Every declaration as a packed C struct, with its size asserted. */
    static String cStructs() { return WireCodec.cStructs(ALL); }
}
