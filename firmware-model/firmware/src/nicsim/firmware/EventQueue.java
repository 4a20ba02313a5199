package nicsim.firmware;

import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Eqe64;
import nicsim.abi.EqeType;
import nicsim.adapter.Adapter;
import nicsim.sim.Counters;

/**
 * The async event queue in host memory: 64-byte EQEs (byte 0 the type, bytes 4..7 the resource,
 * byte 63 the owner bit), each followed by the queue's MSI-X vector 0.
 */
final class EventQueue {
    private final Adapter adapter;
    private final Counters.Ref events;
    private final Consumer<String> log;
    private long addr = -1;
    private int logSize, producer;

    EventQueue(Adapter adapter, FirmwareStat.Stats stats, Consumer<String> log) {
        this.adapter = adapter;
        this.events = stats.ref(FirmwareStat.EVENTS);
        this.log = log;
    }

    /**
     * INIT_HCA placed the ring: a new ring, whose first entry is slot 0 with owner bit 0, as its driver
     * expects, even when an earlier driver's ring (before TEARDOWN_HCA) took events.
     */
    void init(long addr, int logSize) {
        this.addr = addr;
        this.logSize = logSize;
        this.producer = 0;
    }

    /** TEARDOWN_HCA: the ring is the driver's memory again; later events are only logged. */
    void stop() { addr = -1; }

    /** Posts an event (before INIT_HCA it is only logged). */
    void post(EqeType type, long resource) {
        events.inc();
        log.accept("event " + type + " for 0x" + Long.toHexString(resource));
        if (addr < 0) return;
        byte[] eqe = new byte[Eqe64.BYTES];
        eqe[Eqe64.TYPE] = (byte) type.value();
        BigEndian.put32(eqe, Eqe64.RESOURCE, resource);
        int size = 1 << logSize;
        eqe[Eqe64.OWNER] = (byte) (((producer & size) != 0 ? 1 : 0) | Eqe64.WRITTEN);
        long at = addr + (long) (producer & (size - 1)) * Eqe64.BYTES;
        producer++;
        adapter.port().dmaWrite(at, eqe, r -> {});
        adapter.port().msix(0); // the event queue's vector, after its entry (posted writes stay in order)
    }
}
