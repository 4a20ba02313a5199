package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import nicsim.fabric.Fabric;
import nicsim.fabric.Faults;
import nicsim.fabric.Packet;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reliable QP's packets carry their bytes in arrays the requester takes back once acknowledged and gives to later
 * packets (issue 56): each message still lands with the bytes its buffer held when the adapter read them, a program
 * rewriting its buffer after a completion sends the new bytes, and duplicates and resends of a packet whose array
 * went to a later one (under loss, duplication and reordering) place nothing. An array goes to a later packet only
 * once no copy of the packets that carried it is in the fabric: every packet delivered carries the bytes it was sent
 * with, a go-back-N resend still crossing the fabric when its message's ACK came included.
 */
class PayloadReuseTest {
    static final int MSG = 16 * 1024, ROUNDS = 6, BATCH = 4;

    @ParameterizedTest
    @ValueSource(strings = {"none", "drop=0.03,dup=0.05,reorder=0.05"})
    void everyMessageLandsWithTheBytesItsBufferHeldWhenRead(String faults) {
        Pair p = new Pair(Profiles.load("cx-gen3x16"), QpType.RC, ROUNDS * BATCH * MSG, Faults.parse(faults), 7,
                Pair.defaults());
        p.up(Mtu.MTU_1024);
        Random rnd = new Random(9);
        byte[][] sent = new byte[ROUNDS * BATCH][];
        for (int r = 0; r < ROUNDS; r++) {
            // a batch in flight at once: each from its own source region, rewritten for every round, after the
            // completions of the round before (the program may reuse a buffer once its WRITE completed)
            for (int i = 0; i < BATCH; i++) {
                int m = r * BATCH + i;
                sent[m] = new byte[MSG];
                rnd.nextBytes(sent[m]);
                p.a.buf.write((long) i * MSG, sent[m]);
                boolean send = m % 3 == 2;
                if (send) p.b.qp.postRecv(new RecvWr().wrId(m).sgList(new Sge(p.b.buf.addr() + (long) m * MSG, MSG,
                        p.b.mr.lkey())));
                SendWr wr = Wrs.signaled(m, send ? WrOpcode.SEND : WrOpcode.RDMA_WRITE)
                        .sgList(new Sge(p.a.buf.addr() + (long) i * MSG, MSG, p.a.mr.lkey()));
                p.a.qp.postSend(send ? wr : wr.remoteAddr(p.b.buf.addr() + (long) m * MSG).rkey(p.b.mr.rkey()));
            }
            List<WorkCompletion> wc = p.await(p.a.cq, BATCH);
            for (WorkCompletion c : wc) assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
        }
        for (int m = 0; m < sent.length; m++)
            assertArrayEquals(sent[m], p.b.buf.read((long) m * MSG, MSG), "message " + m + " as its buffer held it");
        if (!faults.equals("none")) { // the resends and duplicates the reuse must survive did happen
            assertTrue(p.world.sim.counters().get("Firmware.retransmits") > 0, "retransmits");
            assertTrue(p.world.sim.counters().get("Firmware.duplicates") > 0, "duplicates at B");
        }
        long[] arrays = p.world.host(0).firmware.payloadArrays();
        assertEquals(ROUNDS * BATCH * MSG / 1024, arrays[0], "an array per packet sent once (resends reuse theirs)");
        assertTrue(arrays[1] >= arrays[0] / 2, "later packets took the arrays earlier ones gave back: " + arrays[1]);
    }

    /**
     * Every copy the fabric delivers carries the bytes its packet had when it was sent, watched on the wire
     * ({@link Fabric.Tap}). Seed 3 drops enough to make go-back-N resends, some of them still in the fabric when the
     * ACK of their message came back (when arrays went back with the ACK, a resent WRITE_LAST was delivered carrying
     * a later message's bytes).
     */
    @Test
    void everyDeliveredPacketCarriesTheBytesItWasSentWith() {
        Pair p = new Pair(Profiles.load("cx-gen3x16"), QpType.RC, ROUNDS * BATCH * MSG, Faults.parse("drop=0.05"), 3,
                Pair.defaults());
        p.up(Mtu.MTU_1024);
        Map<String, byte[]> sentWith = new HashMap<>();
        List<String> changed = new ArrayList<>();
        int[] delivered = {0};
        p.world.fabric.tap(new Fabric.Tap() {
            @Override public void sent(Packet k) {
                if (k.payload().length > 0) sentWith.put(key(k), k.payload().clone());
            }

            @Override public void delivered(Packet k) {
                if (k.payload().length == 0) return;
                delivered[0]++;
                if (!Arrays.equals(sentWith.get(key(k)), k.payload())) changed.add(k.toString());
            }
        });
        Random rnd = new Random(5);
        for (int r = 0; r < ROUNDS * 2; r++) {
            for (int i = 0; i < BATCH; i++) { // each round rewrites the source: a reused array gets new bytes
                byte[] b = new byte[MSG];
                rnd.nextBytes(b);
                p.a.buf.write((long) i * MSG, b);
                p.a.qp.postSend(Wrs.signaled(r * BATCH + i, WrOpcode.RDMA_WRITE)
                        .sgList(new Sge(p.a.buf.addr() + (long) i * MSG, MSG, p.a.mr.lkey()))
                        .remoteAddr(p.b.buf.addr() + (long) i * MSG).rkey(p.b.mr.rkey()));
            }
            for (WorkCompletion c : p.await(p.a.cq, BATCH)) assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
        }
        p.world.runFor(1_000_000_000L); // what is still in the fabric arrives
        assertTrue(p.world.sim.counters().get("Firmware.retransmits") > 0, "retransmits");
        assertTrue(delivered[0] > ROUNDS * 2 * BATCH * MSG / 1024, "resent packets delivered: " + delivered[0]);
        assertEquals(List.of(), changed, "packets delivered with bytes they were not sent with");
        assertTrue(p.world.host(0).firmware.payloadArrays()[1] > 0, "arrays were reused");
    }

    private static String key(Packet k) { return k.slid() + "/" + k.srcQp() + "/" + k.psn() + "/" + k.op(); }
}
