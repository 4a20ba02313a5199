package nicsim.verbs;

import java.util.List;

/** A receive work request (struct ibv_recv_wr). */
public final class RecvWr {
    private long wrId;
    private List<Sge> sgList = List.of();

    public RecvWr wrId(long v) { wrId = v; return this; }
    public RecvWr sgList(Sge... v) { sgList = List.of(v); return this; }
    public RecvWr sgList(List<Sge> v) { sgList = List.copyOf(v); return this; }
    public long wrId() { return wrId; }
    public List<Sge> sgList() { return sgList; }
}
