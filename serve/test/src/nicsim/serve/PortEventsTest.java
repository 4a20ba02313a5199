package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import nicsim.serve.Programs.Run;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A node's link pulled and plugged back while programs run (nicsim port, {@link PortControl}): rdma-core's
 * ibv_asyncwatch on that node prints IBV_EVENT_PORT_ERR then IBV_EVENT_PORT_ACTIVE for port 1, ibv_devinfo and the
 * node's sysfs read the port DOWN in between and ACTIVE after, the other node's port stays ACTIVE, and a node that
 * does not exist is refused with ENODEV.
 */
class PortEventsTest {
    private Served served;

    @AfterEach
    void stopServing() throws Exception { if (served != null) served.stop(); }

    /** With the provider's C driver (user contexts on the PCI face) and with its Java one (every verb a request). */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aLinkDownAndUpIsPortErrThenPortActiveOnTheNodesAsyncFile(boolean c) throws Exception {
        served = new Served("nicsim-portev").start(Served.cluster());
        Run watch = start(c, 1, "ibv_asyncwatch", "-d", "nicsim0");
        Programs.waitUntil(() -> watch.output().contains("async event FD"), 60); // its context and async file are open
        var state = Attach.sysfsRoot(served.socket, 1).resolve("class/infiniband/nicsim0/ports/1/state");
        assertEquals("4: ACTIVE", Files.readString(state).strip());

        PortControl.link(served.socket, 1, false);
        Programs.waitUntil(() -> watch.output().contains("IBV_EVENT_PORT_ERR"), 60);
        assertTrue(watch.output().contains("event_type IBV_EVENT_PORT_ERR (10), port 1"), watch.output()
                + served.log());
        assertEquals("1: DOWN", Files.readString(state).strip(), "sysfs reads the port down");
        String down = Programs.runOk(served, 1, Programs.withDriver(c, "ibv_devinfo", "-v"));
        assertTrue(down.contains("PORT_DOWN (1)") && down.contains("phys_state:\t\tPOLLING (2)"), down);
        String other = Programs.runOk(served, 0, Programs.withDriver(c, "ibv_devinfo"));
        assertTrue(other.contains("PORT_ACTIVE (4)"), "node 0's link is untouched: " + other);

        PortControl.link(served.socket, 1, true);
        Programs.waitUntil(() -> watch.output().contains("IBV_EVENT_PORT_ACTIVE"), 60);
        assertTrue(watch.output().contains("event_type IBV_EVENT_PORT_ACTIVE (9), port 1"), watch.output());
        assertEquals("4: ACTIVE", Files.readString(state).strip());
        String up = Programs.runOk(served, 1, Programs.withDriver(c, "ibv_devinfo"));
        assertTrue(up.contains("PORT_ACTIVE (4)"), up);
        assertTrue(served.log().contains("node 1's link went down at ") && served.log().contains(
                "node 1's link came up at "), served.log());

        VerbsException e = assertThrows(VerbsException.class, () -> PortControl.link(served.socket, 7, false));
        assertEquals(Errno.ENODEV, e.errno(), e.getMessage());
        watch.process().destroy();
        watch.await();
        served.awaitReleased();
    }

    private Run start(boolean c, int node, String... program) throws Exception {
        return Programs.start(served, node, false, Programs.withDriver(c, program));
    }
}
