package nicsim.adapter;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import nicsim.adapter.DmaEngine.Config;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaQueues.BeatFifo2;
import nicsim.adapter.DmaQueues.OutFifo2;
import nicsim.adapter.DmaPorts.Done;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.adapter.DmaPorts.PciRead;
import nicsim.sim.CounterOut;
import nicsim.sim.Counters;

import static nicsim.adapter.DmaEngine.HOST;
import static nicsim.adapter.DmaEngine.NAME;
import static nicsim.adapter.DmaEngine.RECV;
import static nicsim.adapter.DmaEngine.SEND;

/**
 * A {@link DmaEngine}'s registers and what one edge does to them, given which of its inputs fired. The
 * engine's ports drive their wires from these registers and call {@link #edge} with the handshakes;
 * a copy made with {@link #dryCopy} runs the same edges without touching SRAM or the counters, to
 * look ahead.
 */
final class DmaCore {
    private final Config cfg;
    private final int beat;
    private final DmaSram sram;
    private final Counters counters;
    // made when first counted: a dump lists only what happened
    private final Counters.Counter[] doneCounters;
    private final CounterOut beatsOut, stallsOut;
    private final boolean dry;
    // the words of a beat nobody reads (see #blank): an SRAM slot holding them holds null
    private long[] blankWords;
    // host engine
    boolean hostBusy, hostToHost, hostErr;
    long hostAddr, hostSram, hostLeft, hostTag, hostMoved;
    PciRead pciReadReg;
    final BeatFifo2 hostInQ;
    final OutFifo2 hostOutQ;
    // send engine
    boolean sendBusy;
    long sendSram, sendLeft, sendTag, sendMoved;
    final OutFifo2 sendOutQ;
    // receive engine
    boolean recvBusy, recvDrain;
    long recvSram, recvLeft, recvTag, recvMoved;
    final BeatFifo2 recvInQ;
    int lastGrant = RECV;
    Done hostDoneReg, sendDoneReg, recvDoneReg;

    DmaCore(Config cfg, Counters counters, CounterOut beatsOut, CounterOut stallsOut) {
        this.cfg = cfg;
        this.beat = cfg.beatBytes();
        this.sram = new DmaSram(cfg.sramBytes() / beat);
        this.counters = counters;
        this.doneCounters = new Counters.Counter[DONE_COUNTERS.length];
        this.beatsOut = beatsOut;
        this.stallsOut = stallsOut;
        this.dry = false;
        hostInQ = new BeatFifo2(); hostOutQ = new OutFifo2(); sendOutQ = new OutFifo2(); recvInQ = new BeatFifo2();
    }

    private DmaCore(DmaCore o) {
        cfg = o.cfg; beat = o.beat; sram = o.sram;
        counters = o.counters; doneCounters = o.doneCounters;
        beatsOut = o.beatsOut; stallsOut = o.stallsOut;
        dry = true;
        blankWords = o.blankWords;
        hostInQ = new BeatFifo2(); hostOutQ = new OutFifo2(); sendOutQ = new OutFifo2(); recvInQ = new BeatFifo2();
    }

    /**
     * Beats of these words carry nothing anyone reads (payload moved as a copy): SRAM keeps no reference to them,
     * and a slot never written reads as them, so moving such beats costs no SRAM write.
     */
    void blank(long[] words) { blankWords = words; }

    /** {@code o}'s registers, as this core's. */
    private void copyRegisters(DmaCore o) {
        hostBusy = o.hostBusy; hostToHost = o.hostToHost; hostErr = o.hostErr;
        hostAddr = o.hostAddr; hostSram = o.hostSram; hostLeft = o.hostLeft; hostTag = o.hostTag;
        hostMoved = o.hostMoved;
        pciReadReg = o.pciReadReg;
        hostInQ.copyFrom(o.hostInQ); hostOutQ.copyFrom(o.hostOutQ);
        sendBusy = o.sendBusy; sendSram = o.sendSram; sendLeft = o.sendLeft; sendTag = o.sendTag;
        sendMoved = o.sendMoved;
        sendOutQ.copyFrom(o.sendOutQ);
        recvBusy = o.recvBusy; recvDrain = o.recvDrain;
        recvSram = o.recvSram; recvLeft = o.recvLeft; recvTag = o.recvTag; recvMoved = o.recvMoved;
        recvInQ.copyFrom(o.recvInQ);
        lastGrant = o.lastGrant;
        hostDoneReg = o.hostDoneReg; sendDoneReg = o.sendDoneReg; recvDoneReg = o.recvDoneReg;
    }

    // what a dry copy's edges did that the real core would have done: SRAM writes and counts
    private int[] loggedAt = new int[0];
    private long[][] loggedData = new long[0][];
    private int logged;
    private long loggedBeats, loggedStalls;
    private final long[] loggedDone = new long[DONE_COUNTERS.length];

    /**
     * A copy to run edges on ahead of time: SRAM is read but not written, and nothing is counted;
     * both are logged, so the real core can {@link #adopt} the copy's edges. {@code into} is a dry
     * copy made before, reused (null: a new one).
     */
    DmaCore dryCopy(DmaCore into) {
        DmaCore d = into == null ? new DmaCore(this) : into;
        if (!d.dry || d.sram != sram) throw new IllegalArgumentException("not a dry copy of this core");
        d.copyRegisters(this);
        d.logged = 0;
        d.loggedBeats = d.loggedStalls = 0;
        Arrays.fill(d.loggedDone, 0);
        return d;
    }

    /**
     * The edges dry copy {@code d} ran happen on this core: its registers become this core's, and
     * the SRAM writes and counts it held back are made.
     */
    void adopt(DmaCore d) {
        if (dry || !d.dry || d.sram != sram)
            throw new IllegalArgumentException("only the real core adopts a dry copy of itself");
        copyRegisters(d);
        for (int i = 0; i < d.logged; i++) { sram.keep(d.loggedAt[i], d.loggedData[i]); d.loggedData[i] = null; }
        // a count of none touches no counter: with many nodes each is a cold line (stalls are mostly none)
        if (d.loggedBeats != 0) beatsOut.add(d.loggedBeats);
        if (d.loggedStalls != 0) stallsOut.add(d.loggedStalls);
        for (int k = 0; k < d.loggedDone.length; k++)
            if (d.loggedDone[k] > 0) doneCounter(k).add(d.loggedDone[k]);
    }

    // the readies of the next edge, from the registered state
    boolean takesHostDesc() { return !hostBusy; }
    boolean takesSendDesc() { return !sendBusy; }
    boolean takesRecvDesc() { return !recvBusy; }
    boolean takesPciData() { return hostBusy && !hostToHost && hostInQ.size() < 2; }
    boolean takesLinkRx() { return recvBusy && recvInQ.size() < 2; }

    /** Whether a finished descriptor or a PCI read is on its way out on the next edge. */
    boolean reporting() {
        return hostDoneReg != null || sendDoneReg != null || recvDoneReg != null || pciReadReg != null;
    }

    /**
     * One edge: the arguments say which inputs fired (a descriptor or beat taken, or null) and
     * which outputs were taken. Order: output pops, input buffers, bus grant and the moved beat,
     * descriptor accepts.
     */
    void edge(HostDesc hostDescIn, LinkDesc sendDescIn, LinkDesc recvDescIn, Beat pciDataIn, Beat linkRxIn,
              boolean pciReadTaken, boolean pciWriteTaken, boolean linkTxTaken) {
        edge(hostDescIn, sendDescIn, recvDescIn, pciDataIn == null ? null : pciDataIn.data(),
                pciDataIn == null ? 0 : pciDataIn.flag(), linkRxIn == null ? null : linkRxIn.data(),
                linkRxIn == null ? 0 : linkRxIn.flag(), pciReadTaken, pciWriteTaken, linkTxTaken);
    }

    /**
     * As above, with each beat that fired in given as its words (null: none) and its flag, so the
     * caller need not make a {@link Beat} of it.
     */
    void edge(HostDesc hostDescIn, LinkDesc sendDescIn, LinkDesc recvDescIn, long[] pciDataIn, long pciFlag,
              long[] linkRxIn, long linkRxFlag, boolean pciReadTaken, boolean pciWriteTaken, boolean linkTxTaken) {
        // bus requests, on the state before the edge
        boolean hostHead = !hostInQ.isEmpty(), recvHead = !recvInQ.isEmpty();
        boolean hostHeadBad = hostHead && (hostErr || hostInQ.peekFlag() != 0);
        boolean hostReq = hostBusy && (hostToHost ? hostLeft > 0 && hostOutQ.size() < 2 : hostHead && !hostHeadBad);
        boolean sendReq = sendBusy && sendLeft > 0 && sendOutQ.size() < 2;
        boolean recvReq = recvBusy && recvHead && !recvDrain;
        // round robin: the first requester after the last granted, in the order host, send, receive
        int grant = -1;
        for (int k = 1, e = lastGrant; k <= 3 && grant < 0; k++) {
            e = e == RECV ? HOST : e + 1;
            if (e == HOST ? hostReq : e == SEND ? sendReq : recvReq) grant = e;
        }
        int requesting = (hostReq ? 1 : 0) + (sendReq ? 1 : 0) + (recvReq ? 1 : 0);
        boolean hostErrDrop = hostBusy && !hostToHost && hostHeadBad;
        boolean recvDrop = recvBusy && recvHead && recvDrain;

        hostDoneReg = sendDoneReg = recvDoneReg = null;
        if (pciReadTaken) pciReadReg = null;
        if (pciWriteTaken) hostOutQ.poll();
        if (linkTxTaken) sendOutQ.poll();

        if (grant >= 0) {
            lastGrant = grant;
            if (!dry) {
                beatsOut.inc();
                if (requesting > 1) stallsOut.inc();
            } else {
                loggedBeats++;
                if (requesting > 1) loggedStalls++;
            }
            switch (grant) {
                case HOST -> hostBeat();
                case SEND -> sendBeat();
                default -> recvBeat();
            }
        }
        if (hostErrDrop) hostErrBeat();
        if (recvDrop) {
            long last = recvInQ.peekFlag();
            recvInQ.poll();
            if (last != 0) finishRecv(Done.Status.OVERRUN);
        }
        if (pciDataIn != null) hostInQ.add(pciDataIn, pciFlag);
        if (linkRxIn != null) recvInQ.add(linkRxIn, linkRxFlag);

        if (hostDescIn != null) acceptHost(hostDescIn);
        if (sendDescIn != null) acceptSend(sendDescIn);
        if (recvDescIn != null) acceptRecv(recvDescIn);
    }

    // ---- one engine alone on the bus: k edges in one step (closed form of what edge() does)

    /**
     * Whether engine {@code e} alone can request the bus on the coming edges, as long as no beat
     * comes in for the others: each other engine is idle or waits for its first beat in (an input
     * engine with an empty queue), and no beat but {@code e}'s waits to leave.
     */
    boolean alone(int e) {
        boolean host = e == HOST || !hostBusy || !hostToHost && hostInQ.isEmpty();
        boolean recv = e == RECV || !recvBusy || recvInQ.isEmpty();
        return host && recv && (e == SEND || !sendBusy) && (e == HOST || hostOutQ.isEmpty())
                && (e == SEND || sendOutQ.isEmpty()) && !reporting();
    }

    /** Whether the host engine would take a beat in from PCI (it reads host memory into SRAM). */
    boolean hostTakesIn() { return hostBusy && !hostToHost; }

    /** Whether the receive engine would take a beat in from the link. */
    boolean recvTakesIn() { return recvBusy; }

    /** Beats the send engine has still to read out of SRAM. */
    long sendBeatsLeft() { return sendLeft / beat; }

    /**
     * {@code k} edges (1 to {@link #sendBeatsLeft}) on which the send engine is {@link #alone}
     * with one beat in its output queue, taken each edge while it reads the next: the caller has
     * checked that none of the beats taken is heard outside (they are not its last). {@code taken}
     * gets the words of each beat taken, in order (null: nobody reads them). What k calls of {@link #edge} would do.
     */
    void sendAlone(long k, Consumer<long[]> taken) {
        if (k < 1 || k > sendBeatsLeft() || sendOutQ.size() != 1 || !alone(SEND))
            throw new IllegalStateException("send engine not alone for " + k + " edges");
        long[] first = sendOutQ.poll();
        if (taken != null) {
            taken.accept(first);
            for (long i = 0; i < k - 1; i++) taken.accept(read(sendSram + i * beat));
        }
        long moved = k * beat;
        sendOutQ.add(0, read(sendSram + moved - beat), sendLeft == moved ? 1 : 0);
        sendSram += moved;
        sendLeft -= moved;
        sendMoved += moved;
        granted(SEND, k);
        if (sendLeft == 0) { sendDoneReg = done(sendTag, Done.Status.OK.ordinal(), sendMoved); sendBusy = false; }
    }

    /**
     * {@code k} edges on which the host engine (host to SRAM) or the receive engine is {@link #alone}
     * with at most one good beat in its input queue, written to SRAM each edge while the next comes in
     * (an empty queue: the first edge only takes a beat in, nothing asks for the bus): {@code in} gives the
     * words of the k beats that come in, each in by its edge and good (not failed, not a packet's last), or null
     * when they are all {@link #blank}; the beats written leave the descriptor at least one more. What k calls of
     * {@link #edge} would do.
     */
    void inAlone(int engine, int k, IntFunction<long[]> in) {
        boolean host = engine == HOST;
        BeatFifo2 q = host ? hostInQ : recvInQ;
        int off = q.isEmpty() ? 1 : 0, m = k - off; // edges that only take a beat in; those that write one
        if (k < 1 || (long) m * beat >= (host ? hostLeft : recvLeft) || !inAloneReady(engine))
            throw new IllegalStateException((host ? "host" : "receive") + " engine not alone for " + k + " edges");
        if (off == 1) {
            q.add(in == null ? blankWords : in.apply(0), 0);
            if (m == 0) return;
        }
        long at = host ? hostSram : recvSram;
        // each edge writes the queue's beat and takes the next in: the head, then all but the last taken in
        write(at, q.poll());
        if (in == null) writeBlank(at + beat, m - 1);
        else for (int e = off; e < k - 1; e++) write(at += beat, in.apply(e));
        q.add(in == null ? blankWords : in.apply(k - 1), 0);
        long moved = (long) m * beat;
        if (host) { hostSram += moved; hostLeft -= moved; hostMoved += moved; }
        else { recvSram += moved; recvLeft -= moved; recvMoved += moved; }
        granted(engine, m);
    }

    /**
     * Whether the host engine (host to SRAM) or the receive engine could move beats alone, given good beats
     * coming in.
     */
    boolean inAloneReady(int engine) {
        boolean host = engine == HOST;
        BeatFifo2 q = host ? hostInQ : recvInQ;
        return (host ? hostBusy && !hostToHost && !hostErr : recvBusy && !recvDrain) && alone(engine)
                && (q.isEmpty() || q.size() == 1 && q.peekFlag() == 0);
    }

    /**
     * Beats the host engine (host to SRAM) or the receive engine can take alone before its descriptor's last (one
     * more when its queue is empty: the first only goes in).
     */
    long inRoom(int engine) {
        boolean host = engine == HOST;
        return ((host ? hostLeft : recvLeft) - 1) / beat + ((host ? hostInQ : recvInQ).isEmpty() ? 1 : 0);
    }

    /** Beats in the input queue of the host engine (host to SRAM) or the receive engine. */
    int inQueued(int engine) { return (engine == HOST ? hostInQ : recvInQ).size(); }

    /** Beats the host engine (host to SRAM) or the receive engine can write to SRAM before its descriptor's last. */
    long inWritable(int engine) { return ((engine == HOST ? hostLeft : recvLeft) - 1) / beat; }

    /**
     * One edge on which the host engine (host to SRAM) or the receive engine, {@link #inAloneReady alone}, writes
     * the good beat in its queue to SRAM and nothing comes in (the next beat is not in yet): the queue is empty
     * after it, and the descriptor has a beat left. What {@link #edge} does then.
     */
    void drainIn(int engine) {
        boolean host = engine == HOST;
        BeatFifo2 q = host ? hostInQ : recvInQ;
        if (q.size() != 1 || inWritable(engine) < 1 || !inAloneReady(engine))
            throw new IllegalStateException((host ? "host" : "receive") + " engine has no beat to drain alone");
        if (host) { write(hostSram, q.poll()); hostSram += beat; hostLeft -= beat; hostMoved += beat; }
        else { write(recvSram, q.poll()); recvSram += beat; recvLeft -= beat; recvMoved += beat; }
        granted(engine, 1);
    }

    /** {@code k} grants to engine {@code e} alone: counted as k beats on the bus, none contended. */
    private void granted(int e, long k) {
        lastGrant = e;
        if (dry) loggedBeats += k;
        else beatsOut.add(k);
    }

    /**
     * Whether the host engine writes SRAM out to host memory {@link #alone}, one beat waiting to leave: see
     * {@link #hostOutAlone}.
     */
    boolean hostOutReady() { return hostBusy && hostToHost && hostOutQ.size() == 1 && alone(HOST); }

    /**
     * Where the beat the host engine writing to host memory would put out after {@code i} >= 1 more edges
     * goes: the {@code i}-th it has still to read out of SRAM (the one waiting is {@code hostOutQ}'s head).
     */
    long hostOutAddrAfter(long i) { return hostAddr + (i - 1) * beat; }

    /** Whether that beat is its descriptor's last (1) or not (0). */
    long hostOutLastAfter(long i) { return hostLeft == i * beat ? 1 : 0; }

    /** Hears a beat to host memory: its address, words and whether it is its descriptor's last (1). */
    @FunctionalInterface interface WriteOut { void beat(long addr, long[] data, long last); }

    /** Beats the host engine writing to host memory has still to read out of SRAM. */
    long hostOutLeft() { return hostToHost ? hostLeft / beat : 0; }

    /**
     * {@code k} edges (1 to {@link #hostOutLeft}) on which the host engine writing to host memory
     * is {@link #alone} with one beat waiting to leave, taken each edge while it reads the next:
     * the caller has checked that none of the beats taken is heard outside. {@code taken} gets
     * each beat taken, in order (null: nobody reads them). What k calls of {@link #edge} would do.
     */
    void hostOutAlone(long k, WriteOut taken) {
        if (k < 1 || k > hostOutLeft() || !hostOutReady())
            throw new IllegalStateException("host engine not alone writing out for " + k + " edges");
        long firstAddr = hostOutQ.peekAddr(), firstLast = hostOutQ.peekFlag();
        long[] first = hostOutQ.poll();
        if (taken != null) {
            taken.beat(firstAddr, first, firstLast);
            for (long i = 0; i < k - 1; i++) taken.beat(hostAddr + i * beat, read(hostSram + i * beat), 0);
        }
        long moved = k * beat;
        hostOutQ.add(hostAddr + moved - beat, read(hostSram + moved - beat), hostLeft == moved ? 1 : 0);
        hostAddr += moved;
        hostSram += moved;
        hostLeft -= moved;
        hostMoved += moved;
        granted(HOST, k);
        if (hostLeft == 0) { hostDoneReg = done(hostTag, Done.Status.OK.ordinal(), hostMoved); hostBusy = false; }
    }

    /**
     * Idle, as far as an edge can tell, while nothing is moving: in particular a host engine waiting
     * for read data and a receive engine waiting for link beats change nothing until a beat comes
     * (whoever brings it wakes the clock), even with the next descriptor waiting for them.
     */
    boolean active() {
        boolean hostWorking = hostBusy && (hostToHost || pciReadReg != null || !hostInQ.isEmpty());
        boolean recvWorking = recvBusy && !recvInQ.isEmpty();
        return hostWorking || sendBusy || recvWorking || !hostOutQ.isEmpty() || !sendOutQ.isEmpty() || reporting();
    }

    /**
     * SRAM {@code [sramAddr, sramAddr + bytes)} (whole beats) holds nothing anyone will read: its
     * transfer is over, and the next one there writes it before reading. The beats it held are
     * let go (the model's SRAM holds a reference per beat, which would keep them alive).
     */
    void forget(long sramAddr, long bytes) {
        sram.clear((int) (sramAddr / beat), (int) ((sramAddr + bytes) / beat));
    }

    private long[] read(long sramAddr) {
        long[] v = sram.slot((int) (sramAddr / beat));
        return v != null ? v : blankWords != null ? blankWords : new long[DmaPorts.words(cfg.widthBits())];
    }

    private void write(long sramAddr, long[] data) {
        int at = (int) (sramAddr / beat);
        if (data == blankWords && data != null) data = null; // reads as blank
        if (!dry) { sram.keep(at, data); return; }
        if (data == null && sram.slot(at) == null) return;
        log(at, data);
    }

    /** {@code n} blank beats written from {@code sramAddr} on. */
    private void writeBlank(long sramAddr, int n) {
        int from = (int) (sramAddr / beat);
        if (!dry) { sram.clear(from, from + n); return; }
        for (int at = from; at < from + n; at++) {
            if (sram.pageBlank(at)) at |= DmaSram.PAGE_MASK; // all blank
            else if (sram.slot(at) != null) log(at, null);
        }
    }

    /** A dry copy's SRAM write, held back for {@link #adopt}. */
    private void log(int at, long[] data) {
        if (logged == loggedAt.length) {
            loggedAt = Arrays.copyOf(loggedAt, Math.max(16, 2 * logged));
            loggedData = Arrays.copyOf(loggedData, loggedAt.length);
        }
        loggedAt[logged] = at;
        loggedData[logged++] = data;
    }

    private void hostBeat() {
        if (hostToHost) {
            hostOutQ.add(hostAddr, read(hostSram), hostLeft == beat ? 1 : 0);
            hostAddr += beat;
        } else {
            write(hostSram, hostInQ.poll());
        }
        hostSram += beat;
        hostLeft -= beat;
        hostMoved += beat;
        if (hostLeft == 0) { hostDoneReg = done(hostTag, Done.Status.OK.ordinal(), hostMoved); hostBusy = false; }
    }

    /** From a failed beat on, the read's beats are taken and dropped; the descriptor ends with PCI_ERROR. */
    private void hostErrBeat() {
        hostInQ.poll();
        hostErr = true;
        hostLeft -= beat;
        if (hostLeft == 0) {
            hostDoneReg = done(hostTag, Done.Status.PCI_ERROR.ordinal(), hostMoved);
            hostBusy = false;
        }
    }

    private void sendBeat() {
        sendOutQ.add(0, read(sendSram), sendLeft == beat ? 1 : 0);
        sendSram += beat;
        sendLeft -= beat;
        sendMoved += beat;
        if (sendLeft == 0) { sendDoneReg = done(sendTag, Done.Status.OK.ordinal(), sendMoved); sendBusy = false; }
    }

    private void recvBeat() {
        long last = recvInQ.peekFlag();
        write(recvSram, recvInQ.poll());
        recvSram += beat;
        recvLeft -= beat;
        recvMoved += beat;
        if (last != 0) finishRecv(Done.Status.OK);
        else if (recvLeft == 0) recvDrain = true; // more is coming than the descriptor has room for
    }

    /** A finished descriptor, counted by how it ended ("DmaEngine.done_ok", "DmaEngine.done_overrun", ...). */
    private Done done(long tag, long status, long length) {
        if (dry) loggedDone[(int) status]++; else doneCounter((int) status).inc();
        return new Done(tag, status, length);
    }

    private Counters.Counter doneCounter(int k) {
        if (doneCounters[k] == null) doneCounters[k] = counters.counter(DONE_COUNTERS[k]);
        return doneCounters[k];
    }

    private void finishRecv(Done.Status s) {
        recvDoneReg = done(recvTag, s.ordinal(), recvMoved);
        recvBusy = false;
        recvDrain = false;
    }

    private Done.Status check(long sramAddr, long length, long hostAddr) {
        if (length == 0 || length % beat != 0 || sramAddr % beat != 0 || hostAddr % beat != 0)
            return Done.Status.MISALIGNED;
        if (sramAddr + length > cfg.sramBytes()) return Done.Status.OUT_OF_SRAM;
        return Done.Status.OK;
    }

    private void acceptHost(HostDesc d) {
        Done.Status s = check(d.sramAddr(), d.length(), d.hostAddr());
        if (s != Done.Status.OK) { hostDoneReg = done(d.tag(), s.ordinal(), 0); return; }
        hostBusy = true;
        hostToHost = d.toHost() != 0;
        hostErr = false;
        hostAddr = d.hostAddr();
        hostSram = d.sramAddr();
        hostLeft = d.length();
        hostTag = d.tag();
        hostMoved = 0;
        if (!hostToHost) pciReadReg = new PciRead(d.hostAddr(), d.length(), d.tag());
    }

    private void acceptSend(LinkDesc d) {
        Done.Status s = check(d.sramAddr(), d.length(), 0);
        if (s != Done.Status.OK) { sendDoneReg = done(d.tag(), s.ordinal(), 0); return; }
        sendBusy = true;
        sendSram = d.sramAddr();
        sendLeft = d.length();
        sendTag = d.tag();
        sendMoved = 0;
    }

    private void acceptRecv(LinkDesc d) {
        Done.Status s = check(d.sramAddr(), d.length(), 0);
        if (s != Done.Status.OK) { recvDoneReg = done(d.tag(), s.ordinal(), 0); return; }
        recvBusy = true;
        recvDrain = false;
        recvSram = d.sramAddr();
        recvLeft = d.length();
        recvTag = d.tag();
        recvMoved = 0;
    }

    private static final String[] DONE_COUNTERS = Arrays.stream(Done.Status.values())
            .map(s -> NAME + ".done_" + s.name().toLowerCase(Locale.ROOT)).toArray(String[]::new);
}
