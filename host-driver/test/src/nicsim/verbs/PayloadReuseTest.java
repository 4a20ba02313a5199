package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Random;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reliable QP's packets carry their bytes in arrays the requester takes back once acknowledged and gives to later
 * packets (issue 56): each message still lands with the bytes its buffer held when the adapter read them, a program
 * rewriting its buffer after a completion sends the new bytes, and duplicates and resends of a packet whose array
 * went to a later one (under loss, duplication and reordering) place nothing.
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
}
