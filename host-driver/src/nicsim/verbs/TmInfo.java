package nicsim.verbs;

import nicsim.abi.BigEndian;

/**
 * The headers a tagged message starts with (infiniband/tm_types.h): the 16-byte tag-matching
 * header (operation, app context, tag; big-endian) and, for a rendezvous request, the 16-byte
 * rendezvous header (the sender's buffer: address, rkey, length). A sender puts them in front of
 * its payload; a SEND is all it takes.
 */
public final class TmInfo {
    private TmInfo() {}

    /** Bytes of the tag-matching header (struct ibv_tmh) and of the rendezvous header (struct ibv_rvh). */
    public static final int TMH_BYTES = 16, RVH_BYTES = 16;

    /**
     * A TMH for {@code op} with {@code tag} and the sender's {@code appCtx} (ibv_pack_tm_info without a rendezvous
     * header).
     */
    public static byte[] pack(TmhOp op, long tag, int appCtx) {
        byte[] b = new byte[TMH_BYTES];
        b[0] = (byte) DeviceCodes.device(op).value();
        BigEndian.put32(b, 4, appCtx);
        BigEndian.put64(b, 8, tag);
        return b;
    }

    /**
     * A TMH and a rendezvous header naming {@code length} bytes at {@code va} under {@code rkey} (ibv_pack_tm_info
     * with an RVH).
     */
    public static byte[] pack(TmhOp op, long tag, int appCtx, long va, int rkey, int length) {
        byte[] b = new byte[TMH_BYTES + RVH_BYTES];
        System.arraycopy(pack(op, tag, appCtx), 0, b, 0, TMH_BYTES);
        BigEndian.put64(b, 16, va);
        BigEndian.put32(b, 24, rkey);
        BigEndian.put32(b, 28, length);
        return b;
    }
}
