package nicsim.sim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SimulatorTest {
    @Test
    void simultaneousEventsRunByPriorityThenInsertionOrder() {
        Simulator sim = new Simulator();
        List<String> log = new ArrayList<>();
        sim.schedule(100, 5, () -> log.add("p5-first"));
        sim.schedule(100, 1, () -> log.add("p1"));
        sim.schedule(100, 5, () -> log.add("p5-second"));
        sim.schedule(50, 9, () -> log.add("t50"));
        sim.schedule(100, 5, () -> sim.scheduleIn(0, 0, () -> log.add("same-instant-later")));
        sim.runUntilIdle();
        assertEquals(List.of("t50", "p1", "p5-first", "p5-second", "same-instant-later"), log);
        assertEquals(100, sim.now());
    }

    @Test
    void anEventPostedInAReservedPlaceRunsWhereItWouldHaveRun() {
        Simulator sim = new Simulator();
        List<String> log = new ArrayList<>();
        sim.schedule(100, 5, () -> log.add("before"));
        long tie = sim.reserveTie();
        sim.schedule(100, 5, () -> log.add("after"));
        assertFalse(sim.passed(100, 5, tie));
        sim.schedule(100, 1, () -> {
            // at 100, ahead of both: the reserved place is still to come, and an event takes it
            assertFalse(sim.passed(100, 5, tie));
            sim.post(100, 5, tie, () -> log.add("reserved"));
        });
        sim.runUntilIdle();
        assertEquals(List.of("before", "reserved", "after"), log);
        assertTrue(sim.passed(100, 5, tie), "once the instant ran, the place is behind the run");
        assertThrows(IllegalArgumentException.class, () -> sim.post(100, 5, tie, () -> { }));
    }

    @Test
    void anEventPostedForItsInstantRunsAfterItsPosterInItsOwnPlace() {
        Simulator sim = new Simulator();
        List<String> log = new ArrayList<>();
        int d = Simulator.Priority.DELIVERY;
        sim.schedule(100, d, () -> {
            sim.post(sim.now(), d, () -> {
                log.add("step");
                sim.post(100, d, () -> log.add("step's post"));
            });
            sim.post(100, d, () -> log.add("asker's post")); // same instant and priority, asked after: a later tie
            log.add("asker");
        });
        sim.runUntilIdle();
        // after the whole asking event, ahead of the event posted after the ask; the step's own post comes after
        // that event, as a posted step's would
        assertEquals(List.of("asker", "step", "asker's post", "step's post"), log);
        assertEquals(4, sim.eventsExecuted(), "the step is an event");
        assertEquals(1, sim.stepsRunNext(), "the step ran without the queue");
    }

    @Test
    void anEventPostedForItsInstantWaitsBehindAnEventThatSortsFirst() {
        Simulator sim = new Simulator();
        List<String> log = new ArrayList<>();
        int d = Simulator.Priority.DELIVERY;
        sim.post(sim.now(), d, () -> log.add("a program's")); // asked by a program, before any event: it runs first
        sim.schedule(100, d, () -> log.add("due first")); // its tie before the step's
        sim.schedule(100, 1, () -> {
            sim.post(sim.now(), d, () -> log.add("step"));
            log.add("asker");
        });
        sim.schedule(200, Simulator.Priority.OBSERVE, () -> log.add("observer")); // due at 200, after the step
        sim.schedule(200, d, () -> {
            sim.post(sim.now(), d, () -> log.add("step at 200"));
            log.add("asker at 200");
        });
        assertEquals(0, sim.nextEventTime());
        sim.runUntilIdle();
        assertEquals(List.of("a program's", "asker", "due first", "step", "asker at 200", "step at 200", "observer"),
                log);
        assertEquals(7, sim.eventsExecuted());
        assertEquals(2, sim.stepsRunNext(), "the step at 100 waited in the queue; the others did not");
    }

    @Test
    void aProgramsWaitLooksBetweenAStepAndItsAsker() {
        Simulator sim = new Simulator();
        List<String> log = new ArrayList<>();
        int d = Simulator.Priority.DELIVERY;
        boolean[] asked = {false};
        sim.schedule(100, d, () -> {
            sim.post(sim.now(), d, () -> {
                log.add("step");
                sim.post(100, d, () -> log.add("step's post"));
            });
            asked[0] = true;
        });
        sim.runUntil(() -> asked[0], 1_000);
        assertEquals(List.of(), log, "the wait ended after the asking event, before its step");
        assertEquals(100, sim.nextEventTime());
        sim.post(100, d, () -> log.add("the program's post")); // a later tie than the step's, before its post's
        sim.runUntilIdle();
        assertEquals(List.of("step", "the program's post", "step's post"), log);
        assertEquals(4, sim.eventsExecuted());
        assertEquals(1, sim.stepsRunNext(), "the wait looked, the step still ran without the queue");
    }

    @Test
    void anEventPostedForItsInstantInAClockEdgeRunsAfterTheWholeEdge() {
        Simulator sim = new Simulator();
        ClockDomain clock = sim.clockDomain("clk", 1_000);
        List<String> log = new ArrayList<>();
        boolean[] updated = {false};
        clock.add(new Clocked() {
            @Override public void drive() {
                if (clock.cycle() == 1)
                    sim.post(sim.now(), Simulator.Priority.DELIVERY, () -> log.add("step at " + sim.now()
                            + (updated[0] ? ", after" : ", before") + " the edge's updates"));
            }
            @Override public void update() { }
            @Override public boolean active() { return clock.cycle() < 3; }
        });
        clock.add(new Clocked() {
            @Override public void drive() { }
            @Override public void update() { updated[0] = clock.cycle() >= 1; }
            @Override public boolean active() { return clock.cycle() < 3; }
        });
        sim.runUntilIdle(10_000);
        assertEquals(List.of("step at 1000, after the edge's updates"), log);
    }

    /**
     * Events scheduled through lanes run in exactly the order they would have run scheduled one by
     * one, including lane events out of the lane's order and cancelled ones; pending counts agree.
     */
    @Test
    void lanesRunEventsInTheirGlobalPlace() {
        List<String> direct = laneRun(false), laned = laneRun(true);
        assertEquals(direct, laned);
        assertTrue(direct.size() > 250, "the run did little: " + direct.size());
    }

    private static List<String> laneRun(boolean useLanes) {
        Simulator sim = new Simulator();
        Random r = new Random(7);
        Simulator.Lane[] lanes = {sim.lane(), sim.lane(), sim.lane()};
        List<String> log = new ArrayList<>();
        long[] laneTime = new long[lanes.length];
        List<Simulator.Event> scheduled = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int id = i;
            int l = r.nextInt(lanes.length);
            // mostly in the lane's order, sometimes before its last event (the lane must step aside)
            long t = r.nextInt(8) == 0
                    ? Math.max(0, laneTime[l] - r.nextInt(3000))
                    : (laneTime[l] += r.nextInt(3) * 500L);
            int prio = r.nextInt(3);
            Runnable a = () -> {
                log.add(sim.now() + ":" + id);
                if (id % 4 == 0)
                    sim.scheduleIn(r.nextInt(2) * 500L, r.nextInt(3), () -> log.add(sim.now() + ":child" + id));
            };
            scheduled.add(useLanes ? lanes[l].schedule(t, prio, a) : sim.schedule(t, prio, a));
        }
        for (int i = 0; i < scheduled.size(); i += 7) scheduled.get(i).cancel();
        log.add("pending " + sim.pendingEvents());
        sim.runUntilIdle();
        assertEquals(0, sim.pendingEvents());
        return log;
    }

    /** A random cascade of events; two runs with one seed must produce the same log, event for event. */
    private static List<String> randomRun(long seed) {
        Simulator sim = new Simulator();
        Random r = new Random(seed);
        List<String> log = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            int id = i;
            sim.schedule(r.nextInt(10) * 1000L, r.nextInt(3), () -> {
                log.add(sim.now() + ":" + id);
                if (id % 3 == 0)
                    sim.scheduleIn(r.nextInt(3) * 1000L, r.nextInt(3), () -> log.add(sim.now() + ":child" + id));
            });
        }
        sim.runUntilIdle();
        return log;
    }

    @Test
    void identicalRunsGiveIdenticalResults() {
        assertEquals(randomRun(7), randomRun(7));
        assertNotEquals(randomRun(7), randomRun(8));
    }

    @Test
    void cannotScheduleInThePast() {
        Simulator sim = new Simulator();
        sim.runUntil(1000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sim.schedule(999, () -> { }));
        assertTrue(e.getMessage().contains("999"), e.getMessage());
    }

    @Test
    void runUntilConditionStopsWhenItHoldsAndFailsPastTheLimit() {
        Simulator sim = new Simulator();
        int[] n = {0};
        for (int i = 1; i <= 10; i++) sim.schedule(i * 100L, () -> n[0]++);
        sim.runUntil(() -> n[0] == 3, 10_000);
        assertEquals(300, sim.now());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> sim.runUntil(() -> n[0] == 100, 250));
        assertTrue(e.getMessage().contains("250"), e.getMessage());
        assertEquals(550, sim.now());
        sim.runUntilIdle();
        assertThrows(IllegalStateException.class, () -> sim.runUntil(() -> false, 1_000_000));
    }

    @Test
    void cancelledEventsDoNotRun() {
        Simulator sim = new Simulator();
        int[] n = {0};
        Simulator.Event e = sim.schedule(10, () -> n[0]++);
        sim.schedule(20, () -> n[0] += 10);
        e.cancel();
        sim.runUntilIdle();
        assertEquals(10, n[0]);
    }

    /**
     * Events that schedule more as they run (the kernel lets the new one take the running one's
     * place in its queue) still run in (time, priority, scheduling) order: checked against a sort
     * of everything the run scheduled.
     */
    @Test
    void eventsScheduledWhileRunningKeepTheGlobalOrder() {
        Simulator sim = new Simulator();
        Random r = new Random(11);
        // time, priority, scheduling sequence, how many were scheduled when it ran
        List<long[]> scheduled = new ArrayList<>();
        List<Long> ran = new ArrayList<>();
        long[] seq = {0};
        class Spawner {
            void at(long t, int prio) {
                long id = seq[0]++;
                long[] ev = {t, prio, id, -1};
                scheduled.add(ev);
                sim.schedule(t, prio, () -> {
                    ran.add(id);
                    ev[3] = seq[0];
                    int more = r.nextInt(3); // none, one or two more, some at this very instant
                    for (int k = 0; k < more && seq[0] < 3000; k++) at(sim.now() + r.nextInt(4) * 10, r.nextInt(3));
                });
            }
        }
        Spawner s = new Spawner();
        for (int i = 0; i < 40; i++) s.at(r.nextInt(200), r.nextInt(3));
        sim.runUntilIdle();
        assertEquals(scheduled.size(), ran.size());
        assertTrue(ran.size() > 1000, "the run did little: " + ran.size());
        // no event ran before one that sorts before it and was already scheduled when it ran
        for (int k = 1; k < ran.size(); k++) {
            long[] a = scheduled.get((int) (long) ran.get(k - 1)), b = scheduled.get((int) (long) ran.get(k));
            boolean bFirst = b[0] < a[0] || b[0] == a[0] && (b[1] < a[1] || b[1] == a[1] && b[2] < a[2]);
            assertFalse(bFirst && b[2] < a[3], "event " + b[2] + " ran after " + a[2]
                    + " though it sorts before it and was already pending");
        }
    }

    /** An alarm rings once per distinct time asked, in time order, with one event queued for it at a time. */
    @Test
    void alarmRingsOncePerTimeWithOneQueuedEvent() {
        Simulator sim = new Simulator();
        List<Long> rang = new ArrayList<>();
        int[] mostPending = {0};
        Alarm alarm = new Alarm(sim, Simulator.Priority.DELIVERY, () -> {
            rang.add(sim.now());
            mostPending[0] = Math.max(mostPending[0], sim.pendingEvents());
        });
        for (long t : new long[]{500, 300, 300, 900, 100, 700, 500, 40}) alarm.at(t);
        assertEquals(1, sim.pendingEvents(), "one event queued for eight times");
        // asked while ringing: a time now, sooner ones, a repeat
        sim.schedule(600, () -> { alarm.at(650); alarm.at(600); alarm.at(900); });
        sim.runUntilIdle();
        assertEquals(List.of(40L, 100L, 300L, 500L, 600L, 650L, 700L, 900L), rang);
        assertTrue(mostPending[0] <= 2, "at most the next ring and the scheduled event pending: " + mostPending[0]);
    }
}
