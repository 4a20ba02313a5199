package nicsim.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.WqeFormat.SendWqe;
import nicsim.firmware.SendOp.Stage;
import org.junit.jupiter.api.Test;

/** The requester starts after the ops known to be sent, and never past one that is not. */
class OutstandingTest {
    private static SendOp op(int index) { return new SendOp(index, SendWqe.layout(index, 1, 0, 0, null), 0); }

    /** The indexes of the ops a pass visits, each visit going on. */
    private static List<Integer> pass(Outstanding out) {
        List<Integer> seen = new ArrayList<>();
        out.fromFirstUnsent(o -> { seen.add(o.index); return true; });
        return seen;
    }

    @Test void skipsTheSentLeadOnlyWhileItHolds() {
        Outstanding out = new Outstanding();
        SendOp a = op(0), b = op(1), c = op(2), d = op(3);
        out.add(a); out.add(b); out.add(c);
        a.reach(Stage.SENT);
        b.reach(Stage.DONE);
        assertEquals(List.of(0, 1, 2), pass(out), "nothing known yet: every op is looked at");
        assertEquals(List.of(2), pass(out), "a and b lead the queue sent");
        out.poll();
        assertEquals(List.of(2), pass(out), "b still leads sent after a completes");
        out.addFirst(d);
        assertEquals(List.of(3, 1, 2), pass(out), "an op put back at the head is not skipped");
        d.reach(Stage.SENT);
        pass(out);
        out.remove(b);
        c.reach(Stage.SENT);
        out.add(op(4));
        assertEquals(List.of(3, 2, 4), pass(out), "a removal in the middle forgets the lead");
        assertEquals(List.of(4), pass(out));
    }

    @Test void aVisitThatCompletesOpsKeepsTheLeadTrue() {
        Outstanding out = new Outstanding();
        SendOp a = op(0), b = op(1), c = op(2);
        out.add(a); out.add(b); out.add(c);
        // as an unreliable QP retires each op as it sends it: the visit polls the head
        out.fromFirstUnsent(o -> {
            o.reach(Stage.DONE);
            if (o == a) out.poll();
            return o != b;
        });
        assertEquals(List.of(1, 2), pass(out),
                "a pass that completed ops learns no lead: b is looked at again, and c, not yet sent");
        assertEquals(List.of(2), pass(out), "b now leads sent");
    }
}
