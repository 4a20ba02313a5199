package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Random;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * A node's link taken down and brought back up ({@link nicsim.fabric.Fabric#link}, serve's nicsim port): the
 * adapter writes PORT_ERR, then PORT_ACTIVE, to its event queue, every open context on it gets each as an async
 * event for port 1, ibv_query_port reads DOWN in between, and the fabric drops what the node sends or is sent
 * meanwhile, so an RC requester retries on its ACK timer and completes once the link is back, as on a real fabric.
 */
class LinkDownTest {
    private static final long ACK_TIMEOUT = 4_096_000L << Connect.TIMEOUT;

    private static int lid(Pair p, int node) { return p.world.host(node).firmware.lid(); }

    private static void link(Pair p, int node, boolean up) {
        p.world.host(node).within(() -> p.world.fabric.link(lid(p, node), up));
    }

    @Test
    void aWriteWhileThePeersLinkIsDownCompletesOnceItIsUpAgain() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 65536).up(Mtu.MTU_4096);
        byte[] data = new byte[16384];
        new Random(58).nextBytes(data);
        p.a.buf.write(0, data);
        link(p, 1, false);
        p.world.runFor(10_000_000L); // 10 us: the firmware takes the change and writes PORT_ERR
        assertEquals(PortState.DOWN, p.b.ctx.queryPort(1).state(), "B's port reads DOWN while its link is");
        assertEquals(PortState.ACTIVE, p.a.ctx.queryPort(1).state(), "A's link is untouched");
        assertEquals(new AsyncEvent(EventType.PORT_ERR, -1, -1, -1, 1), p.b.ctx.pollAsyncEvent().orElseThrow());
        assertTrue(p.a.ctx.pollAsyncEvent().isEmpty(), "A's port did not change");

        long t0 = p.world.now();
        p.a.qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(p.a.buf.addr(), data.length, p.a.mr.lkey())).remoteAddr(p.b.buf.addr())
                .rkey(p.b.mr.rkey()));
        p.world.runFor(ACK_TIMEOUT + ACK_TIMEOUT / 2); // sent, dropped at B's link, sent again on the timer, dropped
        long dropped = p.world.sim.counters().get("Fabric.link_down_drops");
        assertEquals(8, dropped, "the WRITE's four packets, twice, lost where B's link is cut");
        assertTrue(p.a.cq.poll(1).isEmpty(), "no completion while B cannot be reached");

        link(p, 1, true);
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertTrue(p.world.now() - t0 < 3 * ACK_TIMEOUT, "completed on the retry after the link came up");
        assertEquals(2, p.world.sim.counters().get("Firmware.timeouts"));
        assertArrayEquals(data, p.b.buf.read(0, data.length), "the retransmitted WRITE's bytes");
        assertEquals(PortState.ACTIVE, p.b.ctx.queryPort(1).state());
        assertEquals(new AsyncEvent(EventType.PORT_ACTIVE, -1, -1, -1, 1), p.b.ctx.pollAsyncEvent().orElseThrow());
        assertEquals(8, p.world.sim.counters().get("Fabric.link_down_drops"), "nothing dropped once it is up");
    }

    @Test
    void everyContextOnTheAdapterGetsThePortsEvents() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        Context second = new Device(p.world.host(1)).open();
        link(p, 1, false);
        p.world.runFor(10_000_000L);
        link(p, 1, true);
        link(p, 1, true); // already up: nothing more
        p.world.runFor(10_000_000L);
        for (Context c : List.of(p.b.ctx, second)) {
            assertEquals(EventType.PORT_ERR, c.pollAsyncEvent().orElseThrow().type());
            assertEquals(EventType.PORT_ACTIVE, c.pollAsyncEvent().orElseThrow().type());
            assertTrue(c.pollAsyncEvent().isEmpty(), "one event per change");
        }
        assertEquals(1, p.world.sim.counters().get("Firmware.link_downs"));
        assertEquals(1, p.world.sim.counters().get("Firmware.link_ups"));
        second.close();
    }

    @Test
    void anAdapterBroughtUpWhileItsLinkIsDownIsToldSoFirst() {
        var world = new World(2, Profiles.load("cx-gen3x16"), 1,
                Faults.NONE);
        var h = world.host(1);
        h.within(() -> world.fabric.link(h.firmware.lid(), false));
        world.runFor(10_000_000L);
        Context c = new Device(h).open(); // the driver's INIT_HCA: PORT_ERR is the event queue's first entry
        world.runFor(10_000_000L);
        assertEquals(PortState.DOWN, c.queryPort(1).state(), "the driver took PORT_ERR before any context opened");
        assertTrue(c.pollAsyncEvent().isEmpty(), "a context hears of changes after it opened only");
        h.within(() -> world.fabric.link(h.firmware.lid(), true));
        world.runFor(10_000_000L);
        assertEquals(PortState.ACTIVE, c.queryPort(1).state());
        assertEquals(EventType.PORT_ACTIVE, c.pollAsyncEvent().orElseThrow().type());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> world.fabric.link(9, false));
        assertTrue(e.getMessage().contains("no port has LID 9"), e.getMessage());
    }
}
