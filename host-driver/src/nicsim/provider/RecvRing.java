package nicsim.provider;

import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.RecvWqeFormat;
import nicsim.abi.WqeFormat;
import nicsim.driver.Host;

/**
 * A receive ring as the user-space provider keeps it, for a QP's receive queue or an SRQ
 * (docs/sources.md#mlx5-doorbells): WQEs of 16-byte data segments at a power-of-two stride, and a
 * 16-bit producer counter published in a doorbell record (no MMIO: the adapter reads the record when
 * it runs out). It remembers each WQE's wr_id for its completion.
 */
public final class RecvRing {
    private final Host host;
    private final int size, stride, capacity;
    private final long ring;
    /** The doorbell record's word the counter is published in (set once, before the first post). */
    private long counter = -1;
    private final long[] wrid;
    private int head, tail;

    /** A ring of {@code size} WQEs of {@code stride} bytes (powers of two), holding at most {@code capacity} posted. */
    public RecvRing(Host host, int size, int stride, int capacity) {
        this.host = host;
        this.size = size;
        this.stride = stride;
        this.capacity = capacity;
        this.ring = host.allocPhysical((long) stride * size, 4096);
        this.wrid = new long[size];
    }

    public long base() { return ring; }

    /** Gives the ring's memory back (its queue is destroyed). */
    public void free() { host.freePhysical(ring, (long) stride * size); }

    /** Publishes the counter at {@code address} (a doorbell record's word) from now on. */
    public void recordAt(long address) { counter = address; }
    public int size() { return size; }
    public int stride() { return stride; }

    /** Whether another WQE may be posted. */
    public boolean full() { return ((head - tail) & 0xFFFF) >= capacity; }

    /** Writes a WQE at the head. */
    public void put(List<WqeFormat.Sge> sges, long wrId) {
        host.memory.write(ring + (long) stride * (head & (size - 1)), RecvWqeFormat.encode(sges, stride));
        wrid[head & (size - 1)] = wrId;
        head = (head + 1) & 0xFFFF;
    }

    /** Publishes the counter for {@code count} WQEs just put. */
    public void publish(int count) {
        if (count == 0) return;
        byte[] rec = new byte[4];
        BigEndian.put32(rec, 0, head & 0xFFFF);
        host.memory.write(counter, rec);
        host.bus.cpuWork(host.config.postCostPs() * count);
    }

    /** The scatter list of WQE {@code wqeCounter}, as posted (read before its completion frees the slot). */
    public List<WqeFormat.Sge> sges(int wqeCounter) {
        byte[] w = new byte[stride];
        host.memory.read(ring + (long) stride * (wqeCounter & (size - 1)), w, 0, stride);
        return RecvWqeFormat.decode(w);
    }

    /** The wr_id of WQE {@code wqeCounter}, which stays posted (a striding queue's WQE serves several messages). */
    public long peek(int wqeCounter) { return wrid[wqeCounter & (size - 1)]; }

    /** A receive completion for WQE {@code wqeCounter}: its wr_id; its slot is free again. */
    public long take(int wqeCounter) {
        long id = wrid[wqeCounter & (size - 1)];
        tail = (tail + 1) & 0xFFFF;
        return id;
    }

    /** Empty again, from counter 0 (a QP reset). */
    public void reset() { head = tail = 0; }
}
