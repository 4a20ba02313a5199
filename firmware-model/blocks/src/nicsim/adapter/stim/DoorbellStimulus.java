package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;
import nicsim.abi.UarLayout;
import nicsim.adapter.DoorbellDecoder;
import nicsim.adapter.MmioWrite;
import nicsim.adapter.QueueTableWrite;
import nicsim.sim.Clocked;

/**
 * Seeded random traffic for the DoorbellDecoder: it first creates a pool of QPs and CQs owned by a
 * few UAR pages, then sends bursts of doorbell writes (right ones, and ones wrong in exactly one
 * way: another context's page, no register, 4 bytes, outside the window, a queue that does not
 * exist, a hot queue that coalesces) with queue-table churn and random back-pressure, so every
 * path of the decoder is exercised. Same seed, same traffic.
 */
public final class DoorbellStimulus implements Clocked {
    private final DoorbellDecoder dec;
    private final DoorbellDecoder.Config cfg;
    private final Random rnd;
    private final int pages = 8;
    private final List<Long> qps;
    /** CQs 0x40..0x45, and one per high bit of the 24-bit number, so every bit of a queued CQN is set sometimes. */
    private final List<Long> cqs = LongStream.concat(LongStream.range(0x40, 0x46),
            LongStream.range(7, 24).map(b -> (0x50 + b) | 1L << b)).boxed().toList();
    private final Map<Long, Integer> owner = new HashMap<>(); // key: queue | (cq ? 1<<32 : 0)
    private final ArrayDeque<QueueTableWrite> setup = new ArrayDeque<>();
    private long cycle;

    public DoorbellStimulus(DoorbellDecoder dec, long seed) {
        this.dec = dec;
        this.cfg = dec.config();
        this.rnd = new Random(seed);
        // a few queue numbers share a table slot with another, so the tag check matters
        // and one per high bit of the 24-bit QPN (distinct low bits: their own slots), so every bit of a queued QPN is
        // set
        this.qps = LongStream.concat(LongStream.concat(LongStream.range(0x100, 0x100 + 44),
                        LongStream.range(0, 4).map(i -> 0x100 + i + cfg.tableEntries())),
                LongStream.range(9, 24).map(b -> (0x180 + b) | 1L << b)).boxed().toList();
        for (long q : qps) setup.add(create(false, q));
        for (long q : cqs) setup.add(create(true, q));
    }

    private static long key(boolean cq, long q) { return q | (cq ? 1L << 32 : 0); }

    private QueueTableWrite create(boolean cq, long q) {
        int page = rnd.nextInt(pages);
        owner.put(key(cq, q), page);
        return new QueueTableWrite(cq ? 1 : 0, q, page, 1);
    }

    private QueueTableWrite churn() {
        boolean cq = rnd.nextInt(3) == 0;
        long q = cq ? cqs.get(rnd.nextInt(cqs.size())) : qps.get(rnd.nextInt(qps.size()));
        if (rnd.nextInt(10) != 0) return create(cq, q);
        owner.remove(key(cq, q));
        return new QueueTableWrite(cq ? 1 : 0, q, 0, 0);
    }

    private long pageBase(int p) { return cfg.windowBase() + (long) p * cfg.pageSize(); }

    private static byte[] send(long qpn, int idx) {
        return new byte[]{0, (byte) (idx >> 8), (byte) idx, 0x0a, (byte) (qpn >> 16), (byte) (qpn >> 8), (byte) qpn, 3};
    }

    private MmioWrite doorbell() {
        long qpn = qps.get(rnd.nextInt(qps.size()));
        int page = owner.getOrDefault(key(false, qpn), rnd.nextInt(pages));
        long bf = UarLayout.BF_OFFSET + (long) rnd.nextInt(UarLayout.BF_REGS) * cfg.bfRegSize();
        int idx = rnd.nextInt(1 << 16);
        int r = rnd.nextInt(100);
        if (r < 55) return MmioWrite.of(pageBase(page) + bf, send(qpn, idx));
        if (r < 70) {
            long cqn = cqs.get(rnd.nextInt(cqs.size()));
            int p = owner.getOrDefault(key(true, cqn), rnd.nextInt(pages));
            int w0 = (rnd.nextInt(4) << 28) | (rnd.nextBoolean() ? UarLayout.CQ_ARM_SOLICITED : 0)
                    | rnd.nextInt(1 << 24);
            byte[] arm = {(byte) (w0 >>> 24), (byte) (w0 >> 16), (byte) (w0 >> 8), (byte) w0,
                    0, (byte) (cqn >> 16), (byte) (cqn >> 8), (byte) cqn};
            return MmioWrite.of(pageBase(p) + UarLayout.CQ_DOORBELL, arm);
        }
        if (r < 76) return MmioWrite.of(pageBase((page + 1) % pages) + bf, send(qpn, idx));
        if (r < 80) return MmioWrite.of(pageBase(page) + 0x100 + 8L * rnd.nextInt(32), send(qpn, idx));
        if (r < 84) return MmioWrite.of(pageBase(page) + bf, Arrays.copyOf(send(qpn, idx), 4));
        if (r < 88) return MmioWrite.of(cfg.windowBase() - 8 - 8L * rnd.nextInt(8), send(qpn, idx));
        if (r < 92) return MmioWrite.of(pageBase(page) + bf, send(0xABC000L + rnd.nextInt(4096), idx));
        return MmioWrite.of(pageBase(owner.getOrDefault(key(false, qps.get(0)), 0)) + bf, send(qps.get(0), idx));
    }

    @Override public void drive() {
        // bursts and idle stretches, so the FIFO both overflows and drains
        boolean busy = (cycle / 500) % 3 != 2;
        MmioWrite w = busy && rnd.nextInt(100) < 70 ? doorbell() : null;
        QueueTableWrite t = !setup.isEmpty() ? setup.poll() : rnd.nextInt(100) < 3 ? churn() : null;
        if (w == null) dec.mmio().idle(); else dec.mmio().push(w);
        if (t == null) dec.tableWrite().idle(); else dec.tableWrite().push(t);
        dec.doorbell().ready(rnd.nextInt(100) < (busy ? 30 : 90));
    }

    @Override public void update() { cycle++; }

    /** Keeps the clock running: the lockstep runner decides how many cycles to run. */
    @Override public boolean active() { return true; }
}
