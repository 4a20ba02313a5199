package nicsim.adapter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.function.Supplier;
import nicsim.adapter.DmaPath.Job;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaPorts.Done;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.adapter.DmaPorts.PciRead;
import nicsim.adapter.DmaPorts.WriteBeat;
import nicsim.host.FreeRanges;
import nicsim.host.PciPort;
import nicsim.sim.Alarm;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;

import static nicsim.adapter.DmaPath.PLACED;

/**
 * A set of engines, their SRAM allocator and the glue driving their ports. Between the edges
 * where something leaves the channel (a PCI read or write, a job's first or last beat to the link,
 * a finished descriptor), edges only move beats inside it: the channel lets its clock coast over
 * them ({@link ClockDomain.Coaster}). Whatever changes its inputs from outside wakes its domain first.
 */
class DmaChannel implements Clocked {
    private static final VarHandle LE_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    final Simulator sim;
    final Supplier<PciPort> port;
    final int beat, readRequest, writePayload; // the path's
    final ClockDomain domain;
    final DmaEngine engine;
    final FreeRanges free;
    final ArrayDeque<Job> waiting = new ArrayDeque<>(), hostQ = new ArrayDeque<>(), sendQ = new ArrayDeque<>(),
            recvQ = new ArrayDeque<>();
    final ArrayDeque<Job> hostBusy = new ArrayDeque<>(), sendBusy = new ArrayDeque<>(),
            recvBusy = new ArrayDeque<>();
    final ArrayDeque<Job> toHost = new ArrayDeque<>(); // write jobs whose beats are coming out of the host engine
    // beats for the receive engine off the link, for the host engine off the PCI bus
    final BeatRing rx, pci;
    final Alarm wakes; // the wakes for beats to come in, one queued in the kernel at a time
    final DmaWritesAhead ahead = new DmaWritesAhead(this); // PCI writes a coast issues at their edges' times
    // host read pieces in issue order, each on the PCI ring once it and all before it are back
    final ArrayDeque<Piece> pciPieces = new ArrayDeque<>();
    // when the first beat of each read answered while the clock ran is in
    final LongQueue answered = new LongQueue();
    // a beat a job's bytes fill only in part, between its words and its bytes
    final byte[] edgeBeat;
    final long[] blank; // the words of every beat of a job that does not carry its bytes (nobody reads them)
    final int index; // in channels
    int load;

    DmaChannel(DmaPath path, int index, ClockDomain domain, DmaEngine.Config cfg) {
        this.sim = path.sim;
        this.port = path.port;
        this.beat = path.beat;
        this.readRequest = path.readRequest;
        this.writePayload = path.writePayload;
        this.edgeBeat = new byte[beat];
        this.index = index;
        this.domain = domain;
        this.engine = new DmaEngine(domain, cfg);
        free = new FreeRanges(cfg.sramBytes());
        blank = new long[DmaPorts.words(cfg.widthBits())];
        wakes = new Alarm(sim, Simulator.Priority.DELIVERY, () -> { if (!domain.coasting()) domain.wake(); });
        engine.core().blank(blank);
        rx = new BeatRing(sim, this::wakeAt, blank);
        pci = new BeatRing(sim, this::wakeAt, blank);
        domain.add(this);
    }

    void add(Job j) {
        domain.wake(); // before its inputs change (it may be coasting)
        j.channel = this;
        load++;
        waiting.addLast(j);
        allocate();
        domain.wake();
    }

    /** Gives SRAM to waiting jobs in order; a job that does not fit holds the ones behind it. */
    void allocate() {
        while (!waiting.isEmpty()) {
            Job j = waiting.peekFirst();
            long at = free.take(j.span);
            if (at < 0) return;
            waiting.pollFirst();
            j.sram = at;
            j.carry = domain.watched();
            // an Out job's bytes are its packet's, a write's and an uncarried direct read's its caller's
            if (j.out == null && !j.write && (j.carry || j.direct == null)) j.buf = new byte[j.span];
            j.hostDesc = new HostDesc(j.write ? 1 : 0, j.alignedHost(), j.sram, j.span, 0);
            j.linkDesc = new LinkDesc(j.sram, j.span, 0);
            if (j.write) {
                // the bytes arrive from the link at their host address's offset within a beat
                recvQ.addLast(j);
                if (!j.carry) { // beats of no bytes: only when each is in matters, put on the ring by the run
                    blankWrite(j);
                    continue;
                }
                for (int b = 0; b < j.span; b += beat) {
                    long[] words;
                    if (b >= j.skew && b + beat <= j.skew + j.length)
                        words = toWords(j.data, j.dataOff + b - j.skew);
                    else { // zero padded
                        Arrays.fill(edgeBeat, (byte) 0);
                        int from = Math.max(b, j.skew), to = Math.min(b + beat, j.skew + j.length);
                        System.arraycopy(j.data, j.dataOff + from - j.skew, edgeBeat, from - b, to - from);
                        words = toWords(edgeBeat, 0);
                    }
                    rx.add(words, b + beat == j.span ? 1 : 0, beatIn(j, b));
                }
            } else hostQ.addLast(j);
        }
    }

    private long[] ins = new long[64]; // when each beat of an uncarried write is in

    /** An uncarried write's beats onto the link ring: what {@link #allocate}'s loop puts there, by the run. */
    private void blankWrite(Job j) {
        int n = (j.span + beat - 1) / beat;
        if (ins.length < n) ins = new long[Math.max(n, 2 * ins.length)];
        // when its last byte is in (beatIn): the counts beat - skew, 2 beat - skew, ..., up to the length
        if (j.arrival == null) Arrays.fill(ins, 0, n, Long.MIN_VALUE);
        else if (j.length > 0) j.arrival.byEach(beat - j.skew, beat, ins, 0, n);
        else for (int i = 0, b = 0; i < n; i++, b += beat) ins[i] = beatIn(j, b);
        rx.add(null, 0, ins, n - 1);
        rx.add(blank, n * beat == j.span ? 1 : 0, ins[n - 1]);
    }

    /** When the beat at byte {@code b} of write {@code j}'s span is in from the link: once its last byte is. */
    private long beatIn(Job j, int b) {
        return j.arrival == null ? Long.MIN_VALUE : j.arrival.by(Math.min(j.length, b + beat - j.skew));
    }

    /**
     * A job is done with the channel: its SRAM is free for the jobs waiting, and it no longer counts in the load.
     */
    void release(Job j) {
        load--;
        engine.core().forget(j.sram, j.span);
        free.give(j.sram, j.sram + j.span);
        allocate();
    }

    /** A beat's words from {@code beat} bytes at {@code off}, little-endian. */
    long[] toWords(byte[] b, int off) {
        if (beat < 8) return new long[]{(int) LE_INT.get(b, off) & 0xFFFF_FFFFL};
        long[] w = new long[beat / 8];
        for (int i = 0; i < w.length; i++) w[i] = (long) LE_LONG.get(b, off + 8 * i);
        return w;
    }

    /**
     * Where bytes {@code [off, off + len)} of the beat of words {@code w} first differ from
     * {@code expected[at, at + len)}, counted from {@code off}; -1 if they are the same (or {@code len} is not
     * positive).
     */
    int firstDifference(long[] w, int off, int len, byte[] expected, int at) {
        if (len <= 0) return -1;
        fromWords(w, edgeBeat, 0);
        return Arrays.mismatch(edgeBeat, off, off + len, expected, at, at + len);
    }

    void fromWords(long[] w, byte[] b, int off) {
        if (beat < 8) { LE_INT.set(b, off, (int) w[0]); return; }
        for (int i = 0; i < w.length; i++) LE_LONG.set(b, off + 8 * i, w[i]);
    }

    @Override public void drive() {
        offerDescriptors();
        if (pci.in()) engine.pciData().push(pci.head()); else engine.pciData().idle();
        if (rx.in()) engine.linkRx().push(rx.head()); else engine.linkRx().idle();
        engine.pciRead().ready(true);
        engine.pciWrite().ready(true);
        engine.linkTx().ready(true);
    }

    /** The descriptor wires carry the job at the head of each queue (idle: none). */
    void offerDescriptors() {
        Job h = hostQ.peekFirst();
        if (h == null) engine.hostDesc().idle(); else engine.hostDesc().push(h.hostDesc);
        Job s = sendQ.peekFirst();
        if (s == null) engine.sendDesc().idle(); else engine.sendDesc().push(s.linkDesc);
        Job r = recvQ.peekFirst();
        if (r == null) engine.recvDesc().idle(); else engine.recvDesc().push(r.linkDesc);
    }

    /**
     * What crossed between the engine and the glue on one edge, for {@link #edged}: the channel's one, filled anew
     * for each edge by whoever ran it, so that an edge allocates nothing. {@link #update} reads it off the wires; a
     * coasting channel knows it from the engine's registers before the edge. No edge of the channel runs inside
     * another's glue, so one serves.
     */
    static final class Edge {
        // whether the engines took the descriptors at the heads of the host, send and receive queues, and the next
        // beats of the PCI and link rings
        boolean hostTaken, sendTaken, recvTaken, pciTaken, rxTaken;
        PciRead read; // the PCI read asked (null: none)
        long[] tx; // the beat to the link: its words (null: none) and last flag
        long txFlag;
        long[] wr; // the beat to host memory: its words (null: none), address and last flag
        long wrAddr, wrLast;
        long at; // the edge's time
        Done hostDone, sendDone, recvDone; // the descriptors reported finished (null: none)
    }

    final Edge edge = new Edge();

    /** The edge through the wires: what crossed them, to {@link #edged}. */
    @Override public void update() {
        DmaEngine e = engine;
        Edge x = edge;
        x.hostTaken = e.hostDesc().fire();
        x.sendTaken = e.sendDesc().fire();
        x.recvTaken = e.recvDesc().fire();
        x.pciTaken = e.pciData().fire();
        x.rxTaken = e.linkRx().fire();
        x.read = e.pciRead().fire() ? e.pciRead().payload() : null;
        Beat tx = e.linkTx().fire() ? e.linkTx().payload() : null;
        x.tx = tx == null ? null : tx.data();
        x.txFlag = tx == null ? 0 : tx.flag();
        WriteBeat wr = e.pciWrite().fire() ? e.pciWrite().payload() : null;
        x.wr = wr == null ? null : wr.data();
        x.wrAddr = wr == null ? 0 : wr.addr();
        x.wrLast = wr == null ? 0 : wr.last();
        x.at = sim.now();
        x.hostDone = e.hostDone().valid() ? e.hostDone().payload() : null;
        x.sendDone = e.sendDone().valid() ? e.sendDone().payload() : null;
        x.recvDone = e.recvDone().valid() ? e.recvDone().payload() : null;
        edged(x);
    }

    /** The glue's part of an edge the engine ran, from what crossed between them ({@link Edge}). */
    void edged(Edge x) {
        if (x.hostTaken) hostBusy.addLast(hostQ.pollFirst());
        if (x.sendTaken) sendBusy.addLast(sendQ.pollFirst());
        if (x.recvTaken) recvBusy.addLast(recvQ.pollFirst());
        if (x.pciTaken) pci.take();
        if (x.rxTaken) rx.take();
        if (x.read != null) readHost(x.read);
        if (x.tx != null) linkBeat(x.tx, x.txFlag);
        if (x.wr != null) writeBeat(x.wrAddr, x.wr, x.wrLast, x.at);
        reported(x.hostDone, x.sendDone, x.recvDone);
    }

    /** The descriptors the engines report finished on an edge (null: none), taken in the order of the wires. */
    void reported(Done host, Done send, Done recv) {
        if (host != null) hostDone(hostBusy.pollFirst(), host);
        if (send != null) {
            Job j = sendBusy.peekFirst();
            j.engineDone = true;
            if (send.reason() != Done.Status.OK) j.failed = true;
            finishSend();
        }
        if (recv != null) {
            Job j = recvBusy.pollFirst();
            if (recv.reason() != Done.Status.OK)
                throw new IllegalStateException("DmaEngine receive descriptor ended " + recv.reason());
            hostQ.addLast(j);
            toHost.addLast(j);
        }
    }

    /** Whether the next edge would hand the engine something it takes: a descriptor, or a beat that is in. */
    @Override public boolean active() {
        DmaCore e = engine.core();
        if (!hostQ.isEmpty() && e.takesHostDesc() || !sendQ.isEmpty() && e.takesSendDesc()
                || !recvQ.isEmpty() && e.takesRecvDesc() || pci.in() && e.takesPciData()
                || rx.in() && e.takesLinkRx())
            return true;
        // sleep until the next beat is in (one that is in and not taken waits for the engine, which is busy with
        // its queue)
        if (!rx.in()) rx.wakeForNext();
        if (!pci.in()) pci.wakeForNext();
        // and be woken when each read answered while the clock ran has its first beat in, as then
        for (long t; !answered.isEmpty(); ) if ((t = answered.poll()) > sim.now()) wakeAt(t);
        return false;
    }

    /**
     * Wakes the channel at {@code when} (once per time), unless it is coasting then: a coast
     * looks ahead at every beat the channel knows of, and whatever adds one wakes the channel.
     * A time to come is the domain's ({@link ClockDomain#wakeAt}): a clock stopped then sleeps till
     * its edge, one event rather than an alarm's and the edge it schedules.
     */
    void wakeAt(long when) {
        if (when > sim.now()) domain.wakeAt(when);
        else wakes.at(when);
    }

    /**
     * A host read piece: its beats (how many, when each is in once answered; their words: null each
     * blank; whether the read failed), and the handler of the read's answer. Once its beats are on the
     * PCI ring nobody holds it (the bus has answered, the ring holds times and words): it is the
     * channel's next piece, so a PCI read costs the channel no object.
     */
    final class Piece implements Consumer<PciPort.ReadResult>, PciPort.IntoAnswer {
        int beats;
        Job owner;
        long addr;
        int len;
        long[][] words;
        long[] in = new long[0]; // when each beat is in
        boolean failed, back; // back: answered

        Piece set(Job owner, long addr, int len) {
            this.owner = owner;
            this.addr = addr;
            this.len = len;
            this.beats = len / beat;
            this.words = null;
            this.failed = this.back = false;
            if (in.length < beats) in = new long[beats];
            return this;
        }

        @Override public void accept(PciPort.ReadResult res) {
            boolean ok = res.status() == PciPort.DmaStatus.OK;
            if (ok && owner.carry && owner.out != null) {
                // the job's own bytes of this read (the beats around them may hold others)
                long from = Math.max(addr, owner.hostAddr);
                long to = Math.min(addr + len, owner.hostAddr + owner.length);
                if (to > from) System.arraycopy(res.data(), (int) (from - addr), owner.out.bytes,
                        owner.outAt + (int) (from - owner.hostAddr), (int) (to - from));
            }
            if (owner.carry) {
                words = new long[beats][];
                for (int b = 0; b < beats; b++) words[b] = ok ? toWords(res.data(), b * beat) : blank;
            }
            answered(res.status(), res.incoming());
        }

        @Override public void answered(PciPort.DmaStatus status, PciPort.Times times) {
            // the bytes are known as the host serves the read, before the first comes in: a coasting
            // channel wakes now, as its look-ahead did not know them, and the clock is woken when the
            // first is in, as it was when the read was answered then (if it has stopped by that time)
            if (domain.coasting()) domain.wake();
            long first = Math.max(sim.now(), times.head());
            if (domain.running()) answered.add(first); else wakeAt(first);
            failed = status != PciPort.DmaStatus.OK;
            times.byEach(beat, in, beats);
            back = true;
            while (!pciPieces.isEmpty() && pciPieces.peekFirst().back) pciPieces.pollFirst().ring();
        }

        /** Its beats go on the PCI ring, each with the time it is in; then it is a spare. */
        void ring() {
            pci.add(words, failed ? 1 : 0, in, beats);
            owner = null;
            words = null;
            sparePieces.push(this);
        }
    }

    final ArrayDeque<Piece> sparePieces = new ArrayDeque<>();

    /**
     * The host engine's read: issued to PCI in read-request pieces; their beats enter in address
     * order, each once it has crossed the bus (a conventional PCI bus hands data over as it comes).
     */
    void readHost(PciRead r) {
        PciPort p = port.get();
        for (long off = 0; off < r.length(); ) {
            long addr = r.addr() + off;
            int len = (int) Math.min(r.length() - off, readRequest - Math.floorMod(addr, (long) readRequest));
            // the engine reads for the descriptor it took last (it takes one only when done with the one before)
            Job owner = hostBusy.peekLast();
            if (owner == null || owner.write || addr < owner.alignedHost()
                    || addr + len > owner.alignedHost() + owner.span)
                throw new IllegalStateException("host engine read of " + len + " B at 0x" + Long.toHexString(addr)
                        + " outside its descriptor");
            Piece piece = (sparePieces.isEmpty() ? new Piece() : sparePieces.pop()).set(owner, addr, len);
            pciPieces.addLast(piece);
            // a job that does not carry its bytes in its beats has them read straight to where they go
            if (!owner.carry && owner.into == null)
                owner.into = owner.out != null
                        ? new PciPort.Into(owner.out.bytes, owner.outAt, owner.hostAddr, owner.length)
                        : owner.direct != null ? owner.direct
                        : new PciPort.Into(owner.buf, 0, owner.alignedHost(), owner.span);
            if (owner.carry) p.dmaReadStreamed(addr, len, (Consumer<PciPort.ReadResult>) piece);
            else p.dmaReadStreamed(addr, len, owner.into, (PciPort.IntoAnswer) piece);
            off += len;
        }
    }

    void hostDone(Job j, Done d) {
        if (!j.write) {
            if (d.reason() != Done.Status.OK) {
                if (j.out != null) { release(j); j.out.settled(j, false); } else fail(j);
                return;
            }
            if (j.out != null) { j.staged = true; j.out.settled(j, true); } else sendQ.addLast(j);
            return;
        }
        j.engineDone = true;
        if (d.reason() != Done.Status.OK) { toHost.remove(j); j.failed = true; }
        finishWrite(j);
    }

    /** A beat of these words left the send engine for the link ({@code last}: its job's last). */
    void linkBeat(long[] words, long last) {
        Job j = sendBusy.peekFirst();
        if (j.out != null && j.filled == 0) j.out.firstBeat();
        if (!j.carry) { /* its bytes went to the job or its packet as the read was answered */ }
        else if (j.out == null) fromWords(words, j.buf, j.filled);
        else {
            // the job's bytes of the beat must be the packet's bytes there, as the host engine put them in SRAM
            int from = Math.max(j.filled, j.skew), to = Math.min(j.filled + beat, j.skew + j.length);
            int at = j.outAt + from - j.skew;
            int differs = firstDifference(words, from - j.filled, to - from, j.out.bytes, at);
            if (differs >= 0)
                throw new IllegalStateException(
                        "the send engine's output differs from SRAM at byte " + (at + differs));
        }
        j.filled += beat;
        if (last != 0) j.lastBeat = true;
        finishSend();
    }

    /**
     * {@code n} beats of a job that does not carry its bytes left the send engine, none heard outside: what
     * {@link #linkBeat} does n times.
     */
    void linkRun(long n) {
        sendBusy.peekFirst().filled += (int) n * beat;
        finishSend();
    }

    /**
     * {@code n} beats of a job that does not carry its bytes left the host engine from host address {@code addr}
     * on, one a cycle from time {@code t}, none leaving ({@link #writeLeaves}): what {@link #writeBeat} does n
     * times, which is to note when the first beat of the next PCI write came out.
     */
    void writeRun(long addr, long n, long t) {
        Job j = toHost.peekFirst();
        for (long i = 0; i < n && j.pieceSince < 0; i++)
            writeBeat(addr + i * beat, blank, 0, t + i * domain.periodPicos());
    }

    void finishSend() {
        Job j = sendBusy.peekFirst();
        if (j == null || !j.engineDone || !(j.lastBeat || j.failed)) return;
        sendBusy.pollFirst();
        if (j.failed) { fail(j); return; }
        release(j);
        // a read's: the beats of its span as they came, its bytes from its skew (read copies them where they go)
        byte[] bytes = j.out != null ? j.out.bytes : j.buf != null ? j.buf : PLACED;
        deliver(j, bytes);
    }

    void fail(Job j) {
        release(j);
        deliver(j, null);
    }

    /** Tells a job's owner it finished, after this edge: its callback may start more transfers. */
    void deliver(Job j, byte[] result) {
        j.result = result;
        sim.postIn(0, Simulator.Priority.DELIVERY, j);
    }

    /**
     * A beat of these words to host address {@code beatAddr} leaving the host engine for host memory ({@code
     * lastFlag}: its job's last): the bytes of the job it belongs to go out in max-payload pieces.
     */
    void writeBeat(long beatAddr, long[] words, long lastFlag, long now) {
        Job j = toHost.peekFirst();
        int at = (int) (beatAddr - j.alignedHost());
        // the job's bytes of the beat must be those it came with: the PCI writes carry those
        int lo = Math.max(at, j.skew);
        int differs = !j.carry ? -1
                : firstDifference(words, lo - at, Math.min(at + beat, j.skew + j.length) - lo, j.data,
                        j.dataOff + lo - j.skew);
        if (differs >= 0) throw new IllegalStateException("the host engine's output differs from SRAM at byte "
                + (lo - j.skew + differs) + " of a write");
        boolean last = lastFlag != 0;
        // host bytes [from, to) of the job that are complete and not yet written
        int from = Math.max(j.filled, j.skew), to = writtenTo(j, beatAddr);
        if (j.pieceSince < 0 && to > from) j.pieceSince = now;
        if (to > from && (last || Math.floorMod(j.alignedHost() + to, (long) writePayload) == 0)) {
            // a slice of the job's bytes, not a copy: they do not change until the job is done
            int pieceOff = j.dataOff + from - j.skew, pieceLen = to - from;
            j.filled = to;
            long since = j.pieceSince, addr = j.alignedHost() + from;
            j.pieceSince = -1;
            if (ahead.issuedAt(now)) ahead.met(now, addr, pieceLen, since); // issued at its time, in a coast
            else issue(j, addr, pieceOff, pieceLen, since, last);
        }
        if (last) { j.lastBeat = true; toHost.pollFirst(); issued(j); }
    }

    /**
     * Job {@code j}'s PCI write of its bytes {@code [off, off + len)} to host address {@code addr}, fed since {@code
     * since}, leaves now ({@code last}: the job's last).
     */
    void issue(Job j, long addr, int off, int len, long since, boolean last) {
        PciPort p = port.get();
        if (!j.writeMayFail && !p.dmaWriteLands(addr, len)) j.writeMayFail = true;
        if (!last && !j.writeMayFail) {
            // the job cannot finish before its last write lands, after this one (the bus keeps
            // their order), and none has failed: this one's completion would change nothing
            p.dmaWriteStreamedPosted(addr, j.data, off, len, since);
            return;
        }
        j.writesPending++;
        p.dmaWriteStreamed(addr, j.data, off, len, since, res -> {
            // no edge reads what a landed write changes, until its job can finish: only then
            // is the channel woken (it may be coasting), before the job lets go of its SRAM
            if (res.status() != PciPort.DmaStatus.OK) j.failed = true;
            j.writesPending--;
            if (!finishable(j)) return;
            domain.wake();
            finishWrite(j);
        });
    }

    /** The end of the job's host bytes that are complete once beat {@code w} is out of the host engine. */
    int writtenTo(Job j, long addr) {
        return Math.min((int) (addr - j.alignedHost()) + beat, j.skew + j.length);
    }

    /**
     * Whether a beat of job {@code j} to host address {@code addr} ({@code last}: its last) makes {@link
     * #writeBeat} issue a PCI write or end the job.
     */
    boolean writeLeaves(Job j, long addr, long last) {
        if (last != 0) return true;
        int to = writtenTo(j, addr);
        return to > Math.max(j.filled, j.skew) && Math.floorMod(j.alignedHost() + to, (long) writePayload) == 0;
    }

    /** Tells a write job's owner its PCI writes are all on their way, after this edge. */
    void issued(Job j) {
        Runnable r = j.issued;
        if (r == null) return;
        j.issued = null;
        sim.postIn(0, Simulator.Priority.DELIVERY, r);
    }

    /** Whether a write job is done with the channel: the engine finished it and its PCI writes all landed. */
    boolean finishable(Job j) {
        return j.engineDone && j.writesPending == 0 && (j.lastBeat || j.failed) && j.sram >= 0;
    }

    void finishWrite(Job j) {
        if (!finishable(j)) return;
        release(j);
        j.sram = -1;
        issued(j);
        deliver(j, j.failed ? null : j.data);
        domain.wake();
    }
}
