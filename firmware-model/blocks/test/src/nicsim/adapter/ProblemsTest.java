package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Map;
import nicsim.adapter.CqePorts.CqError;
import nicsim.abi.WqeLayout;
import nicsim.adapter.Problems.Problem;
import nicsim.adapter.stim.SendQueueHost;
import org.junit.jupiter.api.Test;

/**
 * An adapter outlives the programs that make it report (serve runs for days): it counts every problem, by kind, but
 * keeps only the first and the last {@link Problems#KEPT} reports.
 */
class ProblemsTest {
    private static final CqError DROPPED = new CqError(2, CqError.Code.CQ_IN_ERROR.ordinal());

    @Test
    void underTheBoundEveryReportIsKeptInOrder() {
        Problems p = new Problems();
        for (int i = 0; i < 2 * Problems.KEPT; i++) p.add("MMIO write of 8 bytes at BAR0+0x" + i, 10L * i);
        assertEquals(2 * Problems.KEPT, p.count());
        assertEquals(2 * Problems.KEPT, p.reports().size(), "no line for reports not kept");
        for (int i = 0; i < 2 * Problems.KEPT; i++) {
            assertEquals("MMIO write of 8 bytes at BAR0+0x" + i, p.reports().get(i));
            assertEquals(10L * i, p.kept().get(i).timePicos());
        }
        assertEquals(Map.of("MMIO write of", (long) 2 * Problems.KEPT), p.byKind());
    }

    @Test
    void aFloodIsCountedButOnlyItsEndsAreKept() {
        Problems p = new Problems();
        p.add("CQ 0x2 overrun", 0);
        int flood = 1_000_000;
        for (int i = 1; i <= flood; i++) {
            p.add(DROPPED, i);
            assertTrue(p.kept().size() <= 2 * Problems.KEPT, "kept " + p.kept().size() + " after " + i);
        }
        assertEquals(flood + 1, p.count(), "the count keeps growing");
        assertEquals(Map.of("CqError.CQ_IN_ERROR", (long) flood, "CQ", 1L), p.byKind());
        List<Problem> kept = p.kept();
        assertEquals(2 * Problems.KEPT, kept.size(), "the first and the last");
        assertEquals("CQ 0x2 overrun", kept.get(0).report());
        assertEquals(Problems.KEPT - 1, kept.get(Problems.KEPT - 1).number());
        for (int i = 0; i < Problems.KEPT; i++) // the last ones, oldest first, none missing
            assertEquals(flood + 1 - Problems.KEPT + i, kept.get(Problems.KEPT + i).number());
        assertEquals((long) flood, kept.get(kept.size() - 1).timePicos());

        List<Object> reports = p.reports();
        assertEquals(2 * Problems.KEPT + 1, reports.size(), "one line in place of those not kept");
        assertEquals(String.format("(%,d reports not kept: the adapter keeps the first and last %d)",
                flood + 1 - 2 * Problems.KEPT, Problems.KEPT), reports.get(Problems.KEPT));
        assertSame(DROPPED, reports.get(Problems.KEPT + 1));

        assertEquals(List.of(kept.get(Problems.KEPT)), p.since(0).subList(Problems.KEPT, Problems.KEPT + 1));
        assertEquals(Problems.KEPT, p.since(5_000).size(), "those not kept are skipped");
        assertEquals(3, p.since(flood - 2).size());
        assertEquals(flood - 2, p.since(flood - 2).get(0).number());
        assertTrue(p.since(flood + 1).isEmpty());
    }

    @Test
    void anAdapterRefusingDoorbellsForeverKeepsABoundedWindow() {
        SendQueueHost h = AdapterTest.host("lanai72");
        h.post(WqeLayout.OP_SEND, 1);
        int rings = 2 * Problems.KEPT + 500;
        for (int i = 0; i < rings; i++) { // each on another context's page: refused, NOT_OWNER
            h.ringDoorbell(AdapterTest.UAR + 1);
            h.sim.runUntilIdle(h.sim.now() + 1_000_000_000L);
        }
        assertTrue(h.wqes().isEmpty());
        assertEquals(rings, h.adapter.errorCount());
        assertEquals(Map.of("DoorbellError.NOT_OWNER", (long) rings), h.adapter.problems().byKind());
        List<Object> errors = h.adapter.errors();
        assertEquals(2 * Problems.KEPT + 1, errors.size(), "the first and last kept, a line between");
        assertEquals(DoorbellError.Code.NOT_OWNER, ((DoorbellError) errors.get(0)).reason());
        assertTrue(errors.get(Problems.KEPT).toString().startsWith("(500 reports not kept"), errors.toString());
        assertSame(errors.get(errors.size() - 1), h.adapter.problems().kept().get(2 * Problems.KEPT - 1).report());
    }

    @Test
    void aKindIsTheHardwaresCodeOrATextsLeadingWords() {
        assertEquals("STALE_DBREC on qpn", Problems.kind("STALE_DBREC on qpn 0x12: a doorbell announces"));
        assertEquals("DoorbellError.NOT_OWNER",
                Problems.kind(new DoorbellError(DoorbellError.Code.NOT_OWNER.ordinal(), 0x40, 1)));
        assertEquals("Long", Problems.kind(7L));
    }
}
