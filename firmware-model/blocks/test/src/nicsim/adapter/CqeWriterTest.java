package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.CqePorts.CqCi;
import nicsim.adapter.CqePorts.CqConfig;
import nicsim.adapter.CqePorts.CqError;
import nicsim.adapter.CqePorts.CqEvent;
import nicsim.adapter.CqePorts.CqeIn;
import nicsim.adapter.CqePorts.Write64;
import nicsim.sim.ClockDomain;
import nicsim.sim.Clocked;
import nicsim.sim.Simulator;
import org.junit.jupiter.api.Test;

class CqeWriterTest {
    static final long CQ = 0x81, BASE = 0x30_0000;

    static final class Bench implements Clocked {
        final Simulator sim = new Simulator();
        final ClockDomain core = sim.clockDomain("core", 4_000);
        final CqeWriter w = new CqeWriter(core, new CqeWriter.Config(16));
        final ArrayDeque<Object> inputs = new ArrayDeque<>(); // CqConfig, CqeIn, DoorbellMsg or CqCi, one per cycle
        final List<Write64> writes = new ArrayList<>();
        final List<CqEvent> events = new ArrayList<>();
        final List<CqError> errors = new ArrayList<>();
        final List<DoorbellMsg> dropped = new ArrayList<>();

        Bench() { core.add(this); inputs.add(new CqConfig(CQ, BASE, 2, 9, 1)); } // 4 entries, vector 9

        @Override public void drive() {
            Object in = inputs.peekFirst();
            if (in instanceof CqConfig c) w.cqConfig().push(c); else w.cqConfig().idle();
            if (in instanceof CqeIn c) w.cqe().push(c); else w.cqe().idle();
            if (in instanceof DoorbellMsg m) w.arm().push(m); else w.arm().idle();
            if (in instanceof CqCi c) w.ci().push(c); else w.ci().idle();
            w.write().ready(true);
        }

        @Override public void update() {
            if (w.cqConfig().valid() || w.cqe().fire() || w.arm().fire() || w.ci().valid()) inputs.pollFirst();
            if (w.write().fire()) writes.add(w.write().payload());
            if (w.event().valid()) events.add(w.event().payload());
            if (w.error().valid()) errors.add(w.error().payload());
            if (w.dropped().valid()) dropped.add(w.dropped().payload());
        }

        @Override public boolean active() { return !inputs.isEmpty(); }

        Bench cqe(long cqn, boolean solicited) {
            long[] d = new long[8];
            d[7] = 0xFFL << 56; // firmware's op_own byte with every bit set: the writer owns bit 0
            inputs.add(new CqeIn(cqn, solicited ? 1 : 0, d));
            return this;
        }

        Bench run() { core.wake(); sim.runUntilIdle(1_000_000_000L); return this; }
    }

    static int owner(Write64 w) { return (int) (w.data()[7] >>> 56) & 1; }

    @Test
    void ownerBitFlipsOnEachLapAndSlotsWrap() {
        Bench b = new Bench();
        for (int i = 0; i < 4; i++) b.cqe(CQ, false);
        b.inputs.add(new CqCi(CQ, 4));                     // software consumed the first lap
        for (int i = 0; i < 4; i++) b.cqe(CQ, false);
        b.run();
        assertEquals(8, b.writes.size());
        for (int i = 0; i < 8; i++) {
            assertEquals(BASE + 64L * (i % 4), b.writes.get(i).addr(), "CQE " + i);
            assertEquals(i < 4 ? 0 : 1, owner(b.writes.get(i)), "owner of CQE " + i);
            assertEquals(0xFE, (b.writes.get(i).data()[7] >>> 56) & 0xFE, "the rest of op_own is the firmware's");
        }
        assertTrue(b.errors.isEmpty());
    }

    @Test
    void aFullRingIsAnOverflowAndTheCqStopsUntilReconfigured() {
        Bench b = new Bench();
        for (int i = 0; i < 5; i++) b.cqe(CQ, false);     // 4 fit; nobody consumed
        b.cqe(CQ, false);
        b.run();
        assertEquals(4, b.writes.size());
        assertEquals(List.of(new CqError(CQ, CqError.Code.OVERFLOW.ordinal()),
                new CqError(CQ, CqError.Code.CQ_IN_ERROR.ordinal())), b.errors);
        b.inputs.add(new CqConfig(CQ, BASE, 2, 9, 1));
        b.cqe(CQ, false).run();
        assertEquals(5, b.writes.size());
        assertEquals(0, owner(b.writes.get(4)));           // a fresh ring starts at lap 0
    }

    @Test
    void armFiresOnceAndSolicitedOnlyWaitsForASolicitedCompletion() {
        Bench b = new Bench();
        b.cqe(CQ, false).run();
        assertTrue(b.events.isEmpty(), "not armed: no event");
        b.inputs.add(new DoorbellMsg(CQ, 1, DoorbellMsg.Kind.CQ_ARM.ordinal(), 0, 0));
        b.cqe(CQ, false).cqe(CQ, false).run();
        assertEquals(List.of(new CqEvent(CQ, 9)), b.events, "one event, then disarmed");
        b.inputs.add(new DoorbellMsg(CQ, 3, DoorbellMsg.Kind.CQ_ARM.ordinal(), 1, 1)); // solicited only
        b.cqe(CQ, false).run();
        assertEquals(1, b.events.size(), "an unsolicited completion does not fire a solicited-only arm");
        b.cqe(CQ, true).run();
        assertEquals(2, b.events.size());
    }

    /** Software polled one of two entries, then armed: the one it left raises the event at once (ConnectX). */
    @Test
    void anArmBehindTheProducerRaisesTheEventAtOnce() {
        Bench b = new Bench();
        b.cqe(CQ, false).cqe(CQ, false).run();
        b.inputs.add(new DoorbellMsg(CQ, 1, DoorbellMsg.Kind.CQ_ARM.ordinal(), 0, 0));
        b.run();
        assertEquals(List.of(new CqEvent(CQ, 9)), b.events, "an entry not polled: the event, with no completion");
        b.cqe(CQ, false).run();
        assertEquals(1, b.events.size(), "that event disarmed the CQ");
        b.inputs.add(new DoorbellMsg(CQ, 3, DoorbellMsg.Kind.CQ_ARM.ordinal(), 1, 0)); // caught up: waits
        b.run();
        assertEquals(1, b.events.size(), "an arm at the producer waits for the next completion");
        b.cqe(CQ, false).run();
        assertEquals(2, b.events.size());
        b.inputs.add(new DoorbellMsg(CQ, 3, DoorbellMsg.Kind.CQ_ARM.ordinal(), 2, 1)); // solicited-only, behind
        b.run();
        assertEquals(2, b.events.size(), "a solicited-only arm waits for a solicited completion");
    }

    /**
     * libibverbs' pattern (perftest's ctx_notify_events): take the event, re-arm, then poll. The entry the event
     * reported is still behind the producer when the arm comes; it must not raise a second event, or a program with
     * two CQs on one channel takes that extra event as the other CQ's completion and polls an empty CQ.
     */
    @Test
    void anArmBehindOnlyEntriesAnEventReportedWaitsForTheNextCompletion() {
        Bench b = new Bench();
        b.inputs.add(new DoorbellMsg(CQ, 0, DoorbellMsg.Kind.CQ_ARM.ordinal(), 0, 0));
        b.cqe(CQ, false).run();
        assertEquals(1, b.events.size(), "the completion's event");
        b.inputs.add(new DoorbellMsg(CQ, 0, DoorbellMsg.Kind.CQ_ARM.ordinal(), 1, 0)); // re-armed before polling
        b.run();
        assertEquals(1, b.events.size(), "the entry behind the arm was reported already: no second event");
        b.cqe(CQ, false).run();
        assertEquals(2, b.events.size(), "the next completion raises the event");
        b.cqe(CQ, false).run(); // lands while disarmed: no event has reported it
        b.inputs.add(new DoorbellMsg(CQ, 1, DoorbellMsg.Kind.CQ_ARM.ordinal(), 2, 0)); // polled one, armed, sleeps
        b.run();
        assertEquals(3, b.events.size(), "an entry written since the last event raises it at once");
    }

    @Test
    void unknownCqsAreReportedNotWritten() {
        Bench b = new Bench();
        b.cqe(0x99, false);
        b.inputs.add(new DoorbellMsg(0x99, 0, DoorbellMsg.Kind.CQ_ARM.ordinal(), 0, 0));
        b.run();
        assertTrue(b.writes.isEmpty());
        assertEquals(CqError.Code.UNKNOWN_CQ, b.errors.get(0).reason());
        assertEquals(1, b.dropped.size());
    }
}
