package nicsim.abi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The send WQE's segments (docs/sources.md#mlx5-send-wqe), one definition for the driver, which encodes, and the
 * firmware, which decodes: ctrl (16 B); for UD and for a DC initiator an address vector (48 B;
 * mlx5_wqe_datagram_seg, whose first 8 bytes hold the qkey for UD, the DC access key for DC); for XRC the XRC segment
 * (16 B: the destination XRC SRQ number in bytes 0..3, mlx5_wqe_xrc_seg); for RDMA a remote-address
 * segment (16 B); for atomics an atomic segment (16 B); then data segments (16 B each: byte count,
 * lkey, address) or one inline segment (4-byte length | 0x80000000, then the bytes, padded to 16).
 * Multi-byte fields are big-endian. A WQE that does not parse is {@link Malformed}, with a syndrome
 * naming the field (the firmware completes it with LOC_QP_OP_ERR).
 */
public final class WqeFormat {
    private WqeFormat() {}

    public static final int INLINE_FLAG = 0x8000_0000;
    /** fm_ce_se bits (docs/sources.md#mlx5-sizes). */
    public static final int SOLICITED = 0x02, CQ_UPDATE = 0x08, SMALL_FENCE = 0x20, FENCE = 0x80;

    /*
     * Byte offsets of each segment's fields, from the segment's start, multi-byte ones big-endian. The model encodes
     * and decodes WQEs through these; DeviceHeader gives them to the C drivers (NICSIM_WQE_<segment>_SEG_<field>).
     * Every segment is WqeLayout.DS_UNIT bytes but the address vector (AV_BYTES).
     */
    /** The XRC segment (mlx5_wqe_xrc_seg): the destination XRC SRQ number (bits 23..0). */
    public static final int XRC_SRQN = 0;
    /**
     * The address vector (mlx5_wqe_datagram_seg): the qkey (UD, 4 bytes) or DC access key (DC, 8 bytes), the
     * destination QPN with AV_EXT set (4 bytes), the remote LID (2 bytes).
     */
    public static final int AV_KEY = 0, AV_DQPN = 8, AV_RLID = 14, AV_BYTES = 48;
    /** The destination QPN word's MLX5_EXTENDED_UD_AV bit. */
    public static final int AV_EXT = 0x8000_0000;
    /** The remote-address segment: the remote address (8 bytes), the rkey (4 bytes). */
    public static final int RADDR_ADDR = 0, RADDR_RKEY = 8;
    /** The atomic segment: swap or add (8 bytes), compare (8 bytes); a window bind's: length, lkey << 32 | access. */
    public static final int ATOMIC_SWAP_ADD = 0, ATOMIC_COMPARE = 8;
    /** A data segment (send and receive WQEs): byte count, lkey (4 bytes each), address (8 bytes). */
    public static final int DATA_BYTE_COUNT = 0, DATA_LKEY = 4, DATA_ADDR = 8;
    /** The inline segment: the byte count | INLINE_FLAG (4 bytes), then the bytes, padded to 16. */
    public static final int INLINE_BYTE_COUNT = 0, INLINE_DATA = 4;
    /**
     * A layout UMR's segment (after the ctrl segment): access flags, repeat count (4 bytes each), entry count (2
     * bytes); with OPMOD_MKEY_LAYOUT_AT the address segment's start and length (8 bytes each) follow it.
     */
    public static final int UMR_ACCESS = 0, UMR_REPEAT = 4, UMR_ENTRIES = 14, UMR_START = 16, UMR_LENGTH = 24;
    /**
     * A layout entry: a list's byte count (4 bytes), or an interleaved layout's stride and byte count (2 bytes
     * each); the lkey (4 bytes), the address (8 bytes).
     */
    public static final int KLM_BYTE_COUNT = 0, KLM_STRIDE = 0, KLM_REPEAT_BYTE_COUNT = 2, KLM_KEY = 4, KLM_ADDR = 8;

    /** A scatter/gather element: {@code length} bytes at {@code addr} under {@code lkey}. */
    public record Sge(long addr, int length, int lkey) {}

    /**
     * The address vector of a UD or DC send: destination QP (DC: the target's number), its qkey (UD) or DC
     * access key (DC), the remote LID, and whether a GRH goes with the packet and its destination GID (as
     * mlx5's AV: bit 30 of the word at 28, the GID at 32..47). A send to a multicast group has one: the MGID.
     */
    public record Av(long remoteQpn, int qkey, int rlid, long dcKey, boolean grh, long dgidHi, long dgidLo) {
        /** A UD send's address vector. */
        public Av(long remoteQpn, int qkey, int rlid) { this(remoteQpn, qkey, rlid, 0); }

        /** An address vector with no GRH. */
        public Av(long remoteQpn, int qkey, int rlid, long dcKey) { this(remoteQpn, qkey, rlid, dcKey, false, 0, 0); }

        /** A UD send's address vector with a GRH to destination GID {@code dgidHi:dgidLo}. */
        public static Av global(long remoteQpn, int qkey, int rlid, long dgidHi, long dgidLo) {
            return new Av(remoteQpn, qkey, rlid, 0, true, dgidHi, dgidLo);
        }

        /** A DC send's: target {@code dctn} at {@code rlid} under DC access key {@code dcKey}. */
        public static Av dc(long dctn, int rlid, long dcKey) { return new Av(dctn, 0, rlid, dcKey); }
    }

    /** The AV's grh_gid_fl word (bit 30: a GRH goes with the packet) and its remote GID, as mlx5_wqe_av's. */
    public static final int AV_GRH_WORD = 28, AV_GRH_BIT = 1 << 30, AV_RGID = 32;

    /** ctrl opmod of an OP_UMR that sets an indirect mkey's layout (opmod 0: a memory-window bind). */
    public static final int OPMOD_MKEY_LAYOUT = 1;

    /**
     * ctrl opmod of an OP_UMR that sets an indirect mkey's layout and its start address and length
     * (an address segment after the layout segment), as mlx5's UMR sets the mkey context's
     * start_addr and len: the key then answers VAs from start, not offsets from 0.
     */
    public static final int OPMOD_MKEY_LAYOUT_AT = 2;

    /** Entries one layout UMR carries at most: ctrl, layout segment and entries in 63 16-byte units. */
    public static final int MAX_LAYOUT_ENTRIES = 61;

    /** Entries one layout UMR with a start address carries at most: its address segment takes one unit more. */
    public static final int MAX_LAYOUT_AT_ENTRIES = MAX_LAYOUT_ENTRIES - 1;

    /**
     * One entry of an indirect mkey's layout: {@code length} bytes at {@code addr} under
     * {@code lkey}; in an interleaved layout each repetition starts {@code stride} bytes further.
     */
    public record Klm(long addr, int length, int lkey, int stride) {}

    /**
     * What a layout UMR sets (mlx5dv_wr_mr_list, mlx5dv_wr_mr_interleaved; docs/sources.md#umr): the
     * indirect mkey's {@code access} flags and its entries, taken {@code repeat} times; repeat 0 is a
     * plain list (taken once). Encoded after the ctrl segment (whose imm holds the mkey) as a 16-byte
     * layout segment (access, repeat count, entry count in bytes 14..15) and one 16-byte segment per
     * entry: a list's as data segments, an interleaved layout's as mlx5's repeat entries (stride and
     * byte count in 16 bits each, memkey, address). {@code length} 0: the key is zero based, its
     * length the entries' (opmod OPMOD_MKEY_LAYOUT). Otherwise (OPMOD_MKEY_LAYOUT_AT) a 16-byte
     * address segment follows the layout segment, {@code start} (8 bytes) and {@code length} (8
     * bytes): the key covers VAs start to start + length, byte {@code va - start} of the entries.
     */
    public record MkeyLayout(int access, long repeat, List<Klm> entries, long start, long length) {
        /** A zero-based layout, its length the entries'. */
        public MkeyLayout(int access, long repeat, List<Klm> entries) { this(access, repeat, entries, 0, 0); }

        public boolean interleaved() { return repeat != 0; }

        /** Whether the layout gives the key a start address and length of its own. */
        public boolean based() { return length != 0; }
    }

    /**
     * A send WQE as the firmware sees it. {@code sges} is empty for inline data ({@code inline}
     * non-null); {@code av} only for UD and DC; {@code xrcSrqn} only for XRC; remote address and rkey for
     * RDMA and atomics; swap/add and compare for atomics; {@code layout} only for a layout UMR.
     */
    public record SendWqe(int opcode, int index, long qpn, int fmCeSe, int imm, Av av, long remoteAddr, int rkey,
                          long swapAdd, long compare, List<Sge> sges, byte[] inline, int xrcSrqn, MkeyLayout layout) {
        /** A WQE of a QP that is not XRC. */
        public SendWqe(int opcode, int index, long qpn, int fmCeSe, int imm, Av av, long remoteAddr, int rkey,
                       long swapAdd, long compare, List<Sge> sges, byte[] inline) {
            this(opcode, index, qpn, fmCeSe, imm, av, remoteAddr, rkey, swapAdd, compare, sges, inline, 0, null);
        }

        /** A WQE that is not a layout UMR. */
        public SendWqe(int opcode, int index, long qpn, int fmCeSe, int imm, Av av, long remoteAddr, int rkey,
                       long swapAdd, long compare, List<Sge> sges, byte[] inline, int xrcSrqn) {
            this(opcode, index, qpn, fmCeSe, imm, av, remoteAddr, rkey, swapAdd, compare, sges, inline, xrcSrqn, null);
        }

        /** A layout UMR of {@code mkey}. */
        public static SendWqe layout(int index, long qpn, int fmCeSe, int mkey, MkeyLayout layout) {
            return new SendWqe(WqeLayout.OP_UMR, index, qpn, fmCeSe, mkey, null, 0, 0, 0, 0, List.of(), null, 0,
                    layout);
        }

        public boolean signaled() { return (fmCeSe & CQ_UPDATE) != 0; }
        public boolean solicited() { return (fmCeSe & SOLICITED) != 0; }
        public boolean fenced() { return (fmCeSe & FENCE) != 0; }

        @Override public boolean equals(Object o) {
            return o instanceof SendWqe w && opcode == w.opcode && index == w.index && qpn == w.qpn
                    && fmCeSe == w.fmCeSe && imm == w.imm && Objects.equals(av, w.av) && remoteAddr == w.remoteAddr
                    && rkey == w.rkey && swapAdd == w.swapAdd && compare == w.compare && sges.equals(w.sges)
                    && Arrays.equals(inline, w.inline) && xrcSrqn == w.xrcSrqn && Objects.equals(layout, w.layout);
        }

        @Override public int hashCode() {
            return Objects.hash(opcode, index, qpn, sges) * 31 + Arrays.hashCode(inline);
        }
    }

    /** A WQE that does not parse; the syndrome says which field. */
    public static final class Malformed extends RuntimeException {
        public Malformed(String syndrome) { super(syndrome); }
    }

    static boolean hasRaddr(int op) {
        return op == WqeLayout.OP_RDMA_WRITE || op == WqeLayout.OP_RDMA_WRITE_IMM || op == WqeLayout.OP_RDMA_READ
                || op == WqeLayout.OP_ATOMIC_CS || op == WqeLayout.OP_ATOMIC_FA || op == WqeLayout.OP_UMR;
    }

    static boolean isAtomic(int op) { return op == WqeLayout.OP_ATOMIC_CS || op == WqeLayout.OP_ATOMIC_FA; }

    /**
     * Whether the WQE carries the 16-byte atomic segment. Atomics do (swap/add, compare); so does a
     * memory-window bind (nicsim's UMR, opcode 0x25), whose remote-address segment holds the
     * window's address and new rkey, and whose second segment holds the window's length and the
     * MR's lkey << 32 | the window's access flags.
     */
    static boolean hasAtomicSeg(int op) { return isAtomic(op) || op == WqeLayout.OP_UMR; }

    /** The bytes of a WQE, padded to whole WQEBBs; DS is computed. {@code ud} says whether the QP is UD. */
    public static byte[] encode(SendWqe w, boolean ud) { return encode(w, ud ? ServiceType.UD : ServiceType.RC); }

    /** The bytes of a WQE of a {@code type} QP (its segments depend on it), padded to whole WQEBBs; DS is computed. */
    public static byte[] encode(SendWqe w, ServiceType type) {
        // the only DRIVER QPs that send are DC initiators
        boolean ud = type == ServiceType.UD, dc = type == ServiceType.DRIVER;
        if (w.layout() != null) return encodeLayout(w);
        boolean xrc = type == ServiceType.XRC_SEND, hasAv = (ud || dc) && (w.av() != null || !dc);
        // a DCI's local operations (bind, invalidate, NOP) name no target
        int len = (xrc ? WqeLayout.DS_UNIT : 0) + (hasAv ? AV_BYTES : 0)
                + (hasRaddr(w.opcode()) ? WqeLayout.DS_UNIT : 0) + (hasAtomicSeg(w.opcode()) ? WqeLayout.DS_UNIT : 0);
        if (w.inline() != null) len += (w.inline().length + INLINE_DATA + 15) / 16 * 16;
        else for (Sge s : w.sges()) if (s.length() != 0) len += WqeLayout.DS_UNIT;
        byte[] out = framed(w, 0, len);
        int at = WqeLayout.CTRL_BYTES; // the segments follow the ctrl segment, each written in place
        if (xrc) {
            BigEndian.put32(out, at + XRC_SRQN, w.xrcSrqn() & 0xFFFFFF);
            at += WqeLayout.DS_UNIT;
        }
        if (hasAv) {
            if (dc) BigEndian.put64(out, at + AV_KEY, w.av().dcKey());
            else BigEndian.put32(out, at + AV_KEY, w.av().qkey());
            BigEndian.put32(out, at + AV_DQPN, (int) w.av().remoteQpn() | AV_EXT);
            out[at + AV_RLID] = (byte) (w.av().rlid() >> 8);
            out[at + AV_RLID + 1] = (byte) w.av().rlid();
            if (w.av().grh()) {
                BigEndian.put32(out, at + AV_GRH_WORD, AV_GRH_BIT);
                BigEndian.put64(out, at + AV_RGID, w.av().dgidHi());
                BigEndian.put64(out, at + AV_RGID + 8, w.av().dgidLo());
            }
            at += AV_BYTES;
        }
        if (hasRaddr(w.opcode())) {
            BigEndian.put64(out, at + RADDR_ADDR, w.remoteAddr());
            BigEndian.put32(out, at + RADDR_RKEY, w.rkey());
            at += WqeLayout.DS_UNIT;
        }
        if (hasAtomicSeg(w.opcode())) {
            BigEndian.put64(out, at + ATOMIC_SWAP_ADD, w.swapAdd());
            BigEndian.put64(out, at + ATOMIC_COMPARE, w.compare());
            at += WqeLayout.DS_UNIT;
        }
        if (w.inline() != null) {
            BigEndian.put32(out, at + INLINE_BYTE_COUNT, w.inline().length | INLINE_FLAG);
            System.arraycopy(w.inline(), 0, out, at + INLINE_DATA, w.inline().length);
        } else {
            for (Sge s : w.sges()) {
                if (s.length() == 0) continue; // zero-length SGEs get no segment (docs/sources.md#mlx5-send-wqe)
                BigEndian.put32(out, at + DATA_BYTE_COUNT, s.length());
                BigEndian.put32(out, at + DATA_LKEY, s.lkey());
                BigEndian.put64(out, at + DATA_ADDR, s.addr());
                at += WqeLayout.DS_UNIT;
            }
        }
        return out;
    }

    /**
     * The WQE's bytes: its ctrl segment (with {@code opmod}; DS computed) and then {@code body}, padded to whole
     * WQEBBs.
     */
    private static byte[] frame(SendWqe w, int opmod, byte[] body) {
        byte[] out = framed(w, opmod, body.length);
        System.arraycopy(body, 0, out, WqeLayout.CTRL_BYTES, body.length);
        return out;
    }

    /** A WQE's bytes with its ctrl segment written and room for {@code bodyLength} bytes of segments after it. */
    private static byte[] framed(SendWqe w, int opmod, int bodyLength) {
        int ds = 1 + bodyLength / 16;
        if (ds > 63) throw new IllegalArgumentException("WQE of " + ds + " DS: at most 63 16-byte units fit a WQE");
        byte[] out = new byte[WqeLayout.wqebbs(ds) * WqeLayout.WQEBB];
        System.arraycopy(WqeLayout.ctrl(w.opcode(), w.index(), w.qpn(), ds), 0, out, 0, 8);
        out[WqeLayout.CTRL_OPMOD] = (byte) opmod;
        out[WqeLayout.CTRL_FM_CE_SE] = (byte) w.fmCeSe();
        BigEndian.put32(out, WqeLayout.CTRL_IMM, w.imm());
        return out;
    }

    private static byte[] encodeLayout(SendWqe w) {
        MkeyLayout l = w.layout();
        int max = l.based() ? MAX_LAYOUT_AT_ENTRIES : MAX_LAYOUT_ENTRIES;
        if (l.entries().size() > max)
            throw new IllegalArgumentException("layout UMR of " + l.entries().size() + " entries: at most " + max
                    + " fit a WQE");
        int head = l.based() ? 32 : 16;
        byte[] body = new byte[head + 16 * l.entries().size()];
        BigEndian.put32(body, UMR_ACCESS, l.access());
        BigEndian.put32(body, UMR_REPEAT, l.repeat());
        body[UMR_ENTRIES] = (byte) (l.entries().size() >> 8);
        body[UMR_ENTRIES + 1] = (byte) l.entries().size();
        if (l.based()) {
            BigEndian.put64(body, UMR_START, l.start());
            BigEndian.put64(body, UMR_LENGTH, l.length());
        }
        int at = head;
        for (Klm k : l.entries()) {
            if (l.interleaved()) {
                body[at + KLM_STRIDE] = (byte) (k.stride() >> 8);
                body[at + KLM_STRIDE + 1] = (byte) k.stride();
                body[at + KLM_REPEAT_BYTE_COUNT] = (byte) (k.length() >> 8);
                body[at + KLM_REPEAT_BYTE_COUNT + 1] = (byte) k.length();
            } else {
                BigEndian.put32(body, at + KLM_BYTE_COUNT, k.length());
            }
            BigEndian.put32(body, at + KLM_KEY, k.lkey());
            BigEndian.put64(body, at + KLM_ADDR, k.addr());
            at += 16;
        }
        return frame(w, l.based() ? OPMOD_MKEY_LAYOUT_AT : OPMOD_MKEY_LAYOUT, body);
    }

    private static SendWqe decodeLayout(byte[] b, int index, long qpn, int end, boolean based) {
        int seg = WqeLayout.CTRL_BYTES;
        need(seg, 16, end, "UMR layout segment");
        int access = (int) BigEndian.get32(b, seg + UMR_ACCESS);
        long repeat = BigEndian.get32(b, seg + UMR_REPEAT);
        int n = (b[seg + UMR_ENTRIES] & 0xff) << 8 | (b[seg + UMR_ENTRIES + 1] & 0xff);
        long start = 0, keyLength = 0;
        int first = 32;
        if (based) {
            need(32, 16, end, "UMR address segment");
            start = BigEndian.get64(b, seg + UMR_START);
            keyLength = BigEndian.get64(b, seg + UMR_LENGTH);
            if (keyLength == 0) throw new Malformed("UMR address segment: length 0 (a key of no bytes)");
            first = 48;
        }
        need(first, 16 * n, end, "UMR layout's " + n + " entries");
        List<Klm> entries = new ArrayList<>();
        for (int j = 0, at = first; j < n; j++, at += 16) {
            int stride = repeat != 0 ? (b[at + KLM_STRIDE] & 0xff) << 8 | (b[at + KLM_STRIDE + 1] & 0xff) : 0;
            int length = repeat != 0 ? (b[at + KLM_REPEAT_BYTE_COUNT] & 0xff) << 8
                    | (b[at + KLM_REPEAT_BYTE_COUNT + 1] & 0xff) : (int) BigEndian.get32(b, at + KLM_BYTE_COUNT);
            entries.add(new Klm(BigEndian.get64(b, at + KLM_ADDR), length, (int) BigEndian.get32(b, at + KLM_KEY),
                    stride));
        }
        return SendWqe.layout(index, qpn, b[WqeLayout.CTRL_FM_CE_SE] & 0xff,
                (int) BigEndian.get32(b, WqeLayout.CTRL_IMM),
                new MkeyLayout(access, repeat, List.copyOf(entries), start, keyLength));
    }

    /** Parses a WQE as fetched (whole WQEBBs); {@code ud} says whether the QP is UD. */
    public static SendWqe decode(byte[] b, boolean ud) { return decode(b, ud ? ServiceType.UD : ServiceType.RC); }

    /** Parses a WQE of a {@code type} QP as fetched (whole WQEBBs). */
    public static SendWqe decode(byte[] b, ServiceType type) {
        boolean ud = type == ServiceType.UD, dc = type == ServiceType.DRIVER;
        if (b.length < 16 || b.length % WqeLayout.WQEBB != 0)
            throw new Malformed("WQE of " + b.length + " bytes is not whole 64-byte WQEBBs");
        int opcode = b[WqeLayout.CTRL_OPCODE] & 0xff, ds = b[WqeLayout.CTRL_DS] & 0x3f;
        int index = (b[WqeLayout.CTRL_INDEX] & 0xff) << 8 | (b[WqeLayout.CTRL_INDEX + 1] & 0xff);
        int q = WqeLayout.CTRL_QPN;
        long qpn = (b[q] & 0xffL) << 16 | (b[q + 1] & 0xffL) << 8 | (b[q + 2] & 0xffL);
        if (ds == 0 || ds * 16 > b.length)
            throw new Malformed("ctrl.ds = " + ds + " does not fit the " + b.length + "-byte WQE");
        int end = ds * 16, at = WqeLayout.CTRL_BYTES, opmod = b[WqeLayout.CTRL_OPMOD] & 0xff;
        if (opcode == WqeLayout.OP_UMR && (opmod == OPMOD_MKEY_LAYOUT || opmod == OPMOD_MKEY_LAYOUT_AT))
            return decodeLayout(b, index, qpn, end, opmod == OPMOD_MKEY_LAYOUT_AT);
        Av av = null;
        long raddr = 0, swap = 0, cmp = 0;
        int rkey = 0, xrcSrqn = 0;
        if (type == ServiceType.XRC_SEND && opcode != WqeLayout.OP_NOP) {
            need(at, 16, end, "XRC segment");
            xrcSrqn = (int) (BigEndian.get32(b, at + XRC_SRQN) & 0xFFFFFF);
            at += 16;
        }
        if (ud && opcode != WqeLayout.OP_NOP || dc && WqeLayout.remote(opcode)) {
            need(at, AV_BYTES, end, "address vector");
            int rlid = (b[at + AV_RLID] & 0xff) << 8 | (b[at + AV_RLID + 1] & 0xff);
            long dqp = BigEndian.get32(b, at + AV_DQPN) & 0xFFFFFF;
            boolean grh = (BigEndian.get32(b, at + AV_GRH_WORD) & AV_GRH_BIT) != 0;
            av = dc ? Av.dc(dqp, rlid, BigEndian.get64(b, at + AV_KEY)) : grh
                    ? Av.global(dqp, (int) BigEndian.get32(b, at + AV_KEY), rlid, BigEndian.get64(b, at + AV_RGID),
                            BigEndian.get64(b, at + AV_RGID + 8))
                    : new Av(dqp, (int) BigEndian.get32(b, at + AV_KEY), rlid);
            at += AV_BYTES;
        }
        if (hasRaddr(opcode)) {
            need(at, 16, end, "remote address segment");
            raddr = BigEndian.get64(b, at + RADDR_ADDR);
            rkey = (int) BigEndian.get32(b, at + RADDR_RKEY);
            at += 16;
        }
        if (hasAtomicSeg(opcode)) {
            need(at, 16, end, "atomic segment");
            swap = BigEndian.get64(b, at + ATOMIC_SWAP_ADD);
            cmp = BigEndian.get64(b, at + ATOMIC_COMPARE);
            at += 16;
        }
        Sge[] sge = new Sge[(end - at + 15) / 16]; // at most one a 16-byte unit left
        int n = 0;
        byte[] inline = null;
        if (at < end && (BigEndian.get32(b, at + INLINE_BYTE_COUNT) & INLINE_FLAG) != 0) {
            int len = (int) (BigEndian.get32(b, at + INLINE_BYTE_COUNT) & ~INLINE_FLAG);
            if (at + INLINE_DATA + len > end)
                throw new Malformed("inline byte_count " + len + " runs past the WQE's " + ds + " DS ("
                        + (end - at - INLINE_DATA) + " bytes left)");
            inline = Arrays.copyOfRange(b, at + INLINE_DATA, at + INLINE_DATA + len);
            at = end;
        }
        while (at < end) {
            need(at, 16, end, "data segment");
            long count = BigEndian.get32(b, at + DATA_BYTE_COUNT);
            if ((count & INLINE_FLAG) != 0) throw new Malformed("inline segment after a data segment at byte " + at);
            sge[n++] = new Sge(BigEndian.get64(b, at + DATA_ADDR), (int) count,
                    (int) BigEndian.get32(b, at + DATA_LKEY));
            at += 16;
        }
        List<Sge> sges = n == 1 ? List.of(sge[0]) : List.of(Arrays.copyOf(sge, n));
        if (isAtomic(opcode) && (sges.size() != 1 || sges.get(0).length() != 8))
            throw new Malformed("atomic WQE needs one 8-byte data segment, has " + sges);
        return new SendWqe(opcode, index, qpn, b[WqeLayout.CTRL_FM_CE_SE] & 0xff,
                (int) BigEndian.get32(b, WqeLayout.CTRL_IMM), av, raddr, rkey, swap, cmp, sges, inline,
                xrcSrqn);
    }

    private static void need(int at, int size, int end, String what) {
        if (at + size > end)
            throw new Malformed(what + " at byte " + at + " runs past the WQE's end at " + end + " (ctrl.ds)");
    }

}
