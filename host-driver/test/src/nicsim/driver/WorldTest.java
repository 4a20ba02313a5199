package nicsim.driver;

import static org.junit.jupiter.api.Assertions.*;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import nicsim.abi.Cmd;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import nicsim.sim.Simulator;
import nicsim.workloads.Options;
import nicsim.workloads.Workloads;
import org.junit.jupiter.api.Test;

class WorldTest {
    @Test
    void aConditionOnSomeHostsIsLookedAtOnlyWhenTheirMemoryIsWritten() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        w.runFor(1_000_000); // the adapters settle
        long a = w.host(0).allocPhysical(64, 64), b = w.host(1).allocPhysical(64, 64);
        for (int i = 1; i <= 5; i++) {
            long t = w.now() + i * 1_000_000L;
            byte v = (byte) i;
            w.sim.schedule(t, () -> w.host(1).memory.write(b, new byte[]{v})); // the other host: never looked for
        }
        w.sim.schedule(w.now() + 3_500_000L, () -> w.host(0).memory.write(a, new byte[]{9}));
        List<Long> looks = new ArrayList<>();
        w.runUntilMemoryHolds(new int[]{0}, () -> {
            looks.add(w.now());
            return w.host(0).memory.read(a, 1)[0] == 9;
        }, 10_000_000L);
        assertEquals(2, looks.size(), "a look at the start and one after host 0's write, none for host 1's: " + looks);
        assertEquals(looks.get(0) + 3_500_000L, looks.get(1));
    }

    @Test
    void aWaitWatchesItsOwnHostsOnlyWhileItRunsAndAWaitOnAllLooksAfterAnyWrite() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        w.runFor(1_000_000); // the adapters settle
        long a = w.host(0).allocPhysical(64, 64), b = w.host(1).allocPhysical(64, 64);
        long t0 = w.now();
        for (int i = 1; i <= 4; i++) { // host 0 written at t0 + 1, 2, 3, 4 us; host 1 at t0 + 2.5 and 5.5 us
            byte v = (byte) i;
            w.sim.schedule(t0 + i * 1_000_000L, () -> w.host(0).memory.write(a, new byte[]{v}));
        }
        w.sim.schedule(t0 + 2_500_000L, () -> w.host(1).memory.write(b, new byte[]{7}));
        w.sim.schedule(t0 + 5_500_000L, () -> w.host(1).memory.write(b, new byte[]{8}));
        List<Long> looks = new ArrayList<>();
        w.runUntilMemoryHolds(new int[]{0}, () -> {
            looks.add(w.now() - t0);
            return w.host(0).memory.read(a, 1)[0] == 1;
        }, 10_000_000L);
        assertEquals(List.of(0L, 1_000_000L), looks, "host 0's wait: at its start and after host 0's first write");
        looks.clear();
        w.runUntilMemoryHolds(new int[]{1}, () -> {
            looks.add(w.now() - t0);
            return w.host(1).memory.read(b, 1)[0] == 7;
        }, 10_000_000L);
        assertEquals(List.of(1_000_000L, 2_500_000L), looks,
                "host 1's wait: not woken by host 0's write at 2 us, though host 0 was watched before");
        looks.clear();
        w.runUntilMemoryHolds(() -> {
            looks.add(w.now() - t0);
            return w.host(1).memory.read(b, 1)[0] == 8;
        }, 10_000_000L);
        assertEquals(List.of(2_500_000L, 3_000_000L, 4_000_000L, 5_500_000L), looks,
                "a wait on every host: after each host's writes");
    }

    @Test
    void aWaitInsideALookWatchesItsHostsThenTheOuterWaitsAgain() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        w.runFor(1_000_000); // the adapters settle
        long a = w.host(0).allocPhysical(64, 64), b = w.host(1).allocPhysical(64, 64);
        long t0 = w.now();
        w.sim.schedule(t0 + 1_000_000L, () -> w.host(0).memory.write(a, new byte[]{1})); // during the inner wait
        w.sim.schedule(t0 + 2_000_000L, () -> w.host(1).memory.write(b, new byte[]{1})); // ends the inner wait
        w.sim.schedule(t0 + 3_000_000L, () -> w.host(1).memory.write(b, new byte[]{2})); // the outer: not watched
        w.sim.schedule(t0 + 4_000_000L, () -> w.host(0).memory.write(a, new byte[]{2}));
        List<Long> inner = new ArrayList<>(), outer = new ArrayList<>();
        w.runUntilMemoryHolds(new int[]{0}, () -> {
            outer.add(w.now() - t0);
            if (outer.size() == 1) w.runUntilMemoryHolds(new int[]{1}, () -> {
                inner.add(w.now() - t0);
                return w.host(1).memory.read(b, 1)[0] == 1;
            }, 10_000_000L);
            return w.host(0).memory.read(a, 1)[0] == 2;
        }, 10_000_000L);
        assertEquals(List.of(0L, 2_000_000L), inner, "the inner wait: host 1 only");
        assertEquals(List.of(0L, 4_000_000L), outer, "the outer wait: host 0 again, after the inner one's end");
    }

    @Test
    void aFaultIsChargedToItsNodeAndAResetNodeRunsAgain() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        Options o = Options.defaults().with(set -> set.size(4096).iters(200));
        Host old = w.host(0);
        old.adapter.cqeWriter().injectFault("test", 0);
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        IllegalStateException x = assertThrows(IllegalStateException.class,
                () -> Workloads.run("write_bw", w, o, quiet));
        Simulator.Fault f = w.sim.takeFault();
        assertNotNull(f, "the exception came out of an event: " + x);
        assertTrue(f.cause().getMessage().startsWith("fault injected into CqeWriter"),
                f.cause() + " (the workload: " + x + ")");
        assertSame(old, w.hostOf(f), "the CqeWriter's clock edge is node 0's");
        assertNull(w.sim.takeFault(), "taken once");

        Host fresh = w.reset(0);
        long oldEdges = old.adapter.core().edgesRun() + old.adapter.core().edgesCoasted();
        assertNotSame(old, fresh);
        assertSame(fresh, w.host(0));
        assertTrue(old.scope.retired());
        assertFalse(fresh.probed(), "a fresh adapter: no driver yet");
        var r = Workloads.run("write_bw", w, o, quiet);
        assertTrue(r.ok(), "node 0 after its reset, with node 1 as it was: " + r.errors());
        assertTrue(r.rows().get(0).bwAvgGbps() > 1, "bytes moved: " + r.rows());
        assertEquals(oldEdges, old.adapter.core().edgesRun() + old.adapter.core().edgesCoasted(),
                "the old adapter's clock never ticked again");
    }

    @Test
    void anotherNodesFaultDoesNotEndANodesCommand() {
        World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        Driver d = w.host(1).driver(); // probing ran its first commands
        Host other = w.host(0);
        Simulator.Scope before = w.sim.enter(other.scope); // an event of node 0's that throws during node 1's command
        try {
            w.sim.schedule(w.now() + 1_000, () -> { throw new IllegalStateException("node 0's block broke"); });
        } finally {
            w.sim.leave(before);
        }
        var caps = d.command(Cmd.QUERY_HCA_CAP, Cmd.EMPTY, new Cmd.Empty(),
                Cmd.HCA_CAP);
        assertNotNull(caps, "node 1's command answered");
        Simulator.Fault f = w.sim.takeFault();
        assertNotNull(f, "node 0's fault is kept for whoever resets it");
        assertSame(other, w.hostOf(f));
        assertTrue(other.scope.retired(), "none of node 0's events runs on after its fault");
        assertFalse(w.host(1).scope.retired());
        assertNull(w.sim.takeFault(), "taken once");

        Simulator.Scope own = w.sim.enter(w.host(1).scope); // a fault of the command's own node still ends it
        try {
            w.sim.schedule(w.now() + 1_000, () -> { throw new IllegalStateException("node 1's block broke"); });
        } finally {
            w.sim.leave(own);
        }
        assertThrows(RuntimeException.class, () -> d.command(Cmd.QUERY_HCA_CAP, Cmd.EMPTY,
                new Cmd.Empty(), Cmd.HCA_CAP));
        assertSame(w.host(1), w.hostOf(w.sim.takeFault()));
    }
}
