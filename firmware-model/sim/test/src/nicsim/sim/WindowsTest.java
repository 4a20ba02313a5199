package nicsim.sim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WindowsTest {
    static final long LOOKAHEAD = 100;

    /**
     * Partitions in a ring: each passes a token on to the next, which answers after a delay of its own, and
     * ticks now and then alone; what crossed is delivered one lookahead after it was sent.
     */
    static final class Ring implements Windows.Exchange {
        final List<Simulator> sims = new ArrayList<>();
        final List<List<long[]>> outbox = new ArrayList<>(); // by sender: {time, to, value}
        final List<StringBuilder> log = new ArrayList<>();
        final int failAt; // the partition whose 5th token throws (-1: none)
        final List<List<Runnable>> inbox = new ArrayList<>(); // by partition: what the exchange left it (inboxes)
        final Thread[] drainedBy; // by partition: the thread that last emptied its inbox
        int elsewhere; // events run on another thread than the one that emptied the partition's inbox in the window
        boolean inboxes; // the exchange leaves tokens in inboxes rather than scheduling them itself
        boolean timed; // the inboxes tell when their first token is due (a partition may sit a window out)
        final List<List<Long>> due = new ArrayList<>(); // by partition: when each token in its inbox is delivered
        long turns; // of the last run's windows: the partitions' turns that ran
        long late; // how much later than one lookahead after it was sent a token is delivered

        Ring(int n, int failAt) { this(n, failAt, n); }

        /** As above, the first {@code senders} partitions alone ticking and starting tokens. */
        Ring(int n, int failAt, int senders) {
            this.failAt = failAt;
            this.drainedBy = new Thread[n];
            for (int i = 0; i < n; i++) {
                Simulator s = new Simulator();
                sims.add(s);
                outbox.add(new ArrayList<>());
                log.add(new StringBuilder());
                inbox.add(new ArrayList<>());
                due.add(new ArrayList<>());
                int me = i;
                Runnable tick = () -> {
                    log.get(me).append(s.now()).append(' ');
                    if (inboxes && drainedBy[me] != Thread.currentThread()) elsewhere++;
                };
                for (int k = 1; k <= 20 && i < senders; k++) s.schedule(k * 37L * (me + 1), tick);
                if (i < senders) s.schedule(me * 11L, () -> send(me, 1));
            }
        }

        void send(int from, long value) {
            if (value > 40) return;
            outbox.get(from).add(new long[]{sims.get(from).now(), (from + 1) % sims.size(), value});
        }

        void receive(int at, long value) {
            Simulator s = sims.get(at);
            log.get(at).append('<').append(value).append('@').append(s.now()).append(' ');
            if (at == failAt && value == 5) throw new IllegalStateException("partition " + at + " fails");
            s.schedule(s.now() + 3 + at, () -> send(at, value + 1));
        }

        @Override public void exchange(long windowStart) {
            for (List<long[]> box : outbox) {
                for (long[] m : box) {
                    assertTrue(m[0] + LOOKAHEAD >= windowStart, "a token sent at " + m[0] + " ps is late");
                    int to = (int) m[1];
                    long at = m[0] + LOOKAHEAD + late;
                    Runnable token = () -> sims.get(to).schedule(at, () -> receive(to, m[2]));
                    if (inboxes) {
                        inbox.get(to).add(token);
                        due.get(to).add(at);
                    } else token.run();
                }
                box.clear();
            }
        }

        @Override public Runnable inbox(Simulator part) {
            if (!inboxes) return null;
            int me = sims.indexOf(part);
            Runnable drain = () -> {
                inbox.get(me).forEach(Runnable::run);
                inbox.get(me).clear();
                due.get(me).clear();
                drainedBy[me] = Thread.currentThread();
            };
            if (!timed) return drain;
            return new Windows.Inbox() {
                @Override public void run() { drain.run(); }
                @Override public long firstAt() {
                    return due.get(me).stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
                }
            };
        }

        @Override public long nextStart() {
            long t = Long.MAX_VALUE;
            for (List<long[]> box : outbox) for (long[] m : box) t = Math.min(t, m[0] + LOOKAHEAD);
            return t;
        }

        String run(int threads) {
            try (Windows w = new Windows(sims, this, LOOKAHEAD, threads)) {
                long end = w.runUntilIdle(1_000_000);
                turns = w.turns();
                return end + " in " + w.windows() + " windows: " + log;
            }
        }
    }

    @Test
    void everyThreadCountGivesTheSameEventsAtTheSameTimes() {
        String one = new Ring(7, -1).run(1);
        assertTrue(one.contains("<40@"), one);
        for (int threads : new int[]{2, 3, 7, 9}) assertEquals(one, new Ring(7, -1).run(threads), threads + " threads");
    }

    /** An exchange's inboxes: each emptied on the thread that runs its partition, the events the same as without. */
    @Test
    void inboxesAreEmptiedByTheThreadThatRunsThePartition() {
        String direct = new Ring(7, -1).run(1);
        for (int threads : new int[]{1, 2, 3, 7}) {
            Ring ring = new Ring(7, -1);
            ring.inboxes = true;
            assertEquals(direct, ring.run(threads), threads + " threads");
            assertEquals(0, ring.elsewhere, threads + " threads: events run on a thread that did not empty the inbox");
        }
    }

    /**
     * Inboxes that tell when their first token is due: a partition with nothing before a window's end sits it out,
     * untouched, and the events are the same as when every partition runs every window.
     */
    @Test
    void aPartitionWithNothingToDoInAWindowSitsItOutWithTheSameEvents() {
        String direct = new Ring(7, -1, 2).run(1);
        long windows = Long.parseLong(direct.split(" ")[2]);
        for (int threads : new int[]{1, 2, 3, 7}) {
            Ring ring = new Ring(7, -1, 2);
            ring.inboxes = ring.timed = true;
            assertEquals(direct, ring.run(threads), threads + " threads");
            assertTrue(ring.turns > 0 && ring.turns < windows * 7,
                    threads + " threads: " + ring.turns + " turns in " + windows + " windows of 7 partitions");
        }
    }

    /** Between runs of windows, partitions that sat out the last ones stand where the others do, inboxes emptied. */
    @Test
    void afterARunOfWindowsEveryPartitionStandsAtItsEnd() {
        for (int threads : new int[]{1, 2})
            for (int entries = 2; entries <= 20; entries++) {
                Ring ring = new Ring(7, -1, 1), all = new Ring(7, -1, 1);
                ring.inboxes = ring.timed = all.inboxes = true;
                ring.late = all.late = 3 * LOOKAHEAD;
                int n = entries;
                for (Ring r : List.of(ring, all))
                    try (Windows w = new Windows(r.sims, r, LOOKAHEAD, threads)) {
                        w.runUntil(() -> r.log.get(0).toString().split(" ").length >= n, 1_000_000);
                    }
                String at = threads + " threads, " + entries + " entries: partition ";
                for (int i = 0; i < 7; i++) {
                    assertEquals(all.sims.get(i).now(), ring.sims.get(i).now(), at + i);
                    assertEquals(all.sims.get(i).nextEventTime(), ring.sims.get(i).nextEventTime(), at + i);
                }
                assertTrue(ring.inbox.stream().allMatch(List::isEmpty), at + ring.inbox);
            }
    }

    @Test
    void aPartitionsFailureReachesTheCallerOnAnyThreadCount() {
        for (int threads : new int[]{1, 2, 3}) {
            var e = assertThrows(IllegalStateException.class, () -> new Ring(5, 3).run(threads));
            assertEquals("partition 3 fails", e.getMessage(), threads + " threads");
        }
    }

    /**
     * The look between windows, on whichever thread ended the window, finds every partition stopped at the window's
     * end, and what it throws reaches the caller, the windows before it run and no more.
     */
    @Test
    void theLookBetweenWindowsFindsEveryPartitionStoppedAndWhatItThrowsReachesTheCaller() {
        for (int threads : new int[]{1, 2, 3}) {
            Ring ring = new Ring(6, -1);
            int[] looks = {0};
            try (Windows w = new Windows(ring.sims, ring, LOOKAHEAD, threads)) {
                var e = assertThrows(IllegalStateException.class, () -> w.runUntil(() -> {
                    for (Simulator s : ring.sims)
                        assertEquals(ring.sims.get(0).now(), s.now(), threads + " threads: a partition elsewhere");
                    if (++looks[0] == 10) throw new IllegalStateException("look 10");
                    return false;
                }, 1_000_000_000));
                assertEquals("look 10", e.getMessage(), threads + " threads");
                assertEquals(9, w.windows(), threads + " threads");
            }
        }
    }

    /**
     * The next window's start is found from what the partitions left as they stopped, not from their queues after the
     * look: a look that schedules in a partition before that start is told, naming the partition, not run out of order.
     */
    @Test
    void aLookThatSchedulesBeforeTheNextWindowIsTold() {
        for (int threads : new int[]{1, 2}) {
            Ring ring = new Ring(4, -1);
            Simulator two = ring.sims.get(2);
            int[] looks = {0};
            try (Windows w = new Windows(ring.sims, ring, LOOKAHEAD, threads)) {
                var e = assertThrows(IllegalStateException.class, () -> w.runUntil(() -> {
                    if (++looks[0] == 5) two.schedule(two.now(), () -> { });
                    return false;
                }, 1_000_000_000));
                assertTrue(e.getMessage().startsWith("partition 2 has an event at " + two.now() + " ps, before the "
                        + "window from "), threads + " threads: " + e.getMessage());
            }
        }
    }

    /** Many short windows: a thread that wakes late or not at all in one window must not lose or repeat a partition. */
    @Test
    void manyWindowsOnTwoThreadsRunEachPartitionOncePerWindow() {
        List<Simulator> sims = new ArrayList<>();
        long[] runs = new long[6];
        for (int i = 0; i < runs.length; i++) {
            Simulator s = new Simulator();
            int me = i;
            for (long t = 0; t < 200_000; t += LOOKAHEAD) s.schedule(t, () -> runs[me]++);
            sims.add(s);
        }
        Windows.Exchange none = new Windows.Exchange() {
            @Override public void exchange(long windowStart) { }
            @Override public long nextStart() { return Long.MAX_VALUE; }
        };
        try (Windows w = new Windows(sims, none, LOOKAHEAD, 2)) {
            w.runUntil(199_999);
            assertEquals(2_000, w.windows());
        }
        for (long r : runs) assertEquals(2_000, r);
    }

    /** Closing ends the helper threads, whether they wait on the core or asleep: none is left behind a run. */
    @Test
    void closingEndsEveryHelperThread() throws InterruptedException {
        for (long idle : new long[]{0, 30}) {
            Ring ring = new Ring(6, -1);
            Windows w = new Windows(ring.sims, ring, LOOKAHEAD, 3);
            w.runUntilIdle(1_000_000);
            Thread.sleep(idle); // long enough for the helpers to give up waiting on the core and park
            w.close();
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (helpersAlive() > 0 && System.nanoTime() < deadline) Thread.sleep(5);
            assertEquals(0, helpersAlive(), "helper threads alive " + idle + " ms after the run");
        }
    }

    private static long helpersAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("nicsim-partitions-")).count();
    }
}
