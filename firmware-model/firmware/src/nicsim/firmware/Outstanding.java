package nicsim.firmware;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Predicate;

/**
 * A QP's operations in flight, oldest first: the head is the next to complete. It also knows how
 * many at its head have had every packet sent (stages only advance, so they stay sent), so that
 * the requester, sending in PSN order, starts after them rather than looking at each again: with
 * a deep send queue of small messages a hundred wait for their acknowledgements at once.
 *
 * <p>The ops sit in a ring, each at a position that counts up from the first added (an op put back at the head takes
 * the one before it): a pass over them ({@link #fromFirstUnsent}, on every transmit) goes by position, with no
 * iterator made.
 */
final class Outstanding implements Iterable<SendOp> {
    private SendOp[] ring = new SendOp[16];
    private long head, tail; // the positions of the first op and after the last; op at position i: ring[i & mask]
    private int sentLead; // the first sentLead ops are at stage SENT or later
    private int reshaped; // counts changes other than an add at the tail: positions from before are void

    private SendOp at(long i) { return ring[(int) i & (ring.length - 1)]; }

    private void set(long i, SendOp op) { ring[(int) i & (ring.length - 1)] = op; }

    boolean isEmpty() { return head == tail; }
    SendOp peek() { return head == tail ? null : at(head); }

    boolean contains(SendOp op) { return indexOf(op) >= 0; }

    private long indexOf(SendOp op) {
        for (long i = head; i < tail; i++) if (at(i).equals(op)) return i;
        return -1;
    }

    void add(SendOp op) {
        room();
        set(tail++, op);
    }

    SendOp poll() {
        if (head == tail) return null; // as the deque's poll: the lead and shape as they were
        SendOp op = at(head);
        set(head++, null);
        if (sentLead > 0) sentLead--;
        reshaped++;
        return op;
    }

    void addFirst(SendOp op) {
        room();
        set(--head, op);
        forget();
    }

    boolean remove(SendOp op) {
        forget();
        long i = indexOf(op);
        if (i < 0) return false;
        for (; i < tail - 1; i++) set(i, at(i + 1));
        set(--tail, null);
        return true;
    }

    void clear() {
        while (head < tail) set(head++, null);
        forget();
    }

    private void forget() {
        sentLead = 0;
        reshaped++;
    }

    /** Room for one more op: a full ring doubles, each op at its position in the new one. */
    private void room() {
        if (tail - head < ring.length) return;
        SendOp[] bigger = new SendOp[2 * ring.length];
        for (long i = head; i < tail; i++) bigger[(int) i & (bigger.length - 1)] = at(i);
        ring = bigger;
    }

    /** The ops, oldest first; read only (a removal through it would pass the sent lead by). */
    @Override public Iterator<SendOp> iterator() {
        return new Iterator<>() {
            private long next = head;
            private final long end = tail; // as the deque's iterator: ops added while it goes are not seen

            @Override public boolean hasNext() { return next < end; }

            @Override public SendOp next() {
                if (next >= end) throw new NoSuchElementException();
                return at(next++);
            }
        };
    }

    /**
     * Goes through the ops from the first not known to be sent, telling {@code visit} each in turn
     * until it returns false; an op that is sent when {@code visit} returns joins the sent lead if
     * every op before it is sent too. Ops a visit adds are not visited in this pass.
     */
    void fromFirstUnsent(Predicate<SendOp> visit) {
        long end = tail;
        int shape = reshaped;
        for (long i = head + sentLead; i < end; i++) {
            SendOp op = at(i);
            boolean more = visit.test(op);
            // a visit that polled or removed ops has already brought the lead up to date
            if (shape == reshaped && i - head == sentLead && op.atLeast(SendOp.Stage.SENT)) sentLead++;
            if (!more) return;
        }
    }
}
