package nicsim.adapter;

import java.util.Arrays;
import nicsim.adapter.DmaPath.Job;
import nicsim.sim.Simulator;

/**
 * The PCI writes a coasting channel's look-ahead finds inside its coast, none its job's last: each is issued at its
 * edge's own instant and place among that instant's events by one event, armed again for the next, rather than by
 * ending the coast on each edge that issues one and looking ahead again from there. When the coast catches up
 * with those edges, their beats find their writes issued ({@link #issuedAt}) and issue none again.
 */
final class DmaWritesAhead implements Runnable {
    private final DmaChannel channel;
    // planned writes, in edge order: the edge, its time, the job, host address, offset in the job's bytes, length,
    // and when the write's first byte came out of the engine
    private long[] cycles = new long[8], times = new long[8], addrs = new long[8], sinces = new long[8];
    private int[] offs = new int[8], lens = new int[8];
    private Job[] jobs = new Job[8];
    private int planned, issued, replayed; // planned; issued by the event so far; of those, met by the coast
    private Simulator.Event event; // the event for the next planned write (reused once run)
    private boolean armed;
    private long issuedSoFar; // writes issued ahead since the channel was made

    DmaWritesAhead(DmaChannel channel) { this.channel = channel; }

    /** Writes issued ahead so far. */
    long issuedSoFar() { return issuedSoFar; }

    /** A write a beat leaving the host engine at edge {@code cycle}, at {@code time}, issues: see DmaChannel#issue. */
    void plan(long cycle, long time, Job j, long addr, int off, int len, long since) {
        if (planned == cycles.length) {
            int n = 2 * planned;
            cycles = Arrays.copyOf(cycles, n); times = Arrays.copyOf(times, n); addrs = Arrays.copyOf(addrs, n);
            sinces = Arrays.copyOf(sinces, n); offs = Arrays.copyOf(offs, n); lens = Arrays.copyOf(lens, n);
            jobs = Arrays.copyOf(jobs, n);
        }
        cycles[planned] = cycle; times[planned] = time; jobs[planned] = j; addrs[planned] = addr;
        offs[planned] = off; lens[planned] = len; sinces[planned++] = since;
    }

    /** The event for the first planned write not yet issued, if any. */
    void arm() {
        if (armed || issued == planned) return;
        event = channel.domain.atEdge(event, cycles[issued], this);
        armed = true;
    }

    /**
     * At the planned write's edge: it leaves now, as the edge would issue it, if the coast is still on (one cut short
     * by a wake, with no edge to catch up, ran none of its edges: its plans are stale).
     */
    @Override public void run() {
        armed = false;
        if (!channel.domain.coasting()) { drop(); return; }
        int i = issued++;
        issuedSoFar++;
        channel.issue(jobs[i], addrs[i], offs[i], lens[i], sinces[i], false);
        arm();
    }

    /** The writes planned and not yet issued are not to be: their coast ended before their edges. */
    void drop() {
        if (armed) { event.cancel(); armed = false; }
        while (planned > issued) jobs[--planned] = null;
        if (replayed == planned) planned = issued = replayed = 0;
    }

    /**
     * The coast runs edges from {@code first} on, to {@code last}: the writes planned at them have been issued (their
     * edges are behind now); those planned later are dropped, not to be issued (the coast ends before them).
     */
    void coasting(long first, long last) {
        if (issued < planned && cycles[issued] <= last)
            throw new IllegalStateException("clock " + channel.domain.name() + " coasts over edge " + cycles[issued]
                    + " (from " + first + " to " + last + ") before its PCI write was issued");
        drop();
    }

    /** Whether the beat leaving at {@code time} issued its write ahead, and the coast has not yet met it. */
    boolean issuedAt(long time) { return replayed < issued && times[replayed] == time; }

    /** Whether a write issued ahead and not yet met by the coast left at {@code time}. */
    boolean issuedAhead(long time) {
        for (int i = replayed; i < issued; i++) if (times[i] == time) return true;
        return false;
    }

    /** The write planned last is not issued ahead: its edge ends the coast, and issues it then. */
    void unplanLast() {
        if (planned > issued) jobs[--planned] = null;
    }

    /**
     * The coast meets the write issued ahead at {@code time}: what the beat's edge issues now must be it.
     */
    void met(long time, long addr, int len, long since) {
        int i = replayed++;
        if (times[i] != time || addrs[i] != addr || lens[i] != len || sinces[i] != since)
            throw new IllegalStateException(String.format("the PCI write issued ahead at %d ps (0x%x +%d since %d)"
                    + " is not the edge's (0x%x +%d since %d)", times[i], addrs[i], lens[i], sinces[i], addr, len,
                    since));
        jobs[i] = null;
        if (replayed == planned) planned = issued = replayed = 0;
    }
}
