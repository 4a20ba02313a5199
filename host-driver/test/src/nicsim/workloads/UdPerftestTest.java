package nicsim.workloads;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * perftest's -c UD: ib_send_lat and ib_send_bw over UD QPs, each message one packet with the GRH's
 * room before it in the receive, every byte checked by the workload; the tests perftest has only
 * over RC, and a message past the MTU, are refused with the reason.
 */
class UdPerftestTest {
    private static Result run(String test, Options o) {
        return Workloads.run(test, new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE), o,
                new PrintStream(new ByteArrayOutputStream()));
    }

    @Test
    void sendLatencyAndBandwidthRunOverUd() {
        Result lat = run("send_lat", Options.defaults().with(set -> set.ud(true).size(1024).iters(50)));
        assertTrue(lat.ok(), lat.errors().toString());
        Result rcLat = run("send_lat", Options.defaults().with(set -> set.size(1024).iters(50)));
        // the same payload, plus a datagram segment and the GRH's 40 bytes written before it
        assertEquals(rcLat.rows().get(0).latTypicalUs(), lat.rows().get(0).latTypicalUs(), 0.1);
        Result bw = run("send_bw", Options.defaults().with(set -> set.ud(true).size(4096).iters(300)));
        assertTrue(bw.ok(), bw.errors().toString());
        assertTrue(bw.rows().get(0).bwAvgGbps() > 10, "UD streams: " + bw.rows().get(0));
    }

    @Test
    void whatPerftestRunsOnlyOverRcOrPastTheMtuIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> run("write_bw", Options.defaults().with(set -> set.ud(true).size(64).iters(10))));
        assertEquals("write_bw over UD: perftest has no such test", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> run("send_lat", Options.defaults().with(set -> set.ud(true).size(8192).iters(10))));
        assertEquals("size 8192 is larger than the path MTU 4096 (a UD message is one packet)", e.getMessage());
    }
}
