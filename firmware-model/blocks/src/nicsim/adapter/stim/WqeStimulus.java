package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Random;
import nicsim.abi.WqeLayout;
import nicsim.adapter.DoorbellMsg;
import nicsim.adapter.WqeFetcher;
import nicsim.adapter.WqePorts.DmaReadReq;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.adapter.WqePorts.WqebbBeat;
import nicsim.host.HostMemory;
import nicsim.sim.Clocked;

/**
 * Seeded random traffic for the WqeFetcher: a driver posting WQEs into real rings in (sparse)
 * host memory and ringing doorbells, a DMA responder serving the fetcher's reads from that memory
 * with random latency and gaps (rarely failing), and a consumer with random back-pressure. Now and
 * then a WQE is malformed in exactly one field (opcode, DS, QPN, index); a queue that stopped on an
 * error is reconfigured a while later, as firmware would after moving the QP through RESET. Queues move
 * about the SQ table (a QP destroyed, its slot invalidated, another created in the next free slot of a
 * sweep round the table), and every QP is given a malformed WQE among its first eight posts, so that
 * within a short run (20000 cycles: about ten QPs a slot) every slot's context holds a queue, fetches,
 * wraps, splits a WQE across fetches, stops on an error with WQEs still to fetch and is reconfigured.
 * Rings lie anywhere in the 64-bit address space (the responder's memory ignores bit 63).
 *
 * <p>Besides its rare random failures (a beat in 500), the responder fails one beat of a fetch for a slot that has
 * not yet shown a failed fetch this lap round the table, at most one such fetch in {@value #FAIL_GAP} cycles (drawn
 * from a generator of its own, so the rest of the traffic keeps its draws): each of the 64 slots' arms that stop a
 * queue on a failed DMA is taken in a run of 20000 cycles, where the random failures alone reached 17 of them. Each
 * QP whose ring holds 16 WQEBBs or more posts a WQE of 9 to 16 WQEBBs among its first four (drawn from that
 * generator too), so every slot's count of WQEBBs left in a WQE has its bit 3 set in such a run.
 */
public final class WqeStimulus implements Clocked {
    private static final int SQS = 12;
    // a stopped queue waits 150 to 299 cycles for firmware, long enough for the round robin to pass it; a queue
    // is picked to be destroyed one cycle in 12, so that a run of 20000 cycles creates about ten QPs a slot
    private static final int STOPPED = 150, DRAIN = 12;
    // a planned failure of a slot's fetch at most once in this many cycles: at most 200 in 20000 cycles
    static final int FAIL_GAP = 100;

    private final WqeFetcher f;
    private final int entries;
    private final Random rnd;
    private final Random planRnd;                  // the planned failures' and big WQEs' own draws
    private final boolean[] failedThisLap;         // slots whose queue stopped on a failed fetch this lap
    private int failedSlots;
    private final boolean[] bigThisLap;            // slots that handed out a WQE of over 8 WQEBBs this lap
    private final int[] lastFetched;               // a slot's producer when its last fetch was taken
    private final int[] fetchedOnes, fetchedZeros; // the producer bits seen set and clear in a slot's fetches
    private int bigSlots;
    private long nextFail;                         // the first cycle a planned failure may be drawn
    // host memory of 2^63 bytes less a page: an address's bit 63 is dropped (the ring base register's 64 bits all vary)
    private static final long MEM = Long.MAX_VALUE & -4096L;
    private final HostMemory mem = new HostMemory(MEM, 4096);
    private final long[] qpn = new long[SQS];
    private final long[] base = new long[SQS];
    private final int[] logSize = new int[SQS];
    private final int[] producer = new int[SQS];   // WQEBBs written by the driver
    private final int[] delivered = new int[SQS];  // WQEBBs the fetcher handed out (ring space comes back)
    private final int[] rung = new int[SQS];       // producer value of the last doorbell
    private final boolean[] draining = new boolean[SQS]; // its QP is about to be destroyed: no more posts
    private final int[] stoppedFor = new int[SQS]; // cycles since the queue stopped on an error, -1 if running
    private final boolean[] quiet = new boolean[SQS]; // posts seldom: its ring is often empty when the arbiter looks
    private final int[] badIn = new int[SQS];      // posts until the malformed WQE this QP is given (0: given)
    private final int[] bigIn = new int[SQS];      // posts until its WQE of 9 to 16 WQEBBs (0: given or none)
    private int sweep;                             // where the search for a free slot starts: it goes round the table
    private final ArrayDeque<SqConfig> configs = new ArrayDeque<>();
    private final ArrayDeque<DoorbellMsg> doorbells = new ArrayDeque<>();
    // DMA responder: accepted requests, each with the cycle its first beat may go
    private final ArrayDeque<long[]> reads = new ArrayDeque<>(); // {addr, beats, readyAtCycle, failingBeat or -1}
    private WqebbBeat beat;       // offered on io_dmaRsp until it fires
    private int beatsLeft;
    private long failingBeatsLeft; // beatsLeft when the current read's planned failing beat is offered (0: none)
    private long beatAddr;
    private long cycle;
    private long destroyed; // the QPN of the last QP destroyed: a doorbell to it must be dropped
    private long lateDoorbell; // a QP destroyed, to be rung once its destruction is in (0: none)
    private final boolean[] rungGoneThisLap; // slots rung for a QP just destroyed there, this lap
    private int rungGoneSlots;
    private boolean reqReady, wqeReady;
    private long outstandingBeats;

    public WqeStimulus(WqeFetcher fetcher, long seed) {
        this.f = fetcher;
        this.rnd = new Random(seed);
        this.planRnd = new Random(~seed);
        this.entries = fetcher.config().sqEntries();
        this.failedThisLap = new boolean[entries];
        this.bigThisLap = new boolean[entries];
        this.rungGoneThisLap = new boolean[entries];
        this.lastFetched = new int[entries];
        this.fetchedOnes = new int[entries];
        this.fetchedZeros = new int[entries];
        if (entries < SQS)
            throw new IllegalArgumentException("wqe.sq.entries " + entries + " is below the stimulus' " + SQS
                    + " queues");
        for (int i = 0; i < SQS; i++) {
            stoppedFor[i] = -1;
            create(i, 0);
        }
    }

    /**
     * Queue {@code i} gets a new QP, with a new ring, starting at WQEBB {@code start}, in the next slot no
     * other queue holds going round the table: every slot is used in turn, none left to chance.
     */
    private void create(int i, int start) {
        int slot = sweep;
        while (slotTaken(slot)) slot = (slot + 1) % entries;
        sweep = (slot + 1) % entries;
        // until each bit of the slot's producer has been seen set and clear in its fetches, a QP there starts at the
        // producer of the slot's last fetch with all 16 bits inverted (a slot sees only a few fetches a run)
        if (fetchedOnes[slot] != 0 && (fetchedOnes[slot] & fetchedZeros[slot]) != 0xFFFF)
            start = ~lastFetched[slot] & 0xFFFF;
        qpn[i] = (long) (8 + rnd.nextInt(1 << 12)) * entries + slot; // never 0x1FF, the queue nobody configured
        // 8 to 64 WQEBBs: rings wrap often; one in eight up to 2^15, so the size and slot arithmetic's high bits move
        logSize[i] = rnd.nextInt(8) == 0 ? 7 + rnd.nextInt(9) : 3 + rnd.nextInt(4);
        if (!bigThisLap[slot]) logSize[i] = Math.max(logSize[i], 4);
        base[i] = ringBase(64L << logSize[i]);
        producer[i] = delivered[i] = rung[i] = start;
        badIn[i] = 1 + rnd.nextInt(8);
        // a QP in a slot that has not handed out a WQE of over 8 WQEBBs this lap posts one among its first two, in
        // a ring of 16 WQEBBs or more: every slot's count of WQEBBs left has its bit 3 set (a random draw makes one
        // post in eight that big, in a ring of 8 WQEBBs half the time, where it never fits)
        bigIn[i] = bigThisLap[slot] ? 0 : 1 + planRnd.nextInt(2);
        quiet[i] = rnd.nextInt(4) == 0;
        configs.add(new SqConfig(qpn[i], base[i], logSize[i], start, start, 1));
    }

    /** A page-aligned ring base anywhere in 64 bits whose {@code bytes} overlap no live queue's ring. */
    private long ringBase(long bytes) {
        while (true) {
            long b = rnd.nextLong() & -4096L;
            long at = b & Long.MAX_VALUE;
            boolean clash = at > MEM - bytes;
            for (int k = 0; k < SQS; k++)
                if (qpn[k] != 0 && Math.abs(at - (base[k] & Long.MAX_VALUE)) < Math.max(bytes, 64L << logSize[k]))
                    clash = true;
            if (!clash) return b;
        }
    }

    private boolean slotTaken(int slot) {
        for (int k = 0; k < SQS; k++) if (qpn[k] != 0 && (qpn[k] & (entries - 1)) == slot) return true;
        return false;
    }

    /** Queue {@code i}'s QP is destroyed (its slot invalidated) and another takes its place elsewhere. */
    private void move(int i) {
        configs.add(new SqConfig(qpn[i], base[i], logSize[i], 0));
        destroyed = qpn[i];
        // a slot not yet rung this lap for a QP destroyed there is rung for this one once it is gone: the slot must
        // refuse it (a doorbell for a QP since reused elsewhere, which the random ones mostly are, is refused by QPN)
        int slot = (int) (destroyed & (entries - 1));
        if (!rungGoneThisLap[slot]) {
            lateDoorbell = destroyed;
            rungGoneThisLap[slot] = true;
            if (++rungGoneSlots == entries) {
                Arrays.fill(rungGoneThisLap, false);
                rungGoneSlots = 0;
            }
        }
        qpn[i] = 0;
        create(i, rnd.nextInt(1 << 16));
    }

    private void post(int i) {
        // nothing is rung before the queue's configuration is in: a doorbell on that edge or before it is lost
        if (draining[i] || configs.stream().anyMatch(c -> c.qpn() == qpn[i])) return;
        if (quiet[i] && rnd.nextInt(8) != 0) return;
        int size = 1 << logSize[i];
        int ds = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(63) : 1 + rnd.nextInt(12); // 1 to 3 WQEBBs, or up to 16
        if (bigIn[i] > 0 && --bigIn[i] == 0) ds = 33 + planRnd.nextInt(31); // this QP's planned big WQE
        int bbs = WqeLayout.wqebbs(ds);
        if (producer[i] - delivered[i] + bbs > size) {
            // ring full (the driver would get ENOMEM): make sure what is posted has been announced
            if (rung[i] != producer[i]) ring(i);
            return;
        }
        int op = WqeLayout.OPCODES.get(rnd.nextInt(WqeLayout.OPCODES.size()));
        long q = qpn[i];
        int index = producer[i] & 0xFFFF;
        int bad = rnd.nextInt(300);
        if (badIn[i] > 0 && --badIn[i] == 0) bad = rnd.nextInt(4); // this QP's planned malformed WQE
        if (bad == 0) op = 0x3f;                         // not an opcode
        else if (bad == 1) ds = 0;
        else if (bad == 2) q ^= 0x10;
        else if (bad == 3) index ^= 1;
        byte[] ctrl = WqeLayout.ctrl(op, index, q, ds);
        for (int b = 0; b < Math.max(bbs, 1); b++) {
            byte[] bb = new byte[WqeLayout.WQEBB];
            rnd.nextBytes(bb);
            if (b == 0) System.arraycopy(ctrl, 0, bb, 0, ctrl.length);
            mem.write((base[i] & Long.MAX_VALUE) + (long) ((producer[i] + b) & (size - 1)) * WqeLayout.WQEBB, bb);
        }
        producer[i] += Math.max(bbs, 1);
        if (rnd.nextInt(3) == 0 || bad < 4) ring(i);
    }

    private void ring(int i) {
        doorbells.add(DoorbellMsg.send(qpn[i], producer[i] & 0xFFFF));
        rung[i] = producer[i];
    }

    @Override public void drive() {
        // the driver
        if (cycle % 2 == 0) post(rnd.nextInt(SQS));
        // doorbells for a queue nobody configured, and for one nobody has any more
        if (rnd.nextInt(200) == 0) doorbells.add(DoorbellMsg.send(0x1FF, rnd.nextInt(1 << 16)));
        if (rnd.nextInt(200) == 0 && destroyed != 0) doorbells.add(DoorbellMsg.send(destroyed, rnd.nextInt(1 << 16)));
        if (configs.isEmpty()) f.sqConfig().idle(); else f.sqConfig().push(configs.peekFirst());
        if (doorbells.isEmpty()) f.doorbell().idle(); else f.doorbell().push(doorbells.peekFirst());
        // the DMA responder
        reqReady = rnd.nextInt(100) < 60;
        f.dmaReq().ready(reqReady);
        if (beat == null && beatsLeft == 0 && !reads.isEmpty() && reads.peekFirst()[2] <= cycle) {
            long[] r = reads.pollFirst();
            beatAddr = r[0];
            beatsLeft = (int) r[1];
            failingBeatsLeft = r[3] < 0 ? 0 : r[1] - r[3];
        }
        if (beat == null && beatsLeft > 0 && rnd.nextInt(100) < 80) {
            long[] words = new long[8];
            for (int k = 0; k < 8; k++) words[k] = mem.readLong((beatAddr & Long.MAX_VALUE) + 8L * k);
            boolean fail = rnd.nextInt(500) == 0 || beatsLeft == failingBeatsLeft;
            beat = new WqebbBeat(words, fail ? 1 : 0);
        }
        if (beat == null) f.dmaRsp().idle(); else f.dmaRsp().push(beat);
        // the consumer
        wqeReady = rnd.nextInt(100) < 70;
        f.wqe().ready(wqeReady);
    }

    @Override public void update() {
        cycle++;
        if (f.sqConfig().valid()) configs.pollFirst();
        if (f.doorbell().fire()) doorbells.pollFirst();
        if (f.dmaReq().fire()) {
            outstandingBeats += f.dmaReq().payload().length() / WqeLayout.WQEBB;
            DmaReadReq r = f.dmaReq().payload();
            long beats = r.length() / WqeLayout.WQEBB;
            int slot = (int) r.tag();
            for (int i = 0; i < SQS; i++)
                if (qpn[i] != 0 && (qpn[i] & (entries - 1)) == slot) {
                    lastFetched[slot] = rung[i] & 0xFFFF;
                    fetchedOnes[slot] |= lastFetched[slot];
                    fetchedZeros[slot] |= ~lastFetched[slot] & 0xFFFF;
                }
            reads.addLast(new long[]{r.addr(), beats, cycle + 3 + rnd.nextInt(18), failingBeat(r.tag(), beats)});
        }
        if (f.dmaRsp().fire()) {
            beat = null;
            beatsLeft--;
            beatAddr += WqeLayout.WQEBB;
        }
        if (lateDoorbell != 0 && configs.stream().noneMatch(c -> c.qpn() == lateDoorbell)) {
            doorbells.add(DoorbellMsg.send(lateDoorbell, planRnd.nextInt(1 << 16)));
            lateDoorbell = 0;
        }
        if (f.wqe().fire()) {
            outstandingBeats--;
            long q = f.wqe().payload().qpn();
            for (int i = 0; i < SQS; i++) if (qpn[i] == q) delivered[i]++;
            // the first WQEBB of a WQE of over 8: DS, bits 61 to 56 of its control segment, over 32
            int slot = (int) (q & (entries - 1));
            if (f.wqe().payload().first() == 1 && (f.wqe().payload().data()[0] >>> 56 & 63) > 32 && !bigThisLap[slot]) {
                bigThisLap[slot] = true;
                if (++bigSlots == entries) {
                    Arrays.fill(bigThisLap, false);
                    bigSlots = 0;
                }
            }
        }
        if (f.error().valid()) {
            WqeError e = f.error().payload();
            for (int i = 0; i < SQS; i++) if (qpn[i] == e.qpn()) stoppedFor[i] = 0;
            int slot = (int) (e.qpn() & (entries - 1));
            if (e.code() == WqeError.Code.DMA_ERROR.ordinal() && !failedThisLap[slot]) {
                failedThisLap[slot] = true;
                // every slot has shown one: the next lap starts
                if (++failedSlots == entries) {
                    Arrays.fill(failedThisLap, false);
                    failedSlots = 0;
                }
            }
        }
        for (int i = 0; i < SQS; i++) {
            if (stoppedFor[i] < 0) continue;
            // firmware resets the queue a while after the error: counters start over, from a random WQEBB
            // or destroys the QP and creates another, in another slot
            if (++stoppedFor[i] == STOPPED + (i * 37) % STOPPED) {
                stoppedFor[i] = -1;
                int start = rnd.nextInt(1 << 16);
                if (rnd.nextBoolean()) {
                    move(i);
                    continue;
                }
                producer[i] = start;
                delivered[i] = start;
                rung[i] = start;
                configs.add(new SqConfig(qpn[i], base[i], logSize[i], start, start, 1));
            }
        }
        // now and then firmware evicts an idle queue's context and loads it back (a context-cache miss):
        // the counters come back from where they were, with posted WQEs not yet announced by a doorbell
        int j = rnd.nextInt(SQS);
        boolean idle = stoppedFor[j] < 0 && delivered[j] == rung[j] && configs.isEmpty() && outstandingBeats == 0
                && doorbells.isEmpty();
        if (idle && rnd.nextInt(300) == 0) {
            configs.add(new SqConfig(qpn[j], base[j], logSize[j], delivered[j] & 0xFFFF, producer[j] & 0xFFFF, 1));
            rung[j] = producer[j];
        }
        // and QPs are destroyed: the program stops posting, the queue drains, its slot is invalidated, another QP is
        // created
        if (rnd.nextInt(DRAIN) == 0 && stoppedFor[j] < 0) draining[j] = true;
        for (int i = 0; i < SQS; i++) {
            if (!draining[i] || stoppedFor[i] >= 0) continue;
            if (rung[i] != producer[i]) ring(i);
            else if (delivered[i] == producer[i]) {
                draining[i] = false;
                move(i);
            }
        }
    }

    /**
     * The beat of a fetch of {@code beats} WQEBBs for slot {@code slot} that fails, or -1: one fetch for a slot not
     * yet stopped by a failed fetch this lap, at most one in {@link #FAIL_GAP} cycles;
     * the first beat half the time (before any WQE of the fetch is handed out), else any.
     */
    private long failingBeat(long slot, long beats) {
        if (cycle < nextFail || failedThisLap[(int) slot]) return -1;
        nextFail = cycle + FAIL_GAP;
        return planRnd.nextBoolean() ? 0 : planRnd.nextInt((int) beats);
    }

    @Override public boolean active() { return true; }
}
