package nicsim.sim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import org.junit.jupiter.api.Test;

class EventHeapTest {
    private static final Comparator<Simulator.Event> ORDER =
            Comparator.<Simulator.Event>comparingLong(e -> e.time).thenComparingLong(e -> e.order);

    /**
     * Events come out in (time, priority, tie) order whatever the mix: most scheduled a little ahead of the
     * last taken, some far ahead, taken with take (the next add in its place) and poll.
     */
    @Test
    void eventsComeOutInOrderWhateverTheMix() {
        Random r = new Random(11);
        EventHeap q = new EventHeap();
        PriorityQueue<Simulator.Event> ref = new PriorityQueue<>(ORDER);
        long tie = 0, now = 0;
        int most = 0;
        List<Simulator.Event> out = new ArrayList<>(), expected = new ArrayList<>();
        for (int step = 0; step < 200_000; step++) {
            int adds = r.nextInt(3);
            for (int a = 0; a < adds && ref.size() < 3000; a++) {
                long ahead = r.nextInt(10) == 0 ? r.nextInt(1_000_000) : r.nextInt(4) * 1000L;
                Simulator.Event e = new Simulator.Event(now + ahead, r.nextInt(3) * 50, tie++, null);
                q.add(e);
                ref.add(e);
            }
            if (ref.isEmpty()) continue;
            Simulator.Event e = r.nextBoolean() ? q.take() : q.poll();
            out.add(e);
            expected.add(ref.poll());
            now = e.time;
            // a key sorts before every queued event exactly when before() says so, a root just taken or not
            Simulator.Event probe = new Simulator.Event(now + r.nextInt(2) * 1000L, r.nextInt(3) * 50,
                    r.nextBoolean() ? tie : r.nextInt((int) Math.min(tie + 1, 1 << 20)), null);
            assertEquals(ref.isEmpty() || ORDER.compare(probe, ref.peek()) < 0, q.before(probe.time, probe.order));
            if (step % 1000 == 0) assertEquals(ref.size(), q.size());
            most = Math.max(most, ref.size());
        }
        while (!ref.isEmpty()) { out.add(q.poll()); expected.add(ref.poll()); }
        assertNull(q.peek());
        assertEquals(expected.size(), out.size());
        for (int i = 0; i < out.size(); i++)
            assertSame(expected.get(i), out.get(i), "event " + i + " out of order: " + key(out.get(i)) + ", "
                    + key(expected.get(i)) + " expected");
        assertTrue(most > 300, "the queue stayed short (its deep levels untried): " + most);
    }

    private static String key(Simulator.Event e) {
        return e.time + " ps priority " + e.priority() + " tie " + e.tie();
    }

    /** Many events pending (a thousand nodes' timers), added latest first and earliest first, come out in order. */
    @Test
    void aLongQueueComesOutInOrder() {
        EventHeap q = new EventHeap();
        for (int i = 1; i <= 2500; i++) q.add(new Simulator.Event(i * 20L, 50, i, null));
        for (int i = 2500; i > 0; i--) q.add(new Simulator.Event(i * 20L - 10, 50, 5000 - i, null));
        assertEquals(5000, q.size());
        assertEquals(5000, q.toArray().length);
        long last = -1;
        for (Simulator.Event e; (e = q.take()) != null; ) {
            assertTrue(e.time > last, e.time + " after " + last);
            last = e.time;
        }
        assertEquals(50_000, last);
    }
}
