package nicsim.sim;

/**
 * {@link Peers} that also count the wall time spent in their collectives: what a run across processes pays
 * for its exchanges, waits for the slowest rank included (a collective returns when every rank has joined).
 */
public final class TimedPeers implements Peers {
    private final Peers p;
    private long nanos, calls;

    public TimedPeers(Peers p) { this.p = p; }

    /** Wall time spent in collectives so far, in ns. */
    public long nanos() { return nanos; }

    /** Collectives made so far. */
    public long calls() { return calls; }

    /** The peers timed. */
    public Peers inner() { return p; }

    @Override public int rank() { return p.rank(); }
    @Override public int size() { return p.size(); }

    @Override public byte[][] allGather(byte[] mine) {
        long t0 = System.nanoTime();
        try { return p.allGather(mine); } finally { took(t0); }
    }

    @Override public long min(long v) {
        long t0 = System.nanoTime();
        try { return p.min(v); } finally { took(t0); }
    }

    @Override public long max(long v) {
        long t0 = System.nanoTime();
        try { return p.max(v); } finally { took(t0); }
    }

    @Override public long sum(long v) {
        long t0 = System.nanoTime();
        try { return p.sum(v); } finally { took(t0); }
    }

    private void took(long t0) {
        nanos += System.nanoTime() - t0;
        calls++;
    }
}
