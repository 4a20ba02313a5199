package nicsim.sim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class ClockDomainTest {
    @Test
    void cyclesAndPicosConvertExactly() {
        Simulator sim = new Simulator();
        ClockDomain core = sim.clockDomain("core", 4_000);          // 250 MHz
        ClockDomain pci = sim.clockDomain("pci", 30_303, 1_000);    // 33 MHz rounded, first edge at 1 ns
        assertEquals(4_000 * 1_000_000L, core.cyclesToPicos(1_000_000));
        assertEquals(1_000 + 30_303 * 7L, pci.picosOfCycle(7));
        assertEquals(-1, pci.cycleAt(999));
        assertEquals(0, pci.cycleAt(1_000));
        assertEquals(0, pci.cycleAt(31_302));
        assertEquals(1, pci.cycleAt(31_303));
        assertEquals(2, core.picosToCyclesCeil(4_001));
        assertEquals(1, core.picosToCyclesFloor(7_999));
        assertEquals(0, pci.nextEdgeCycleAtOrAfter(0));
        assertEquals(1, pci.nextEdgeCycleAtOrAfter(1_001));
    }

    /** A word leaves the fast domain on an edge; the slow domain takes it on its first edge at or after that time. */
    @Test
    void crossingFromFastToSlowDomainLandsOnTheNextSlowEdge() {
        Simulator sim = new Simulator();
        ClockDomain fast = sim.clockDomain("fast", 4_000);
        ClockDomain slow = sim.clockDomain("slow", 15_000, 2_000);
        long[] sentAt = {-1}, takenAt = {-1};
        long[] takenCycle = {-1};
        fast.add(new Clocked() {
            @Override public void drive() { }
            @Override public void update() {
                if (fast.cycle() == 5) {
                    sentAt[0] = sim.now();
                    sim.schedule(sim.now(), Simulator.Priority.DELIVERY, slow::wake);
                }
            }
            @Override public boolean active() { return fast.cycle() < 5; }
        });
        slow.add(new Clocked() {
            boolean seen;
            @Override public void drive() { }
            @Override public void update() {
                if (!seen && sentAt[0] >= 0 && sim.now() >= sentAt[0]) {
                    seen = true;
                    takenAt[0] = sim.now();
                    takenCycle[0] = slow.cycle();
                }
            }
            @Override public boolean active() { return false; }
        });
        sim.runUntilIdle();
        assertEquals(20_000, sentAt[0]);
        // slow edges at 2000, 17000, 32000: the first at or after 20000 is cycle 2 at 32000
        assertEquals(32_000, takenAt[0]);
        assertEquals(2, takenCycle[0]);
        assertEquals(slow.nextEdgeCycleAtOrAfter(sentAt[0]), takenCycle[0]);
    }

    /** Two registers that swap values each edge: the result must not depend on which block is evaluated first. */
    @Test
    void twoPhaseUpdateMakesEvaluationOrderIrrelevant() {
        for (boolean reversed : new boolean[]{false, true}) {
            Simulator sim = new Simulator();
            ClockDomain d = sim.clockDomain("d", 1_000);
            Flow<Long> ab = new Flow<>("ab", d, null), ba = new Flow<>("ba", d, null);
            long[] regs = {1, 2};
            Clocked a = new Clocked() {
                @Override public void drive() { ab.push(regs[0]); }
                @Override public void update() { regs[0] = ba.payload(); }
                @Override public boolean active() { return d.cycle() < 2; }
            };
            Clocked b = new Clocked() {
                @Override public void drive() { ba.push(regs[1]); }
                @Override public void update() { regs[1] = ab.payload(); }
                @Override public boolean active() { return d.cycle() < 2; }
            };
            if (reversed) { d.add(b); d.add(a); } else { d.add(a); d.add(b); }
            sim.runUntilIdle();
            assertEquals(3, d.edgesRun());
            assertArrayEquals(new long[]{2, 1}, regs, "reversed=" + reversed); // three swaps
        }
    }

    @Test
    void clockStopsWhenIdleAndRestartsOnItsGrid() {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("d", 1_000);
        List<Long> edgeTimes = new ArrayList<>();
        int[] work = {2};
        d.add(new Clocked() {
            @Override public void drive() { }
            @Override public void update() { edgeTimes.add(sim.now()); if (work[0] > 0) work[0]--; }
            @Override public boolean active() { return work[0] > 0; }
        });
        sim.runUntilIdle();
        assertEquals(List.of(0L, 1_000L), edgeTimes);
        sim.schedule(5_500, () -> { work[0] = 1; d.wake(); });
        sim.runUntilIdle();
        assertEquals(List.of(0L, 1_000L, 6_000L), edgeTimes);
        assertEquals(6, d.cycle());
        assertEquals(3, d.edgesRun());
    }

    /**
     * A block that notes the time of the first edge that sees the input set; it keeps its clock running while asked.
     */
    private static final class Taker implements Clocked {
        final Simulator sim;
        final boolean keepRunning;
        boolean input;
        long takenAt = -1;

        Taker(Simulator sim, boolean keepRunning) { this.sim = sim; this.keepRunning = keepRunning; }
        @Override public void drive() { }
        @Override public void update() { if (input && takenAt < 0) takenAt = sim.now(); }
        @Override public boolean active() { return keepRunning && takenAt < 0; }
    }

    /**
     * An input set at the time of an edge, after that edge ran, is seen on the next edge by a running
     * clock; a clock stopped at the time must see it on the same edge, not tick at the instant it
     * already passed. Edges of one instant run in the order the domains were made.
     */
    @Test
    void aStoppedClockWokenAfterItsEdgeTakesTheInputWhereARunningClockWould() {
        for (boolean running : new boolean[]{false, true}) {
            // an ordinary event at an edge's time runs after the edge
            Simulator sim = new Simulator();
            ClockDomain d = sim.clockDomain("d", 1_000);
            Taker t = new Taker(sim, running);
            d.add(t);
            sim.schedule(3_000, () -> { t.input = true; d.wake(); });
            sim.runUntilIdle();
            assertEquals(4_000, t.takenAt, "an event after the edge at 3000, clock running: " + running);

            // a domain made later, woken from an edge of one made earlier, still ticks at this instant; the reverse
            // does not
            for (boolean fromEarlier : new boolean[]{false, true}) {
                Simulator s2 = new Simulator();
                ClockDomain first = s2.clockDomain("first", 1_000), second = s2.clockDomain("second", 1_000);
                Taker taker = new Taker(s2, running);
                (fromEarlier ? second : first).add(taker);
                ClockDomain waker = fromEarlier ? first : second, woken = fromEarlier ? second : first;
                waker.add(new Clocked() {
                    @Override public void drive() { }
                    @Override public void update() { if (s2.now() == 5_000) { taker.input = true; woken.wake(); } }
                    @Override public boolean active() { return s2.now() < 5_000; }
                });
                s2.runUntilIdle();
                assertEquals(fromEarlier ? 5_000 : 6_000, taker.takenAt, "woken from the "
                        + (fromEarlier ? "earlier" : "later") + " domain's edge, clock running: " + running);
            }
        }
    }

    /**
     * A block that may rest is left out of the edges it is inactive on, while another block keeps
     * the clock running, and takes an input on the very edge it would have: a consumer counting
     * what a producer hands it every fifth cycle, through a stream, sees each item on the same cycle
     * either way, but runs only the edges with work (and the one after, settling its wires).
     */
    @Test
    void aRestingBlockSkipsIdleEdgesAndTakesItsInputOnTime() {
        for (boolean rests : new boolean[]{false, true}) {
            Simulator sim = new Simulator();
            ClockDomain d = sim.clockDomain("d", 1_000);
            Stream<Integer> link = new Stream<>("link", d);
            List<Long> takenAt = new ArrayList<>();
            int[] updates = {0};
            d.add(new Clocked() { // the producer: an item every fifth cycle, ten of them; it runs every edge till done
                int sent, at;
                @Override public void drive() { if (at % 5 == 4 && sent < 10) link.push(sent); else link.idle(); }
                @Override public void update() { if (link.fire()) sent++; at++; }
                @Override public boolean active() { return sent < 10; }
            });
            d.add(new Clocked() { // the consumer
                @Override public void drive() { link.ready(true); }
                @Override public void update() { updates[0]++; if (link.fire()) takenAt.add(d.cycle()); }
                @Override public boolean active() { return link.valid(); }
                @Override public boolean mayRest() { return rests; }
            });
            sim.runUntilIdle();
            assertEquals(List.of(4L, 9L, 14L, 19L, 24L, 29L, 34L, 39L, 44L, 49L), takenAt,
                    rests ? "resting" : "every edge");
            // the last item is still on the wires after its edge: one more edge clears them
            assertEquals(51, d.edgesRun());
            if (rests) assertTrue(updates[0] <= 2 * 10 + 2, "the consumer ran " + updates[0] + " of 51 edges");
            else assertEquals(51, updates[0]);
        }
    }
    /**
     * The edges a block asks for, at times ahead while it waits (a beat due in), either way: each time woken by an
     * alarm event that wakes the clock if it is stopped then, or by {@link ClockDomain#wakeAt}.
     */
    private static List<Long> edgesWokenAt(boolean byWakeAt, long[] events) {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("d", 4_000, 1_000);
        List<Long> edges = new ArrayList<>();
        // busy on edges 0-2 and 10-11 (a wake from outside at 38 ns); waiting for times 20.5, 30, 70.5 and 90 ns
        long[] waits = {20_500, 30_000, 70_500, 90_000};
        Alarm alarm = new Alarm(sim, Simulator.Priority.DELIVERY, d::wake);
        d.add(new Clocked() {
            boolean asked;
            @Override public void drive() { }
            @Override public void update() { edges.add(d.cycle()); }
            @Override public boolean active() {
                if (!asked) {
                    asked = true;
                    for (long t : waits) if (byWakeAt) d.wakeAt(t); else alarm.at(t);
                }
                return d.cycle() < 2 || d.cycle() >= 10 && d.cycle() < 11;
            }
        });
        sim.schedule(38_000, Simulator.Priority.DELIVERY, d::wake);
        sim.runUntilIdle();
        events[0] = sim.eventsExecuted();
        return edges;
    }

    @Test
    void aClockWokenAtATimeRunsTheEdgesAnAlarmWouldInFewerEvents() {
        long[] alarmEvents = {0}, wakeAtEvents = {0};
        List<Long> byAlarm = edgesWokenAt(false, alarmEvents), byWakeAt = edgesWokenAt(true, wakeAtEvents);
        // edges at 1 + 4k ns: 0-2 busy; stopped, then the first edge at or after 20.5 ns (5), 30 ns (8); the wake at
        // 38 ns runs 10 and 11; 70.5 ns is edge 18; 90 ns edge 23 (22 is at 89 ns)
        assertEquals(List.of(0L, 1L, 2L, 5L, 8L, 10L, 11L, 18L, 23L), byAlarm);
        assertEquals(byAlarm, byWakeAt);
        // the alarm's four events and the outside wake are run either way, less one event per time the clock slept
        assertEquals(alarmEvents[0] - 4, wakeAtEvents[0],
                "events: alarm " + alarmEvents[0] + ", wakeAt " + wakeAtEvents[0]);
    }

    @Test
    void aTimeThatPassedWhileTheClockRanWakesNothing() {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("d", 1_000);
        List<Long> edges = new ArrayList<>();
        d.add(new Clocked() {
            @Override public void drive() { }
            @Override public void update() { edges.add(d.cycle()); if (d.cycle() == 0) d.wakeAt(2_500); }
            @Override public boolean active() { return d.cycle() < 4; }
        });
        sim.runUntilIdle();
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), edges); // 2.5 ns came while it ran: no edge after 4
        assertThrows(IllegalArgumentException.class, () -> d.wakeAt(sim.now()));
    }

    /**
     * A block with work arriving at known times: on each edge it takes what has arrived by then and does one
     * item; idle, it rests until the next arrival wakes its clock ({@link ClockDomain#wakeAt}). Its coaster runs
     * the same edges in one step, up to the one after which the clock stops; or, {@link #overGaps}, on over each
     * stop to the edge the clock wakes at.
     */
    private static class Worker implements Clocked, ClockDomain.Coaster {
        final ClockDomain d;
        final long[] arrivals;
        int next, left;
        final List<Long> wired = new ArrayList<>(), coasted = new ArrayList<>();
        boolean overGaps, fromStop, atWake;
        int looks; // look-aheads
        final List<long[]> gaps = new ArrayList<>(); // the last look-ahead's: the edge stopped after, the wake edge

        Worker(ClockDomain d, long... arrivals) { this.d = d; this.arrivals = arrivals; }

        /** Edge {@code c} on (next, left) as given; returns them after it. */
        private int[] step(long c, int n, int l) {
            while (n < arrivals.length && arrivals[n] <= d.picosOfCycle(c)) { n++; l++; }
            return new int[]{n, l > 0 ? l - 1 : 0};
        }

        private void run(long c) {
            int[] s = step(c, next, left);
            next = s[0];
            left = s[1];
        }

        @Override public void drive() { }
        @Override public void update() { wired.add(d.cycle()); run(d.cycle()); }
        @Override public boolean active() { return left > 0; }

        @Override public long coastable() {
            looks++;
            gaps.clear();
            int n = next, l = left;
            for (long c = d.cycle() + 1; ; c++) {
                int[] s = step(c, n, l);
                n = s[0];
                l = s[1];
                if (l > 0) continue;
                long t = overGaps ? d.wakeTimeAfter(d.picosOfCycle(c)) : Long.MAX_VALUE;
                if (t == Long.MAX_VALUE) return c - d.cycle() - 1; // the clock stops after edge c: it closes the coast
                long wake = d.nextEdgeCycleAtOrAfter(t);
                gaps.add(new long[]{c, wake});
                c = wake - 1;
            }
        }

        @Override public boolean coastsEdgeAfter() { return true; }

        @Override public boolean coastsFromStop() { return fromStop; }

        @Override public boolean coastsAtWake() { return atWake; }

        @Override public int gaps() { return gaps.size(); }
        @Override public long gapStop(int i) { return gaps.get(i)[0]; }
        @Override public long gapWake(int i) { return gaps.get(i)[1]; }

        @Override public void coast(long first, long n) {
            int g = 0;
            for (long c = first; c < first + n; c++) {
                while (g < gaps.size() && gaps.get(g)[1] <= c) g++;
                if (g < gaps.size() && gaps.get(g)[0] < c) continue; // idle: the clock is stopped
                coasted.add(c);
                run(c);
            }
        }
    }

    @Test
    void aClockWokenAtATimeCoastsFromItsWakeEdge() {
        Simulator sim = new Simulator();
        sim.coasting(true);
        ClockDomain d = sim.clockDomain("d", 1_000, 0);
        // three items at 0 ns (edges 0-2), three at 10 ns (edges 10-12): the clock stops after edge 2
        Worker w = new Worker(d, 0, 0, 0, 10_000, 10_000, 10_000);
        d.coastWith(w, 1);
        d.add(w);
        d.wakeAt(10_000);
        sim.runUntilIdle();
        assertEquals(List.of(0L), w.wired, "only the first edge runs through the wires");
        assertEquals(List.of(1L, 2L, 10L, 11L, 12L), w.coasted, "the wake edge coasts with those after it");
        assertEquals(6, d.edgesRun(), "the idle edges between are not counted");
        assertEquals(5, d.edgesCoasted());
        assertEquals(0, w.left);
    }

    @Test
    void aWakeEdgeAfterWhichTheClockStopsAgainCoastsAlone() {
        Simulator sim = new Simulator();
        sim.coasting(true);
        ClockDomain d = sim.clockDomain("d", 1_000, 0);
        Worker w = new Worker(d, 0, 10_000, 20_000); // an item at 0, 10 and 20 ns: an edge each, then a stop
        d.coastWith(w, 1);
        d.add(w);
        d.wakeAt(10_000);
        d.wakeAt(20_000);
        sim.runUntilIdle();
        assertEquals(List.of(0L), w.wired);
        assertEquals(List.of(10L, 20L), w.coasted);
        assertEquals(3, d.edgesRun());
        assertEquals(20_000, sim.now(), "each wake edge runs at its own time");
    }

    /** The edges a worker ran (wired or coasted, in order), the domain's counts and the worker's look-aheads. */
    private record Ran(List<Long> edges, long edgesRun, long coasted, int looks, long events) {}

    /**
     * Items at 0 ns (3), 10 ns (3) and 20 ns (2), the clock told to wake at 10 and 20 ns; {@code outside} runs at
     * 5.5 ns. Coasting off, coasting up to each stop, or coasting over the stops.
     */
    private static Ran work(boolean coasting, boolean overGaps, Consumer<ClockDomain> outside) {
        Simulator sim = new Simulator();
        sim.coasting(coasting);
        ClockDomain d = sim.clockDomain("d", 1_000, 0);
        Worker w = new Worker(d, 0, 0, 0, 10_000, 10_000, 10_000, 20_000, 20_000);
        w.overGaps = overGaps;
        d.coastWith(w, 1);
        d.add(w);
        d.wakeAt(10_000);
        d.wakeAt(20_000);
        sim.post(5_500, Simulator.Priority.DELIVERY, () -> outside.accept(d));
        sim.runUntilIdle();
        List<Long> all = new ArrayList<>(w.wired);
        all.addAll(w.coasted);
        all.sort(null);
        assertEquals(0, w.left);
        return new Ran(all, d.edgesRun(), d.edgesCoasted(), w.looks, sim.eventsExecuted());
    }

    @Test
    void aCoastGoesOnOverTheClocksStopsToTheEdgesItWakesAt() {
        Ran wired = work(false, false, d -> {}), stops = work(true, false, d -> {}), over = work(true, true, d -> {});
        assertEquals(List.of(0L, 1L, 2L, 10L, 11L, 12L, 20L, 21L), over.edges());
        assertEquals(wired.edges(), over.edges());
        assertEquals(8, over.edgesRun(), "the idle cycles between are not edges");
        assertEquals(stops.coasted(), over.coasted());
        assertEquals(7, over.coasted());
        assertEquals(1, over.looks(), "one look-ahead covers the stops");
        assertEquals(3, stops.looks());
        assertTrue(over.events() < stops.events(), over.events() + " events, " + stops.events() + " stopping");
    }

    @Test
    void aWakeTimeGivenInAGapEndsTheCoastThereAndTheClockSleepsTillIt() {
        // at 5.5 ns the clock is stopped: told to wake at 7 ns, it runs edge 7 (nothing to do) and sleeps till 10
        Consumer<ClockDomain> at7 = d -> d.wakeAt(7_000);
        Ran wired = work(false, false, at7), over = work(true, true, at7);
        assertEquals(List.of(0L, 1L, 2L, 7L, 10L, 11L, 12L, 20L, 21L), over.edges());
        assertEquals(wired.edges(), over.edges());
        assertEquals(9, over.edgesRun());
        assertEquals(work(true, false, at7).coasted(), over.coasted());
    }

    @Test
    void aClockWokenInAGapRunsItsNextEdgeThroughTheWires() {
        Ran wired = work(false, false, ClockDomain::wake), over = work(true, true, ClockDomain::wake);
        assertEquals(List.of(0L, 1L, 2L, 6L, 10L, 11L, 12L, 20L, 21L), over.edges());
        assertEquals(wired.edges(), over.edges());
        assertEquals(9, over.edgesRun());
        assertEquals(7, over.coasted(), "edge 6 runs through the wires");
    }

    /**
     * Work given to a stopped clock from outside, as an MMIO write is ({@link ClockDomain#wake()}): the edge it is
     * woken for runs through the wires, unless its coaster takes that edge too ({@code coastsFromStop}). The same edges
     * run either way.
     */
    @Test
    void aCoasterMayCoastTheEdgeAStoppedClockIsWokenFor() {
        for (boolean fromStop : new boolean[]{false, true}) {
            Simulator sim = new Simulator();
            ClockDomain d = sim.clockDomain("d", 1_000, 0);
            // three items at 0 ns (the block is added then) and three at 10 ns, which a wake at 10 ns announces
            Worker w = new Worker(d, 0, 0, 0, 10_000, 10_000, 10_000);
            w.fromStop = fromStop;
            d.coastWith(w, 1);
            d.add(w);
            sim.post(10_000, Simulator.Priority.DELIVERY, d::wake);
            sim.runUntilIdle();
            assertEquals(fromStop ? List.of() : List.of(0L, 10L), w.wired, "from stop: " + fromStop);
            assertEquals(fromStop ? List.of(0L, 1L, 2L, 10L, 11L, 12L) : List.of(1L, 2L, 11L, 12L), w.coasted);
            assertEquals(6, d.edgesRun());
            assertEquals(0, w.left);
        }
    }

    /**
     * Three items at 0 ns and three at 10 ns, which a wake at 9.5 ns announces (the coast from the stop found at the
     * wake itself or on the edge woken for); {@code second}, if not negative, a second wake then. The edges run, what
     * the second wake saw of the clock (its cycle, whether it coasted) and the kernel's events.
     */
    private static Ran wokenTwice(boolean atWake, long second, List<Long> seen) {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("d", 1_000, 0);
        Worker w = new Worker(d, 0, 0, 0, 10_000, 10_000, 10_000);
        w.fromStop = true;
        w.atWake = atWake;
        d.coastWith(w, 1);
        d.add(w);
        sim.post(9_500, Simulator.Priority.DEFAULT, d::wake);
        if (second >= 0) sim.post(second, Simulator.Priority.DELIVERY, () -> {
            seen.add(d.cycle());
            seen.add(d.coasting() ? 1L : 0L);
            d.wake();
        });
        sim.runUntilIdle();
        List<Long> all = new ArrayList<>(w.wired);
        all.addAll(w.coasted);
        assertEquals(0, w.left);
        return new Ran(all, d.edgesRun(), d.edgesCoasted(), w.looks, sim.eventsExecuted());
    }

    /**
     * A coast from a stop found at the wake itself ({@code coastsAtWake}) runs the same edges, wired and coasted, as
     * one found on the edge woken for, with the event of that edge saved; a second wake before the coast's first edge
     * (before its time, or at it before the edge) gives that edge back to run as it would have, and one after it
     * ends the coast there as it would have.
     */
    @Test
    void aCoastFoundAtTheWakeRunsTheSameEdgesWithoutTheWokenEdgesEvent() {
        for (long second : new long[]{-1, 9_800, 10_000, 10_500}) {
            List<Long> seenOnEdge = new ArrayList<>(), seenAtWake = new ArrayList<>();
            Ran onEdge = wokenTwice(false, second, seenOnEdge), atWake = wokenTwice(true, second, seenAtWake);
            String at = "second wake at " + second + " ps";
            assertEquals(onEdge.edges(), atWake.edges(), at);
            assertEquals(onEdge.edgesRun(), atWake.edgesRun(), at);
            assertEquals(onEdge.coasted(), atWake.coasted(), at);
            assertEquals(seenOnEdge, seenAtWake, at + ": the cycle and coasting the second wake saw");
            // saved: the edge the wake as the block is added starts at, and the one the wake at 9.5 ns does unless
            // given back
            boolean givenBack = second == 9_800 || second == 10_000;
            assertEquals(onEdge.events() - (givenBack ? 1 : 2), atWake.events(), at);
        }
        assertEquals(List.of(0L, 1L, 2L, 10L, 11L, 12L), wokenTwice(true, -1, new ArrayList<>()).edges());
    }
}
