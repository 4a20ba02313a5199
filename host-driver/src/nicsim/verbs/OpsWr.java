package nicsim.verbs;

import java.util.List;

/**
 * A tag-list operation for a tag-matching SRQ (struct ibv_ops_wr): TAG_ADD a tagged buffer (its
 * scatter list, the tag and mask it matches, the wr_id its receive completion will carry), TAG_DEL
 * the entry with {@link #handle()}, or TAG_SYNC; each reports software's count of unexpected
 * messages. After a TAG_ADD is posted, {@link #handle()} names the new entry.
 */
public final class OpsWr {
    /** flags (enum ibv_ops_flags): ask for a completion; (TAG_SYNC) the count is current. */
    public static final int SIGNALED = 1, TM_SYNC = 2;

    private long wrId, tag, mask, recvWrId;
    private OpsWrOpcode opcode = OpsWrOpcode.TAG_ADD;
    private int flags, handle, unexpectedCnt;
    private List<Sge> sgList = List.of();

    public OpsWr wrId(long v) { wrId = v; return this; }
    public OpsWr opcode(OpsWrOpcode v) { opcode = v; return this; }
    public OpsWr flags(int v) { flags = v; return this; }
    public OpsWr tag(long v) { tag = v; return this; }
    public OpsWr mask(long v) { mask = v; return this; }
    public OpsWr recvWrId(long v) { recvWrId = v; return this; }
    public OpsWr sgList(Sge... v) { sgList = List.of(v); return this; }
    public OpsWr handle(int v) { handle = v; return this; }
    public OpsWr unexpectedCnt(int v) { unexpectedCnt = v; return this; }

    public long wrId() { return wrId; }
    public OpsWrOpcode opcode() { return opcode; }
    public int flags() { return flags; }
    public long tag() { return tag; }
    public long mask() { return mask; }
    public long recvWrId() { return recvWrId; }
    public List<Sge> sgList() { return sgList; }
    public int handle() { return handle; }
    public int unexpectedCnt() { return unexpectedCnt; }
}
