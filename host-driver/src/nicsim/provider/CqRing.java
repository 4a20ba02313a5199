package nicsim.provider;

import java.util.function.Predicate;
import nicsim.abi.BigEndian;
import nicsim.abi.Cqe64;
import nicsim.abi.DoorbellRecord;
import nicsim.driver.Driver;

/**
 * A completion queue as the user-space provider keeps it, mlx5-style (docs/sources.md#mlx5-cq-ownership):
 * a power-of-two ring of 64-byte CQEs the adapter writes, every entry starting invalid; software owns
 * the entry at its consumer index when the entry is valid and its owner bit matches the lap; the
 * consumer index goes to the CQ's doorbell record (word 0), the arm word to word 1 and then to the
 * UAR's CQ doorbell.
 */
public final class CqRing {
    private final Driver driver;
    private int size;
    private long ring;
    private final long dbrec;
    private int consumer, armSn;

    /** A ring of {@code size} CQEs (a power of two). */
    public CqRing(Driver driver, int size) {
        this.driver = driver;
        this.size = size;
        var host = driver.host();
        this.ring = invalidRing(driver, size);
        this.dbrec = host.allocPhysical(8, 8);
    }

    /** A new ring of {@code size} CQEs, every entry invalid; its address. */
    public static long invalidRing(Driver driver, int size) {
        var host = driver.host();
        long at = host.allocPhysical(64L * size, 4096);
        for (int i = 0; i < size; i++)
            host.memory.write(at + (long) Cqe64.BYTES * i + Cqe64.OP_OWN, new byte[]{(byte) 0xF0});
        return at;
    }

    /**
     * The adapter moved the CQ to the ring at {@code base} of {@code size} entries (RESIZE_CQ), the
     * completions not yet taken first: software continues from its first entry.
     */
    public void moved(long base, int size) {
        driver.host().freePhysical(ring, 64L * this.size);
        this.ring = base;
        this.size = size;
        this.consumer = 0;
    }

    public long base() { return ring; }

    /** Gives the ring's and doorbell record's memory back (the CQ is destroyed). */
    public void free() {
        driver.host().freePhysical(ring, 64L * size);
        driver.host().freePhysical(dbrec, 8);
    }
    public long doorbellRecord() { return dbrec; }
    public int size() { return size; }

    private boolean owned(int opOwn, int index) {
        return (opOwn & 0xff) >> 4 != Cqe64.INVALID && (opOwn & 1) == ((index & size) != 0 ? 1 : 0);
    }

    /** Whether the next entry is software's (a look that changes nothing). */
    public boolean ready() {
        long at = ring + (long) Cqe64.BYTES * (consumer & (size - 1));
        return owned(driver.host().memory.readByte(at + Cqe64.OP_OWN), consumer);
    }

    /** The next entry if it is software's (the consumer index then moves past it), else null. */
    public byte[] next() {
        long at = ring + 64L * (consumer & (size - 1));
        // an empty poll makes no array
        if (!owned(driver.host().memory.readByte(at + Cqe64.OP_OWN), consumer)) return null;
        byte[] e = driver.host().memory.read(at, 64);
        if (!owned(e[Cqe64.OP_OWN], consumer)) return null;
        consumer++;
        return e;
    }

    /** Publishes the consumer index (24 bits) in the doorbell record. */
    public void publishConsumer() {
        byte[] ci = new byte[4];
        BigEndian.put32(ci, 0, consumer & 0xFFFFFF);
        driver.host().memory.write(dbrec, ci);
    }

    /** Whether software has taken any entry yet. */
    public boolean started() { return consumer != 0; }

    /**
     * Removes the entries software has not taken that {@code drop} selects (a QP reset, as mlx5's
     * __mlx5_cq_clean): later entries move back over them.
     */
    public void clean(Predicate<byte[]> drop) {
        var mem = driver.host().memory;
        int end = consumer;
        while (owned(mem.readByte(ring + (long) Cqe64.BYTES * (end & (size - 1)) + Cqe64.OP_OWN), end)) end++;
        int kept = 0;
        for (int i = end - 1; i >= consumer; i--) {
            byte[] e = mem.read(ring + 64L * (i & (size - 1)), 64);
            if (drop.test(e)) { kept++; continue; }
            if (kept > 0) {
                int to = i + kept;
                e[Cqe64.OP_OWN] = (byte) ((e[Cqe64.OP_OWN] & ~1) | ((to & size) != 0 ? 1 : 0));
                mem.write(ring + 64L * (to & (size - 1)), e);
            }
        }
        consumer += kept; // the freed slots at the front count as taken
        if (kept > 0) publishConsumer();
    }

    /** Arms the CQ: the next completion (or next solicited one) raises its event. */
    public void arm(int cqn, int uar, boolean solicitedOnly) {
        int w0 = (armSn & 3) << 28 | (solicitedOnly ? 1 << 24 : 0) | (consumer & 0xFFFFFF);
        byte[] arm = new byte[4];
        BigEndian.put32(arm, 0, w0);
        driver.host().memory.write(dbrec + DoorbellRecord.CQ_ARM, arm);
        byte[] db = new byte[8];
        BigEndian.put32(db, 0, w0);
        BigEndian.put32(db, 4, cqn);
        driver.mmio(driver.cqDoorbell(uar), db);
    }

    /** A completion event was taken: the next arm carries the next sequence number. */
    public void eventTaken() { armSn++; }
}
