package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.XlateReq;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.MttPorts;

/**
 * The MttWalker's table of mkey contexts as a cache of all of {@link MemoryKeys}', and the translations sent through
 * it: a translation whose key (or, for an indirect mkey, a key its layout names) the walker does not hold first loads
 * that context from host memory (ICM), once the entry it replaces has no translation in flight.
 */
final class MkeyCache {
    private final Firmware fw;
    private final MemoryKeys keys;
    // the walker's table: which mkey index each entry holds (-1: none), translations in flight per entry
    private final long[] walkerIndex;
    private final int[] walkerBusy;
    /** Each walker entry's slot alone (made at its first use), the slots of a direct key's translation. */
    private final int[][] oneSlot;
    private static final int[] NO_SLOTS = {};
    private final ArrayDeque<XlateReq> queue = new ArrayDeque<>();
    private boolean loading;
    private int nextTag;
    // translations by tag: slot tag & (length - 1), grown when two in flight would share a slot
    private Translation[] inFlight = new Translation[16];

    /** A translation sent to the walker: the walker entries it holds busy, its responses so far, who waits for them. */
    private static final class Translation {
        final int tag;
        List<XlateRsp> parts = List.of(); // a list of one while it has one (most have no more): no array grown for ten
        final Consumer<List<XlateRsp>> done;
        int[] slots = NO_SLOTS; // set when it is sent (read only: it may be one of oneSlot's)

        Translation(int tag, Consumer<List<XlateRsp>> done) { this.tag = tag; this.done = done; }
    }

    MkeyCache(Firmware fw, MemoryKeys keys, int walkerEntries) {
        this.fw = fw;
        this.keys = keys;
        this.walkerIndex = new long[walkerEntries];
        this.walkerBusy = new int[walkerEntries];
        this.oneSlot = new int[walkerEntries][];
        Arrays.fill(walkerIndex, -1);
    }

    private int walkerSlot(long index) { return (int) (index & (walkerIndex.length - 1)); }

    /**
     * Writes an mkey context: to host memory (ICM), and into the walker's table if the walker holds
     * that index or the entry is free. A context of state NONE (a destroyed key) frees the entry.
     */
    void publish(MkeyContext m) {
        int slot = walkerSlot(m.index());
        if (keys.mkcAddr >= 0 && m.state() != MttPorts.STATE_NONE) fw.adapter.port()
                .dmaWrite(keys.mkcAddr + m.index() * MemoryKeys.MKC_BYTES, new byte[MemoryKeys.MKC_BYTES], r -> {});
        if (walkerIndex[slot] == m.index() || walkerIndex[slot] < 0) {
            fw.adapter.mkeyWrite(m);
            walkerIndex[slot] = m.state() == MttPorts.STATE_NONE ? -1 : m.index();
        }
    }

    /** Translates through the MttWalker; the callback gets the chunks, or one failed response. */
    void translate(long mkey, long va, long length, int access, long pd, long qpn, Consumer<List<XlateRsp>> done) {
        int tag = nextTag;
        nextTag = (nextTag + 1) & 0xFFFF;
        track(new Translation(tag, done));
        queue.add(new XlateReq(mkey & 0xFFFFFFFFL, va, length, access, pd, qpn & 0xFFFFFF, tag));
        pump();
    }

    /** Sends queued translations to the walker, loading an mkey context first when the walker does not hold it. */
    private void pump() {
        while (!queue.isEmpty() && !loading) {
            XlateReq r = queue.peek();
            long own = r.mkey() >>> 8;
            long[] need = needed(own);
            int[] slots;
            int used = 0;
            long missing = -1;
            if (need == null) { // a direct key: its own context, in its one entry
                int s = walkerSlot(own);
                slots = oneSlot[s] != null ? oneSlot[s] : (oneSlot[s] = new int[]{s});
                used = 1;
                if (walkerIndex[s] != own && keys.mkeys.get(own) != null) missing = own; // no lookup on a hit
            } else {
                slots = new int[need.length];
                // the first context the walker lacks, unless its entry holds another this translation needs
                for (long n : need) {
                    int s = walkerSlot(n);
                    if (holds(slots, used, s)) continue;
                    slots[used++] = s;
                    if (missing < 0 && walkerIndex[s] != n && keys.mkeys.get(n) != null) missing = n;
                }
            }
            long index = missing;
            int slot = walkerSlot(index);
            if (index >= 0) {
                // a miss: the entry's current key must have no translation in flight before it is replaced
                if (walkerBusy[slot] > 0) return;
                loading = true;
                fw.stats.inc(FirmwareStat.MKEY_CONTEXT_MISSES);
                Runnable load = () -> {
                    MkeyContext now = keys.mkeys.get(index);
                    if (now != null) {
                        fw.adapter.mkeyWrite(now);
                        walkerIndex[slot] = index;
                    }
                    loading = false;
                    pump();
                };
                if (keys.mkcAddr < 0) load.run();
                else fw.adapter.port().dmaRead(keys.mkcAddr + index * MemoryKeys.MKC_BYTES, MemoryKeys.MKC_BYTES,
                        x -> load.run());
                return;
            }
            queue.poll();
            for (int i = 0; i < used; i++) walkerBusy[slots[i]]++;
            tracked((int) r.tag()).slots = used == slots.length ? slots : Arrays.copyOf(slots, used);
            fw.adapter.translate(r);
        }
    }

    /**
     * The contexts a translation under mkey {@code index} needs in the walker: its own, and for an
     * indirect mkey those of the keys its layout names (pieces that share a walker entry with an
     * earlier one are not loaded: the walker reports them BAD_INDEX).
     */
    private long[] needed(long index) {
        List<Long> pieces = keys.indirects.pieces(index);
        if (pieces == null || pieces.isEmpty()) return null;
        return LongStream.concat(LongStream.of(index), pieces.stream().mapToLong(Long::longValue)).distinct().toArray();
    }

    private static boolean holds(int[] slots, int used, int s) {
        for (int i = 0; i < used; i++) if (slots[i] == s) return true;
        return false;
    }

    /**
     * Keeps {@code t} until its last response, by tag (in place of one of its tag that never finished, as a map would).
     */
    private void track(Translation t) {
        Translation o;
        while ((o = inFlight[t.tag & (inFlight.length - 1)]) != null && o.tag != t.tag) {
            Translation[] bigger = new Translation[2 * inFlight.length];
            for (Translation x : inFlight) if (x != null) bigger[x.tag & (bigger.length - 1)] = x;
            inFlight = bigger;
        }
        inFlight[t.tag & (inFlight.length - 1)] = t;
    }

    /** The translation in flight under {@code tag}, or null. */
    private Translation tracked(int tag) {
        Translation t = inFlight[tag & (inFlight.length - 1)];
        return t != null && t.tag == tag ? t : null;
    }

    /** A response from the MttWalker: the last one of a translation hands them all over. */
    void onResponse(XlateRsp r) {
        Translation t = tracked((int) r.tag());
        if (t == null) return;
        if (t.parts.isEmpty()) t.parts = List.of(r);
        else {
            if (t.parts.size() == 1) t.parts = new ArrayList<>(t.parts);
            t.parts.add(r);
        }
        if (r.last() != 0) {
            inFlight[t.tag & (inFlight.length - 1)] = null;
            for (int s : t.slots) walkerBusy[s]--;
            t.done.accept(t.parts);
            pump();
        }
    }
}
