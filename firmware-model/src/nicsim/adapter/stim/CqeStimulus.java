package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.Random;
import nicsim.adapter.CqePorts.CqCi;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqError;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.CqeWriter;
import nicsim.adapter.DoorbellMsg;
import nicsim.sim.Clocked;

/**
 * Seeded random traffic for the CqeWriter: five CQs of 4 to 32 entries; firmware completions at a
 * random rate (some for a CQ that does not exist); a host consumer that takes CQEs, reports its
 * consumer index, arms (solicited-only or not) and sometimes falls behind until the ring overflows;
 * firmware reconfiguring an overflowed CQ a while later; random back-pressure on the DMA writes.
 */
public final class CqeStimulus implements Clocked {
    private static final int CQS = 5;

    private final CqeWriter w;
    private final Random rnd;
    private final long[] cqn = new long[CQS], base = new long[CQS];
    private final int[] logSize = new int[CQS];
    private final int[] written = new int[CQS];   // CQEs whose DMA write went out
    private final int[] consumed = new int[CQS];  // what the host has polled
    private final boolean[] stalled = new boolean[CQS];
    private final int[] resetIn = new int[CQS];
    private final ArrayDeque<CqConfig> configs = new ArrayDeque<>();
    private CqeIn cqeOut;
    private DoorbellMsg armOut;
    private long armSn;

    public CqeStimulus(CqeWriter writer, long seed) {
        this.w = writer;
        this.rnd = new Random(seed);
        for (int i = 0; i < CQS; i++) {
            cqn[i] = 0x80 + i * 3L;
            base[i] = 0x20_0000L + i * 0x1_0000L;
            logSize[i] = 2 + rnd.nextInt(4);
            resetIn[i] = -1;
            configs.add(new CqConfig(cqn[i], base[i], logSize[i], 3 + i, 1));
        }
    }

    private int of(long addr) {
        for (int i = 0; i < CQS; i++) if (addr >= base[i] && addr < base[i] + 0x1_0000L) return i;
        return -1;
    }

    @Override public void drive() {
        if (configs.isEmpty()) w.cqConfig().idle(); else w.cqConfig().push(configs.peekFirst());
        if (cqeOut == null && configs.isEmpty() && rnd.nextInt(100) < 45) {
            long[] d = new long[8];
            for (int k = 0; k < 8; k++) d[k] = rnd.nextLong();
            long q = rnd.nextInt(150) == 0 ? 0x555 : cqn[rnd.nextInt(CQS)];
            cqeOut = new CqeIn(q, rnd.nextInt(3) == 0 ? 1 : 0, d);
        }
        if (cqeOut == null) w.cqe().idle(); else w.cqe().push(cqeOut);
        // the host: consume, report the consumer index, arm
        int i = rnd.nextInt(CQS);
        if (rnd.nextInt(300) == 0) stalled[i] = !stalled[i];
        if (!stalled[i] && consumed[i] < written[i]) consumed[i] += 1 + rnd.nextInt(written[i] - consumed[i]);
        if (rnd.nextInt(6) == 0) w.ci().push(new CqCi(cqn[i], consumed[i] & 0xFFFFFF)); else w.ci().idle();
        if (armOut == null && rnd.nextInt(40) == 0) {
            long q = rnd.nextInt(50) == 0 ? 0x556 : cqn[i];
            armOut = new DoorbellMsg(q, consumed[i] & 0xFFFFFF, DoorbellMsg.Kind.CQ_ARM.ordinal(), armSn++ & 3, rnd.nextInt(2));
        }
        if (armOut == null) w.arm().idle(); else w.arm().push(armOut);
        w.write().ready(rnd.nextInt(100) < 75);
    }

    @Override public void update() {
        if (w.cqConfig().valid()) configs.pollFirst();
        if (w.cqe().fire()) cqeOut = null;
        if (w.arm().fire()) armOut = null;
        if (w.write().fire()) {
            int i = of(w.write().payload().addr());
            if (i >= 0) written[i]++;
        }
        if (w.error().valid() && w.error().payload().reason() == CqError.Code.OVERFLOW) {
            for (int i = 0; i < CQS; i++) if (cqn[i] == w.error().payload().cqn() && resetIn[i] < 0) resetIn[i] = 40 + 7 * i;
        }
        for (int i = 0; i < CQS; i++) {
            if (resetIn[i] > 0 && --resetIn[i] == 0) {
                // firmware destroys and recreates the CQ: rings and counters start over
                resetIn[i] = -1;
                written[i] = 0;
                consumed[i] = 0;
                stalled[i] = false;
                configs.add(new CqConfig(cqn[i], base[i], logSize[i], 3 + i, 1));
            }
        }
    }

    @Override public boolean active() { return true; }
}
