package nicsim.adapter;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import nicsim.abi.Line64;
import nicsim.abi.UarLayout;
import nicsim.abi.WqeLayout;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.sim.ClockDomain;
import nicsim.sim.Counters;

/**
 * The adapter's BlueFlame buffer: a WQE written whole with its doorbell into a UAR page's BlueFlame register is kept
 * here under its WQEBBs' ring addresses, and the fetcher's ring read that asks for all of them is served from here
 * (no PCIe read). To place the lines it keeps each send queue's ring (as the firmware loaded it) and owning UAR page.
 */
final class BlueFlameBuffer {

    private final DoorbellDecoder.Config dbCfg;
    /** BlueFlame-written WQEBBs by ring address, oldest first; at most {@link #bfEntries}. */
    private final BlueFlameLines bfLines; // null: no BlueFlame buffer
    private final int bfEntries;
    // counted once per doorbell or fetch: held, not looked up by name each time
    private final Counters.Ref bfContinuations, bfWrites, bfFetchesSkipped;
    /** The UAR page each send queue's doorbells must come through. */
    private final Map<Long, Long> sqOwner = new HashMap<>();
    private final Map<Long, SqConfig> sqConfigs = new HashMap<>();

    BlueFlameBuffer(ClockDomain core, AdapterConfig cfg) {
        this.dbCfg = cfg.doorbell();
        this.bfEntries = cfg.bfBufferEntries();
        this.bfLines = bfEntries == 0 ? null : new BlueFlameLines(bfEntries);
        this.bfContinuations = core.counters().ref(AdapterStat.BLUEFLAME_CONTINUATIONS);
        this.bfWrites = core.counters().ref(AdapterStat.BLUEFLAME_WRITES);
        this.bfFetchesSkipped = core.counters().ref(AdapterStat.BLUEFLAME_FETCHES_SKIPPED);
    }

    /** Send queue {@code qpn}'s doorbells come through UAR page {@code uar}. */
    void owned(long qpn, int uar) {
        sqOwner.put(qpn, (long) uar);
        bfQpn = -1;
    }

    /** The firmware loaded send queue context {@code sc} into the fetcher: its WQEs are placed in its ring. */
    void loaded(SqConfig sc) {
        sqConfigs.put(sc.qpn(), sc);
        bfQpn = -1;
    }

    /** Send queue {@code qpn} is gone: its context as last loaded, or null. */
    SqConfig destroyed(long qpn) {
        SqConfig old = sqConfigs.remove(qpn);
        sqOwner.remove(qpn);
        bfQpn = -1;
        return old;
    }

    /**
     * The most bytes of a lone WQE a send doorbell may carry whole (QUERY_HCA_CAP's bfSize): half a
     * BlueFlame register, as mlx5's buffers alternate between the halves; 0 without a BlueFlame buffer.
     */
    int blueFlameBytes() {
        return bfEntries == 0 ? 0 : Math.min(dbCfg.bfRegSize() / 2, bfEntries * WqeLayout.WQEBB);
    }

    /**
     * A write of {@code data} at {@code offset} into the doorbell window: false for the rest of a WQE written in
     * 64-byte chunks (counted, and nothing more to do); else true, a doorbell, its WQE kept here if it came whole.
     */
    boolean written(long offset, byte[] data) {
        // a BlueFlame write (a whole WQE) rings with its ctrl segment's first 8 bytes; a WQE of up to
        // blueFlameBytes() written in one burst is also kept in the BlueFlame buffer, where the fetcher's
        // read of it finds it (a WQE written in 64-byte chunks keeps only its first)
        long po = (offset - dbCfg.windowBase()) % dbCfg.pageSize();
        boolean wqeHead = po >= UarLayout.BF_OFFSET && (po - UarLayout.BF_OFFSET) % (dbCfg.bfRegSize() / 2) == 0;
        if (data.length > 8 && !wqeHead) { // the rest of a WQE written in 64-byte chunks
            bfContinuations.inc();
            return false;
        }
        if (data.length > 8) bfWrites.inc();
        int most = Math.max(WqeLayout.WQEBB, blueFlameBytes());
        boolean whole = data.length % WqeLayout.WQEBB == 0 && data.length <= most;
        long page = (offset - dbCfg.windowBase()) / dbCfg.pageSize();
        if (wqeHead && whole && data.length > 0) keepBlueFlame(page, data);
        return true;
    }

    /**
     * Keeps a BlueFlame-written WQE's WQEBBs under their ring addresses, if the page it came through
     * owns the queue its ctrl segment names (the decoder's own check; a write through a foreign page
     * is rejected there and leaves nothing here). The oldest lines go when the buffer is full.
     */
    // keepBlueFlame's last queue, its context and its owner's page (-1: none); a change to either table forgets it
    private long bfQpn = -1, bfOwner = -1;
    private SqConfig bfSq;

    private void keepBlueFlame(long page, byte[] wqe) {
        if (bfEntries == 0) return;
        long ctrl = ctrlWord(wqe);
        long qpn = WqeLayout.qpn(ctrl);
        int index = WqeLayout.index(ctrl);
        if (qpn != bfQpn) { // a run of posts to one queue looks its context and owner up once, with no boxing
            bfSq = sqConfigs.get(qpn);
            Long owner = sqOwner.get(qpn);
            bfOwner = owner == null ? -1 : owner;
            bfQpn = qpn;
        }
        SqConfig sc = bfSq;
        if (sc == null || bfOwner != page) return;
        int mask = (1 << sc.logSize()) - 1;
        for (int k = 0; k < wqe.length / WqeLayout.WQEBB; k++) {
            long pa = sc.base() + (long) ((index + k) & mask) * WqeLayout.WQEBB;
            bfLines.keep(pa, Arrays.copyOfRange(wqe, k * WqeLayout.WQEBB, (k + 1) * WqeLayout.WQEBB));
        }
    }

    /** The first 8 bytes of a WQE as the first word of its WQEBB's {@link Line64#words}: its ctrl segment's word. */
    private static long ctrlWord(byte[] wqe) {
        long w = 0;
        for (int j = 7; j >= 0; j--) w = w << 8 | wqe[j] & 0xff;
        return w;
    }

    /**
     * The fetcher's ring read, served from the BlueFlame buffer when every WQEBB it asks for is
     * there (no PCIe read: the WQE came with its doorbell); otherwise null, and the lines it covers
     * are dropped (the ring is read instead).
     */
    byte[] lines(WqePorts.DmaReadReq r) {
        if (bfLines == null || bfLines.isEmpty()) return null;
        int n = (int) (r.length() / WqeLayout.WQEBB);
        boolean all = true;
        for (int i = 0; i < n && all; i++) all = bfLines.contains(r.addr() + (long) i * WqeLayout.WQEBB);
        if (all && n == 1) { // one line: handed over as it is, out of the buffer
            bfFetchesSkipped.inc();
            return bfLines.remove(r.addr());
        }
        byte[] out = all ? new byte[(int) r.length()] : null;
        for (int i = 0; i < n; i++) {
            byte[] line = bfLines.remove(r.addr() + (long) i * WqeLayout.WQEBB);
            if (out != null) System.arraycopy(line, 0, out, i * WqeLayout.WQEBB, WqeLayout.WQEBB);
        }
        if (out != null) bfFetchesSkipped.inc();
        return out;
    }

    /** Whether the BlueFlame buffer holds every WQEBB of ring read {@code r} (the reader serves it from there). */
    boolean heldWhole(WqePorts.DmaReadReq r) {
        if (bfLines == null || bfLines.isEmpty()) return false;
        for (long i = 0; i < r.length() / WqeLayout.WQEBB; i++)
            if (!bfLines.contains(r.addr() + i * WqeLayout.WQEBB)) return false;
        return true;
    }
}
