package nicsim.adapter;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.UarLayout;
import nicsim.profile.Profile;
import nicsim.profile.Require;
import nicsim.sim.Block;
import nicsim.sim.ClockDomain;
import nicsim.sim.CounterOut;
import nicsim.sim.Counters;
import nicsim.sim.Flow;
import nicsim.sim.Port;
import nicsim.sim.Signal;
import nicsim.sim.Stream;

/**
 * Decodes MMIO writes to the doorbell window into doorbell messages for the WQE fetcher and the
 * CQ logic (docs/architecture.md#data-path, step 3). Cycle-exact twin of {@code hw/.../DoorbellDecoder.scala}.
 *
 * <p>Timing, in core cycles: a write on {@code io_mmio} at edge n is registered; at edge n+1 it is
 * decoded, checked against the queue table and queued (or refused); the queued message is offered
 * on {@code io_doorbell} from edge n+2, and a refusal on {@code io_error} at edge n+2.
 *
 * <p>Decode: page = (offset - window base) / page size names the UAR; the page offset names the
 * register (send doorbell in the BlueFlame registers, CQ arm at 0x20); the value names the queue
 * and index (mlx5 big-endian words). Checks, in order: inside the window, a known register, an
 * 8-byte write, the queue exists (tagged table), the queue's owner is this page's UAR. A refused
 * write changes no state and is reported with its address and value.
 *
 * <p>FIFO: a doorbell for a queue that already has one waiting (after this edge's pop) replaces its
 * index in place: coalesced, counted. The entry being offered on {@code io_doorbell} is the
 * exception: a stream's payload may not change until it fires, so a doorbell for that queue is
 * appended instead. A doorbell that can be neither merged nor appended (FIFO full) is dropped,
 * counted and reported as OVERFLOW (the doorbell record in host memory still holds the index).
 */
public final class DoorbellDecoder implements Block {
    public static final String NAME = "DoorbellDecoder";

    /** The decoder's parameters, from the profile. */
    public record Config(long windowBase, long windowSize, int pageSize, int bfRegSize, int fifoDepth,
            int tableEntries) {
        public Config {
            pow2("uar.page.size", pageSize);
            pow2("doorbell.bf.reg.size", bfRegSize);
            pow2("doorbell.queue.table.entries", tableEntries);
            if (windowBase % pageSize != 0 || windowSize % pageSize != 0 || windowSize <= 0)
                throw new IllegalArgumentException("doorbell window 0x" + Long.toHexString(windowBase) + "+0x"
                        + Long.toHexString(windowSize) + " must be whole pages of " + pageSize + " B");
            if (UarLayout.BF_OFFSET + UarLayout.BF_REGS * bfRegSize > pageSize)
                throw new IllegalArgumentException("doorbell.bf.reg.size " + bfRegSize
                        + ": 4 BlueFlame registers do not fit in a " + pageSize + " B page");
            Require.range("doorbell.fifo.depth", fifoDepth, 2, 64, "");
            if (windowBase + windowSize > (1L << 32))
                throw new IllegalArgumentException("doorbell window must lie below 4 GiB of BAR offset");
            if (windowSize / pageSize > 65536)
                throw new IllegalArgumentException("doorbell window of " + windowSize / pageSize
                        + " pages: UAR numbers are 16 bits (at most 65536 pages)");
        }

        public static Config from(Profile p) {
            return new Config(p.bytes("doorbell.window.base"), p.bytes("doorbell.window.size"),
                    p.bytesInt("uar.page.size"), p.bytesInt("doorbell.bf.reg.size"), p.countInt("doorbell.fifo.depth"),
                    p.countInt("doorbell.queue.table.entries"));
        }

        private static void pow2(String name, long v) { Require.powerOfTwo(name, v, 1, 1L << 32, ""); }
    }

    private final Config cfg;
    private final Counters counters;
    private final Flow<MmioWrite> mmio;
    private final Flow<QueueTableWrite> tableWrite;
    private final Stream<DoorbellMsg> doorbell;
    private final Flow<DoorbellError> error;
    private final CounterOut seen, coalesced, overflowed, rejected;
    private final Signal occupancyOut;

    // registered state
    private MmioWrite s1;
    private final List<DoorbellMsg> fifo = new ArrayList<>();
    // [0]=QP, [1]=CQ, each in pages of PAGE entries made when first set (null: every entry 0), as a host uses a
    // few of the table's thousands: bit 40 valid, 39..16 tag, 15..0 uar
    private static final int PAGE_SHIFT = 8;
    private final long[][][] tables;
    private DoorbellError errReg;

    public DoorbellDecoder(ClockDomain domain, Config cfg) {
        this.cfg = cfg;
        this.counters = domain.counters();
        this.mmio = new Flow<>("io_mmio", domain, MmioWrite.LAYOUT);
        this.tableWrite = new Flow<>("io_tableWrite", domain, QueueTableWrite.LAYOUT);
        this.doorbell = new Stream<>("io_doorbell", domain, DoorbellMsg.LAYOUT);
        this.error = new Flow<>("io_error", domain, DoorbellError.LAYOUT);
        this.seen = new CounterOut(NAME, "io_seen", "doorbells_seen", domain);
        this.coalesced = new CounterOut(NAME, "io_coalesced", "doorbells_coalesced", domain);
        this.overflowed = new CounterOut(NAME, "io_overflowed", "doorbells_overflowed", domain);
        this.rejected = new CounterOut(NAME, "io_rejected", "doorbells_rejected", domain);
        this.occupancyOut = new Signal("io_occupancy", 32 - Integer.numberOfLeadingZeros(cfg.fifoDepth()), domain);
        this.tables = new long[2][Math.max(1, cfg.tableEntries() >>> PAGE_SHIFT)][];
        domain.add(this);
    }

    public Config config() { return cfg; }

    @Override public String name() { return NAME; }

    @Override public List<Port> ports() {
        return List.of(Port.in(mmio), Port.in(tableWrite), Port.out(doorbell), Port.out(error), seen.port(),
                coalesced.port(), overflowed.port(), rejected.port(), Port.out(occupancyOut));
    }
    /** Input: MMIO writes that hit the doorbell window (drive it from the upstream block). */
    public Flow<MmioWrite> mmio() { return mmio; }
    /** Input: queue-table updates from the firmware. */
    public Flow<QueueTableWrite> tableWrite() { return tableWrite; }
    /** Output: decoded doorbells. */
    public Stream<DoorbellMsg> doorbell() { return doorbell; }
    /** Output: refused or dropped doorbells, with address and value. */
    public Flow<DoorbellError> error() { return error; }

    public int occupancy() { return fifo.size(); }
    /** Counter values wrap at 32 bits, as the RTL's do. */
    public long seen() { return seen.get(); }
    public long coalesced() { return coalesced.get(); }
    public long overflowed() { return overflowed.get(); }
    public long rejected() { return rejected.get(); }

    @Override public void drive() {
        if (fifo.isEmpty()) doorbell.idle(); else doorbell.push(fifo.get(0));
        if (errReg == null) error.idle(); else error.push(errReg);
        seen.drive();
        coalesced.drive();
        overflowed.drive();
        rejected.drive();
        occupancyOut.set(fifo.size());
    }

    @Override public void update() {
        boolean popped = doorbell.fire();
        if (popped) fifo.remove(0);
        errReg = null;
        if (s1 != null) process(s1, popped);
        s1 = mmio.valid() ? mmio.payload() : null;
        if (tableWrite.valid()) {
            QueueTableWrite w = tableWrite.payload();
            setEntry((int) w.cq(), (int) (w.qpn() & (cfg.tableEntries() - 1)),
                    w.valid() != 0 ? (1L << 40) | (w.qpn() << 16) | w.uar() : 0);
        }
    }

    private long entry(int table, int index) {
        long[] page = tables[table][index >>> PAGE_SHIFT];
        return page == null ? 0 : page[index & ((1 << PAGE_SHIFT) - 1)];
    }

    private void setEntry(int table, int index, long value) {
        long[] page = tables[table][index >>> PAGE_SHIFT];
        if (page == null) {
            if (value == 0) return;
            page = tables[table][index >>> PAGE_SHIFT] = new long[Math.min(1 << PAGE_SHIFT, cfg.tableEntries())];
        }
        page[index & ((1 << PAGE_SHIFT) - 1)] = value;
    }

    /** Its inputs' valid make it active, and it changes nothing while inactive: its domain may leave it out then. */
    @Override public boolean mayRest() { return true; }

    @Override public boolean active() {
        return s1 != null || !fifo.isEmpty() || errReg != null || mmio.valid() || tableWrite.valid();
    }

    /**
     * How many of the coming edges it runs alone, with no input valid and nothing on its outputs: one to decode the
     * write it holds (into the FIFO or the error register, which the edge after drives); none while it drives a
     * doorbell or an error; {@link MttWalker#IDLE_EDGES} while it holds nothing.
     */
    long quietEdges() {
        if (!fifo.isEmpty() || errReg != null) return 0;
        return s1 == null ? MttWalker.IDLE_EDGES : 1;
    }

    /** Runs the edge of {@link #quietEdges} as {@link #update} would with no input valid: the held write decoded. */
    void coast() {
        if (s1 == null || !fifo.isEmpty() || errReg != null)
            throw new IllegalStateException("DoorbellDecoder: coasting an edge with nothing to decode, or an output");
        process(s1, false);
        s1 = null;
    }

    /**
     * Runs an edge on which MMIO write {@code w} comes in, as {@link #update} would with only io_mmio valid while
     * {@link #quietEdges} finds nothing: it holds the write, to decode on the next edge.
     */
    void coastMmio(MmioWrite w) {
        if (s1 != null || !fifo.isEmpty() || errReg != null)
            throw new IllegalStateException("DoorbellDecoder: coasting a write's arrival while not quiet");
        s1 = w;
    }

    /**
     * The producer counter a send doorbell announces. Written as mlx5 does (the ctrl segment of the
     * last WQE: its own index and DS, also the head of a BlueFlame write), it is the index plus that
     * WQE's WQEBBs; with DS 0 the index is the producer counter itself.
     */
    static long sendProducer(MmioWrite w) {
        int ds = w.byteAt(7) & 0x3f;
        return ((w.byteAt(1) << 8 | w.byteAt(2)) + (ds + 3) / 4) & 0xFFFF;
    }

    private void process(MmioWrite w, boolean popped) {
        seen.inc();
        DoorbellError.Code code = DoorbellError.Code.NONE;
        DoorbellMsg msg = null;
        long rel = w.offset() - cfg.windowBase();
        if (w.offset() < cfg.windowBase() || rel >= cfg.windowSize()) {
            code = DoorbellError.Code.OUT_OF_WINDOW;
        } else {
            long page = rel / cfg.pageSize();
            long po = rel % cfg.pageSize();
            long bfEnd = UarLayout.BF_OFFSET + (long) UarLayout.BF_REGS * cfg.bfRegSize();
            boolean send = po >= UarLayout.BF_OFFSET && po < bfEnd;
            boolean arm = po == UarLayout.CQ_DOORBELL;
            if (!send && !arm) code = DoorbellError.Code.UNKNOWN_REGISTER;
            else if (w.length() != 8) code = DoorbellError.Code.BAD_SIZE;
            else {
                // bytes 0..3: first big-endian word; bytes 4..7: second (docs/sources.md#mlx5-doorbells,
                // docs/sources.md#mlx5-cq-ownership)
                long qpn = send ? (w.byteAt(4) << 16 | w.byteAt(5) << 8 | w.byteAt(6))
                                : (w.byteAt(5) << 16 | w.byteAt(6) << 8 | w.byteAt(7));
                boolean qpnFits = send || w.byteAt(4) == 0;
                long entry = entry(send ? 0 : 1, (int) (qpn & (cfg.tableEntries() - 1)));
                boolean owned = qpnFits && (entry >>> 40) != 0 && ((entry >>> 16) & 0xFFFFFF) == qpn;
                if (!owned) code = DoorbellError.Code.BAD_QUEUE;
                else if ((entry & 0xFFFF) != page) code = DoorbellError.Code.NOT_OWNER;
                else if (send) msg = DoorbellMsg.send(qpn, sendProducer(w));
                else msg = new DoorbellMsg(qpn, w.byteAt(1) << 16 | w.byteAt(2) << 8 | w.byteAt(3),
                        DoorbellMsg.Kind.CQ_ARM.ordinal(), (w.byteAt(0) >> 4) & 3, w.byteAt(0) & 1);
            }
        }
        if (msg != null) {
            // the head is frozen while it waits on io_doorbell (payload stable until it fires)
            for (int i = popped ? 0 : 1; i < fifo.size(); i++) {
                if (fifo.get(i).sameQueue(msg)) {
                    fifo.set(i, msg);
                    coalesced.inc();
                    return;
                }
            }
            if (fifo.size() < cfg.fifoDepth()) { fifo.add(msg); return; }
            code = DoorbellError.Code.OVERFLOW;
            overflowed.inc();
        } else {
            rejected.inc();
            counters.counter(NAME + ".rejected_" + code.name().toLowerCase()).inc();
        }
        errReg = new DoorbellError(code.ordinal(), w.offset(), w.data());
    }
}
