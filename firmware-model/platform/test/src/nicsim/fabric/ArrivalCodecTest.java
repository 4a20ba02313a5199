package nicsim.fabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import nicsim.sim.Arrival;
import org.junit.jupiter.api.Test;

/** What one process's ports sent reaches the other processes' switches field for field. */
class ArrivalCodecTest {
    static Packet packet(byte[] payload) {
        return new Packet(3, 7, Packet.Op.WRITE_ONLY_IMM, 0x1234, 0x99, 0xABCDE, true, true, 0x7000_0000_1000L, 0x55,
                4096, -2, 17, 0x1F, 42, 0x0123_4567_89AB_CDEFL, -77, 0x8000_0011, payload, Packet.XRC)
                .withXrcSrqn(12).withDcKey(0xDCL);
    }

    @Test
    void everyFieldCrosses() {
        byte[] payload = new byte[300];
        for (int i = 0; i < payload.length; i++) payload[i] = (byte) (i * 7);
        // a multicast packet's GRH crosses too; the other has none
        Packet withGrh = packet(payload).withGrh(new Grh(0xFE80L << 48, 5, 0xFF12_401B_FFFFL << 16, 1, 3, 0xABCDE, 64));
        var a = new FabricSwitch.Arrival(withGrh, 3, 11, 1_000, 5_000, 366, FabricSwitch.Fate.DUPLICATE, 250);
        var b = new FabricSwitch.Arrival(packet(null), 3, 12, 6_000, 6_500, 60, FabricSwitch.Fate.FORWARD, -1);
        List<FabricSwitch.Arrival> back = ArrivalCodec.decode(ArrivalCodec.encode(List.of(a, b)));
        assertEquals(2, back.size());
        assertArrayEquals(payload, back.get(0).p().payload());
        assertEquals(null, back.get(1).p().payload());
        // records compare arrays by identity: put the sent payload back, and every other field must be equal
        var p0 = back.get(0).p();
        var same = new Packet(p0.slid(), p0.dlid(), p0.op(), p0.destQp(), p0.srcQp(), p0.psn(), p0.ackReq(),
                p0.solicited(), p0.va(), p0.rkey(), p0.dmaLength(), p0.swapAdd(), p0.compare(), p0.aeth(), p0.msn(),
                p0.atomicOrig(), p0.imm(), p0.qkey(), payload, p0.transport(), p0.arrival(), p0.xrcSrqn(), p0.dcKey(),
                p0.grh());
        assertEquals(a, new FabricSwitch.Arrival(same, back.get(0).srcLid(), back.get(0).seq(), back.get(0).headAt(),
                back.get(0).tailAt(), back.get(0).bytes(), back.get(0).fate(), back.get(0).waited()));
        assertEquals(b, back.get(1));
        assertEquals(a.p().grh(), p0.grh(), "a multicast packet's GRH crosses too");
        assertEquals(0, ArrivalCodec.encode(List.of()).length, "an idle window sends nothing");
    }

    @Test
    void aDeliveredPacketIsRefused() {
        Packet p = packet(new byte[8]).arriving(new Arrival(10, 20, 8));
        var a = new FabricSwitch.Arrival(p, 3, 1, 0, 10, 70, FabricSwitch.Fate.FORWARD, -1);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ArrivalCodec.encode(List.of(a)));
        assertEquals("packet WRITE_ONLY_IMM psn 703710 already delivered: only packets on their way in cross processes",
                e.getMessage());
    }
}
