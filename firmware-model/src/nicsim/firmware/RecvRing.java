package nicsim.firmware;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import nicsim.adapter.BigEndian;
import nicsim.adapter.WqeFormat.Sge;
import nicsim.host.PciPort;

/**
 * A receive ring in host memory as the firmware reads it (a QP's receive queue or an SRQ):
 * 2^logSize WQEs of 2^strideLog bytes, each a list of 16-byte data segments (byte count, lkey,
 * address) ended by a terminator (count 0, lkey 0x100) when shorter than the stride. The driver
 * publishes its 16-bit producer counter in the doorbell record (no MMIO, as mlx5); the firmware
 * reads the record only when it has used every WQE it knew of.
 */
final class RecvRing {
    /** A receive WQE: its counter, scatter list and total room. */
    record Wqe(int index, List<Sge> sges, long capacity) {}

    private final PciPort port;
    final long ring, dbrec;
    final int size, strideLog;
    int head, producer;

    RecvRing(PciPort port, long ring, int size, int strideLog, long dbrec) {
        this.port = port;
        this.ring = ring;
        this.size = size;
        this.strideLog = strideLog;
        this.dbrec = dbrec;
    }

    /** WQEs known to be posted and not yet taken. */
    int known() { return (producer - head) & 0xFFFF; }

    void reset() { head = producer = 0; }

    /** Re-reads the producer counter from the doorbell record, then runs {@code then}. */
    void readProducer(Runnable then) {
        port.dmaRead(dbrec, 4, r -> {
            if (r.status() == PciPort.DmaStatus.OK) producer = (int) (BigEndian.get32(r.data(), 0) & 0xFFFF);
            then.run();
        });
    }

    /** The next WQE, or null if the ring is empty. */
    void take(Consumer<Wqe> done) {
        if (head == producer) {
            readProducer(() -> {
                if (head == producer) done.accept(null);
                else take(done);
            });
            return;
        }
        int index = head;
        head = (head + 1) & 0xFFFF;
        int stride = 1 << strideLog;
        port.dmaRead(ring + (long) (index & (size - 1)) * stride, stride, r -> {
            List<Sge> sges = new ArrayList<>();
            long cap = 0;
            if (r.status() == PciPort.DmaStatus.OK) {
                for (int at = 0; at + 16 <= stride; at += 16) {
                    long count = BigEndian.get32(r.data(), at);
                    int lkey = (int) BigEndian.get32(r.data(), at + 4);
                    if (count == 0 && lkey == 0x100) break;
                    sges.add(new Sge(BigEndian.get64(r.data(), at + 8), (int) count, lkey));
                    cap += count;
                }
            }
            done.accept(new Wqe(index, sges, cap));
        });
    }

    /** Puts back the WQE just taken (a message that did not use it). */
    void untake() { head = (head - 1) & 0xFFFF; }
}
