package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.io.StringWriter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import nicsim.abi.WqeLayout;
import nicsim.adapter.stim.SendQueueHost;
import nicsim.profile.Profiles;
import nicsim.sim.Trace;
import org.junit.jupiter.api.Test;

/** The adapter's send path end to end: a host posts WQEs in its memory and rings doorbells over PCI. */
class AdapterTest {
    static final long QP = 0x15, RING = 0x80_0000;
    static final int UAR = 2, LOG_SIZE = 5; // 32 WQEBBs

    static SendQueueHost host(String profile) {
        SendQueueHost h = new SendQueueHost(Profiles.load(profile), QP, UAR, RING, LOG_SIZE, 11);
        h.sim.trace().enable("wqe");
        return h;
    }

    static SendQueueHost run(String profile) {
        SendQueueHost h = host(profile);
        // each round (at most 24 WQEBBs) fits the 32-WQEBB ring; three rounds wrap it
        h.round(12);
        h.round(9);
        h.round(12);
        return h;
    }

    @Test
    void postedWqesArriveByteForByteInOrder() {
        SendQueueHost h = run("cx-gen3x16");
        List<Adapter.Wqe> got = h.wqes();
        assertEquals(h.posted().size(), got.size(), "errors: " + h.adapter.errors());
        int counter = 0;
        for (int i = 0; i < got.size(); i++) {
            assertEquals(QP, got.get(i).qpn());
            assertEquals(counter, got.get(i).index());
            assertArrayEquals(h.posted().get(i), got.get(i).bytes(), "WQE " + i);
            counter += h.posted().get(i).length / WqeLayout.WQEBB;
        }
        assertTrue(counter > 1 << LOG_SIZE, "the ring wrapped");
        assertTrue(h.adapter.errors().isEmpty(), h.adapter.errors().toString());
    }

    @Test
    void switchingProfileChangesTheTimingAndNothingElse() {
        Set<Long> lastCycles = new HashSet<>();
        List<List<byte[]>> contents = new ArrayList<>();
        for (String p : Profiles.BUILTIN) {
            SendQueueHost h = run(p);
            contents.add(h.wqes().stream().map(Adapter.Wqe::bytes).toList());
            lastCycles.add(h.sim.now());
            assertTrue(h.adapter.errors().isEmpty(), p + ": " + h.adapter.errors());
        }
        for (int i = 1; i < contents.size(); i++) {
            assertEquals(contents.get(0).size(), contents.get(i).size());
            for (int k = 0; k < contents.get(0).size(); k++)
                assertArrayEquals(contents.get(0).get(k), contents.get(i).get(k));
        }
        assertEquals(Profiles.BUILTIN.size(), lastCycles.size(),
                "each profile times the path differently: " + lastCycles);
    }

    @Test
    void everyWqeHasATimelineOfDoorbellFetchAndDelivery() throws Exception {
        SendQueueHost h = run("cx-gen3x16");
        Trace t = h.sim.trace();
        for (Adapter.Wqe w : h.wqes()) {
            List<Trace.Entry> es = t.entries(String.format("qp0x%x/wqe%d", QP, w.index()));
            assertEquals(List.of("doorbell_decoded", "fetch_issued", "delivered"),
                    es.stream().map(Trace.Entry::stage).toList(), "WQE " + w.index());
            long decoded = es.get(0).timePicos(), issued = es.get(1).timePicos(), delivered = es.get(2).timePicos();
            assertTrue(decoded <= issued && issued < delivered, es.toString());
        }
        StringWriter json = new StringWriter();
        t.writeChromeJson(json);
        assertTrue(json.toString().startsWith("{\"displayTimeUnit\":\"ns\",\"traceEvents\":["),
                json.toString().substring(0, 60));
        // a track per block the WQEs met, not one per WQE
        assertEquals(2, json.toString().split("\"thread_name\"").length - 1, json.toString());
        assertTrue(json.toString().contains("{\"name\":\"DoorbellDecoder\"}")
                && json.toString().contains("{\"name\":\"WqeFetcher\"}"));
        StringWriter csv = new StringWriter();
        t.writeCsv(csv);
        assertEquals(1 + 3 * h.posted().size(), csv.toString().split("\n").length);
    }

    @Test
    void aBlueFlameWriteRingsWithItsOwnCtrlSegment() {
        SendQueueHost h = host("cx-gen3x16");
        h.postBlueFlame(WqeLayout.OP_RDMA_WRITE, 3); // ctrl + raddr + 3 SGEs = 80 B: 2 WQEBBs, two 64-byte chunks
        h.postBlueFlame(WqeLayout.OP_SEND, 3);        // 64 B: 1 WQEBB
        h.sim.runUntilIdle(1_000_000_000_000L);
        assertTrue(h.adapter.errors().isEmpty(), h.adapter.errors().toString());
        assertEquals(2, h.wqes().size());
        for (int i = 0; i < 2; i++) assertArrayEquals(h.posted().get(i), h.wqes().get(i).bytes());
        assertEquals(2, h.sim.counters().get("Adapter.blueflame_writes"));
        assertEquals(1, h.sim.counters().get("Adapter.blueflame_continuations"));
    }

    @Test
    void aDoorbellOnAnotherContextsPageFetchesNothing() {
        SendQueueHost h = host("lanai72");
        h.post(WqeLayout.OP_SEND, 1);
        h.ringDoorbell(UAR + 1);
        // without firmware, nothing takes the initialization page
        h.bus.mmioWrite(SendQueueHost.BAR0 + 0x10, new byte[4]);
        h.sim.runUntilIdle(1_000_000_000_000L);
        assertTrue(h.wqes().isEmpty());
        assertEquals(2, h.adapter.errors().size(), h.adapter.errors().toString());
        assertEquals(DoorbellError.Code.NOT_OWNER, ((DoorbellError) h.adapter.errors().get(0)).reason());
        assertTrue(h.adapter.errors().get(1).toString().contains("BAR0+0x10"));
    }
}
