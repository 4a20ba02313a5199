package nicsim.firmware;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import nicsim.abi.Cmd;

/**
 * One kind of resource by number (UARs, PDs, mkeys, CQs, SRQs): a new one takes the lowest free
 * number from {@code first} up to {@code limit}, or the command is refused with {@code full}.
 */
final class Table<T> {
    private final Map<Long, T> byNumber;
    private final long first, limit;
    private final Cmd.Syndrome full;

    /** {@code ordered}: iterated in number order (where the order of a scan shows, as in events). */
    Table(long first, long limit, Cmd.Syndrome full, boolean ordered) {
        this.byNumber = ordered ? new TreeMap<>() : new HashMap<>();
        this.first = first;
        this.limit = limit;
        this.full = full;
    }

    /** The lowest free number; refused when there is none. */
    long free() {
        for (long i = first; i < limit; i++) if (!byNumber.containsKey(i)) return i;
        throw new CommandRefused(full, limit);
    }

    /** Adds {@code value} at the lowest free number, and returns it. */
    long add(T value) {
        long n = free();
        byNumber.put(n, value);
        return n;
    }

    void put(long n, T value) { byNumber.put(n, value); }
    T get(long n) { return byNumber.get(n); }
    boolean has(long n) { return byNumber.containsKey(n); }
    T remove(long n) { return byNumber.remove(n); }
    Collection<T> all() { return byNumber.values(); }
    long limit() { return limit; }
}
