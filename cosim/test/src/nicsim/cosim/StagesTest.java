package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import nicsim.adapter.StageLog;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.sim.Trace;
import nicsim.workloads.Options;
import nicsim.workloads.Result;
import nicsim.workloads.Workloads;
import org.junit.jupiter.api.Test;

class StagesTest {
    /** A stage table: its steps, and the stages the timeline kept and did not. */
    record Table(List<Stages.Step> steps, long kept, long dropped) {}

    /** write_bw's stage table of node 0, from the trace or from a log of numbers, the timeline limited to limit. */
    static Table run(boolean log, int limit, int iters, String faults) {
        try (Cluster c = Cluster.builder().nodes(2).profile("cx-gen3x16").seed(3).faults(Faults.parse(faults))
                .build()) {
            World w = c.world();
            Trace t = w.sim.trace();
            StageLog l = null;
            if (log) l = Stages.log(w, w.sim, limit);
            else {
                Stages.record(t);
                t.limit(limit);
            }
            Result r = Workloads.run("write_bw", w, Options.defaults().with(s -> s.size(64).iters(iters)),
                    new PrintStream(OutputStream.nullOutputStream()));
            assertTrue(r.ok(), r.errors().toString());
            return log ? new Table(Stages.steps(l, c.profile(), "node0/"), l.kept(), l.dropped())
                    : new Table(Stages.steps(t, c.profile(), "node0/"), t.entries().size(), t.dropped());
        }
    }

    @Test
    void aLogOfNumbersGivesTheTraceTableWithLossesDuplicatesAndWrappedIndices() {
        // 70000 WQEs: their indices wrap at 65536, and WQEs that share an index share a transaction in the trace
        Table trace = run(false, Stages.LIMIT, 70_000, "drop=0.01,dup=0.01,reorder=0.01");
        assertEquals(0, trace.dropped());
        assertEquals(trace, run(true, Stages.LIMIT, 70_000, "drop=0.01,dup=0.01,reorder=0.01"));
        assertEquals(65536, trace.steps().get(0).wqes());
    }

    @Test
    void aLogKeepsWhatTheTraceKeepsUnderItsLimit() {
        Table trace = run(false, 5001, 2000, "dup=0.02");
        assertTrue(trace.dropped() > 0, trace.toString());
        assertEquals(trace, run(true, 5001, 2000, "dup=0.02"));
    }
}
