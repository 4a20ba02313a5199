package nicsim.vm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The options that join a guest to attached programs, and the QEMU rules they become (no guest booted). */
class ForwardsTest {
    @Test void portsAndTargetsParseAndBadOnesAreNamed() {
        assertEquals(List.of(18515, 7174), Forwards.parsePorts("--forward-in", "18515, 7174"));
        assertEquals(List.of(new Forwards.Target(0, 18515), new Forwards.Target(2, 80)),
                Forwards.parseTargets("--forward-out", "0:18515,2:80"));
        assertEquals("--forward-in port '70000' must be a number 1..65535", assertThrows(
                IllegalArgumentException.class, () -> Forwards.parsePorts("--forward-in", "18515,70000")).getMessage());
        assertEquals("--forward-in '1,,2' has an empty item", assertThrows(IllegalArgumentException.class,
                () -> Forwards.parsePorts("--forward-in", "1,,2")).getMessage());
        assertEquals("--forward-out '18515' must be NODE:PORT (e.g. 0:18515)", assertThrows(
                IllegalArgumentException.class, () -> Forwards.parseTargets("--forward-out", "18515")).getMessage());
        assertEquals("--forward-out 'x:1': node 'x' is not a number", assertThrows(IllegalArgumentException.class,
                () -> Forwards.parseTargets("--forward-out", "x:1")).getMessage());
    }

    @Test void aGuestCannotForwardToItsOwnNodeNorToANodeTheFabricCannotHave() {
        assertEquals("--forward-out 1:5000: node 1 is this guest's own node; its programs run here, not under "
                + "attach", assertThrows(IllegalArgumentException.class,
                () -> new Forwards(List.of(), List.of(new Forwards.Target(1, 5000))).check(1)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> new Forwards(List.of(), List.of(new Forwards.Target(64, 5000))).check(1)).getMessage()
                .startsWith("--forward-out 64:5000: node 64 must be 0..63"));
        assertEquals("--forward-in [5000, 5000] names a port twice", assertThrows(IllegalArgumentException.class,
                () -> new Forwards(List.of(5000, 5000), List.of()).check(1)).getMessage());
    }

    /** Only loopback addresses on the host side, restrict=on, and the comma inside socat's address doubled. */
    @Test void theRulesStayOnLoopbackAndRestrictTheRest() {
        Forwards f = new Forwards(List.of(18515), List.of(new Forwards.Target(0, 18516), new Forwards.Target(2, 9)));
        List<String> q = f.qemu(1);
        assertEquals("-netdev", q.get(0));
        String net = q.get(1);
        assertTrue(net.startsWith("user,id=net1,restrict=on,"), net);
        assertTrue(net.contains(",hostfwd=tcp:127.77.0.2:18515-10.77.0.2:18515"), net);
        assertTrue(net.contains(",guestfwd=tcp:10.77.0.1:18516-cmd:socat -lf /dev/null - TCP:127.77.0.1:18516,,"
                + "bind=127.77.0.2"), net);
        assertTrue(net.contains(",guestfwd=tcp:10.77.0.3:9-cmd:"), net);
        assertEquals("nicsim.forward=0,2", f.kernelArg());
        assertEquals("nicsim.forward=none", new Forwards(List.of(1), List.of()).kernelArg());
    }

    @Test void aTakenPortIsNamedBeforeQemuStarts() throws IOException {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress("127.77.0.3", 0));
            int port = taken.getLocalPort();
            IOException e = assertThrows(IOException.class, () -> new Forwards(List.of(port), List.of()).checkFree(2));
            assertTrue(e.getMessage().startsWith("--forward-in " + port + ": 127.77.0.3:" + port + " is taken"),
                    e.getMessage());
        }
    }
}
