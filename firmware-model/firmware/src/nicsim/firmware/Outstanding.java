package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.function.Predicate;

/**
 * A QP's operations in flight, oldest first: the head is the next to complete. It also knows how
 * many at its head have had every packet sent (stages only advance, so they stay sent), so that
 * the requester, sending in PSN order, starts after them rather than looking at each again: with
 * a deep send queue of small messages a hundred wait for their acknowledgements at once.
 */
final class Outstanding implements Iterable<SendOp> {
    private final ArrayDeque<SendOp> ops = new ArrayDeque<>();
    private final Collection<SendOp> readOnly = Collections.unmodifiableCollection(ops);
    private int sentLead; // the first sentLead ops are at stage SENT or later
    private int reshaped; // counts changes other than an add at the tail: positions from before are void

    boolean isEmpty() { return ops.isEmpty(); }
    SendOp peek() { return ops.peek(); }
    boolean contains(SendOp op) { return ops.contains(op); }

    void add(SendOp op) { ops.add(op); }

    SendOp poll() {
        SendOp op = ops.poll();
        if (sentLead > 0) sentLead--;
        reshaped++;
        return op;
    }

    void addFirst(SendOp op) { ops.addFirst(op); forget(); }

    boolean remove(SendOp op) { forget(); return ops.remove(op); }

    void clear() { ops.clear(); forget(); }

    private void forget() {
        sentLead = 0;
        reshaped++;
    }

    /** The ops, oldest first; read only (a removal through it would pass the sent lead by). */
    @Override public Iterator<SendOp> iterator() { return readOnly.iterator(); }

    /**
     * Goes through the ops from the first not known to be sent, telling {@code visit} each in turn
     * until it returns false; an op that is sent when {@code visit} returns joins the sent lead if
     * every op before it is sent too.
     */
    void fromFirstUnsent(Predicate<SendOp> visit) {
        Iterator<SendOp> it = ops.iterator();
        int at = 0, shape = reshaped;
        for (; at < sentLead; at++) it.next();
        for (; it.hasNext(); at++) {
            SendOp op = it.next();
            boolean more = visit.test(op);
            // a visit that polled or removed ops has already brought the lead up to date
            if (shape == reshaped && at == sentLead && op.atLeast(SendOp.Stage.SENT)) sentLead++;
            if (!more) return;
        }
    }
}
