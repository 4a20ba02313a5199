package nicsim.adapter;

import java.util.Arrays;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import nicsim.adapter.DmaPath.Job;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.sim.ClockDomain;

/**
 * A {@link DmaChannel} whose clock coasts ({@link ClockDomain.Coaster}): between the edges where something leaves
 * the channel, it runs the coming edges on a copy of the engine's registers, beats in and out by the run rather
 * than one by one, and hands on what they did.
 */
final class DmaCoastingChannel extends DmaChannel implements ClockDomain.Coaster {
    DmaCoastingChannel(DmaPath path, int index, ClockDomain domain, DmaEngine.Config cfg) {
        super(path, index, domain, cfg);
        domain.coastWith(this, 2); // the engine and this glue
    }

    /** Most edges one look-ahead covers from its start, or from a wake edge after a gap. */
    private static final long MAX_COAST = 1 << 16;

    /** Whether the next edge gives an engine a descriptor (the glue's queues change: that edge runs). */
    private boolean offersDescriptor(DmaCore e) {
        return !hostQ.isEmpty() && e.takesHostDesc() || !sendQ.isEmpty() && e.takesSendDesc()
                || !recvQ.isEmpty() && e.takesRecvDesc();
    }

    /** Whether a beat leaving the send engine is heard outside: a job's last, or the first of a packet's job. */
    private static boolean linkBeatHeard(Job sending, int sentBytes, long flag) {
        return flag != 0 || sending.out != null && sentBytes == 0;
    }

    // the last look-ahead: the edges it ran on a dry copy, kept so the coast can adopt them when it runs them all
    private DmaCore look;
    private long lookFirst = -1, lookEdges;
    // the edge after the look-ahead's is heard outside but needs no wires: the coast ends on it
    private boolean lookHeard;
    // the look-ahead's last edge (counted in lookEdges, not in what coastable returns) stops the clock: the coast
    // ends on it, as it changes nothing outside and needs no wires
    private boolean lookStops;
    private int lookPci, lookRx, lookTxN, lookWrN;
    private long[][] lookTx = new long[16][]; // the words of each beat taken to the link (none is a job's last)
    private long[][] lookWr = new long[16][]; // the words of each beat to host memory; its address, flag, time:
    private long[] lookWrAddr = new long[16], lookWrLast = new long[16], lookWrAt = new long[16];
    // beats each entry of the logs stands for: more than one only for a job that does not carry its bytes
    private long[] lookTxRun = new long[16], lookWrRun = new long[16];
    // the gaps the look-ahead ran over (ClockDomain.Coaster#gaps): the edge the clock stops after, the one it wakes at
    private int lookGaps;
    private long[] lookGapStop = new long[8], lookGapWake = new long[8];

    /**
     * Runs the coming edges on a copy of the engine's registers, reading the beats on their way in
     * without taking them, up to the first edge with an effect outside the channel or after which
     * the clock would stop. What the copy's edges did is kept: a coast over exactly those edges
     * adopts it rather than running them again.
     */
    @Override public long coastable() {
        long n = lookAhead(Long.MAX_VALUE);
        ahead.arm();
        return n;
    }

    @Override public int gaps() { return lookGaps; }
    @Override public long gapStop(int i) { return lookGapStop[i]; }
    @Override public long gapWake(int i) { return lookGapWake[i]; }

    /**
     * {@link #coastable}'s look-ahead, over at most {@code limit} cycles. Where the clock would stop only to wake for
     * a time it knows of (a beat on its way in), the look-ahead goes on from the wake edge over the gap: the same
     * edges a look-ahead from that edge would find, with no stop and wake between.
     */
    private long lookAhead(long limit) {
        lookFirst = -1;
        lookGaps = 0;
        lookHeard = lookStops = false;
        DmaCore real = engine.core();
        if (real.reporting() || offersDescriptor(real)) { // the next edge alone, at its own time (edgeAtItsTime)
            lookFirst = domain.cycle() + 1;
            lookEdges = 0;
            lookHeard = true;
            return 0;
        }
        DmaCore v = look = real.dryCopy(look);
        Job sending = sendBusy.peekFirst(), writing = toHost.peekFirst();
        int sent = sending == null ? 0 : sending.filled, pciNext = 0, rxNext = 0;
        // the writing job's bytes written and piece begun as of the edges run (writeBeat's), for the writes planned
        if (writing != null) { aheadFilled = writing.filled; aheadSince = writing.pieceSince; }
        if (limit == Long.MAX_VALUE) ahead.drop(); // planned for a coast that ended before their edges
        lookTxN = lookWrN = 0;
        long n = 0, seg = 0; // cycles run, gaps included; edges since the start or the last gap's wake edge
        boolean stops = false, heard = false; // the copy ran one edge more, after which the clock stops; the next
        // edge is heard
        for (long c = domain.cycle() + 1, left; (left = Math.min(limit - n, MAX_COAST - seg)) > 0; c++) {
            long t = domain.picosOfCycle(c);
            if (v.reporting() || offersDescriptor(v)) { heard = true; break; }
            boolean pInNow = pci.inAt(pciNext, t) && v.takesPciData();
            boolean rInNow = rx.inAt(rxNext, t) && v.takesLinkRx();
            // the beats waiting to leave (null words: none)
            long[] tx = v.sendOutQ.peekWords(), wr = v.hostOutQ.peekWords();
            long wrAddr = v.hostOutQ.peekAddr(), wrLast = v.hostOutQ.peekFlag();
            boolean leaves = wr != null && writeLeaves(writing, wrAddr, wrLast);
            if (tx != null && linkBeatHeard(sending, sent, v.sendOutQ.peekFlag())
                    || leaves && !writesAhead(limit, writing, wrAddr, wrLast, c, t)) { heard = true; break; }
            // one engine alone on the bus (the others idle, or waiting for a beat that is not in yet): its coming
            // edges in one step
            long k = 0;
            if (leaves) { // its write was issued ahead: with the host engine alone, its edge is one step of it
                if (v.hostOutReady() && quiet(v, c, pciNext, rxNext, DmaEngine.HOST) > 0) {
                    logWr(wrAddr, wr, wrLast, t);
                    v.hostOutAlone(1, null);
                    k = 1;
                }
            } else if (tx != null && v.sendOutQ.size() == 1 && v.sendBeatsLeft() > 0 && v.alone(DmaEngine.SEND)) {
                k = Math.min(Math.min(v.sendBeatsLeft(), left), quiet(v, c, pciNext, rxNext, -1));
                if (k > 0) {
                    if (sending.carry) v.sendAlone(k, logTxRef);
                    else { v.sendAlone(k, null); logTxRun(k); } // beats of no bytes: only their count matters
                    sent += (int) k * beat;
                }
            } else if (wr != null && v.hostOutReady()) {
                long max = Math.min(Math.min(v.hostOutLeft(), left),
                        quiet(v, c, pciNext, rxNext, DmaEngine.HOST));
                // the beats taken: the one waiting, then those read out, up to one that leaves
                k = beforeLeaving(writing, v, max);
                if (k > 0) {
                    logWrAt = domain.picosOfCycle(c);
                    aheadBeats(writing, wrAddr, k, logWrAt);
                    if (writing.carry) {
                        logWrFrom = lookWrN;
                        v.hostOutAlone(k, logWrTimed);
                    } else { // beats of no bytes: the first's address and time are all the run's PCI writes need
                        logWr(v.hostOutQ.peekAddr(), blank, 0, logWrAt);
                        lookWrRun[lookWrN - 1] = k;
                        v.hostOutAlone(k, null);
                    }
                }
            } else if (pInNow && v.inAloneReady(DmaEngine.HOST)) {
                if (limit == Long.MAX_VALUE && tx == null && wr == null
                        && overGaps(v, DmaEngine.HOST, pciNext, rxNext, c, seg)) {
                    n += overEdges;
                    seg = overSeg;
                    c = overNext - 1;
                    pciNext += overTaken;
                    continue;
                }
                long room = Math.min(v.inRoom(DmaEngine.HOST), left);
                k = comingIn(pci, pciNext, c, Math.min(room, quiet(v, c, pciNext, rxNext, DmaEngine.HOST)));
                if (k > 0) {
                    inFrom = pciNext;
                    v.inAlone(DmaEngine.HOST, (int) k, pci.allBlank() ? null : pciWordsFrom);
                    pciNext += (int) k;
                }
            } else if (rInNow && v.inAloneReady(DmaEngine.RECV)) {
                if (limit == Long.MAX_VALUE && tx == null && wr == null
                        && overGaps(v, DmaEngine.RECV, pciNext, rxNext, c, seg)) {
                    n += overEdges;
                    seg = overSeg;
                    c = overNext - 1;
                    rxNext += overTaken;
                    continue;
                }
                long room = Math.min(v.inRoom(DmaEngine.RECV), left);
                k = comingIn(rx, rxNext, c, Math.min(room, quiet(v, c, pciNext, rxNext, DmaEngine.RECV)));
                if (k > 0) {
                    inFrom = rxNext;
                    v.inAlone(DmaEngine.RECV, (int) k, rx.allBlank() ? null : rxWordsFrom);
                    rxNext += (int) k;
                }
            }
            if (k > 0) {
                n += k;
                seg += k;
                c += k - 1;
                continue;
            }
            edgeTaking(v, pInNow ? pciNext : -1, rInNow ? rxNext : -1, wr != null, tx != null);
            if (pInNow) pciNext++;
            if (rInNow) rxNext++;
            if (tx != null) { sent += beat; logTx(tx); }
            if (wr != null) logWr(wrAddr, wr, wrLast, t);
            if (wr != null && !leaves) aheadBeats(writing, wrAddr, 1, t);
            // after this edge the clock would stop: the coast ends on it, and the domain then sets the wake-ups
            // for the beats to come
            if (!(v.active() || offersDescriptor(v) || pci.inAt(pciNext, t) && v.takesPciData()
                    || rx.inAt(rxNext, t) && v.takesLinkRx())) {
                // unless it wakes at an edge it knows of, within the limit: the look-ahead goes on from there
                // (on an edge that issues a PCI write: its coast ends on it, which issues the write then)
                long wake = wakeEdge(t, pciNext, rxNext);
                if (wake < 0 || n + (wake - c) >= limit || leaves && limit == Long.MAX_VALUE) {
                    if (leaves && limit == Long.MAX_VALUE) ahead.unplanLast();
                    stops = true;
                    break;
                }
                gap(c, wake);
                n += wake - c;
                seg = 0;
                c = wake - 1;
                continue;
            }
            n++;
            seg++;
        }
        lookFirst = domain.cycle() + 1;
        lookEdges = stops ? n + 1 : n;
        lookPci = pciNext;
        lookRx = rxNext;
        lookHeard = heard;
        lookStops = stops;
        return n;
    }

    /**
     * The edge a clock that stops after the edge at time {@code t} wakes at (-1: none it knows of): the first
     * at or after the earliest time it is to wake at then, as {@link #active} asks for them as it stops (the
     * next beat of each ring, if not in; the first beat of each read answered while it ran) beside those the domain
     * holds. The next beats for the engines are the {@code pciNext}-th and {@code rxNext}-th their rings hold.
     */
    private long wakeEdge(long t, int pciNext, int rxNext) {
        long w = otherWake(t, pci, pciNext);
        if (rx.has(rxNext) && rx.atOf(rxNext) > t) w = Math.min(w, rx.atOf(rxNext));
        return w == Long.MAX_VALUE ? -1 : domain.nextEdgeCycleAtOrAfter(w);
    }

    // what overGaps ran: edges (gaps included), beats taken in, the edge after the last it ran, edges since its
    // last gap's wake edge (or since the look-ahead's start or last gap, with none)
    private long overEdges, overNext, overSeg;
    private int overTaken;

    /**
     * The edges from {@code c} on in closed form while the host engine (host to SRAM) or the receive engine is
     * alone taking in its ring's beats, whose times are known, the first in now ({@code pciNext}, {@code rxNext}:
     * the next beats of the rings; {@code seg}: edges since the last gap): each edge writes the beat in its queue
     * and takes the next if it is in; when it is not, the edge only writes (drains the queue), the clock stops,
     * and it wakes at the edge the beat is in, a gap ({@link #gap}). What the look-ahead's steps find, one by one,
     * up to the descriptor's last beat, a flagged beat, or the first time anything else could wake the clock or
     * bring the other engines a beat. Whether it ran an edge: its results in the over* fields.
     */
    private boolean overGaps(DmaCore v, int engine, int pciNext, int rxNext, long c, long seg) {
        boolean host = engine == DmaEngine.HOST;
        BeatRing ring = host ? pci : rx;
        int next = host ? pciNext : rxNext;
        long t = domain.picosOfCycle(c), period = domain.periodPicos();
        if (quiet(v, c, pciNext, rxNext, engine) == 0) return false;
        long other = otherWake(t, host ? rx : pci, host ? rxNext : pciNext);
        int good = ring.unflagged(next, Integer.MAX_VALUE), taken = 0, queued = v.inQueued(engine);
        long writable = v.inWritable(engine), written = 0, e = c, edges = 0;
        while (taken < good) {
            long at = ring.atOf(next + taken);
            if (at <= t) { // in by edge e: taken in, the beat queued before written
                if (queued == 1 && written == writable) break;
                // the beats each in by its edge (those in now, then those coming in one an edge as the PCI link
                // streams them) are taken one an edge: those before any step that could end the run, at once
                // (bounded so, a run of more than one ends neither the coast nor the run: only a single step can)
                long s = Math.min(Math.min(writable - written - queued + 1, MAX_COAST - 2 - seg),
                        other == Long.MAX_VALUE ? Long.MAX_VALUE : (other - t - 1) / period);
                s = s > 1 ? ring.inOnEdges(next + taken, t, period, (int) Math.min(s, good - taken)) : 1;
                written += queued + s - 1;
                queued = 1;
                taken += (int) s;
                e += s;
                edges += s;
                t += s * period;
                seg += s;
                if (seg >= MAX_COAST - 1 || t >= other) break;
                continue;
            }
            // not in: edge e drains the queue, and the clock sleeps till the edge the beat is in
            if (queued == 0 || written == writable || at > other) break;
            long wake = e + 1, tw = t + period;
            if (at - tw > 4 * period) {
                wake = domain.nextEdgeCycleAtOrAfter(at);
                tw = domain.picosOfCycle(wake);
            } else for (; tw < at; tw += period) wake++;
            written++;
            queued = 0;
            gap(e, wake);
            edges += wake - e;
            seg = 0;
            e = wake;
            t = tw;
            if (t >= other) break;
        }
        if (taken == 0) return false;
        inFrom = next;
        v.inAlone(engine, taken, ring.allBlank() ? null : host ? pciWordsFrom : rxWordsFrom);
        if (queued == 0) v.drainIn(engine);
        overEdges = edges;
        overNext = e;
        overSeg = seg;
        overTaken = taken;
        return true;
    }

    /**
     * The earliest time after {@code t} that could wake the clock, other than the next beat of the engine's own
     * ring (Long.MAX_VALUE: none): a time the domain holds, the other ring's {@code otherNext}-th beat, the first
     * beat of a read answered while it ran, as {@link #wakeEdge} takes them. Before it, nothing but the engine's
     * own beats can change what an edge does.
     */
    private long otherWake(long t, BeatRing other, int otherNext) {
        long w = domain.wakeTimeAfter(t);
        if (other.has(otherNext) && other.atOf(otherNext) > t) w = Math.min(w, other.atOf(otherNext));
        for (int i = 0; i < answered.size(); i++) if (answered.get(i) > t) w = Math.min(w, answered.get(i));
        return w;
    }

    /** The look-ahead runs over a gap: the clock stops after edge {@code stop} and wakes at {@code wake}. */
    private void gap(long stop, long wake) {
        if (lookGaps == lookGapStop.length) {
            lookGapStop = Arrays.copyOf(lookGapStop, 2 * lookGaps);
            lookGapWake = Arrays.copyOf(lookGapWake, 2 * lookGaps);
        }
        lookGapStop[lookGaps] = stop;
        lookGapWake[lookGaps++] = wake;
    }

    /**
     * One edge of {@code c} that offers it no descriptor, taking in the {@code pciAt}-th beat of the PCI ring
     * and the {@code rxAt}-th of the link's (-1: none), the PCI write and link beat waiting taken or not.
     */
    private void edgeTaking(DmaCore c, int pciAt, int rxAt, boolean pciWriteTaken, boolean linkTxTaken) {
        c.edge(null, null, null, pciAt < 0 ? null : pci.wordsAt(pciAt), pciAt < 0 ? 0 : pci.flagAt(pciAt),
                rxAt < 0 ? null : rx.wordsAt(rxAt), rxAt < 0 ? 0 : rx.flagAt(rxAt),
                false, pciWriteTaken, linkTxTaken);
    }

    private long aheadFilled, aheadSince; // see lookAhead

    /**
     * Whether the look-ahead runs on over edge {@code c} (at {@code t}), on which a beat of job {@code j} leaving
     * the host engine issues a PCI write: a look-ahead that starts a coast ({@code limit} none) plans the write, to
     * be issued at the edge's own time ({@link DmaWritesAhead}), if it is not the job's last and lands; one that
     * runs a coast again over edges behind now finds it issued.
     */
    private boolean writesAhead(long limit, Job j, long addr, long last, long c, long t) {
        if (limit != Long.MAX_VALUE) return ahead.issuedAhead(t);
        if (last != 0 || t <= sim.now() || j.writeMayFail) return false;
        int from = Math.max((int) aheadFilled, j.skew), to = writtenTo(j, addr);
        long hostAddr = j.alignedHost() + from;
        if (!port.get().dmaWriteLands(hostAddr, to - from)) return false;
        ahead.plan(c, t, j, hostAddr, j.dataOff + from - j.skew, to - from, aheadSince >= 0 ? aheadSince : t);
        aheadFilled = to;
        aheadSince = -1;
        return true;
    }

    /**
     * {@code k} beats of job {@code j} leave the host engine from host address {@code addr} on, one an edge from
     * {@code t0}, none issuing a write: the first whose bytes go past those written begins the next piece (as
     * {@link #writeBeat} notes it).
     */
    private void aheadBeats(Job j, long addr, long k, long t0) {
        if (aheadSince >= 0) return;
        int from = Math.max((int) aheadFilled, j.skew);
        for (long i = 0; i < k; i++)
            if (writtenTo(j, addr + i * beat) > from) { aheadSince = t0 + i * domain.periodPicos(); return; }
    }

    /**
     * A beat to the link or a PCI write leaves on the edge after the look-ahead: the coast runs it too, at its
     * time.
     */
    @Override public boolean coastsEdgeAfter() { return lookHeard || lookStops; }

    /**
     * The edge a stopped clock is woken for ({@link ClockDomain#wake()}: a job added, a landed write's release, a read
     * answered) may start a coast too: the look-ahead reads the queues and rings the wake's caller filled, and no
     * block of the channel rests. A landed write's release wakes the clock for an edge that finds nothing to do: it
     * closes a coast of none at its own time rather than running through the wires.
     */
    @Override public boolean coastsFromStop() { return true; }

    // the look-ahead's callbacks, made once (a lambda capturing its locals would be an object per call):
    // the beats a run of edges takes in are the ring's from inFrom on; those it writes out are logged
    // at one period apart from logWrAt, the first of them the logWrFrom-th
    private int inFrom, logWrFrom;
    private long logWrAt;
    private final IntFunction<long[]> pciWordsFrom = e -> DmaCoastingChannel.this.pci.wordsAt(inFrom + e);
    private final IntFunction<long[]> rxWordsFrom = e -> DmaCoastingChannel.this.rx.wordsAt(inFrom + e);
    private final DmaCore.WriteOut logWrTimed = (addr, words, last) ->
            logWr(addr, words, last, logWrAt + (lookWrN - logWrFrom) * DmaCoastingChannel.this.domain.periodPicos());

    private final Consumer<long[]> logTxRef = this::logTx;

    private void logTx(long[] words) {
        if (lookTxN == lookTx.length) {
            lookTx = Arrays.copyOf(lookTx, 2 * lookTxN);
            lookTxRun = Arrays.copyOf(lookTxRun, 2 * lookTxN);
        }
        lookTxRun[lookTxN] = 1;
        lookTx[lookTxN++] = words;
    }

    /** {@code n} beats of a job that does not carry its bytes taken to the link: one entry of the log. */
    private void logTxRun(long n) {
        logTx(blank);
        lookTxRun[lookTxN - 1] = n;
    }

    /**
     * How many beats the host engine writing to host memory, {@link DmaCore#hostOutReady alone}, puts out before
     * one that {@link #writeLeaves} (at most {@code max}): the one waiting, then those it reads out, in closed
     * form (what asking {@link #writeLeaves} of each in turn finds).
     */
    private long beforeLeaving(Job j, DmaCore v, long max) {
        if (max <= 0) return 0;
        long addr1 = v.hostOutAddrAfter(1), left = v.hostOutLeft(); // beat i >= 1 goes to addr1 + (i - 1) * beat
        if (writePayload % beat != 0 || Math.floorMod(addr1, (long) beat) != 0) { // the search, one by one
            long k = 1;
            while (k < max && !writeLeaves(j, v.hostOutAddrAfter(k), v.hostOutLastAfter(k))) k++;
            return k;
        }
        // below the descriptor's last beat (left, which leaves), beat i completes the job's bytes up to
        // base + i * beat and leaves when that is past what was written and ends on a max-payload boundary
        long base = addr1 - j.alignedHost(), from = Math.max(j.filled, j.skew), step = writePayload / beat;
        long i = (writePayload - Math.floorMod(addr1, (long) writePayload)) % writePayload / beat;
        if (i == 0) i = step;
        long past = from < base ? 1 : (from - base) / beat + 1;
        if (i < past) i += (past - i + step - 1) / step * step;
        return Math.min(max, Math.min(i, left));
    }

    /**
     * How many edges from {@code cycle} on bring no beat in for an engine other than {@code except}
     * that waits for one (the next beats for the host and receive engines are the
     * {@code pciNext}-th and {@code rxNext}-th their rings hold). A beat that is not on its ring
     * yet wakes the channel when it comes, so it need not be counted here.
     */
    private long quiet(DmaCore v, long cycle, int pciNext, int rxNext, int except) {
        long q = Long.MAX_VALUE, t = domain.picosOfCycle(cycle), period = domain.periodPicos();
        if (except != DmaEngine.HOST && v.hostTakesIn() && pci.has(pciNext))
            q = Math.min(q, Math.max(0, -Math.floorDiv(t - pci.atOf(pciNext), period)));
        if (except != DmaEngine.RECV && v.recvTakesIn() && rx.has(rxNext))
            q = Math.min(q, Math.max(0, -Math.floorDiv(t - rx.atOf(rxNext), period)));
        return q;
    }

    /**
     * How many of the beats from the {@code first}-th on the ring holds can come in on the edges
     * from {@code cycle} on, one per edge, at most {@code max}: each must be in by its edge and good.
     */
    private long comingIn(BeatRing ring, int first, long cycle, long max) {
        int m = (int) Math.min(max, Integer.MAX_VALUE);
        return ring.inOnEdges(first, domain.picosOfCycle(cycle), domain.periodPicos(), m);
    }

    private void logWr(long addr, long[] words, long last, long t) {
        if (lookWrN == lookWr.length) {
            lookWr = Arrays.copyOf(lookWr, 2 * lookWrN);
            lookWrAddr = Arrays.copyOf(lookWrAddr, 2 * lookWrN);
            lookWrLast = Arrays.copyOf(lookWrLast, 2 * lookWrN);
            lookWrAt = Arrays.copyOf(lookWrAt, 2 * lookWrN);
            lookWrRun = Arrays.copyOf(lookWrRun, 2 * lookWrN);
        }
        lookWrRun[lookWrN] = 1;
        lookWr[lookWrN] = words;
        lookWrAddr[lookWrN] = addr;
        lookWrLast[lookWrN] = last;
        lookWrAt[lookWrN++] = t;
    }

    /**
     * The edges {@link #coastable} looked at, for real: what {@link #drive} and {@link #update} do,
     * without the wires. When they are all the look-ahead ran (nothing woke the clock in between),
     * the look-ahead's copy becomes the engine's registers and its beats are handed on, in order.
     */
    @Override public void coast(long first, long n) {
        ahead.coasting(first, first + n - 1);
        long c = first, heardAt = lookHeard && lookFirst >= 0 ? lookFirst + lookEdges : -1;
        // woken before the look-ahead's last edge: the same edges again, exactly n, in the look-ahead's steps
        // rather than one by one (their inputs are as they were: whatever changes one wakes the clock first, and
        // so ended the coast). Either way the look-ahead's edges are the first of these: it looks from the edge
        // after the domain's last (first) over at most n
        if (first != lookFirst || n < lookEdges) lookAhead(n);
        if (lookEdges > 0) {
            engine.core().adopt(look);
            pci.take(lookPci);
            rx.take(lookRx);
            for (int i = 0; i < lookTxN; i++) {
                if (lookTxRun[i] == 1) linkBeat(lookTx[i], 0); else linkRun(lookTxRun[i]);
                lookTx[i] = null;
            }
            for (int i = 0; i < lookWrN; i++) {
                if (lookWrRun[i] == 1) writeBeat(lookWrAddr[i], lookWr[i], lookWrLast[i], lookWrAt[i]);
                else writeRun(lookWrAddr[i], lookWrRun[i], lookWrAt[i]);
                lookWr[i] = null;
            }
            c += lookEdges;
        }
        lookFirst = -1;
        lookHeard = lookStops = false;
        for (; c < first + n; c++) {
            // the edge heard outside offers the descriptors on their wires, as driven: whether the engine is active
            // after the edge reads them; any other must be one the look-ahead found changes nothing outside
            if (c == heardAt) offerDescriptors(); else unheard(c);
            edgeAtItsTime(c);
        }
    }

    /** Edge {@code c} of a coast, not its last, has no effect outside the channel, as the look-ahead found. */
    private void unheard(long c) {
        DmaCore e = engine.core();
        if (e.reporting() || offersDescriptor(e)) throw coastedOver(c, "a descriptor");
        if (e.sendOutQ.peekWords() != null
                && linkBeatHeard(sendBusy.peekFirst(), sendBusy.peekFirst().filled, e.sendOutQ.peekFlag()))
            throw coastedOver(c, "a beat to the link");
        if (e.hostOutQ.peekWords() != null && writeLeaves(toHost.peekFirst(), e.hostOutQ.peekAddr(),
                e.hostOutQ.peekFlag()) && !ahead.issuedAhead(domain.picosOfCycle(c)))
            throw coastedOver(c, "a PCI write");
    }

    /**
     * Edge {@code c} at its own time, without the wires: the engine runs it on what the glue offers (the descriptor
     * at the head of each queue, the next beat of each ring if it is in; the engine's outputs all taken), and the
     * glue takes what the engine's registers put out before the edge ({@link #edged}), as {@link #update} takes it
     * off the wires.
     */
    private void edgeAtItsTime(long c) {
        DmaCore e = engine.core();
        Edge x = edge;
        long t = x.at = domain.picosOfCycle(c);
        Job h = hostQ.peekFirst(), s = sendQ.peekFirst(), r = recvQ.peekFirst();
        HostDesc hd = h != null && e.takesHostDesc() ? h.hostDesc : null;
        LinkDesc sd = s != null && e.takesSendDesc() ? s.linkDesc : null, rd = r != null && e.takesRecvDesc()
                ? r.linkDesc : null;
        x.hostTaken = hd != null;
        x.sendTaken = sd != null;
        x.recvTaken = rd != null;
        boolean pIn = x.pciTaken = pci.inAt(0, t) && e.takesPciData();
        boolean rIn = x.rxTaken = rx.inAt(0, t) && e.takesLinkRx();
        // what the registers put out before the edge
        x.read = e.pciReadReg;
        x.tx = e.sendOutQ.peekWords();
        x.txFlag = e.sendOutQ.peekFlag();
        x.wr = e.hostOutQ.peekWords();
        x.wrAddr = e.hostOutQ.peekAddr();
        x.wrLast = e.hostOutQ.peekFlag();
        x.hostDone = e.hostDoneReg;
        x.sendDone = e.sendDoneReg;
        x.recvDone = e.recvDoneReg;
        e.edge(hd, sd, rd, pIn ? pci.wordsAt(0) : null, pIn ? pci.flagAt(0) : 0, rIn ? rx.wordsAt(0) : null,
                rIn ? rx.flagAt(0) : 0, x.read != null, x.wr != null, x.tx != null);
        edged(x);
    }

    private IllegalStateException coastedOver(long cycle, String what) {
        return new IllegalStateException("clock " + domain.name() + " coasted over cycle " + cycle + ", where "
                + what + " leaves the channel");
    }
}
