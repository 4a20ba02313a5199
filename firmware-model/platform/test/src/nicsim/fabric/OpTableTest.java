package nicsim.fabric;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;
import nicsim.fabric.Packet.Mask;
import nicsim.fabric.Packet.Op;
import org.junit.jupiter.api.Test;

/** The opcode table: each opcode's headers after the BTH as the IBA gives them, and masks that hang together. */
class OpTableTest {
    static int extensionBytes(Op op) {
        Packet p = new Packet(1, 2, op, 1, 1, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, new byte[0], Packet.RC);
        return p.headerBytes() - Packet.LRH - Packet.BTH;
    }

    @Test
    void everyOpcodeCarriesTheIbaHeadersAfterItsBth() {
        Map<Op, Integer> iba = Map.ofEntries(Map.entry(Op.SEND_FIRST, 0), Map.entry(Op.SEND_MIDDLE, 0),
                Map.entry(Op.SEND_LAST, 0), Map.entry(Op.SEND_LAST_IMM, 4), Map.entry(Op.SEND_ONLY, 0),
                Map.entry(Op.SEND_ONLY_IMM, 4),
                Map.entry(Op.WRITE_FIRST, 16), Map.entry(Op.WRITE_MIDDLE, 0), Map.entry(Op.WRITE_LAST, 0),
                Map.entry(Op.WRITE_LAST_IMM, 4), Map.entry(Op.WRITE_ONLY, 16), Map.entry(Op.WRITE_ONLY_IMM, 20),
                Map.entry(Op.READ_REQ, 16), Map.entry(Op.READ_RESP_FIRST, 4), Map.entry(Op.READ_RESP_MIDDLE, 0),
                Map.entry(Op.READ_RESP_LAST, 4), Map.entry(Op.READ_RESP_ONLY, 4), Map.entry(Op.ACK, 4),
                Map.entry(Op.ATOMIC_ACK, 12), Map.entry(Op.CMP_SWAP, 28), Map.entry(Op.FETCH_ADD, 28),
                Map.entry(Op.SEND_LAST_INV, 4), Map.entry(Op.SEND_ONLY_INV, 4));
        // RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8, ImmDt or IETH 4
        iba.forEach((op, bytes) -> assertEquals(bytes, extensionBytes(op), op.toString()));
    }

    @Test
    void eachOpcodeIsOneKindAndOnePlaceInItsMessage() {
        for (Op op : Op.values()) {
            int kinds = Integer.bitCount(op.mask & (Mask.REQ | Mask.ACK | Mask.READ_RESP | Mask.DC_CONTROL));
            assertEquals(1, kinds, op + " is a request, an acknowledgement, a read response or DC control");
            int places = (op.first() ? 1 : 0) + (op.middle() ? 1 : 0) + (op.last() ? 1 : 0);
            assertEquals(1, places, op + ": first, middle or last");
            int verbs = Integer.bitCount(op.mask & (Mask.SEND | Mask.WRITE | Mask.READ | Mask.ATOMIC));
            if (op.isRequest()) assertEquals(1, verbs, op + " is a SEND, a WRITE, a READ or an atomic");
            if (op.has(Mask.RETH))
                assertTrue(op.starts() && (op.isWrite() || op == Op.READ_REQ), op + ": RETH opens a WRITE or READ");
            if (op.hasImm())
                assertTrue(op.last() && (op.isSend() || op.isWrite()), op + ": immediate data comes with the last one");
        }
    }
}
