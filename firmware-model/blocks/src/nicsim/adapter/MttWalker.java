package nicsim.adapter;

import java.util.List;
import nicsim.adapter.MttPorts.KlmEntry;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.MttFillReq;
import nicsim.adapter.MttPorts.MttFillRsp;
import nicsim.adapter.MttPorts.Status;
import nicsim.adapter.MttPorts.XlateReq;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.CounterOut;
import nicsim.sim.Counters;
import nicsim.sim.Flow;
import nicsim.sim.Port;
import nicsim.sim.Stream;

/**
 * Translation and protection (docs/architecture.md#data-path, step 5): mkey + VA to physical addresses,
 * with the checks of docs/sources.md#mtt-walk in its order. Cycle-exact twin of
 * {@code hw/.../MttWalker.scala}.
 *
 * <p>A request ({@code io_req}) is taken when idle; the next edge reads the mkey context (indexed by
 * the mkey's index, tagged with it) and checks, in order: the context exists, the key byte, the PD,
 * that a type-2 window is bound to the asking QP, the range (for a zero-based MR the VA is an
 * offset), the access bits, the state VALID. The first failure is the single response. Otherwise the
 * walk answers one chunk per page: MTT index = mttBase + (offset >> pageShift), where offset =
 * (VA - start, or VA if zero-based) + the start's offset in its first page; PA = the MTT entry's page
 * + offset within the page. MTT entries come from a direct-mapped translation cache (indexed by the
 * MTT index's low bits, tagged with it); a miss asks {@code io_fill} for the entry and waits for
 * {@code io_fillRsp}; a failed fill ends the request with MTT_FAULT, and an entry whose page is not
 * present (on-demand paging) with PAGE_FAULT, whose {@code pa} is the MTT index of the missing
 * page and {@code length} the bytes of the request from that page on. A zero-length request is
 * answered OK at once, unchecked (IBA C9-88). Responses leave through a one-entry register.
 *
 * <p>An indirect mkey (UMR, docs/sources.md#umr) passes the same checks as a whole (it is zero
 * based), then the walk goes through its KLM entries, one per edge, in the KLM table (written by
 * {@code io_klmWrite}): entry j of repetition r covers the next {@code length} bytes of the
 * region, at {@code va + r * stride} under the entry's own mkey. The first entry the offset falls
 * in, and each one after it while bytes are left, becomes a piece: its mkey's context is checked as
 * a request of its own (same PD, QP and access; an indirect one is NESTED_INDIRECT) and its pages
 * walked; only the last chunk of the last piece is {@code last}. A failure in a piece names it
 * ({@code piece} = entry + 1). Walking past the last repetition is OUT_OF_RANGE.
 *
 * <p>Edge order: response pop, fill request accepted, the state machine (decisions on the state
 * before the edge), then mkey-context and KLM writes (so a same-edge write is seen from the next
 * edge). Cache entries are never invalidated: firmware never reuses MTT indices.
 */
public final class MttWalker implements Block {
    public static final String NAME = "MttWalker";

    /** Parameters from the profile. */
    public record Config(int mkeyEntries, int cacheEntries, int klmEntries) {
        public Config {
            Require.powerOfTwo("mtt.mkey.entries", mkeyEntries, 2, 65536, "");
            Require.powerOfTwo("mtt.cache.entries", cacheEntries, 2, 65536, "");
            Require.powerOfTwo("mtt.klm.entries", klmEntries, 2, 65536, "");
        }

        public static Config from(Profile p) {
            return new Config(p.countInt("mtt.mkey.entries"), p.countInt("mtt.cache.entries"),
                    p.countInt("mtt.klm.entries"));
        }
    }

    private enum State { IDLE, CHECK, KLM, WALK, FILL }

    private final Config cfg;
    private final Counters counters;
    private final Stream<XlateReq> req;
    private final Flow<MkeyContext> mkeyWrite;
    private final Flow<KlmEntry> klmWrite;
    private final Stream<XlateRsp> rsp;
    private final Stream<MttFillReq> fill;
    private final Stream<MttFillRsp> fillRsp;
    private final CounterOut requests, hits, misses, faults;

    private final MkeyContext[] table;
    private final KlmEntry[] klm;
    private final boolean[] cacheValid;
    private final long[] cacheTag, cachePa;
    private State state = State.IDLE;
    private XlateReq cur;
    /** What CHECK checks: the request's key and range, or a piece's under an indirect key. */
    private long tMkey, tVa, tLen;
    private MkeyContext ctx;
    private long offset, remaining;
    /**
     * The walk of an indirect key: KLM base, count, repetitions; entry, repetition, the entry's start and the offset in
     * the region; bytes after the piece.
     */
    private long kBase, kCount, kRepeat, kIdx, kRep, kPos, kOffset, kLeft;
    private boolean inPiece;
    private XlateRsp outReg;
    private MttFillReq fillReg;

    public MttWalker(ClockDomain domain, Config cfg) {
        this.cfg = cfg;
        this.counters = domain.counters();
        req = new Stream<>("io_req", domain, MttPorts.XLATE_REQ);
        mkeyWrite = new Flow<>("io_mkeyWrite", domain, MttPorts.MKEY_CONTEXT);
        klmWrite = new Flow<>("io_klmWrite", domain, MttPorts.KLM_ENTRY);
        rsp = new Stream<>("io_rsp", domain, MttPorts.XLATE_RSP);
        fill = new Stream<>("io_fill", domain, MttPorts.MTT_FILL_REQ);
        fillRsp = new Stream<>("io_fillRsp", domain, MttPorts.MTT_FILL_RSP);
        requests = new CounterOut(NAME, "io_requests", "requests", domain);
        hits = new CounterOut(NAME, "io_hits", "cache_hits", domain);
        misses = new CounterOut(NAME, "io_misses", "cache_misses", domain);
        faults = new CounterOut(NAME, "io_faults", "faults", domain);
        table = new MkeyContext[cfg.mkeyEntries()];
        klm = new KlmEntry[cfg.klmEntries()];
        cacheValid = new boolean[cfg.cacheEntries()];
        cacheTag = new long[cfg.cacheEntries()];
        cachePa = new long[cfg.cacheEntries()];
        domain.add(this);
    }

    public Config config() { return cfg; }
    public Stream<XlateReq> req() { return req; }
    public Flow<MkeyContext> mkeyWrite() { return mkeyWrite; }
    public Flow<KlmEntry> klmWrite() { return klmWrite; }
    public Stream<XlateRsp> rsp() { return rsp; }
    public Stream<MttFillReq> fill() { return fill; }
    public Stream<MttFillRsp> fillRsp() { return fillRsp; }
    public long hits() { return hits.get(); }
    public long misses() { return misses.get(); }

    @Override public String name() { return NAME; }

    @Override public List<Port> ports() {
        return List.of(Port.in(req), Port.in(mkeyWrite), Port.in(klmWrite), Port.out(rsp), Port.out(fill),
                Port.in(fillRsp), requests.port(), hits.port(), misses.port(), faults.port());
    }

    @Override public void drive() {
        req.ready(state == State.IDLE);
        if (outReg == null) rsp.idle(); else rsp.push(outReg);
        if (fillReg == null) fill.idle(); else fill.push(fillReg);
        fillRsp.ready(state == State.FILL && fillReg == null && outReg == null);
        requests.drive();
        hits.drive();
        misses.drive();
        faults.drive();
    }

    @Override public void update() {
        boolean canEmit = outReg == null || rsp.fire();
        if (rsp.fire()) outReg = null;
        if (fill.fire()) fillReg = null;
        switch (state) {
            case IDLE -> {
                if (req.fire()) take(req.payload());
            }
            case CHECK -> check(canEmit);
            case KLM -> klmStep(canEmit);
            case WALK -> walk(canEmit);
            case FILL -> {
                if (fillRsp.fire()) {
                    MttFillRsp f = fillRsp.payload();
                    if (f.status() == 0) {
                        long idx = mttIndex();
                        int slot = (int) (idx & (cfg.cacheEntries() - 1));
                        cacheValid[slot] = true;
                        cacheTag[slot] = idx;
                        cachePa[slot] = f.pa();
                        state = State.WALK;
                    } else if (f.status() == MttPorts.FILL_NOT_PRESENT) {
                        emit(mttIndex(), remaining, true, Status.PAGE_FAULT);
                        state = State.IDLE;
                    } else {
                        emit(0, 0, true, Status.MTT_FAULT);
                        state = State.IDLE;
                    }
                }
            }
        }
        if (mkeyWrite.valid()) {
            MkeyContext c = mkeyWrite.payload();
            table[(int) (c.index() & (cfg.mkeyEntries() - 1))] = c;
        }
        if (klmWrite.valid()) {
            KlmEntry e = klmWrite.payload();
            klm[(int) (e.index() & (cfg.klmEntries() - 1))] = e;
        }
    }

    /** Its inputs' valid make it active, and it changes nothing while inactive: its domain may leave it out then. */
    @Override public boolean mayRest() { return true; }

    /**
     * Inactive while idle, and while waiting for an MTT entry it asked for: an edge then changes
     * nothing, and the entry comes from outside the clock domain, whose clock the answer wakes. A
     * request at the input keeps it active only when idle, as only then is it taken.
     */
    @Override public boolean active() {
        boolean waitingForFill = state == State.FILL && fillReg == null && !fillRsp.valid();
        boolean working = state == State.IDLE ? req.valid() : !waitingForFill;
        return working || outReg != null || fillReg != null || mkeyWrite.valid() || klmWrite.valid();
    }

    /**
     * How many of the coming edges it runs alone, on its registered state, with no input valid: none while a response
     * or a fill request is held (the next edge drives it); two for a direct key's check (the walk's first step follows
     * it, and holds the response or the fill request it makes); one for another check or step. {@link #IDLE_EDGES}
     * while idle or waiting for a fill: it does nothing till an input comes.
     */
    long quietEdges() {
        if (outReg != null || fillReg != null) return 0;
        return switch (state) {
            case IDLE, FILL -> IDLE_EDGES;
            case KLM, WALK -> 1;
            case CHECK -> checkPasses() ? 2 : 1;
        };
    }

    /** What {@link #quietEdges} (and its like in the other blocks) says of a block with nothing to do on any edge. */
    static final long IDLE_EDGES = Long.MAX_VALUE;

    /** Whether the check about to run passes for a direct key of non-zero length: the walk follows it. */
    private boolean checkPasses() {
        return (inPiece || cur.length() != 0) && passesDirect(cur, tMkey, tVa, tLen, inPiece);
    }

    /** Whether the check of key {@code mkey} over a range of request {@code r} passes, the key direct. */
    private boolean passesDirect(XlateReq r, long mkey, long va, long len, boolean inPiece) {
        MkeyContext c = context(mkey);
        return status(c, r, mkey, va, len, inPiece) == Status.OK && c.indirect() == 0;
    }

    /** The context table's entry key {@code mkey} indexes. */
    private MkeyContext context(long mkey) { return table[(int) ((mkey >>> 8) & (cfg.mkeyEntries() - 1))]; }

    /**
     * How many of the coming edges it runs alone if it takes request {@code r} on the first (idle, with nothing on its
     * outputs): the take, then the check and the walk step {@link #quietEdges} would find; 0 if it is not idle. A
     * look-ahead: it changes nothing.
     */
    long quietEdgesTaking(XlateReq r) {
        if (state != State.IDLE || outReg != null || fillReg != null) return 0;
        return r.length() != 0 && passesDirect(r, r.mkey(), r.va(), r.length(), false) ? 3 : 2;
    }

    /**
     * Whether, having taken request {@code r} (idle, as {@link #quietEdgesTaking} asks), the walker holds its whole
     * answer once those edges have run: one response, the last, and the walker idle. The edge after then only hands
     * it over. A look-ahead: it changes nothing.
     */
    boolean answersWholeTaking(XlateReq r) {
        if (r.length() == 0) return true; // answered OK at once, unchecked
        MkeyContext c = context(r.mkey());
        if (status(c, r, r.mkey(), r.va(), r.length(), false) != Status.OK) return true; // the failure is the answer
        if (c.indirect() != 0) return false; // the walk through its KLM entries follows
        boolean zeroBased = (c.access() & MttPorts.ZERO_BASED) != 0;
        long at = (zeroBased ? r.va() : r.va() - c.start()) + c.pageOffset();
        long idx = (c.mttBase() + (at >>> c.pageShift())) & 0xFFFF_FFFFL;
        int slot = (int) (idx & (cfg.cacheEntries() - 1));
        if (!(cacheValid[slot] && cacheTag[slot] == idx)) return false; // a fill request instead
        long pageSize = 1L << c.pageShift();
        return Long.compareUnsigned(r.length(), pageSize - (at & (pageSize - 1))) <= 0; // one chunk: the last
    }

    /**
     * Runs the edge after those {@link #answersWholeTaking} looked over, on which its answer is taken, as {@link
     * #update} would with only io_rsp firing: the answer.
     */
    XlateRsp coastAnswerTaken() {
        if (outReg == null || state != State.IDLE || fillReg != null)
            throw new IllegalStateException("MttWalker: coasting an answer's hand-over without a whole answer held");
        XlateRsp r = outReg;
        outReg = null;
        return r;
    }

    /** Runs an edge on which request {@code r} comes in, as {@link #update} would with only io_req firing. */
    void coastTake(XlateReq r) {
        if (state != State.IDLE || outReg != null || fillReg != null)
            throw new IllegalStateException("MttWalker: coasting a request's arrival while not idle");
        take(r);
    }

    private void take(XlateReq r) {
        cur = r;
        tMkey = r.mkey();
        tVa = r.va();
        tLen = r.length();
        inPiece = false;
        state = State.CHECK;
        requests.inc();
    }

    /** Runs {@code n} edges of {@link #quietEdges} in one step, as {@link #update} would with no input valid. */
    void coast(long n) {
        for (long i = 0; i < n; i++) {
            switch (state) {
                case CHECK -> check(true);
                case KLM -> klmStep(true);
                case WALK -> walk(true);
                default -> throw new IllegalStateException("MttWalker: coasting edge in state " + state);
            }
        }
    }

    private Status status(MkeyContext c) { return status(c, cur, tMkey, tVa, tLen, inPiece); }

    /** Whether context {@code c} lets request {@code r} check key {@code tMkey} over its range (of a piece or not). */
    private static Status status(MkeyContext c, XlateReq r, long tMkey, long tVa, long tLen, boolean inPiece) {
        boolean zeroBased = c != null && (c.access() & MttPorts.ZERO_BASED) != 0;
        long rel = c == null ? 0 : zeroBased ? tVa : tVa - c.start();
        if (c == null || c.state() == MttPorts.STATE_NONE || c.index() != (tMkey >>> 8)) return Status.BAD_INDEX;
        if (c.key() != (tMkey & 0xff)) return Status.BAD_KEY;
        if (c.pd() != r.pd()) return Status.BAD_PD;
        if (c.boundQp() != 0 && c.qpn() != r.qpn()) return Status.NOT_BOUND;
        if ((!zeroBased && Long.compareUnsigned(tVa, c.start()) < 0) || Long.compareUnsigned(rel, c.length()) > 0
                || Long.compareUnsigned(tLen, c.length() - rel) > 0) return Status.OUT_OF_RANGE;
        if ((r.access() & ~c.access() & 0x1f) != 0) return Status.NO_ACCESS;
        if (c.state() != MttPorts.STATE_VALID) return Status.NOT_VALID;
        if (inPiece && c.indirect() != 0) return Status.NESTED_INDIRECT;
        return Status.OK;
    }

    private void check(boolean canEmit) {
        XlateReq r = cur;
        if (!inPiece && r.length() == 0) {
            if (canEmit) { emit(0, 0, true, Status.OK); state = State.IDLE; }
            return;
        }
        MkeyContext c = context(tMkey);
        boolean zeroBased = c != null && (c.access() & MttPorts.ZERO_BASED) != 0;
        long rel = c == null ? 0 : zeroBased ? tVa : tVa - c.start();
        Status s = status(c);
        if (s != Status.OK) {
            if (canEmit) { emit(0, 0, true, s); state = State.IDLE; }
            return;
        }
        if (c.indirect() != 0) { // the list's entries from the one the offset falls in
            kBase = c.mttBase();
            kCount = c.klmCount();
            kRepeat = c.repeat();
            kIdx = 0;
            kRep = 0;
            kPos = 0;
            kOffset = rel;
            kLeft = tLen;
            state = State.KLM;
            return;
        }
        ctx = c;
        offset = rel + c.pageOffset();
        remaining = tLen;
        if (!inPiece) kLeft = 0;
        state = State.WALK;
    }

    /** One KLM entry: skipped if the offset is past it, else the next piece, checked as a request of its own. */
    private void klmStep(boolean canEmit) {
        if (kRep >= kRepeat) {
            if (canEmit) { emit(0, 0, true, Status.OUT_OF_RANGE); state = State.IDLE; }
            return;
        }
        KlmEntry e = klm[(int) ((kBase + kIdx) & (cfg.klmEntries() - 1))];
        long len = e == null ? 0 : e.length();
        long end = kPos + len;
        if (Long.compareUnsigned(kOffset, end) >= 0) {
            kPos = end;
            if (((kIdx + 1) & 0xFFFF) == kCount) {
                kIdx = 0;
                kRep = (kRep + 1) & 0xFFFF_FFFFL;
            } else {
                kIdx = (kIdx + 1) & 0xFFFF;
            }
            return;
        }
        long within = kOffset - kPos;
        long take = Math.min(len - within, kLeft);
        tMkey = e.mkey();
        tVa = e.va() + kRep * e.stride() + within;
        tLen = take;
        kLeft -= take;
        kOffset += take;
        inPiece = true;
        state = State.CHECK;
    }

    private long mttIndex() { return (ctx.mttBase() + (offset >>> ctx.pageShift())) & 0xFFFF_FFFFL; }

    private void walk(boolean canEmit) {
        long idx = mttIndex();
        int slot = (int) (idx & (cfg.cacheEntries() - 1));
        if (!(cacheValid[slot] && cacheTag[slot] == idx)) {
            fillReg = new MttFillReq(idx);
            state = State.FILL;
            misses.inc();
            return;
        }
        if (!canEmit) return;
        long pageSize = 1L << ctx.pageShift();
        long within = offset & (pageSize - 1);
        long chunk = Math.min(remaining, pageSize - within);
        emit(cachePa[slot] + within, chunk, chunk == remaining && kLeft == 0, Status.OK);
        hits.inc();
        remaining -= chunk;
        offset += chunk;
        if (remaining == 0) state = kLeft == 0 ? State.IDLE : State.KLM;
    }

    private void emit(long pa, long length, boolean last, Status s) {
        long piece = s != Status.OK && inPiece ? kIdx + 1 : 0;
        outReg = new XlateRsp(cur.tag(), pa, length, last ? 1 : 0, s.ordinal(), piece);
        if (s != Status.OK) {
            faults.inc();
            counters.counter(NAME + ".failed_" + s.name().toLowerCase()).inc();
        }
    }
}
