package nicsim.adapter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaPorts.Done;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.adapter.DmaPorts.PciRead;
import nicsim.adapter.DmaPorts.WriteBeat;
import nicsim.host.FreeRanges;
import nicsim.host.PciLink;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Alarm;
import nicsim.sim.Arrival;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;

/**
 * The payload path through the adapter's {@link DmaEngine}s (docs/architecture.md#data-path, step 6). Every
 * payload byte the transport reads from host memory is fetched by a host engine into SRAM and
 * leaves SRAM through the send engine; the transport gets the bytes as they came off the send
 * engine's link port. Every payload byte it writes to host memory enters SRAM through the receive
 * engine and leaves through the host engine as posted PCI writes. So the local bus width, the one
 * descriptor per engine and the bus shared by three engines (docs/sources.md#kvia-adapter) are in the
 * timing of every message.
 *
 * <p>{@code dma.channels} sets of engines work side by side, each with its own slice of
 * {@code core.sram.size} and its own clock domain of {@code dma.clock} (a LANai has one; a modern
 * adapter has many DMA contexts so host reads overlap). A transfer is cut into pieces of at most
 * {@link #pieceBytes()} and each piece goes to the least busy channel (the lowest-numbered of equals).
 *
 * <p>The engines move whole data-path beats at beat-aligned addresses. This glue plays the PCI
 * bridge's part for the rest: a read fetches the beats that cover the range (they never cross a
 * host page) and keeps the bytes asked for; a write puts the bytes in SRAM at the same offset within
 * a beat as their host address, and the PCI writes it issues carry only the bytes asked for (PCIe's
 * first/last byte enables). Host reads are issued in {@code pci.max.read.request} pieces and their
 * data enters SRAM as it comes in (a conventional PCI bus hands it over data phase by data phase,
 * PCIe a whole completion at a time); host writes leave in {@code pci.max.payload} pieces, each
 * starting on a conventional PCI bus with its first beat out of SRAM.
 *
 * <p>The engines' control never looks at a beat's data, only at its flag: when nothing watches a
 * channel's wires (no RTL twin in the loop, no waveform of its ports: {@link ClockDomain#watched}), its
 * beats carry one shared blank word array and the payload moves as a copy, host memory to the packet's
 * bytes and the packet's bytes to host memory, the beats keeping only the timing (how many, when each
 * crosses). A job decides this when it is given SRAM; while its channel is watched, its beats carry its
 * bytes and each one leaving an engine is checked against them.
 *
 * <p>Not through the engines: WQE and receive-WQE fetches, CQEs, command mailboxes, context and
 * translation loads, and the 8-byte atomics (the adapter's other DMA contexts).
 */
public final class DmaPath {
    /**
     * Most bytes one descriptor moves: a transfer goes in pieces of this size, so the send engine
     * works on one piece while the host engine brings the next (as a control program chains its
     * DMAs packet by packet).
     */
    public static final int PIECE = 4096;

    private static final VarHandle LE_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private final Simulator sim;
    private final Supplier<PciPort> port;
    private final Channel[] channels;
    private final int beat;
    private final int pieceBytes;
    private final int readRequest;
    private final int writePayload;

    /**
     * The path's parameters, from the profile: {@code dma.channels} sets of engines of {@code engine}'s width and
     * share of SRAM, clocked at {@code dma.clock}, splitting host reads and writes as the PCI link takes them
     * ({@code pci.max.read.request}, {@code pci.max.payload}).
     */
    public record Config(int channels, DmaEngine.Config engine, long clockPeriodPs, int readRequestBytes,
            int writePayloadBytes) {
        public Config {
            Require.atLeast("dma.clock", clockPeriodPs, 1, "ps");
        }

        public static Config from(Profile p, PciLink.Config pci) {
            return new Config(DmaEngine.Config.channels(p), DmaEngine.Config.from(p), p.periodPicos("dma.clock"),
                    pci.maxReadRequestBytes(), pci.maxPayloadBytes());
        }
    }

    /** The channels' clock domains are named {@code <domainPrefix>dma<k>}. */
    public DmaPath(Simulator sim, Config cfg, String domainPrefix, Supplier<PciPort> port) {
        this.sim = sim;
        this.port = port;
        int n = cfg.channels();
        this.beat = cfg.engine().beatBytes();
        this.pieceBytes = (int) Math.min(PIECE, cfg.engine().sramBytes() / 4);
        this.readRequest = cfg.readRequestBytes();
        this.writePayload = cfg.writePayloadBytes();
        this.channels = new Channel[n];
        this.goBeats = new long[n];
        for (int k = 0; k < n; k++)
            channels[k] = new Channel(k, sim.clockDomain(domainPrefix + "dma" + k, cfg.clockPeriodPs()), cfg.engine());
    }

    /** The engines, one per channel. */
    public List<DmaEngine> engines() {
        List<DmaEngine> l = new ArrayList<>();
        for (Channel c : channels) l.add(c.engine);
        return l;
    }

    /** The clock domain of channel {@code k}. */
    public ClockDomain domain(int k) { return channels[k].domain; }

    /** Largest piece one channel moves at a time. */
    public int pieceBytes() { return pieceBytes; }

    /**
     * Reads {@code length} bytes of host memory at {@code hostAddr} through host engine, SRAM and
     * send engine; {@code done} gets the bytes (null when a PCI read failed).
     */
    public void read(long hostAddr, int length, Consumer<byte[]> done) {
        if (length == 0) { done.accept(new byte[0]); return; }
        byte[] out = new byte[length];
        read(hostAddr, length, (at, src, from, len) -> System.arraycopy(src, from, out, at, len),
                ok -> done.accept(ok ? out : null));
    }

    /** Takes a read's bytes as each piece of it comes off the send engine. */
    public interface Sink {
        /** The read's bytes at offset {@code at}: {@code len} of them, in {@code src} from {@code from}. */
        void put(int at, byte[] src, int from, int len);

        /**
         * The array the read's bytes {@code [at, at + len)} go to, all in one run (null: none, or not in one), so a
         * piece whose beats carry no bytes has its PCI reads put them there straight, with no buffer of its own and
         * no {@link #put}.
         */
        default byte[] arrayFor(int at, int len) { return null; }

        /** Where in {@link #arrayFor}'s array the read's byte {@code at} goes. */
        default int offsetIn(int at) { return at; }
    }

    /** What a read's piece delivers when its bytes went straight to its sink's array. */
    private static final byte[] PLACED = new byte[0];

    /**
     * As {@link #read(long, int, Consumer)}, each piece's bytes handed to {@code sink} as it comes in (no array of
     * the whole read is made: the caller puts them where they go); {@code done} hears true once every piece is
     * in, or false once a PCI read failed (and nothing more after).
     */
    public void read(long hostAddr, int length, Sink sink, Consumer<Boolean> done) {
        if (length == 0) { done.accept(true); return; }
        int pieces = (length + pieceBytes - 1) / pieceBytes;
        int[] left = {pieces};
        boolean[] failed = {false};
        for (int i = 0; i < pieces; i++) {
            int off = i * pieceBytes, len = Math.min(pieceBytes, length - off);
            int skew = (int) Math.floorMod(hostAddr + off, (long) beat); // where its bytes start in its span
            Job j = new Job(false, hostAddr + off, len, null, 0, span -> {
                if (failed[0]) return;
                if (span == null) { failed[0] = true; done.accept(false); return; }
                if (span != PLACED) sink.put(off, span, skew, len);
                if (--left[0] == 0) done.accept(true);
            });
            byte[] to = sink.arrayFor(off, len);
            if (to != null) j.direct = new PciPort.Into(to, sink.offsetIn(off), hostAddr + off, len);
            submit(j);
        }
    }

    /** A host range: {@code length} bytes at {@code addr}. */
    public record Range(long addr, int length) {}

    /**
     * Sends host bytes to the link as one packet, as a control program does: the host engine brings
     * every range into SRAM; {@code inSram} hears it with the go-ahead (the program builds the
     * packet's headers meanwhile and must give it: until then the bytes hold their SRAM); then the
     * send engine streams them out to the link. {@code head} hears, when the packet's first beat
     * leaves the send engine, the packet's bytes as they stand in SRAM and how long the send engine
     * takes to feed all of them ({@code dma.clock}, one beat per cycle), so the link can carry the
     * packet while the engine is still moving it. {@code done} gets the bytes as they came off the
     * send engine once all are out (they must equal what was in SRAM), or null when a PCI read
     * failed, and then {@code head} never runs.
     */
    public void readOut(List<Range> ranges, Consumer<Runnable> inSram, BiConsumer<byte[], Long> head,
                        Consumer<byte[]> done) {
        readOut(ranges, null, inSram, head, done);
    }

    /**
     * As {@link #readOut(List, Consumer, BiConsumer, Consumer)}, the packet's bytes read into {@code into}
     * (null: a new array), which must be as long as the ranges together; every byte of it is written before
     * {@code head} hears it (a reused array's old bytes never leave).
     */
    public void readOut(List<Range> ranges, byte[] into, Consumer<Runnable> inSram, BiConsumer<byte[], Long> head,
                        Consumer<byte[]> done) {
        int n = 0;
        for (int i = 0; i < ranges.size(); i++) n += (ranges.get(i).length() + pieceBytes - 1) / pieceBytes;
        Out out = new Out(n, inSram, head, done);
        n = 0;
        for (int i = 0; i < ranges.size(); i++) { // indexed: an iterator a packet costs heap where the JIT keeps it
            Range r = ranges.get(i);
            for (int off = 0; off < r.length(); off += pieceBytes) {
                int at = out.length, len = Math.min(pieceBytes, r.length() - off);
                Job j = new Job(false, r.addr() + off, len, null, 0, out);
                j.out = out;
                j.outAt = at;
                out.jobs[n++] = j;
                out.length += len;
            }
        }
        if (into != null && into.length != out.length)
            throw new IllegalArgumentException("readOut into an array of " + into.length + " B for ranges of "
                    + out.length + " B");
        out.bytes = into != null ? into : new byte[out.length];
        if (n == 0) {
            sim.scheduleIn(0, Simulator.Priority.DELIVERY, () -> inSram.accept(() -> {
                head.accept(new byte[0], 0L);
                done.accept(new byte[0]);
            }));
            return;
        }
        for (Job j : out.jobs) submit(j);
    }

    /**
     * The jobs of one {@link #readOut}: held in SRAM until all are in, then sent out together. It is
     * its jobs' callback (each job's bytes off the send engine) and, run as an event, the next step
     * it is {@link #due} (one at a time: each step comes after the one before has run).
     */
    private final class Out implements Consumer<byte[]>, Runnable {
        static final int FAILED = 1, STAGED = 2, GO = 3, HEAD = 4; // the steps run() takes
        final Job[] jobs;
        final Consumer<Runnable> inSram;
        final BiConsumer<byte[], Long> head;
        final Consumer<byte[]> done;
        byte[] bytes; // as the host engine put them in SRAM (each beat off the send engine is checked against them)
        int length, staged, failedJobs, finished, due;
        long feed; // picoseconds the send engines take to feed every beat
        boolean started;

        Out(int jobs, Consumer<Runnable> inSram, BiConsumer<byte[], Long> head, Consumer<byte[]> done) {
            this.jobs = new Job[jobs];
            this.inSram = inSram;
            this.head = head;
            this.done = done;
        }

        /** The next step, after what runs now: an event no one holds. */
        private void post(int step) {
            due = step;
            sim.postIn(0, Simulator.Priority.DELIVERY, this);
        }

        @Override public void run() {
            int step = due;
            due = 0;
            switch (step) {
                case FAILED -> done.accept(null);
                case STAGED -> { due = GO; inSram.accept(this); } // the go-ahead runs this again
                case GO -> go();
                case HEAD -> head.accept(bytes, feed);
                default -> throw new IllegalStateException("a packet's DMA was run again at step " + step);
            }
        }

        /** A job's bytes are in SRAM ({@code ok}) or its read failed (then it has let go of its SRAM). */
        void settled(Job j, boolean ok) {
            if (ok) staged++; else failedJobs++;
            if (staged + failedJobs < jobs.length) return;
            if (failedJobs > 0) {
                for (Job k : jobs) if (k.staged) { k.channel.domain.wake(); k.channel.release(k); }
                post(FAILED);
                return;
            }
            post(STAGED);
        }

        /** Every piece is in SRAM and the go-ahead came: the send engines take them in turn, each channel its own. */
        void go() {
            long[] beats = goBeats;
            for (Job k : jobs) {
                beats[k.channel.index] += k.span / beat;
                k.channel.domain.wake(); // before its inputs change (it may be coasting)
                k.channel.sendQ.addLast(k);
            }
            for (int c = 0; c < beats.length; c++) {
                if (beats[c] != 0) feed = Math.max(feed, channels[c].domain.cyclesToPicos(beats[c]));
                beats[c] = 0;
            }
        }

        /** A job's first beat left the send engine: the first of the packet's starts it on the link. */
        void firstBeat() {
            if (started) return;
            started = true;
            post(HEAD);
        }

        /** A job's bytes came off the send engine, each beat the same as in SRAM (null: it failed). */
        @Override public void accept(byte[] piece) {
            if (piece == null)
                throw new IllegalStateException("DmaEngine send descriptor failed on bytes already in SRAM");
            if (++finished < jobs.length) return;
            done.accept(bytes);
        }
    }

    private final long[] goBeats; // Out.go's beats per channel, zero between calls

    /**
     * Writes {@code data} to host memory at {@code hostAddr}; {@code done} gets whether every PCI write succeeded, once
     * they all landed.
     */
    public void write(long hostAddr, byte[] data, Consumer<Boolean> done) {
        write(hostAddr, data, null, () -> {}, done);
    }

    /** As {@link #write(long, byte[], Arrival, Runnable, Consumer)} with every byte already in. */
    public void write(long hostAddr, byte[] data, Runnable issued, Consumer<Boolean> done) {
        write(hostAddr, data, null, issued, done);
    }

    /**
     * Writes {@code data} to host memory at {@code hostAddr} through receive engine, SRAM and host
     * engine. {@code arrival} (null: all in already) says when the bytes come off the link: the
     * receive engine takes no beat before its bytes are in, so it fills SRAM while the packet is
     * still arriving. {@code issued} runs once the last of its posted PCI writes has left the adapter (or the
     * transfer failed before): a write issued after that lands after all of them, as PCI orders
     * posted writes, so a completion may follow its data without waiting for it to land.
     * {@code done} gets whether every PCI write succeeded, once they all landed.
     */
    public void write(long hostAddr, byte[] data, Arrival arrival, Runnable issued, Consumer<Boolean> done) {
        write(hostAddr, data, 0, data.length, arrival, issued, done);
    }

    /**
     * As {@link #write(long, byte[], Arrival, Runnable, Consumer)}, of {@code data[offset, offset + length)},
     * which is read as the transfer goes: it must not change until {@code done}.
     */
    public void write(long hostAddr, byte[] data, int offset, int length, Arrival arrival, Runnable issued,
                      Consumer<Boolean> done) {
        if (length == 0) { issued.run(); done.accept(true); return; }
        int pieces = (length + pieceBytes - 1) / pieceBytes;
        Write w = new Write(pieces, issued, done);
        for (int i = 0; i < pieces; i++) {
            int off = i * pieceBytes, len = Math.min(pieceBytes, length - off);
            Job j = new Job(true, hostAddr + off, len, data, offset + off, w);
            j.issued = w;
            j.arrival = arrival == null ? null : arrival.from(off);
            submit(j);
        }
    }

    /** One {@link #write}'s pieces counted down: it hears each job's end and, as a Runnable, each one issued. */
    private static final class Write implements Consumer<byte[]>, Runnable {
        final Runnable issued;
        final Consumer<Boolean> done;
        int left, unissued;
        boolean ok = true;

        Write(int pieces, Runnable issued, Consumer<Boolean> done) {
            this.left = this.unissued = pieces;
            this.issued = issued;
            this.done = done;
        }

        @Override public void run() { if (--unissued == 0) issued.run(); }

        @Override public void accept(byte[] bytes) {
            if (bytes == null) ok = false;
            if (--left == 0) done.accept(ok);
        }
    }

    private void submit(Job j) {
        Channel best = channels[0];
        for (Channel c : channels) if (c.load < best.load) best = c;
        best.add(j);
    }

    /** One transfer piece: a read (host to link) or a write (link to host). */
    private final class Job implements Runnable {
        final boolean write;
        final long hostAddr;
        final int length;
        final int skew; // hostAddr's offset within a beat, kept in SRAM
        final int span; // whole beats covering skew + length
        // a write's bytes: data[dataOff, dataOff + length), not copied (they must not change while it runs)
        final byte[] data;
        final int dataOff;
        final Consumer<byte[]> done;
        Runnable issued; // a write's: runs once, when its last PCI write has left (or it failed)
        Arrival arrival; // a write's: when its bytes come off the link (null: all in)
        Out out; // a read sent out with others (readOut): held in SRAM until they are all in
        int outAt; // an Out job's place in the packet's bytes (Out.bytes), where its bytes go as they come into SRAM
        boolean staged;
        boolean carry; // its beats carry its bytes (its channel is watched); else they are timing only
        Channel channel;
        long sram = -1;
        HostDesc hostDesc; // made once SRAM is given, so each edge offers the same payload
        LinkDesc linkDesc;
        byte[] buf; // a read's bytes off the link, beat aligned (not an Out job's: they go into its packet's)
        PciPort.Into into; // a read's that does not carry its bytes: where its PCI reads put them (made once)
        PciPort.Into direct; // a read's whose caller gave the bytes' place (Sink.arrayFor): then no buf unless carried
        int filled, writesPending; // writesPending: PCI writes issued whose completion has not come back
        long pieceSince = -1; // a write's: when the first beat of the PCI write being fed came out
        boolean engineDone, lastBeat, failed;
        boolean writeMayFail; // a PCI write of the job would not land: from it on, every write's completion counts

        Job(boolean write, long hostAddr, int length, byte[] data, int dataOff, Consumer<byte[]> done) {
            this.write = write;
            this.hostAddr = hostAddr;
            this.length = length;
            this.skew = (int) Math.floorMod(hostAddr, (long) beat);
            this.span = (skew + length + beat - 1) / beat * beat;
            this.data = data;
            this.dataOff = dataOff;
            this.done = done;
        }

        long alignedHost() { return hostAddr - skew; }

        byte[] result; // what it delivers (null: it failed)

        /** Run as an event once it finished: tells its owner (see Channel#deliver). */
        @Override public void run() { done.accept(result); }
    }

    /**
     * A set of engines, their SRAM allocator and the glue driving their ports. Between the edges
     * where something leaves the channel (a PCI read or write, a job's first or last beat to the link,
     * a finished descriptor), edges only move beats inside it: the channel lets its clock coast over
     * them ({@link ClockDomain.Coaster}). Whatever changes its inputs from outside wakes its domain first.
     */
    private final class Channel implements Clocked, ClockDomain.Coaster {
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
        // host read pieces in issue order, each on the PCI ring once it and all before it are back
        final ArrayDeque<Piece> pciPieces = new ArrayDeque<>();
        // when the first beat of each read answered while the clock ran is in
        final LongQueue answered = new LongQueue();
        // a beat a job's bytes fill only in part, between its words and its bytes
        final byte[] edgeBeat = new byte[beat];
        final long[] blank; // the words of every beat of a job that does not carry its bytes (nobody reads them)
        final int index; // in channels
        int load;

        Channel(int index, ClockDomain domain, DmaEngine.Config cfg) {
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
            domain.coastWith(this, 2); // the engine and this glue
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
                    for (int b = 0; b < j.span; b += beat) {
                        long[] words;
                        if (!j.carry) words = blank;
                        else if (b >= j.skew && b + beat <= j.skew + j.length)
                            words = toWords(j.data, j.dataOff + b - j.skew);
                        else { // zero padded
                            Arrays.fill(edgeBeat, (byte) 0);
                            int from = Math.max(b, j.skew), to = Math.min(b + beat, j.skew + j.length);
                            System.arraycopy(j.data, j.dataOff + from - j.skew, edgeBeat, from - b, to - from);
                            words = toWords(edgeBeat, 0);
                        }
                        long in = j.arrival == null ? Long.MIN_VALUE
                                : j.arrival.by(Math.min(j.length, b + beat - j.skew));
                        rx.add(words, b + beat == j.span ? 1 : 0, in);
                    }
                } else hostQ.addLast(j);
            }
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
            Job h = hostQ.peekFirst();
            if (h == null) engine.hostDesc().idle(); else engine.hostDesc().push(h.hostDesc);
            Job s = sendQ.peekFirst();
            if (s == null) engine.sendDesc().idle(); else engine.sendDesc().push(s.linkDesc);
            Job r = recvQ.peekFirst();
            if (r == null) engine.recvDesc().idle(); else engine.recvDesc().push(r.linkDesc);
            if (pci.in()) engine.pciData().push(pci.head()); else engine.pciData().idle();
            if (rx.in()) engine.linkRx().push(rx.head()); else engine.linkRx().idle();
            engine.pciRead().ready(true);
            engine.pciWrite().ready(true);
            engine.linkTx().ready(true);
        }

        @Override public void update() {
            if (engine.hostDesc().fire()) hostBusy.addLast(hostQ.pollFirst());
            if (engine.sendDesc().fire()) sendBusy.addLast(sendQ.pollFirst());
            if (engine.recvDesc().fire()) recvBusy.addLast(recvQ.pollFirst());
            if (engine.pciData().fire()) pci.take();
            if (engine.linkRx().fire()) rx.take();
            if (engine.pciRead().fire()) readHost(engine.pciRead().payload());
            if (engine.linkTx().fire()) linkBeat(engine.linkTx().payload());
            if (engine.pciWrite().fire()) writeBeat(engine.pciWrite().payload(), sim.now());
            if (engine.hostDone().valid()) hostDone(hostBusy.pollFirst(), engine.hostDone().payload());
            if (engine.sendDone().valid()) {
                Job j = sendBusy.peekFirst();
                j.engineDone = true;
                if (engine.sendDone().payload().reason() != Done.Status.OK) j.failed = true;
                finishSend();
            }
            if (engine.recvDone().valid()) {
                Job j = recvBusy.pollFirst();
                if (engine.recvDone().payload().reason() != Done.Status.OK)
                    throw new IllegalStateException(
                            "DmaEngine receive descriptor ended " + engine.recvDone().payload().reason());
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
                for (int b = 0; b < beats; b++) in[b] = times.by((long) (b + 1) * beat);
                back = true;
                while (!pciPieces.isEmpty() && pciPieces.peekFirst().back) pciPieces.pollFirst().ring();
            }

            /** Its beats go on the PCI ring, each with the time it is in; then it is a spare. */
            void ring() {
                long flag = failed ? 1 : 0;
                for (int b = 0; b < beats; b++) pci.add(words == null ? blank : words[b], flag, in[b]);
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

        void linkBeat(Beat b) { linkBeat(b.data(), b.flag()); }

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
         * A beat leaving the host engine for host memory: the bytes of the job it belongs to go out in max-payload
         * pieces.
         */
        void writeBeat(WriteBeat w, long now) { writeBeat(w.addr(), w.data(), w.last(), now); }

        /** {@link #writeBeat(WriteBeat, long)}, of a beat's words, address and last flag. */
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
                PciPort p = port.get();
                if (!j.writeMayFail && !p.dmaWriteLands(addr, pieceLen)) j.writeMayFail = true;
                if (!last && !j.writeMayFail) {
                    // the job cannot finish before its last write lands, after this one (the bus keeps
                    // their order), and none has failed: this one's completion would change nothing
                    p.dmaWriteStreamedPosted(addr, j.data, pieceOff, pieceLen, since);
                } else {
                    j.writesPending++;
                    p.dmaWriteStreamed(addr, j.data, pieceOff, pieceLen, since, res -> {
                        // no edge reads what a landed write changes, until its job can finish: only then
                        // is the channel woken (it may be coasting), before the job lets go of its SRAM
                        if (res.status() != PciPort.DmaStatus.OK) j.failed = true;
                        j.writesPending--;
                        if (!finishable(j)) return;
                        domain.wake();
                        finishWrite(j);
                    });
                }
            }
            if (last) { j.lastBeat = true; toHost.pollFirst(); issued(j); }
        }

        /** The end of the job's host bytes that are complete once beat {@code w} is out of the host engine. */
        private int writtenTo(Job j, long addr) {
            return Math.min((int) (addr - j.alignedHost()) + beat, j.skew + j.length);
        }

        /**
         * Whether a beat of job {@code j} to host address {@code addr} ({@code last}: its last) makes {@link
         * #writeBeat} issue a PCI write or end the job.
         */
        private boolean writeLeaves(Job j, long addr, long last) {
            if (last != 0) return true;
            int to = writtenTo(j, addr);
            return to > Math.max(j.filled, j.skew) && Math.floorMod(j.alignedHost() + to, (long) writePayload) == 0;
        }

        // ---- coasting (ClockDomain.Coaster)

        /** Most edges one look-ahead covers. */
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

        /**
         * Runs the coming edges on a copy of the engine's registers, reading the beats on their way in
         * without taking them, up to the first edge with an effect outside the channel or after which
         * the clock would stop. What the copy's edges did is kept: a coast over exactly those edges
         * adopts it rather than running them again.
         */
        @Override public long coastable() { return lookAhead(MAX_COAST); }

        /** {@link #coastable}'s look-ahead, over at most {@code limit} edges. */
        private long lookAhead(long limit) {
            lookFirst = -1;
            lookHeard = lookStops = false;
            DmaCore real = engine.core();
            if (real.reporting() || offersDescriptor(real)) return 0;
            DmaCore v = look = real.dryCopy(look);
            Job sending = sendBusy.peekFirst(), writing = toHost.peekFirst();
            int sent = sending == null ? 0 : sending.filled, pciNext = 0, rxNext = 0;
            lookTxN = lookWrN = 0;
            long n = 0;
            boolean stops = false, heard = false; // the copy ran one edge more, after which the clock stops; the next
            // edge is heard
            for (long c = domain.cycle() + 1; n < limit; c++) {
                long t = domain.picosOfCycle(c);
                if (v.reporting() || offersDescriptor(v)) break;
                boolean pInNow = pci.inAt(pciNext, t) && v.takesPciData();
                boolean rInNow = rx.inAt(rxNext, t) && v.takesLinkRx();
                // the beats waiting to leave (null words: none)
                long[] tx = v.sendOutQ.peekWords(), wr = v.hostOutQ.peekWords();
                long wrAddr = v.hostOutQ.peekAddr(), wrLast = v.hostOutQ.peekFlag();
                if (tx != null && linkBeatHeard(sending, sent, v.sendOutQ.peekFlag())
                        || wr != null && writeLeaves(writing, wrAddr, wrLast)) { heard = true; break; }
                // one engine alone on the bus (the others idle, or waiting for a beat that is not in yet): its coming
                // edges in one step
                long k = 0;
                if (tx != null && v.sendOutQ.size() == 1 && v.sendBeatsLeft() > 0 && v.alone(DmaEngine.SEND)) {
                    k = Math.min(Math.min(v.sendBeatsLeft(), limit - n), quiet(v, c, pciNext, rxNext, -1));
                    if (k > 0) {
                        if (sending.carry) v.sendAlone(k, logTxRef);
                        else { v.sendAlone(k, null); logTxRun(k); } // beats of no bytes: only their count matters
                        sent += (int) k * beat;
                    }
                } else if (wr != null && v.hostOutReady()) {
                    long max = Math.min(Math.min(v.hostOutLeft(), limit - n),
                            quiet(v, c, pciNext, rxNext, DmaEngine.HOST));
                    // the beats taken: the one waiting, then those read out, up to one that leaves
                    k = beforeLeaving(writing, v, max);
                    if (k > 0) {
                        logWrAt = domain.picosOfCycle(c);
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
                    long room = Math.min(v.inRoom(DmaEngine.HOST), limit - n);
                    k = comingIn(pci, pciNext, c, Math.min(room, quiet(v, c, pciNext, rxNext, DmaEngine.HOST)));
                    if (k > 0) {
                        inFrom = pciNext;
                        v.inAlone(DmaEngine.HOST, (int) k, pci.allBlank() ? null : pciWordsFrom);
                        pciNext += (int) k;
                    }
                } else if (rInNow && v.inAloneReady(DmaEngine.RECV)) {
                    long room = Math.min(v.inRoom(DmaEngine.RECV), limit - n);
                    k = comingIn(rx, rxNext, c, Math.min(room, quiet(v, c, pciNext, rxNext, DmaEngine.RECV)));
                    if (k > 0) {
                        inFrom = rxNext;
                        v.inAlone(DmaEngine.RECV, (int) k, rx.allBlank() ? null : rxWordsFrom);
                        rxNext += (int) k;
                    }
                }
                if (k > 0) {
                    n += k;
                    c += k - 1;
                    continue;
                }
                edgeTaking(v, pInNow ? pciNext : -1, rInNow ? rxNext : -1, wr != null, tx != null);
                if (pInNow) pciNext++;
                if (rInNow) rxNext++;
                if (tx != null) { sent += beat; logTx(tx); }
                if (wr != null) logWr(wrAddr, wr, wrLast, t);
                // after this edge the clock would stop: the coast ends on it, and the domain then sets the wake-ups
                // for the beats to come
                if (!(v.active() || offersDescriptor(v) || pci.inAt(pciNext, t) && v.takesPciData()
                        || rx.inAt(rxNext, t) && v.takesLinkRx())) {
                    stops = true;
                    break;
                }
                n++;
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
         * One edge of {@code c} that offers it no descriptor, taking in the {@code pciAt}-th beat of the PCI ring
         * and the {@code rxAt}-th of the link's (-1: none), the PCI write and link beat waiting taken or not.
         */
        private void edgeTaking(DmaCore c, int pciAt, int rxAt, boolean pciWriteTaken, boolean linkTxTaken) {
            c.edge(null, null, null, pciAt < 0 ? null : pci.wordsAt(pciAt), pciAt < 0 ? 0 : pci.flagAt(pciAt),
                    rxAt < 0 ? null : rx.wordsAt(rxAt), rxAt < 0 ? 0 : rx.flagAt(rxAt),
                    false, pciWriteTaken, linkTxTaken);
        }

        /**
         * A beat to the link or a PCI write leaves on the edge after the look-ahead: the coast runs it too, at its
         * time.
         */
        @Override public boolean coastsEdgeAfter() { return lookHeard || lookStops; }

        // the look-ahead's callbacks, made once (a lambda capturing its locals would be an object per call):
        // the beats a run of edges takes in are the ring's from inFrom on; those it writes out are logged
        // at one period apart from logWrAt, the first of them the logWrFrom-th
        private int inFrom, logWrFrom;
        private long logWrAt;
        private final IntFunction<long[]> pciWordsFrom = e -> Channel.this.pci.wordsAt(inFrom + e);
        private final IntFunction<long[]> rxWordsFrom = e -> Channel.this.rx.wordsAt(inFrom + e);
        private final DmaCore.WriteOut logWrTimed = (addr, words, last) ->
                logWr(addr, words, last, logWrAt + (lookWrN - logWrFrom) * Channel.this.domain.periodPicos());

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
            long c = first, heardAt = lookHeard && lookFirst >= 0 ? lookFirst + lookEdges : -1;
            // woken before the look-ahead's last edge: the same edges again, exactly n, in the look-ahead's steps
            // rather than one by one (their inputs are as they were: whatever changes one wakes the clock first, and
            // so ended the coast)
            if (!(first == lookFirst && n >= lookEdges && lookEdges > 0)) lookAhead(n);
            if (first == lookFirst && n >= lookEdges && lookEdges > 0) {
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
            DmaCore e = engine.core();
            for (; c < first + n; c++) {
                long t = domain.picosOfCycle(c);
                if (e.reporting() || offersDescriptor(e)) throw coastedOver(c, "a descriptor");
                boolean pIn = pci.inAt(0, t) && e.takesPciData(), rIn = rx.inAt(0, t) && e.takesLinkRx();
                long[] tx = e.sendOutQ.peekWords(), wr = e.hostOutQ.peekWords();
                long txFlag = e.sendOutQ.peekFlag(), wrAddr = e.hostOutQ.peekAddr(), wrLast = e.hostOutQ.peekFlag();
                if (c != heardAt) {
                    if (tx != null && linkBeatHeard(sendBusy.peekFirst(), sendBusy.peekFirst().filled, txFlag))
                        throw coastedOver(c, "a beat to the link");
                    if (wr != null && writeLeaves(toHost.peekFirst(), wrAddr, wrLast))
                        throw coastedOver(c, "a PCI write");
                }
                edgeTaking(e, pIn ? 0 : -1, rIn ? 0 : -1, wr != null, tx != null);
                if (pIn) pci.take();
                if (rIn) rx.take();
                if (tx != null) linkBeat(tx, txFlag);
                if (wr != null) writeBeat(wrAddr, wr, wrLast, t);
            }
        }

        private IllegalStateException coastedOver(long cycle, String what) {
            return new IllegalStateException("clock " + domain.name() + " coasted over cycle " + cycle + ", where "
                    + what + " leaves the channel");
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
}
