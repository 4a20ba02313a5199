package nicsim.adapter;

import nicsim.sim.Layout;

/** Payloads of the MttWalker's ports, defined once for the Java model and the RTL. */
public final class MttPorts {
    private MttPorts() {}

    /** libibverbs access bits (ibv_access_flags) the walker checks; ZERO_BASED marks a zero-based MR. */
    public static final int LOCAL_WRITE = 1, REMOTE_WRITE = 2, REMOTE_READ = 4, REMOTE_ATOMIC = 8, MW_BIND = 16,
            ZERO_BASED = 32;

    /** States of an mkey context: no object at that index, allocated but not usable (FREE), usable. */
    public static final int STATE_NONE = 0, STATE_FREE = 1, STATE_VALID = 2;

    /**
     * Translate {@code length} bytes at {@code va} under {@code mkey} (index << 8 | key byte) for a
     * QP of protection domain {@code pd} needing {@code access} rights.
     */
    public record XlateReq(long mkey, long va, long length, long access, long pd, long qpn, long tag) {}

    /**
     * An mkey context as firmware writes it: an MR, or a memory window (a context over part of an
     * MR's pages; {@code boundQp} set for a type-2 window bound to {@code qpn}). {@code pageOffset}
     * is where {@code start} lies in its first page; MTT entries {@code mttBase}.. map the pages.
     */
    public record MkeyContext(long index, long state, long key, long pd, long qpn, long boundQp, long start,
                              long length, long access, long pageShift, long pageOffset, long mttBase, long indirect,
                              long klmCount, long repeat) {
        /** A direct context: an MR's pages, or a window over them. */
        public MkeyContext(long index, long state, long key, long pd, long qpn, long boundQp, long start, long length,
                           long access, long pageShift, long pageOffset, long mttBase) {
            this(index, state, key, pd, qpn, boundQp, start, length, access, pageShift, pageOffset, mttBase, 0, 0, 0);
        }

        /**
         * An indirect mkey (UMR): a zero-based region of {@code length} bytes made of {@code klmCount}
         * KLM entries from {@code klmBase} of the walker's KLM table, the whole list taken
         * {@code repeat} times (1 for a plain list; more for an interleaved layout).
         */
        public static MkeyContext indirect(long index, long state, long key, long pd, long length, long access,
                                           long klmBase, long klmCount, long repeat) {
            return new MkeyContext(index, state, key, pd, 0, 0, 0, length, access | ZERO_BASED, 12, 0, klmBase, 1,
                    klmCount, repeat);
        }

        /**
         * An indirect mkey that starts at {@code start} (a UMR with an address segment): VA v is byte
         * v - start of its list, VAs below start or from start + length are out of its range.
         */
        public static MkeyContext indirectAt(long index, long state, long key, long pd, long start, long length,
                                             long access, long klmBase, long klmCount, long repeat) {
            return new MkeyContext(index, state, key, pd, 0, 0, start, length, access & ~ZERO_BASED, 12, 0, klmBase, 1,
                    klmCount, repeat);
        }
    }

    /**
     * One entry of an indirect mkey's list (a KLM, as mlx5 calls it): {@code length} bytes under
     * {@code mkey} at {@code va}; in repetition r of the list the entry's bytes start at
     * {@code va + r * stride}. Written by firmware into KLM table slot {@code index}.
     */
    public record KlmEntry(long index, long mkey, long va, long length, long stride) {}

    /**
     * One translated chunk (at most to a page end), or a single failed result; {@code last} ends the
     * request. A failure under an indirect mkey names the list entry it met as {@code piece} (entry
     * number + 1; 0: the key named in the request).
     */
    public record XlateRsp(long tag, long pa, long length, long last, long status, long piece) {
        public XlateRsp(long tag, long pa, long length, long last, long status) {
            this(tag, pa, length, last, status, 0);
        }

        public Status reason() { return Status.values()[(int) status]; }
    }

    /** Why a translation failed, in the order the checks run (docs/sources.md#mtt-walk, MTT walk). */
    public enum Status {
        OK, BAD_INDEX, BAD_KEY, BAD_PD, NOT_BOUND, OUT_OF_RANGE, NO_ACCESS, NOT_VALID, MTT_FAULT, PAGE_FAULT,
        NESTED_INDIRECT
    }

    /** A translation-cache miss: fetch MTT entry {@code index}. */
    public record MttFillReq(long index) {}

    /**
     * The MTT entry: the physical address of the page; {@code status} {@link #FILL_FAILED} if it
     * could not be fetched, {@link #FILL_NOT_PRESENT} if the page is not in memory (an on-demand
     * MR's page not yet faulted in, or evicted).
     */
    public record MttFillRsp(long pa, long status) {}

    public static final int FILL_OK = 0, FILL_FAILED = 1, FILL_NOT_PRESENT = 2;

    public static final Layout<XlateReq> XLATE_REQ = Layout.<XlateReq>builder("XlateReq")
            .field("mkey", 32, XlateReq::mkey).field("va", 64, XlateReq::va).field("length", 32, XlateReq::length)
            .field("access", 5, XlateReq::access).field("pd", 24, XlateReq::pd).field("qpn", 24, XlateReq::qpn)
            .field("tag", 16, XlateReq::tag)
            .build(v -> new XlateReq(v[0], v[1], v[2], v[3], v[4], v[5], v[6]));

    public static final Layout<MkeyContext> MKEY_CONTEXT = Layout.<MkeyContext>builder("MkeyContext")
            .field("index", 24, MkeyContext::index).field("state", 2, MkeyContext::state)
            .field("key", 8, MkeyContext::key)
            .field("pd", 24, MkeyContext::pd).field("qpn", 24, MkeyContext::qpn)
            .field("boundQp", 1, MkeyContext::boundQp)
            .field("start", 64, MkeyContext::start).field("length", 64, MkeyContext::length)
            .field("access", 6, MkeyContext::access)
            .field("pageShift", 5, MkeyContext::pageShift).field("pageOffset", 30, MkeyContext::pageOffset)
            .field("mttBase", 32, MkeyContext::mttBase).field("indirect", 1, MkeyContext::indirect)
            .field("klmCount", 16, MkeyContext::klmCount).field("repeat", 32, MkeyContext::repeat)
            .build(v -> new MkeyContext(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
                    v[12], v[13], v[14]));

    public static final Layout<KlmEntry> KLM_ENTRY = Layout.<KlmEntry>builder("KlmEntry")
            .field("index", 16, KlmEntry::index).field("mkey", 32, KlmEntry::mkey).field("va", 64, KlmEntry::va)
            .field("length", 32, KlmEntry::length).field("stride", 32, KlmEntry::stride)
            .build(v -> new KlmEntry(v[0], v[1], v[2], v[3], v[4]));

    public static final Layout<XlateRsp> XLATE_RSP = Layout.<XlateRsp>builder("XlateRsp")
            .field("tag", 16, XlateRsp::tag).field("pa", 64, XlateRsp::pa).field("length", 32, XlateRsp::length)
            .field("last", 1, XlateRsp::last).field("status", 4, XlateRsp::status).field("piece", 16, XlateRsp::piece)
            .build(v -> new XlateRsp(v[0], v[1], v[2], v[3], v[4], v[5]));

    public static final Layout<MttFillReq> MTT_FILL_REQ = Layout.<MttFillReq>builder("MttFillReq")
            .field("index", 32, MttFillReq::index).build(v -> new MttFillReq(v[0]));

    public static final Layout<MttFillRsp> MTT_FILL_RSP = Layout.<MttFillRsp>builder("MttFillRsp")
            .field("pa", 64, MttFillRsp::pa).field("status", 2, MttFillRsp::status)
            .build(v -> new MttFillRsp(v[0], v[1]));
}
