package nicsim.adapter;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;
import nicsim.adapter.DmaPorts.HostDesc;
import nicsim.adapter.DmaPorts.LinkDesc;
import nicsim.host.PciLink;
import nicsim.host.PciPort;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Arrival;
import nicsim.sim.ClockDomain;
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

    final Simulator sim;
    final Supplier<PciPort> port;
    private final DmaChannel[] channels;
    final int beat;
    private final int pieceBytes;
    final int readRequest;
    final int writePayload;

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
        this.channels = new DmaChannel[n];
        this.goBeats = new long[n];
        for (int k = 0; k < n; k++)
            channels[k] = new DmaCoastingChannel(this, k, sim.clockDomain(domainPrefix + "dma" + k,
                    cfg.clockPeriodPs()), cfg.engine());
    }

    /** The engines, one per channel. */
    public List<DmaEngine> engines() {
        List<DmaEngine> l = new ArrayList<>();
        for (DmaChannel c : channels) l.add(c.engine);
        return l;
    }

    /** The clock domain of channel {@code k}. */
    public ClockDomain domain(int k) { return channels[k].domain; }

    /** PCI writes the channels' coasts issued at their edges' times rather than ending there (see DmaWritesAhead). */
    long writesIssuedAhead() {
        long n = 0;
        for (DmaChannel c : channels) n += c.ahead.issuedSoFar();
        return n;
    }

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
    static final byte[] PLACED = new byte[0];

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
    final class Out implements Consumer<byte[]>, Runnable {
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
        DmaChannel best = channels[0];
        for (DmaChannel c : channels) if (c.load < best.load) best = c;
        best.add(j);
    }

    /** One transfer piece: a read (host to link) or a write (link to host). */
    final class Job implements Runnable {
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
        DmaChannel channel;
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

        /** Run as an event once it finished: tells its owner (see DmaChannel#deliver). */
        @Override public void run() { done.accept(result); }
    }
}
