package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.driver.World;
import org.junit.jupiter.api.Test;

/**
 * The nodes' CM agents carry CM MADs over the simulated fabric: each message arrives whole, in
 * order, from the LID it was sent from, to another node's agent or to the sender's own (a
 * connection within one node), however many are sent back to back.
 */
class CmAgentTest {
    private static List<CmAgent.Received> take(World w, CmAgent a, int n) {
        List<CmAgent.Received> got = new ArrayList<>();
        long limit = w.now() + 1_000_000_000L;
        while (got.size() < n && w.now() < limit && !w.sim.idle()) {
            w.sim.step();
            got.addAll(a.received());
        }
        return got;
    }

    private static byte[] mad(int attr, int comm) {
        CmMad m = new CmMad(attr);
        m.localComm = comm;
        m.remoteComm = comm + 1;
        m.priv = ("message " + comm).getBytes();
        return m.encode();
    }

    @Test
    void madsArriveWholeAndInOrderAtAnotherNodeAndAtItsOwn() {
        World w = Served.cluster();
        CmAgent a = new CmAgent(w.host(0)), b = new CmAgent(w.host(1));
        for (int i = 0; i < 3; i++) a.send(b.lid, b.qpn(), mad(CmMad.RTU, i));
        List<CmAgent.Received> got = take(w, b, 3);
        assertEquals(3, got.size());
        for (int i = 0; i < 3; i++) {
            CmMad m = CmMad.decode(got.get(i).mad());
            assertEquals(a.lid, got.get(i).slid());
            assertEquals(i, m.localComm);
            assertEquals("message " + i, new String(m.priv, 0, 9));
        }
        for (int i = 0; i < 2; i++) { // to itself: one, then another once the first was taken
            a.send(a.lid, a.qpn(), mad(CmMad.DREQ, 10 + i));
            List<CmAgent.Received> self = take(w, a, 1);
            assertEquals(1, self.size(), "message " + i + " to the agent's own port");
            assertEquals(10 + i, CmMad.decode(self.get(0).mad()).localComm);
        }
    }
}
