package nicsim.adapter;

/**
 * The BlueFlame buffer's lines: WQEBBs by ring address, oldest first, at most {@code capacity} of them. Keeping one
 * more drops the oldest; keeping an address already there makes it the newest. Addresses are looked for in order,
 * with nothing boxed; a count of lines per bucket of addresses answers at once for one not there (a new line, mostly).
 */
final class BlueFlameLines {
    private final int capacity;
    // the lines in order from the oldest: line j at (start + j) & mask
    private final long[] addr;
    private final byte[][] line;
    private final int mask;
    private int start, size;
    // lines per bucket of addresses (WQEBB number & mask): a look for an address whose bucket is empty scans nothing
    private final int[] inBucket;

    BlueFlameLines(int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("wqe.bf.buffer.entries " + capacity + ": at least 1");
        this.capacity = capacity;
        int n = Integer.highestOneBit(capacity);
        if (n < capacity) n <<= 1;
        this.addr = new long[n];
        this.line = new byte[n][];
        this.mask = n - 1;
        this.inBucket = new int[n];
    }

    boolean isEmpty() { return size == 0; }

    int size() { return size; }

    /** Keeps {@code bytes} under {@code a} as the newest line (one there before is replaced); the oldest may go. */
    void keep(long a, byte[] bytes) {
        int j = find(a);
        if (j >= 0) removeAt(j);
        else if (size == capacity) removeAt(0);
        int k = (start + size++) & mask;
        addr[k] = a;
        line[k] = bytes;
        inBucket[bucket(a)]++;
    }

    private int bucket(long a) { return (int) (a >>> 6) & mask; }

    boolean contains(long a) { return find(a) >= 0; }

    /** Takes out the line under {@code a}: its bytes, or null if none. */
    byte[] remove(long a) {
        int j = find(a);
        if (j < 0) return null;
        byte[] b = line[(start + j) & mask];
        removeAt(j);
        return b;
    }

    /** The place from the oldest of the line under {@code a}, or -1. */
    private int find(long a) {
        if (inBucket[bucket(a)] == 0) return -1;
        for (int j = 0; j < size; j++) if (addr[(start + j) & mask] == a) return j;
        return -1;
    }

    /** Drops the line {@code j} from the oldest; the newer ones close up (the oldest: none move). */
    private void removeAt(int j) {
        inBucket[bucket(addr[(start + j) & mask])]--;
        if (j == 0) {
            line[start] = null;
            start = (start + 1) & mask;
            size--;
            return;
        }
        for (int i = j; i < size - 1; i++) {
            int to = (start + i) & mask, from = (start + i + 1) & mask;
            addr[to] = addr[from];
            line[to] = line[from];
        }
        line[(start + size - 1) & mask] = null;
        size--;
    }
}
