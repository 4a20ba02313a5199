package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Random;
import nicsim.adapter.CqePorts.CqCi;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqError;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.CqeWriter;
import nicsim.adapter.DoorbellMsg;
import nicsim.sim.Clocked;

/**
 * Seeded random traffic for the CqeWriter: twelve CQs of 4 to 32 entries; firmware completions at a
 * random rate (some for a CQ that does not exist or no longer does); a host consumer that takes CQEs,
 * reports its consumer index, arms (solicited-only or not) and sometimes falls behind until the ring
 * overflows; firmware reconfiguring an overflowed CQ a while later; random back-pressure on the DMA
 * writes. CQs are destroyed (their slot invalidated) and created in the next free slot of a sweep
 * round the writer's table with a new number, ring and vector, so that within a short run every slot
 * holds CQs that take completions, are armed and overflow. Now and then firmware reloads a CQ's context
 * on the very edge an arm for it is taken, so the configuration meets the event that arm raises. A ring's base is a
 * page (as a driver's is) or, one time in two, a CQE-aligned address or any byte (the writer takes any base).
 *
 * <p>Beside the random draw, {@link CqeCorners} runs its directed sequence on a CQ just created, at most once every
 * {@link #CORNER_GAP} edges, in a slot of the table it has not visited in this lap round it: every slot has its
 * turn before any has a second. Meanwhile the random part leaves the writer's configuration, completion and arm
 * ports alone (it waits for its own inputs to be taken first), keeps reporting other CQs' consumer indexes and
 * holds back its destroy-and-create.
 */
public final class CqeStimulus implements Clocked {
    private static final int CQS = 12;
    /** Edges from the start of one directed sequence to the earliest start of the next (one takes about 30). */
    private static final int CORNER_GAP = 100;

    private final CqeWriter w;
    private final Random rnd;
    private final int entries;
    private final long[] cqn = new long[CQS], base = new long[CQS], vector = new long[CQS];
    private long destroyed = 0x555; // the number of the last CQ destroyed (at first, one never made)
    private final int[] logSize = new int[CQS];
    private final int[] written = new int[CQS];   // CQEs whose DMA write went out
    private final int[] consumed = new int[CQS];  // what the host has polled
    private final boolean[] stalled = new boolean[CQS];
    private final int[] resetIn = new int[CQS];
    private final ArrayDeque<CqConfig> configs = new ArrayDeque<>();
    private CqeIn cqeOut;
    private DoorbellMsg armOut;
    private long armSn;
    private int sweep; // where the search for a free slot starts: it goes round the table
    private final Random cornerRnd;
    private final boolean[] visited; // slots a directed sequence has run in, this lap round the table
    private int visits;
    private int pending = -1;  // the CQ a directed sequence waits to start on (-1: none)
    private int target = -1, partner = -1; // the CQs of the sequence running (T and O)
    private ArrayDeque<CqeCorners.Step> corner = new ArrayDeque<>(); // its inputs not yet taken
    private long edge, nextCorner;

    public CqeStimulus(CqeWriter writer, long seed) {
        this.w = writer;
        this.rnd = new Random(seed);
        this.entries = writer.config().cqEntries();
        if (entries < CQS)
            throw new IllegalArgumentException("cq.entries " + entries + " is below the stimulus' " + CQS + " CQs");
        this.cornerRnd = new Random(seed * 0x9E37_79B9_7F4A_7C15L + 1);
        this.visited = new boolean[entries];
        for (int i = 0; i < CQS; i++) {
            resetIn[i] = -1;
            create(i);
        }
    }

    /**
     * CQ {@code i} is created in the next slot no other CQ holds going round the table (every slot in turn,
     * none left to chance), with a new number (any of 24 bits), ring and vector.
     */
    private void create(int i) {
        int slot = sweep;
        while (slotTaken(slot)) slot = (slot + 1) % entries;
        sweep = (slot + 1) % entries;
        cqn[i] = (long) (1 + rnd.nextInt((1 << 24) / entries - 1)) * entries + slot;
        // anywhere in 64 bits: two CQs' rings (at most 2 KiB each) overlap with a chance of about 2^-45
        long at = rnd.nextLong();
        base[i] = switch (rnd.nextInt(4)) { case 0, 1 -> at & -4096L; case 2 -> at & -64L; default -> at; };
        logSize[i] = 2 + rnd.nextInt(4);
        vector[i] = rnd.nextInt(1 << 11);
        start(i);
        if (pending < 0 && corner.isEmpty() && edge >= nextCorner && !visited[slot]) pending = i;
    }

    /**
     * CQ {@code i}'s counters start anywhere in their 24 bits (a context loaded back resumes from its saved
     * ones), now and then just short of the wrap, with up to a ring of CQEs not yet consumed.
     */
    private void start(int i) {
        int pi = rnd.nextInt(4) == 0 ? 0xFFFFFF - rnd.nextInt(64) : rnd.nextInt(1 << 24);
        written[i] = pi;
        consumed[i] = pi - rnd.nextInt((1 << logSize[i]) + 1);
        stalled[i] = false;
        configs.add(new CqConfig(cqn[i], base[i], logSize[i], vector[i], pi, consumed[i] & 0xFFFFFF, 1));
    }

    private boolean slotTaken(int slot) {
        for (int k = 0; k < CQS; k++) if (cqn[k] != 0 && (cqn[k] & (entries - 1)) == slot) return true;
        return false;
    }

    /** CQ {@code i} is destroyed, its slot invalidated, and another created in its place elsewhere. */
    private void move(int i) {
        configs.add(new CqConfig(cqn[i], base[i], logSize[i], vector[i], 0));
        destroyed = cqn[i];
        cqn[i] = 0;
        create(i);
    }

    private int indexOf(long number) {
        for (int i = 0; i < CQS; i++) if (cqn[i] == number) return i;
        return -1;
    }

    private int of(long addr) {
        for (int i = 0; i < CQS; i++) if (Long.compareUnsigned(addr - base[i], 64L << logSize[i]) < 0) return i;
        return -1;
    }

    /**
     * Starts the directed sequence on CQ {@code t} with another CQ not waiting for a reload, if there is one
     * (else the sequence is dropped), and sets the host's view of both to where the sequence leaves them.
     */
    private void startCorner(int t) {
        int slot = (int) (cqn[t] & (entries - 1));
        int o = (t + 1 + cornerRnd.nextInt(CQS - 1)) % CQS;
        if (resetIn[t] >= 0 || resetIn[o] >= 0) return;
        if (!visited[slot]) visits++;
        visited[slot] = true;
        if (visits == entries) {
            Arrays.fill(visited, false);
            visits = 0;
        }
        nextCorner = edge + CORNER_GAP;
        target = t;
        partner = o;
        CqeCorners.Cq ct = new CqeCorners.Cq(cqn[t], base[t], logSize[t], vector[t], producer());
        CqeCorners.Cq co = new CqeCorners.Cq(cqn[o], base[o], logSize[o], vector[o], producer());
        // step 8's consumer index: step 5's with every bit inverted
        CqeCorners.Cq t2 = ct.inverted(CqeCorners.reloadFor(~CqeCorners.solicitedArmAt(ct)));
        corner = CqeCorners.sequence(cornerRnd, ct, co, t2, () -> (int) (armSn++ & 3));
        // the host's view once the sequence is over: O reloaded empty after its one entry was written (that write
        // still to count), T at its new base with two entries not consumed and four to be written
        written[o] = co.pi();
        consumed[o] = co.pi() + 1;
        base[t] = t2.base();
        vector[t] = t2.vector();
        written[t] = t2.pi();
        consumed[t] = t2.pi() + 2;
        stalled[t] = stalled[o] = false;
    }

    /** A producer index to load, anywhere in its 24 bits and now and then just short of the wrap. */
    private int producer() {
        return cornerRnd.nextInt(4) == 0 ? 0xFFFFFF - cornerRnd.nextInt(8) : cornerRnd.nextInt(1 << 24);
    }

    @Override public void drive() {
        if (corner.isEmpty() && pending >= 0 && cqeOut == null && armOut == null && configs.isEmpty()) {
            startCorner(pending);
            pending = -1;
        }
        if (!corner.isEmpty() || pending >= 0) {
            driveCorner();
            return;
        }
        target = partner = -1;
        if (configs.isEmpty()) w.cqConfig().idle(); else w.cqConfig().push(configs.peekFirst());
        if (cqeOut == null && configs.isEmpty() && rnd.nextInt(100) < 45) {
            long[] d = new long[8];
            for (int k = 0; k < 8; k++) d[k] = rnd.nextLong();
            long q = rnd.nextInt(150) == 0 ? destroyed : cqn[rnd.nextInt(CQS)];
            cqeOut = new CqeIn(q, rnd.nextInt(3) == 0 ? 1 : 0, d);
        }
        if (cqeOut == null) w.cqe().idle(); else w.cqe().push(cqeOut);
        // the host: consume, report the consumer index, arm
        int i = rnd.nextInt(CQS);
        if (rnd.nextInt(300) == 0) stalled[i] = !stalled[i];
        if (!stalled[i] && consumed[i] < written[i]) consumed[i] += 1 + rnd.nextInt(written[i] - consumed[i]);
        if (rnd.nextInt(6) == 0) w.ci().push(new CqCi(cqn[i], consumed[i] & 0xFFFFFF)); else w.ci().idle();
        if (armOut == null && rnd.nextInt(20) == 0) {
            boolean stale = rnd.nextInt(50) == 0; // to a CQ that is gone, from anywhere in the index's 24 bits
            long q = stale ? destroyed : cqn[i];
            long ci = stale ? rnd.nextInt(1 << 24) : consumed[i] & 0xFFFFFF;
            armOut = new DoorbellMsg(q, ci, DoorbellMsg.Kind.CQ_ARM.ordinal(), armSn++ & 3, rnd.nextInt(2));
        }
        if (armOut == null) w.arm().idle(); else w.arm().push(armOut);
        // now and then firmware reloads the context of the CQ an arm goes to, on the same edge (no completion for
        // it in flight): when the arm is taken and raises its event, the configuration wins and clears the event
        int armed = armOut == null ? -1 : indexOf(armOut.qpn());
        if (armed >= 0 && configs.isEmpty() && resetIn[armed] < 0 && (cqeOut == null || cqeOut.cqn() != cqn[armed])
                && rnd.nextInt(8) == 0) {
            start(armed);
            w.cqConfig().push(configs.peekFirst());
        }
        w.write().ready(rnd.nextInt(100) < 75);
    }

    /**
     * While a directed sequence waits or runs: its next input (once the random part's own inputs are taken; a
     * configuration of the sequence after those of the random part), the host reporting other CQs' consumer
     * indexes, the writes' back-pressure.
     */
    private void driveCorner() {
        // an input offered stays offered until taken (the Stream contract): only a configuration step waits
        CqeCorners.Step s = corner.peekFirst();
        if (!configs.isEmpty()) w.cqConfig().push(configs.peekFirst());
        else if (s != null && s.config() != null) w.cqConfig().push(s.config());
        else w.cqConfig().idle();
        CqeIn c = cqeOut != null ? cqeOut : s == null ? null : s.cqe();
        if (c == null) w.cqe().idle(); else w.cqe().push(c);
        DoorbellMsg m = armOut != null ? armOut : s == null ? null : s.arm();
        if (m == null) w.arm().idle(); else w.arm().push(m);
        int i = rnd.nextInt(CQS);
        boolean mine = !corner.isEmpty() && (i == target || i == partner);
        if (!mine && !stalled[i] && consumed[i] < written[i]) consumed[i] += 1 + rnd.nextInt(written[i] - consumed[i]);
        if (!mine && rnd.nextInt(6) == 0) w.ci().push(new CqCi(cqn[i], consumed[i] & 0xFFFFFF)); else w.ci().idle();
        w.write().ready(rnd.nextInt(100) < 75);
    }

    @Override public void update() {
        edge++;
        CqeCorners.Step s = corner.isEmpty() ? null : corner.peekFirst();
        if (w.cqConfig().valid()) {
            if (!configs.isEmpty()) configs.pollFirst(); else if (s != null && s.config() != null) corner.pollFirst();
        }
        if (w.cqe().fire()) {
            if (cqeOut != null) cqeOut = null; else if (s != null && s.cqe() != null) corner.pollFirst();
        }
        if (w.arm().fire()) {
            if (armOut != null) armOut = null; else if (s != null && s.arm() != null) corner.pollFirst();
        }
        if (w.write().fire()) {
            int i = of(w.write().payload().addr());
            if (i >= 0) written[i]++;
        }
        if (w.error().valid() && w.error().payload().reason() == CqError.Code.OVERFLOW) {
            long full = w.error().payload().cqn();
            for (int i = 0; i < CQS; i++) if (cqn[i] == full && resetIn[i] < 0) resetIn[i] = 40 + 7 * i;
        }
        for (int i = 0; i < CQS; i++) {
            if (resetIn[i] > 0 && --resetIn[i] == 0) {
                // firmware destroys and recreates the CQ (in place or in another slot): rings and counters start over
                resetIn[i] = -1;
                if (rnd.nextBoolean()) {
                    move(i);
                    continue;
                }
                start(i);
            }
        }
        // and a program destroys a CQ now and then (one with no completion or arm on its way in) and creates another
        int j = rnd.nextInt(CQS);
        boolean busy = cqeOut != null && cqeOut.cqn() == cqn[j] || armOut != null && armOut.qpn() == cqn[j];
        if (rnd.nextInt(60) == 0 && resetIn[j] < 0 && !busy && corner.isEmpty() && pending < 0) move(j);
    }

    @Override public boolean active() { return true; }
}
