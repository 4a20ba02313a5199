package nicsim.firmware;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.DoorbellRecord;
import nicsim.abi.RecvWqeFormat;
import nicsim.abi.WqeFormat.Sge;
import nicsim.host.PciPort;

/**
 * A receive ring in host memory as the firmware reads it (a QP's receive queue or an SRQ):
 * 2^logSize WQEs of 2^strideLog bytes, each a list of 16-byte data segments (byte count, lkey,
 * address) ended by a terminator (count 0, lkey 0x100) when shorter than the stride. The driver
 * publishes its 16-bit producer counter in the doorbell record (no MMIO, as mlx5); the firmware
 * reads the record only when it has used every WQE it knew of. A record more than a ring's worth
 * of WQEs past those taken is malformed and changes nothing (see {@link #adopt}).
 */
final class RecvRingReader {
    /** A receive WQE: its counter, scatter list and total room. */
    record Wqe(int index, List<Sge> sges, long capacity) {}

    private final Firmware fw;
    private final PciPort port;
    /** The queue as its reports name it: "qpn 0x12", "srqn 0x3". */
    private final String owner;
    /** Whether a malformed doorbell record was told (once a queue; each is counted). */
    private boolean malformedTold;
    final long ring, dbrec;
    final int size, strideLog;
    /** How many WQEs to hold read ahead of need ({@code fw.recv.prefetch}); 0 reads each when a message arrives. */
    private final int prefetch;
    int head, producer;
    /** WQEs read ahead, in order, and whether a read-ahead is on its way. */
    private final ArrayDeque<Wqe> ready = new ArrayDeque<>();
    private boolean fetching;
    private long epoch;
    /**
     * Takers waiting for the read-ahead on its way, in the order they asked (several QPs take from
     * one SRQ at once): each gets the next WQE in turn.
     */
    private final ArrayDeque<Consumer<Wqe>> waiters = new ArrayDeque<>();

    RecvRingReader(Firmware fw, String owner, long ring, int size, int strideLog, long dbrec) {
        this.fw = fw;
        this.port = fw.adapter.port();
        this.owner = owner;
        this.ring = ring;
        this.size = size;
        this.strideLog = strideLog;
        this.dbrec = dbrec;
        this.prefetch = fw.recvPrefetch;
    }

    /** WQEs known to be posted and not yet taken. */
    int known() { return ((producer - head) & 0xFFFF) + ready.size(); }

    void reset() {
        head = producer = 0;
        ready.clear();
        fetching = false;
        waiters.clear();
        epoch++;
    }

    /** Keeps up to {@code prefetch} WQEs read ahead of need, one read at a time so they stay in order. */
    private void refill() {
        if (prefetch == 0 || fetching || ready.size() >= prefetch || head == producer) return;
        fetching = true;
        long e = epoch;
        read(head, w -> {
            if (e != epoch) return;
            fetching = false;
            ready.add(w);
            serveWaiters();
            refill();
        });
        head = (head + 1) & 0xFFFF;
    }

    /** Re-reads the producer counter from the doorbell record, then runs {@code then}. */
    void readProducer(Runnable then) {
        port.dmaRead(dbrec, 4, r -> {
            if (r.status() == PciPort.DmaStatus.OK) adopt((int) (BigEndian.get32(r.data(), 0) & 0xFFFF));
            then.run();
            refill();
        });
    }

    /**
     * Takes {@code recorded} as the producer counter, unless it is more than the ring's size past {@link #head}:
     * software never has more WQEs posted than the ring holds, and head is never past what it posted, so such a
     * counter (ahead by more than a ring, or behind) is malformed (a killed program's memory reading as zeros, a
     * driver's stray write). As a refused doorbell, it changes nothing: the queue stays as it was, and a flush never
     * walks more than the ring. Counted each time, told once a queue.
     */
    private void adopt(int recorded) {
        if (((recorded - head) & 0xFFFF) <= size) {
            producer = recorded;
            return;
        }
        fw.stats.inc(FirmwareStat.RECV_RECORDS_MALFORMED);
        if (malformedTold) return;
        malformedTold = true;
        fw.report(String.format("MALFORMED_RECV_DBREC on %s: the doorbell record's receive counter (at 0x%x) is "
                + "0x%x, but 0x%x WQEs are taken and the ring holds %d: a counter more than a ring ahead of them "
                + "(or behind) is ignored", owner, dbrec + DoorbellRecord.RECV, recorded, head, size));
    }

    /** The next WQE, or null if the ring is empty. */
    void take(Consumer<Wqe> done) {
        if (!ready.isEmpty()) {
            done.accept(ready.poll());
            refill();
            return;
        }
        if (fetching) { // the next one is on its way: it goes to the first taker in line when it lands
            waiters.add(done);
            return;
        }
        if (head == producer) {
            readProducer(() -> {
                if (head == producer) done.accept(null);
                else take(done);
            });
            return;
        }
        int index = head;
        head = (head + 1) & 0xFFFF;
        read(index, w -> {
            done.accept(w);
            refill();
        });
    }

    /**
     * Gives the WQEs read ahead to the takers in line, in order; those left over, with nothing more
     * on its way, take again (a read of their own, or the producer counter read anew).
     */
    private void serveWaiters() {
        while (!waiters.isEmpty() && !ready.isEmpty()) waiters.poll().accept(ready.poll());
        if (waiters.isEmpty() || fetching) return;
        List<Consumer<Wqe>> again = new ArrayList<>(waiters);
        waiters.clear();
        for (Consumer<Wqe> t : again) take(t);
    }

    private void read(int index, Consumer<Wqe> done) {
        int stride = 1 << strideLog;
        port.dmaRead(ring + (long) (index & (size - 1)) * stride, stride, r -> {
            List<Sge> sges = r.status() == PciPort.DmaStatus.OK ? RecvWqeFormat.decode(r.data()) : List.of();
            long cap = 0;
            for (Sge s : sges) cap += s.length() & 0xFFFFFFFFL;
            done.accept(new Wqe(index, sges, cap));
        });
    }

    /** Every WQE not yet used, read ahead or not, in order (for a flush); the ring is then empty. */
    List<Integer> drain() {
        List<Integer> out = new ArrayList<>();
        for (Wqe w : ready) out.add(w.index());
        ready.clear();
        if (fetching) { // the read on its way was for the WQE before head
            out.add((head - 1) & 0xFFFF);
            fetching = false;
            epoch++;
        }
        while (head != producer) {
            out.add(head);
            head = (head + 1) & 0xFFFF;
        }
        out.sort(Comparator.comparingInt(i -> (i - out.get(0)) & 0xFFFF));
        return out;
    }

    /** Puts back a WQE just taken (a message that did not use it): it is the next one given out again. */
    void untake(Wqe w) { ready.addFirst(w); }
}
