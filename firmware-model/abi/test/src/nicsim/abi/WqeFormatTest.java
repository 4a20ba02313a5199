package nicsim.abi;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Collections;
import java.util.List;
import java.util.Random;
import nicsim.abi.WqeFormat.Av;
import nicsim.abi.WqeFormat.Malformed;
import nicsim.abi.WqeFormat.SendWqe;
import nicsim.abi.WqeFormat.Sge;
import org.junit.jupiter.api.Test;

class WqeFormatTest {
    /** A WQE with a remote address and rkey only where the opcode has a remote-address segment. */
    static SendWqe wqe(int op, List<Sge> sges, byte[] inline) {
        boolean rdma = WqeFormat.hasRaddr(op);
        long raddr = rdma ? 0x7f00_1234_5678L : 0;
        int rkey = rdma ? 0xBEEF01 : 0;
        return new SendWqe(op, 0x1234, 0xABCDE, WqeFormat.CQ_UPDATE, 0x11223344, null, raddr, rkey, 0, 0, sges, inline);
    }

    static int ds(byte[] w) { return w[7] & 0x3f; }

    @Test
    void dsAndSizeFollowTheReferenceExamples() {
        // RC WRITE with 1 SGE: DS 3, 48 B, 1 WQEBB; RC atomic: DS 4, 1 WQEBB; UD SEND with 1 SGE: DS 5, 2 WQEBBs
        // (docs/sources.md#mlx5-send-wqe)
        byte[] write = WqeFormat.encode(wqe(WqeLayout.OP_RDMA_WRITE, List.of(new Sge(0x1000, 64, 7)), null), false);
        assertEquals(3, ds(write));
        assertEquals(64, write.length);
        List<Sge> eight = List.of(new Sge(0x2000, 8, 3));
        SendWqe atomic = new SendWqe(WqeLayout.OP_ATOMIC_FA, 1, 2, 0, 0, null, 0x8000, 9, 5, 0, eight, null);
        assertEquals(4, ds(WqeFormat.encode(atomic, false)));
        Av av = new Av(0x77, 0x11111111, 5);
        SendWqe ud = new SendWqe(WqeLayout.OP_SEND, 1, 2, 0, 0, av, 0, 0, 0, 0, List.of(new Sge(0x3000, 10, 4)), null);
        byte[] udBytes = WqeFormat.encode(ud, true);
        assertEquals(5, ds(udBytes));
        assertEquals(128, udBytes.length);
    }

    @Test
    void everyKindOfWqeRoundTrips() {
        Random r = new Random(4);
        byte[] data = new byte[100];
        r.nextBytes(data);
        List<Sge> sges = List.of(new Sge(0x1000, 10, 1), new Sge(0x2000, 20, 2), new Sge(0x3000, 30, 3));
        int nopFlags = WqeFormat.CQ_UPDATE | WqeFormat.SOLICITED;
        for (SendWqe w : List.of(
                wqe(WqeLayout.OP_SEND, sges, null),
                wqe(WqeLayout.OP_SEND_IMM, List.of(), data),
                wqe(WqeLayout.OP_RDMA_WRITE_IMM, sges, null),
                wqe(WqeLayout.OP_RDMA_WRITE, List.of(), data),
                wqe(WqeLayout.OP_RDMA_READ, sges.subList(0, 1), null),
                new SendWqe(WqeLayout.OP_ATOMIC_CS, 7, 9, WqeFormat.FENCE, 0, null, 0x40, 5, 0x1111, 0x2222,
                        List.of(new Sge(0x50, 8, 6)), null),
                new SendWqe(WqeLayout.OP_NOP, 3, 9, nopFlags, 0, null, 0, 0, 0, 0, List.of(), null))) {
            SendWqe back = WqeFormat.decode(WqeFormat.encode(w, false), false);
            assertEquals(w, back, "opcode 0x" + Integer.toHexString(w.opcode()));
        }
        Av av = new Av(0x123456, 0x11111111, 0x99);
        SendWqe ud = new SendWqe(WqeLayout.OP_SEND_IMM, 1, 2, 0, 5, av, 0, 0, 0, 0, sges, null);
        assertEquals(ud, WqeFormat.decode(WqeFormat.encode(ud, true), true));
    }

    /** A layout UMR with a start address: opmod 2, its address segment after the layout segment, an entry fewer. */
    @Test
    void layoutWithAStartAddressRoundTrips() {
        List<WqeFormat.Klm> two = List.of(new WqeFormat.Klm(0x1000, 5000, 0x301, 0),
                new WqeFormat.Klm(0x9000, 1500, 0x301, 0));
        WqeFormat.MkeyLayout at = new WqeFormat.MkeyLayout(7, 0, two, 0xa5a5_0001_0000_0200L, 6000);
        byte[] w = WqeFormat.encode(SendWqe.layout(5, 0x42, WqeFormat.CQ_UPDATE, 0x1703, at), false);
        assertEquals(WqeFormat.OPMOD_MKEY_LAYOUT_AT, w[0]);
        assertEquals(1 + 2 + 2, ds(w), "ctrl, layout and address segments, two entries");
        assertEquals(0xa5a5_0001_0000_0200L, BigEndian.get64(w, 32));
        assertEquals(6000, BigEndian.get64(w, 40));
        assertEquals(at, WqeFormat.decode(w, false).layout());
        WqeFormat.MkeyLayout zero = new WqeFormat.MkeyLayout(7, 0, two);
        byte[] z = WqeFormat.encode(SendWqe.layout(5, 0x42, 0, 0x1703, zero), false);
        assertEquals(WqeFormat.OPMOD_MKEY_LAYOUT, z[0]);
        assertEquals(zero, WqeFormat.decode(z, false).layout());
        List<WqeFormat.Klm> many = Collections.nCopies(WqeFormat.MAX_LAYOUT_ENTRIES, two.get(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WqeFormat.encode(
                SendWqe.layout(5, 0x42, 0, 0x1703, new WqeFormat.MkeyLayout(7, 0, many, 0x1000, 10)), false));
        assertTrue(e.getMessage().contains("at most " + WqeFormat.MAX_LAYOUT_AT_ENTRIES), e.getMessage());
        w[47] = 0; // length 0
        w[46] = 0;
        assertTrue(assertThrows(Malformed.class, () -> WqeFormat.decode(w, false)).getMessage().contains("length 0"));
    }

    @Test
    void zeroLengthSgesGetNoSegmentAndInlineIsPaddedTo16() {
        byte[] w = WqeFormat.encode(wqe(WqeLayout.OP_SEND, List.of(new Sge(1, 0, 1), new Sge(2, 5, 2)), null), false);
        assertEquals(List.of(new Sge(2, 5, 2)), WqeFormat.decode(w, false).sges());
        byte[] in = WqeFormat.encode(wqe(WqeLayout.OP_SEND, List.of(), new byte[13]), false);
        assertEquals(1 + 2, ds(in), "13 bytes + 4-byte header = 17 -> 32 bytes -> 2 DS");
        assertTrue(WqeFormat.decode(in, false).signaled());
    }

    @Test
    void malformedWqesAreRefusedNamingTheField() {
        byte[] ok = WqeFormat.encode(wqe(WqeLayout.OP_RDMA_WRITE, List.of(new Sge(0x1000, 64, 7)), null), false);
        byte[] bad = ok.clone();
        bad[7] = 9; // DS 9 = 144 bytes in a 64-byte WQE
        assertTrue(refusal(bad).contains("ctrl.ds = 9"));
        byte[] zero = ok.clone();
        zero[7] = 0;
        assertThrows(Malformed.class, () -> WqeFormat.decode(zero, false));
        byte[] noRaddr = ok.clone();
        noRaddr[7] = 1; // an RDMA WRITE with only a ctrl segment
        assertTrue(refusal(noRaddr).contains("remote address"));
        byte[] inline = WqeFormat.encode(wqe(WqeLayout.OP_SEND, List.of(), new byte[20]), false);
        inline[19] = 60; // inline byte_count 60, but the WQE's DS leave 28 bytes
        assertTrue(refusal(inline).contains("inline byte_count 60"));
        List<Sge> sixteen = List.of(new Sge(0x2000, 16, 3));
        SendWqe atomic16 = new SendWqe(WqeLayout.OP_ATOMIC_CS, 1, 2, 0, 0, null, 0x8000, 9, 5, 6, sixteen, null);
        assertTrue(refusal(WqeFormat.encode(atomic16, false)).contains("8-byte"));
    }

    /** Why decoding {@code w} (not UD) is refused. */
    static String refusal(byte[] w) {
        return assertThrows(Malformed.class, () -> WqeFormat.decode(w, false)).getMessage();
    }
}
