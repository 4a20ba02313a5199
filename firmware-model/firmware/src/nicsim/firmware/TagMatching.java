package nicsim.firmware;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import nicsim.abi.WqeFormat.Sge;

/**
 * A tag-matching SRQ's hardware list (docs/sources.md#tag-matching): tagged buffers in the order
 * software added them, each with its tag, mask and handle. An incoming tagged message takes the
 * first entry whose tag equals the message's under the entry's mask. A message no entry takes is
 * unexpected: it goes whole to an ordinary SRQ buffer, and the hardware counts it. Software reports,
 * with each operation, how many unexpected messages it has seen; an entry added while software had
 * not seen them all could let a later message overtake an earlier unexpected one, so the hardware
 * does not match it (its completion asks for a TAG_SYNC).
 */
final class TagMatching {
    /** A tagged buffer; {@code matchable}: added when software had seen every unexpected message. */
    record Entry(int handle, long tag, long mask, Sge sge, boolean matchable) {}

    /** An entry taken by a message, and how many entries were compared to find it (or all of them, none taken). */
    record Match(Entry entry, int compared) {}

    final int maxTags, maxOps;
    private final Map<Integer, Entry> list = new LinkedHashMap<>();
    private int nextHandle = 1;
    /** Messages the hardware deemed unexpected, and the count software last reported. */
    private int unexpected, reported;

    TagMatching(int maxTags, int maxOps) {
        this.maxTags = maxTags;
        this.maxOps = maxOps;
    }

    /** Software's count of unexpected messages, as an operation reports it. */
    void report(int softwareCount) { reported = softwareCount; }

    /**
     * Whether software has not yet seen every unexpected message (tag operations' completions then carry TM_SYNC_REQ).
     */
    boolean syncRequired() { return reported != unexpected; }

    /**
     * Unexpected messages software may lag behind before receive completions too ask it to sync (mlx5's
     * MLX5_TM_MAX_SYNC_DIFF).
     */
    static final int MAX_SYNC_GAP = 0x3fff;

    /** Whether software lags so far behind that a receive completion asks it to sync. */
    boolean syncFarBehind() { return unexpected - reported > MAX_SYNC_GAP; }

    /** Adds a tagged buffer; returns its handle, or -1 when the list is full. */
    int add(long tag, long mask, Sge sge) {
        if (list.size() >= maxTags) return -1;
        while (list.containsKey(nextHandle) || nextHandle == 0) nextHandle = (nextHandle + 1) & 0xFFFF;
        int h = nextHandle;
        nextHandle = (nextHandle + 1) & 0xFFFF;
        list.put(h, new Entry(h, tag, mask, sge, !syncRequired()));
        return h;
    }

    /** Removes entry {@code handle}; false if it is not in the list (a message took it, or it never was). */
    boolean delete(int handle) { return list.remove(handle) != null; }

    /** The first matchable entry for {@code tag}, taken out of the list; null: none, the message is unexpected. */
    Match take(long tag) {
        int compared = 0;
        for (Iterator<Entry> it = list.values().iterator(); it.hasNext(); ) {
            Entry e = it.next();
            compared++;
            if (e.matchable() && ((e.tag() ^ tag) & e.mask()) == 0) {
                it.remove();
                return new Match(e, compared);
            }
        }
        return new Match(null, compared);
    }

    /** A tagged message went to an ordinary buffer: software now has one more unexpected message to see. */
    void countUnexpected() { unexpected++; }
}
