package nicsim.verbs;

import java.util.List;

/** A send work request (struct ibv_send_wr): RDMA fields, atomic fields, and the UD destination. */
public final class SendWr {
    private long wrId, remoteAddr, compareAdd, swap;
    private WrOpcode opcode = WrOpcode.SEND;
    private int sendFlags, immData, rkey, remoteQpn, remoteQkey;
    private List<Sge> sgList = List.of();
    private AddressHandle ah;

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
}
