package nicsim.verbs;

import java.util.List;

/** A send work request (struct ibv_send_wr): RDMA fields, atomic fields, and the UD destination. */
public final class SendWr {
    private long wrId, remoteAddr, compareAdd, swap;
    private WrOpcode opcode = WrOpcode.SEND;
    private int sendFlags, immData, rkey, remoteQpn, remoteQkey;
    private List<Sge> sgList = List.of();
    private AddressHandle ah;
    private int invalidateRkey;
    private MemoryWindow mw;
    private int bindRkey, bindAccess;
    private MemoryRegion bindMr;
    private long bindAddr, bindLength;
    private int xrcRemoteSrqNum;
    private AddressHandle dcAh;
    private int dcRemoteDctn;
    private long dcRemoteKey;
    private Mkey mkey;
    private int mkeyAccess, repeatCount;
    private List<Sge> mrPieces = List.of();
    private List<MrInterleaved> interleaved = List.of();

    public SendWr wrId(long v) { wrId = v; return this; }
    public SendWr opcode(WrOpcode v) { opcode = v; return this; }
    public SendWr sendFlags(int v) { sendFlags = v; return this; }
    public SendWr sgList(Sge... v) { sgList = List.of(v); return this; }
    public SendWr sgList(List<Sge> v) { sgList = List.copyOf(v); return this; }
    public SendWr immData(int v) { immData = v; return this; }
    public SendWr remoteAddr(long v) { remoteAddr = v; return this; }
    public SendWr rkey(int v) { rkey = v; return this; }
    public SendWr compareAdd(long v) { compareAdd = v; return this; }
    public SendWr swap(long v) { swap = v; return this; }
    public SendWr ah(AddressHandle v) { ah = v; return this; }
    public SendWr remoteQpn(int v) { remoteQpn = v; return this; }
    public SendWr remoteQkey(int v) { remoteQkey = v; return this; }
    /** XRC: the XRC SRQ of the target's domain this request is for (wr.qp_type.xrc.remote_srqn). */
    public SendWr xrcRemoteSrqNum(int v) { xrcRemoteSrqNum = v; return this; }
    /**
     * DC: the target of a DC initiator's request (mlx5dv_wr_set_dc_addr): the target's address,
     * its DCT number and the DC access key it was created with.
     */
    public SendWr dcAddr(AddressHandle ah, int remoteDctn, long remoteDcKey) {
        dcAh = ah;
        dcRemoteDctn = remoteDctn;
        dcRemoteKey = remoteDcKey;
        return this;
    }
    /** The rkey LOCAL_INV or SEND_WITH_INV invalidates (wr.invalidate_rkey). */
    public SendWr invalidateRkey(int v) { invalidateRkey = v; return this; }

    /**
     * BIND_MW (wr.bind_mw): bind {@code mw} with its new {@code rkey} to {@code length} bytes at
     * {@code addr} of {@code mr}, with remote {@code access} flags. Sets the opcode.
     */
    public SendWr bindMw(MemoryWindow mw, int rkey, MemoryRegion mr, long addr, long length, int access) {
        this.opcode = WrOpcode.BIND_MW;
        this.mw = mw;
        this.bindRkey = rkey;
        this.bindMr = mr;
        this.bindAddr = addr;
        this.bindLength = length;
        this.bindAccess = access;
        return this;
    }

    /**
     * A UMR (mlx5dv_wr_mr_list) giving indirect mkey {@code m} the layout of {@code pieces}, one
     * after another, as one zero-based region with {@code access} flags. RC QPs only. Sets the
     * opcode (DRIVER1); its completion is WcOpcode.DRIVER1 (MLX5DV_WC_UMR).
     */
    public SendWr mrList(Mkey m, int access, Sge... pieces) {
        opcode = WrOpcode.DRIVER1;
        mkey = m;
        mkeyAccess = access;
        repeatCount = 0;
        mrPieces = List.of(pieces);
        interleaved = List.of();
        return this;
    }

    /**
     * A UMR (mlx5dv_wr_mr_interleaved) giving {@code m} the layout of {@code pieces} taken in
     * turn, {@code repeatCount} times, each piece's bytes of the next repetition starting
     * {@code bytesCount + bytesSkip} further: strided gather and scatter (a matrix column). The
     * mkey needs an entry more than the pieces, for the repeat block, as on mlx5.
     */
    public SendWr mrInterleaved(Mkey m, int access, int repeatCount, MrInterleaved... pieces) {
        opcode = WrOpcode.DRIVER1;
        mkey = m;
        mkeyAccess = access;
        this.repeatCount = repeatCount;
        mrPieces = List.of();
        interleaved = List.of(pieces);
        return this;
    }

    public Mkey mkey() { return mkey; }
    public int mkeyAccess() { return mkeyAccess; }
    public int repeatCount() { return repeatCount; }
    public List<Sge> mrPieces() { return mrPieces; }
    public List<MrInterleaved> interleaved() { return interleaved; }

    public long wrId() { return wrId; }
    public WrOpcode opcode() { return opcode; }
    public int sendFlags() { return sendFlags; }
    public List<Sge> sgList() { return sgList; }
    public int immData() { return immData; }
    public long remoteAddr() { return remoteAddr; }
    public int rkey() { return rkey; }
    public long compareAdd() { return compareAdd; }
    public long swap() { return swap; }
    public AddressHandle ah() { return ah; }
    public int remoteQpn() { return remoteQpn; }
    public int remoteQkey() { return remoteQkey; }
    public int invalidateRkey() { return invalidateRkey; }
    public MemoryWindow mw() { return mw; }
    public int bindRkey() { return bindRkey; }
    public MemoryRegion bindMr() { return bindMr; }
    public long bindAddr() { return bindAddr; }
    public long bindLength() { return bindLength; }
    public int bindAccess() { return bindAccess; }
    public int xrcRemoteSrqNum() { return xrcRemoteSrqNum; }
    public AddressHandle dcAh() { return dcAh; }
    public int dcRemoteDctn() { return dcRemoteDctn; }
    public long dcRemoteKey() { return dcRemoteKey; }
}
