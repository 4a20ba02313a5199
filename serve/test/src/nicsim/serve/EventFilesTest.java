package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A completion event reaches a program's file only once the memory the adapter wrote meanwhile is the
 * program's: QEMU's RDMA migration, woken by a CQ event while serve still wrote its held pages back in address
 * order, found the CQE and not yet the message, and read the header of the message before ("too long length:
 * 301989888", docs/attach.md R17).
 */
class EventFilesTest {
    @Test
    void anEventThatCameWhileMemoryWasHeldIsWrittenOnlyOnRelease() {
        Transport transport = new Transport(System.err);
        List<Long> sent = new ArrayList<>();
        transport.sent = (c, b) -> sent.add(b.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong());
        EventFiles files = new EventFiles(null, new Handles());
        files.channelTo(5, transport.replayed(1));
        files.cqEvent(5, 11);
        assertEquals(List.of(11L), sent, "not held: written at once, as the kernel writes it");
        files.hold();
        files.cqEvent(5, 12);
        files.cqEvent(5, 13);
        assertEquals(List.of(11L), sent, "held: the program is not woken yet");
        assertEquals(3, files.written(), "counted when they came, so the run that made them stops");
        files.release();
        assertEquals(List.of(11L, 12L, 13L), sent, "released in order once the memory settled");
        files.release();
        files.cqEvent(5, 14);
        assertEquals(List.of(11L, 12L, 13L, 14L), sent, "after release, at once again");
    }
}
