package nicsim.serve;

import static nicsim.serve.RawWire.call;
import static nicsim.serve.RawWire.send;
import static org.junit.jupiter.api.Assertions.*;

import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A C-provider program (rping, say) reaches serve through six sockets: its libibverbs context, async file and a
 * completion channel, its user context on the adapter, and an rdma_cm file's command and event sockets. Killed,
 * they all close at once and reach serve in any order, before or after its process is gone. Whatever the order,
 * serve lets go of all of it, once: each file and context gone, its user context closed and its session ended
 * once each.
 */
class EndOrderTest {
    static final long SEED = 11;
    static final int ORDERS = 12;
    private Served served;
    private final List<Process> owners = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Process p : owners) p.destroyForcibly();
        if (served != null) assertTrue(served.stop(), "the simulator's loop ended");
    }

    @Test
    void aProgramsSocketsClosedInAnyOrderLeaveNothingHeldAndAreReleasedOnce() throws Exception {
        served = new Served("end-order").start(Served.cluster());
        Random r = new Random(SEED);
        for (int round = 0; round < ORDERS; round++) {
            Process owner = new ProcessBuilder("sleep", "600").start(); // the program, whose memory serve maps
            owners.add(owner);
            List<SocketChannel> files = open((int) owner.pid());
            List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5, 6)); // 6: the process exits
            Collections.shuffle(order, r);
            for (int i : order) {
                if (i < files.size()) files.get(i).close();
                else owner.destroyForcibly().waitFor();
            }
            String what = "round " + round + " (seed " + SEED + "), closed in the order " + order + " (6: the exit)";
            boolean clear = Programs.waitUntil(() -> served.server.attached() == 0 // its report is out, too
                    && served.server.holdings().values().stream().allMatch(n -> n == 0), 30);
            assertTrue(clear, what + ": serve still holds " + served.server.holdings() + "\n" + served.log());
            String log = served.log();
            assertEquals(round + 1, count(log, "closed its user context on node 0"), what + ": once each\n" + log);
            assertEquals(round + 1, count(log, "on node 0 exited after"), what + ": once each\n" + log);
        }
        assertFalse(served.log().contains("serving failed") || served.log().contains("releasing "), served.log());
    }

    /** The six sockets of process {@code pid}: context, async file, channel 1, user context, CM commands, events. */
    private List<SocketChannel> open(int pid) throws Exception {
        List<SocketChannel> out = new ArrayList<>();
        SocketChannel ctx = connect(out);
        int session = call(ctx, Wire.Op.HELLO, new Wire.Out(new WireLayout.HelloRequest(Wire.VERSION, 0, pid, 10, 11))
                .string("rping").put(new WireLayout.OpenArgument(Wire.HELLO_OWN_RINGS))).getInt();
        send(connect(out), Wire.Op.EVENTS, new Wire.Out(new WireLayout.EventFileRequest(session, pid)));
        call(connect(out), Wire.Op.CHANNEL, new Wire.Out(new WireLayout.EventFileRequest(session, pid))
                .put(new WireLayout.ChannelNumber(1)));
        call(connect(out), Wire.Op.UCTX_OPEN, new Wire.Out(new WireLayout.PciOpenRequest(Wire.VERSION, 0, pid, 12))
                .string("rping").put(new WireLayout.OpenArgument(session)));
        int channel = call(connect(out), Wire.Op.CM_OPEN, new Wire.Out(new WireLayout.CmOpenRequest(0, pid, 13, 14))
                .string("rping")).getInt();
        call(connect(out), Wire.Op.CM_EVENTS, new Wire.Out(new WireLayout.CmEventsRequest(channel, pid)));
        return out;
    }

    private SocketChannel connect(List<SocketChannel> files) throws Exception {
        SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(served.socket));
        files.add(ch);
        return ch;
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) n++;
        return n;
    }
}
