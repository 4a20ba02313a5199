package nicsim.serve;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Errno;
import nicsim.verbs.QueuePair;
import nicsim.verbs.SharedReceiveQueue;
import nicsim.verbs.VerbsException;

/**
 * A device context's objects by the handles the program knows them by: one record each, as the
 * kernel's uverbs keeps an ib_uobject per handle. A record holds the object, what the program
 * created it with (what a query gives back), and what the program holds through it (a node's
 * shared XRC domain). A handle of nothing, or of another kind, is refused; an event names an object
 * by its handle only while its record lives. The QPs by number and the CQs in order are kept as
 * indexes of the records, for the lookups the simulator makes at every step.
 */
final class Handles {
    /** One object of the program's. */
    static final class Record {
        final int handle;
        final Object object;
        /** What it was created with (QpCaps, SrqCaps), or what is held through it (XrcDomains.Shared), or null. */
        final Object attrs;

        private Record(int handle, Object object, Object attrs) {
            this.handle = handle;
            this.object = object;
            this.attrs = attrs;
        }
    }

    private final TreeMap<Integer, Record> records = new TreeMap<>();
    private final Map<Integer, Record> qpsByNumber = new HashMap<>();
    private final List<CompletionQueue> cqs = new ArrayList<>();
    private int next = 1;

    /** A new handle for {@code object}, with what it was {@code attrs} created with (or null). */
    int add(Object object, Object attrs) {
        Record r = new Record(next++, object, attrs);
        records.put(r.handle, r);
        if (object instanceof QueuePair qp) qpsByNumber.put(qp.qpNum(), r);
        if (object instanceof CompletionQueue cq) cqs.add(cq);
        return r.handle;
    }

    /** The record of {@code handle}, or null. */
    Record record(int handle) { return records.get(handle); }

    /** The object of {@code handle}, of {@code type}: EINVAL naming the handle if it is not one. */
    <T> T get(int handle, Class<T> type) {
        Record r = records.get(handle);
        if (r == null || !type.isInstance(r.object))
            throw new VerbsException(Errno.EINVAL, String.format("%s handle %d is not one of this program's",
                    type.getSimpleName(), handle));
        return type.cast(r.object);
    }

    /** The object of {@code handle} an importing context names: none is ENOENT, another kind EINVAL (as uverbs). */
    <T> T imported(int handle, Class<T> type) {
        if (!records.containsKey(handle))
            throw new VerbsException(Errno.ENOENT, "import of " + type.getSimpleName() + " handle "
                    + Integer.toUnsignedString(handle) + ": no such object");
        return get(handle, type);
    }

    /** What {@code handle}'s object was created with. */
    <T> T attrs(int handle, Class<T> type) { return type.cast(records.get(handle).attrs); }

    /** The handle goes: no event names its object from now on. */
    void remove(int handle) {
        Record r = records.remove(handle);
        if (r == null) return;
        if (r.object instanceof QueuePair qp) qpsByNumber.remove(qp.qpNum());
        if (r.object instanceof CompletionQueue cq) cqs.remove(cq);
    }

    /** The handle of QP {@code qpn}, or null if the program has none. */
    Integer qp(int qpn) {
        Record r = qpsByNumber.get(qpn);
        return r == null ? null : r.handle;
    }

    /** The handle of the SRQ the adapter numbers {@code srqn}, or null. */
    Integer srq(int srqn) {
        for (Record r : records.values())
            if (r.object instanceof SharedReceiveQueue s && s.handle() == srqn) return r.handle;
        return null;
    }

    /** The handle of {@code cq} (by object, or by the adapter's number when {@code cq} is null), or null. */
    Integer cq(CompletionQueue cq, int cqn) {
        for (Record r : records.values())
            if (r.object instanceof CompletionQueue c && (cq != null ? c == cq : c.handle() == cqn)) return r.handle;
        return null;
    }

    /** The program's CQs, in the order it made them. */
    List<CompletionQueue> cqs() { return Collections.unmodifiableList(cqs); }

    /** Every record, the newest first: the order the kernel's cleanup takes them in. */
    Iterable<Record> newestFirst() { return List.copyOf(records.descendingMap().values()); }

    /** Forgets every record (the context closed). */
    void clear() {
        records.clear();
        qpsByNumber.clear();
        cqs.clear();
    }
}
