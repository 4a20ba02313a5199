package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * rsockets as Debian ships it (rdmacm-utils' rstream) between two nodes: RDMA writes with immediate
 * into the peer's ring, credits coming back as inline writes, zero-SGE receives, a CQ shared by the
 * send and receive queues, and the teardown that once broke the CqeWriter's input contract and
 * stopped serve.
 */
class RstreamTest {
    private Served served;

    @BeforeEach
    void serve() throws Exception { served = new Served("nicsim-rstream").start(Served.cluster()); }

    @AfterEach
    void stopServing() throws Exception { served.stop(); }

    @Test
    void rstreamStreams200TransfersOf4KiBFromNode0ToNode1() throws Exception {
        String port = Integer.toString(Programs.port() + 50);
        // rstream's server runs the client's test only when given the same options (without them it runs
        // its own series of tests, and closes the connection under a client running another)
        Run srv = Programs.start(served, 1, false, "rstream", "-b", "0.0.0.0", "-p", port, "-S", "4096", "-C", "200");
        long t0 = System.nanoTime();
        String listening = "listens on any address, port " + port;
        while (!served.log().contains(listening) && System.nanoTime() - t0 < 30_000_000_000L) {
            assertTrue(srv.process().isAlive(), "rstream's server ended before listening:\n" + srv.output());
            Thread.sleep(20);
        }
        Run cli = Programs.start(served, 0, false, "rstream", "-s", "node1", "-p", port, "-S", "4096", "-C", "200");
        assertEquals(0, cli.await(), cli.output() + srv.output() + served.log());
        assertEquals(0, srv.await(), srv.output());
        assertTrue(cli.output().matches("(?s).*custom\\s+4k\\s+200\\s+1\\s+1.5m.*"),
                "200 transfers of 4 KiB each way (rstream counts 1.5m): " + cli.output());
        assertFalse(served.log().contains("faulted"), served.log());
        served.awaitReleased();
    }
}
