package nicsim.provider;

import java.util.ArrayDeque;
import java.util.Arrays;
import nicsim.abi.BigEndian;
import nicsim.abi.DoorbellRecord;
import nicsim.driver.Driver;
import nicsim.driver.Host;

/**
 * A QP's send queue as the user-space provider keeps it, mlx5-style (docs/sources.md#mlx5-doorbells):
 * a ring of 64-byte WQEBBs in host memory, a 16-bit producer counter in WQEBBs published in the
 * QP's doorbell record (byte 4), and a doorbell written to the context's UAR page: the last WQE's
 * first 8 bytes, or a lone small WQE whole (BlueFlame, up to the adapter's bfSize). It remembers
 * each WQE's wr_id and the caller's tag for its completion; a completion retires its WQE and every
 * unsignaled one before it (docs/sources.md#mlx5-cqe).
 */
public final class SendRing {
    /** What a completion names: the WQE's wr_id and the tag it was posted with. */
    public record Slot(long wrId, int tag) {}

    private final Driver driver;
    private final Host host;
    private final int uar, size, maxWqes;
    private final long ring;
    /** The QP's doorbell record (set once, before the first post): the counter goes to its byte 4. */
    private long dbrec = -1;
    private int head, tail, wqes;
    private final long[] wrid;
    private final int[] tag, nextHead;
    private final ArrayDeque<Integer> posted = new ArrayDeque<>();

    /** A ring of {@code size} WQEBBs (a power of two) holding at most {@code maxWqes} WQEs. */
    public SendRing(Driver driver, int uar, int size, int maxWqes) {
        this.driver = driver;
        this.host = driver.host();
        this.uar = uar;
        this.size = size;
        this.maxWqes = maxWqes;
        this.ring = host.allocPhysical(64L * size, 4096);
        this.wrid = new long[size];
        this.tag = new int[size];
        this.nextHead = new int[size];
    }

    public long base() { return ring; }

    /** Gives the ring's memory back (its QP is destroyed). */
    public void free() { host.freePhysical(ring, 64L * size); }

    /** The QP's doorbell record, where the producer counter is published from now on. */
    public void recordAt(long address) { dbrec = address; }
    public int size() { return size; }
    /** The producer counter: the index the next WQE's control segment carries. */
    public int head() { return head; }

    /** Whether a WQE of {@code bbs} WQEBBs fits now. */
    public boolean fits(int bbs) { return wqes < maxWqes && (head - tail) + bbs <= size; }

    /** Places a WQE (whole WQEBBs) at the head; it is the doorbell's business to tell the adapter. */
    public void put(byte[] wqe, long wrId, int tagOf) {
        int bbs = wqe.length / 64, idx = head & (size - 1);
        for (int i = 0; i < bbs; i++)
            host.memory.write(ring + 64L * ((head + i) & (size - 1)), wqe, i * 64, 64);
        wrid[idx] = wrId;
        tag[idx] = tagOf;
        head = (head + bbs) & 0xFFFF;
        nextHead[idx] = head;
        posted.add(idx);
        wqes++;
    }

    /**
     * Publishes the producer counter and rings the doorbell for {@code count} WQEs just put:
     * {@code single}, the only one, whole if it is one WQEBB (BlueFlame), else {@code lastCtrl}.
     */
    public void ring(int count, byte[] lastCtrl, byte[] single) {
        if (count == 0) return;
        byte[] rec = new byte[4];
        BigEndian.put32(rec, 0, head & 0xFFFF);
        host.memory.write(dbrec + DoorbellRecord.SEND, rec);
        host.bus.cpuWork(host.config.postCostPs() * count);
        boolean whole = count == 1 && single.length <= blueFlameMax();
        driver.mmio(driver.sendDoorbell(uar), whole ? single : Arrays.copyOf(lastCtrl, 8));
    }

    /**
     * The largest lone WQE written whole: what the adapter's BlueFlame buffer takes (one write-combined
     * burst), and one WQEBB always, as mlx5 writes a small WQE whole whether or not the adapter keeps it.
     */
    private int blueFlameMax() { return (int) Math.max(64, driver.caps().bfSize()); }

    /** Rings the doorbell with nothing new (an ERR QP's nudge to flush receives posted since). */
    public void nudge(byte[] ctrl) { driver.mmio(driver.sendDoorbell(uar), ctrl); }

    /** The WQE a completion names by its counter; it and every unsignaled WQE before it leave the ring. */
    public Slot retire(int wqeCounter) {
        int idx = wqeCounter & (size - 1);
        if (posted.contains(idx)) {
            while (!posted.isEmpty()) if (posted.poll() == idx) break;
            tail = nextHead[idx];
            wqes = posted.size();
        }
        return new Slot(wrid[idx], tag[idx]);
    }

    /** The tag of the WQE at ring slot {@code wqeCounter}, without retiring it. */
    public int tagAt(int wqeCounter) { return tag[wqeCounter & (size - 1)]; }

    /** Empty again, from counter 0 (a QP reset). */
    public void reset() {
        head = tail = wqes = 0;
        posted.clear();
    }
}
