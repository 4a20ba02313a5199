package nicsim.host;

import java.util.Arrays;
import java.util.function.Consumer;
import nicsim.host.PciPort.DmaStatus;
import nicsim.host.PciPort.Incoming;
import nicsim.host.PciPort.Into;
import nicsim.host.PciPort.ReadResult;
import nicsim.sim.Arrival;
import nicsim.sim.Simulator;

/**
 * One DMA read in flight: its request TLPs are served in the order issued (one lane, increasing
 * times), each run of this object serving the next; the completions' offsets and arrivals are
 * kept in arrays, so a read of many TLPs allocates per read, not per TLP. A read answered without a
 * result ({@code answer}) allocates nothing: it is its own {@link PciPort.Times}, and once answered it
 * is the next such read (its event has let go of it: posted events keep no action once run).
 */
final class PciReadOp implements Runnable, PciPort.Times {
    private static final byte[] NO_BYTES = new byte[0];
    private static final long[] NO_PARTS = new long[0];

    private final PciBus bus;
    // the bus's, held here as the read was the bus's inner class
    private final Simulator sim;
    private final PciLink link;
    private final HostMemory memory;
    long seq, hostAddr;
    int length;
    boolean ok, streamed;
    Into into;
    Consumer<ReadResult> done; // answered with a result, or
    PciPort.IntoAnswer answer; // without one
    byte[] result;
    int remaining; // requests not yet served
    long next; // the address of the next request to serve
    long lastArrival;
    // completions so far, three longs each in one array (with many nodes each object a read touches is a cold
    // line at the node's turn): completion k carries length(k) bytes from start(k) on, arriving from
    // parts[3k + 1] (its data's head) to parts[3k + 2]
    int completions;
    long[] parts = NO_PARTS;
    PciReadOp nextSpare; // the spare under this one

    PciReadOp(PciBus bus) {
        this.bus = bus;
        this.sim = bus.simulator();
        this.link = bus.link();
        this.memory = bus.memory();
    }

    void set(long seq, long hostAddr, int length, boolean ok, boolean streamed, Into into,
             Consumer<ReadResult> done, PciPort.IntoAnswer answer) {
        this.seq = seq;
        this.hostAddr = hostAddr;
        this.length = length;
        this.ok = ok;
        this.streamed = streamed;
        this.into = into;
        this.done = done;
        this.answer = answer;
        this.next = hostAddr;
        this.lastArrival = sim.now();
        this.remaining = 0;
        this.completions = 0;
        this.result = ok && into == null ? new byte[length] : NO_BYTES;
        // completions split at multiples of the smaller of completion size and max read request (both
        // powers of two); a failed read answers each request with one empty completion
        int chunk = ok ? Math.min(link.completionSize(), link.maxReadRequest()) : link.maxReadRequest();
        int n = length == 0 ? 0 : (int) ((hostAddr + length - 1) / chunk - hostAddr / chunk + 1);
        // a spare's array serves when large enough (a read with a result is never a spare)
        if (parts.length < 3 * n) parts = new long[3 * n];
    }

    /** The root complex serves the next request: memory is read now, not when it was issued. */
    @Override public void run() {
        int mrrs = link.maxReadRequest(), cs = link.completionSize();
        long addr = next, end = Math.min(hostAddr + length, (addr / mrrs + 1) * mrrs);
        next = end;
        int len = (int) (end - addr);
        if (ok && into == null) memory.read(addr, result, (int) (addr - hostAddr), len);
        else if (ok) { // only the bytes the reader keeps
            long lo = Math.max(addr, into.from()), hi = Math.min(addr + len, into.from() + into.length());
            if (lo < hi) memory.read(lo, into.into(), into.at() + (int) (lo - into.from()), (int) (hi - lo));
        }
        long arrival = sim.now();
        if (!ok) arrival = completion(addr, 0);
        else for (long c = addr; c < end; ) { // completion-size pieces, aligned (PciLink#splitCompletions)
            long cEnd = Math.min(end, (c / cs + 1) * cs);
            arrival = completion(c, (int) (cEnd - c));
            c = cEnd;
        }
        lastArrival = Math.max(lastArrival, arrival);
        if (--remaining > 0) return;
        DmaStatus st = ok ? DmaStatus.OK : DmaStatus.UNSUPPORTED_REQUEST;
        if (answer != null) { // streamed: answered as soon as its bytes are known
            if (sim.trace().enabled("PciBus"))
                sim.trace().record("PciBus", "dma#" + seq, "dma_read_done", st.name());
            PciPort.IntoAnswer a = answer;
            answer = null;
            into = null;
            a.answered(st, this);
            nextSpare = bus.spareRead; // the reader is done with its times
            bus.spareRead = this;
            return;
        }
        long finished = lastArrival;
        Consumer<ReadResult> d = done;
        Incoming in = streamed ? incoming() : null;
        Runnable finish = () -> {
            if (sim.trace().enabled("PciBus")) sim.trace()
                    .record("PciBus", "dma#" + seq, "dma_read_done", st.name());
            d.accept(new ReadResult(st, result, finished, in));
        };
        // a streamed read is answered as soon as its bytes are known: its reader takes each when it comes in
        if (streamed) finish.run();
        else bus.readsDone.post(finished, Simulator.Priority.DELIVERY, finish);
    }

    /** A completion of {@code len} bytes from {@code addr} leaves now; returns when its last byte is in. */
    private long completion(long addr, int len) {
        long arrival = link.send(PciLink.Direction.DOWNSTREAM, sim.now(), len, link.overheadCompletion());
        // not expected: the count above is exact
        if (3 * completions == parts.length) parts = Arrays.copyOf(parts, 3 * (2 * completions + 1));
        int at = 3 * completions++;
        parts[at] = (addr - hostAddr) << 32 | len;
        parts[at + 1] = bus.dataHead(arrival, len);
        parts[at + 2] = arrival;
        return arrival;
    }

    /** Completion k's first byte's offset in the read. */
    private int start(int k) { return (int) (parts[3 * k] >>> 32); }

    /** Completion k's bytes. */
    private int length(int k) { return (int) parts[3 * k]; }

    /** The completions' offsets and arrivals, for a streamed read's result. */
    private Incoming incoming() {
        Arrival[] arrivals = new Arrival[completions];
        int[] starts = new int[completions];
        for (int k = 0; k < completions; k++) {
            arrivals[k] = new Arrival(parts[3 * k + 1], parts[3 * k + 2], length(k));
            starts[k] = start(k);
        }
        return new Incoming(starts, arrivals);
    }

    /** As {@link Incoming#head}: the completions so far. */
    @Override public long head() {
        long h = Long.MAX_VALUE;
        for (int k = 0; k < completions; k++) h = Math.min(h, parts[3 * k + 1]);
        return h;
    }

    /** As {@link Incoming#by}: the completions so far. */
    @Override public long by(long n) {
        int k = 0;
        while (k + 1 < completions && start(k + 1) < n) k++;
        return Arrival.by(parts[3 * k + 1], parts[3 * k + 2], length(k), n - start(k));
    }

    /** As {@link #by} of each count, a completion's counts stepped forward ({@link Arrival#byEach}). */
    @Override public void byEach(long step, long[] at, int count) {
        for (int k = 0, i = 0; i < count; ) {
            long n = (i + 1) * step;
            while (k + 1 < completions && start(k + 1) < n) k++;
            // the counts up to the next completion's start are this one's
            int m = k + 1 < completions ? (int) Math.min(count - i, (start(k + 1) - n) / step + 1) : count - i;
            Arrival.byEach(parts[3 * k + 1], parts[3 * k + 2], length(k), n - start(k), step, at, i, m);
            i += m;
        }
    }
}
