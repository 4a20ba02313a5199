package nicsim.adapter.stim;

import java.util.ArrayDeque;
import java.util.Random;
import java.util.function.IntSupplier;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.DoorbellMsg;

/**
 * The directed part of {@link CqeStimulus}: one sequence over the arming rules a random draw seldom lines up, run
 * on a CQ just created (so that, CQs being created round the writer's table, every slot has its turn). Each input
 * waits for the one before to be taken, and no other completion or arm reaches the writer meanwhile (firmware's
 * reloads of other CQs may). With T the CQ, O another CQ, an arm "behind" one whose index is below T's producer:
 * <ol>
 * <li>T and O reloaded with empty rings (counters anywhere in 24 bits): neither armed, nor owing an event;
 * <li>a completion of T, unarmed, then a non-solicited arm behind it: the event goes at once (the CQ remembers
 * an entry written since its last event);
 * <li>a completion of T, O reloaded, an arm of T behind: the event goes at once (another CQ's configuration
 * leaves T's memory alone);
 * <li>completions of T and of O, an arm of O behind (its event at once), an arm of T behind: T's event too
 * (another CQ's event leaves T's memory alone);
 * <li>a solicited-only arm of T, O reloaded, a completion of T not solicited: no event (another CQ's
 * configuration leaves T's solicited-only arming alone);
 * <li>T destroyed, then a completion for it (UNKNOWN_CQ) and an arm (dropped);
 * <li>T created again with its base and vector's every bit inverted, an arm of T behind the loaded producer: no
 * event (the reload forgot the entries written before it); a completion: the event, with the inverted vector, and
 * the write at the inverted base;
 * <li>2 and 5 again, T's consumer index at 5 now every bit of what it was the first time inverted, then a solicited
 * completion (its event).
 * </ol>
 * So each bit of T's base, vector and consumer index is seen 0 and 1 by what its slot shows: writes, three events
 * each way, and a consumer index just loaded that one configuration of another CQ must leave alone (else the
 * completion after it overflows). Its rings never hold more than three entries, so no step overflows them (a ring
 * has four at least).
 */
final class CqeCorners {
    private CqeCorners() {}

    /** One input of a sequence: exactly one of the three is set. */
    record Step(CqConfig config, CqeIn cqe, DoorbellMsg arm) {
        static Step config(CqConfig c) { return new Step(c, null, null); }
        static Step cqe(CqeIn c) { return new Step(null, c, null); }
        static Step arm(DoorbellMsg m) { return new Step(null, null, m); }
    }

    /** A CQ as a sequence loads it: its number, ring and vector, and the producer index it starts from. */
    record Cq(long cqn, long base, int logSize, long vector, int pi) {
        /** This CQ loaded with an empty ring at producer {@code at} (mod 2^24). */
        Step reload(int at) { return Step.config(new CqConfig(cqn, base, logSize, vector, at & MASK, at & MASK, 1)); }

        /** The CQ reloaded in place with its base and vector's every bit inverted. */
        Cq inverted(int at) { return new Cq(cqn, ~base, logSize, ~vector & VECTOR_MASK, at); }
    }

    private static final int MASK = 0xFFFFFF;
    static final long VECTOR_MASK = (1 << 11) - 1;

    /**
     * The sequence for {@code t} and {@code o} as they start ({@code t.pi()}, {@code o.pi()}: their producers
     * after the first reloads), ending with T as {@code t2}: loaded with one entry not consumed, at {@code t2.pi()},
     * then given one completion. {@code sn} numbers the arms (0 to 3).
     */
    static ArrayDeque<Step> sequence(Random r, Cq t, Cq o, Cq t2, IntSupplier sn) {
        ArrayDeque<Step> s = new ArrayDeque<>();
        int p = t.pi(), q = o.pi();
        s.add(t.reload(p));
        s.add(o.reload(q));
        // 2: written unarmed, then armed behind it
        s.add(cqe(r, t, r.nextInt(2)));
        s.add(arm(t, p++, 0, sn));
        // 3: another CQ's configuration between the entry and the arm
        s.add(cqe(r, t, r.nextInt(2)));
        s.add(o.reload(q));
        s.add(arm(t, p++, 0, sn));
        // 4: another CQ's arm raises its event between the entry and the arm
        s.add(cqe(r, t, r.nextInt(2)));
        s.add(cqe(r, o, r.nextInt(2)));
        s.add(arm(o, q, 0, sn));
        s.add(arm(t, p++, 0, sn));
        // 5: armed solicited-only at the producer, another CQ's configuration, a completion not solicited
        s.add(arm(t, p, 1, sn)); // at solicitedArmAt(t)
        s.add(o.reload(q + 1));
        s.add(cqe(r, t, 0));
        p++;
        // 6: destroyed, then a completion and an arm for it
        s.add(Step.config(new CqConfig(t.cqn(), t.base(), t.logSize(), t.vector(), 0)));
        s.add(cqe(r, t, r.nextInt(2)));
        s.add(arm(t, p, 0, sn));
        // 7: reloaded (one entry not consumed), armed behind the loaded producer, a completion
        int p2 = t2.pi();
        s.add(Step.config(new CqConfig(t2.cqn(), t2.base(), t2.logSize(), t2.vector(), p2 & MASK, (p2 - 1) & MASK, 1)));
        s.add(arm(t2, p2 - 1, 0, sn));
        s.add(cqe(r, t2, r.nextInt(2)));
        // 8: 2 and 5 again under the inverted vector, 5 from the inverted consumer index; a solicited completion
        s.add(cqe(r, t2, r.nextInt(2)));
        s.add(arm(t2, p2 + 1, 0, sn));
        s.add(arm(t2, p2 + 2, 1, sn));
        s.add(o.reload(q + 1));
        s.add(cqe(r, t2, 0));
        s.add(cqe(r, t2, 1));
        return s;
    }

    /** T's producer index when its solicited-only arm of step 5 is taken (its consumer index after). */
    static int solicitedArmAt(Cq t) { return t.pi() + 3; }

    /** The producer {@code t2} must start from for step 8's consumer index to be {@code ci}. */
    static int reloadFor(int ci) { return ci - 2; }

    private static Step cqe(Random r, Cq c, int solicited) {
        long[] d = new long[8];
        for (int k = 0; k < 8; k++) d[k] = r.nextLong();
        return Step.cqe(new CqeIn(c.cqn(), solicited, d));
    }

    private static Step arm(Cq c, int index, int solicited, IntSupplier sn) {
        return Step.arm(new DoorbellMsg(c.cqn(), index & MASK, DoorbellMsg.Kind.CQ_ARM.ordinal(), sn.getAsInt(),
                solicited));
    }
}
