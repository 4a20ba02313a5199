package nicsim.workloads;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.stream.Stream;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Every example program runs between two nodes, checks its bytes, and reports figures in its C original's format. */
class WorkloadsTest {
    static Result run(String name, String profile, Options o, StringBuilder text) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Result r = Workloads.run(name, new World(2, Profiles.load(profile), 1, Faults.NONE), o, new PrintStream(b));
        text.append(b);
        return r;
    }

    @ParameterizedTest
    @CsvSource({"rc_pingpong, cx-gen3x16", "ud_pingpong, cx-gen3x16", "write_bw, cx-gen3x16", "write_lat, cx-gen3x16",
            "send_bw, cx-gen3x16", "send_lat, cx-gen3x16", "read_bw, cx-gen3x16", "read_lat, cx-gen3x16",
            "atomic_bw, cx-gen3x16", "rc_pingpong, lanai43", "write_bw, lanai72", "send_lat, lanai72"})
    void runsChecksAndReports(String name, String profile) {
        StringBuilder text = new StringBuilder();
        long size = name.contains("lat") ? 2 : name.startsWith("ud") ? 1024 : 8192;
        Result r = run(name, profile, Options.defaults().with(set -> set.iters(40).size(size)), text);
        assertTrue(r.ok(), name + " on " + profile + ": " + r.errors() + "\n" + text);
        assertEquals(1, r.rows().size());
        Result.Row row = r.rows().get(0);
        assertTrue(row.simPicos() > 0);
        if (name.endsWith("_bw")) {
            assertTrue(row.bwAvgGbps() > 0 && row.bwAvgGbps() <= row.bwPeakGbps() + 1e-9, row.toString());
            assertTrue(text.toString().contains("BW average[Gb/sec]"), text.toString());
        }
        if (name.endsWith("_lat"))
            assertTrue(row.latMinUs() > 0 && row.latMinUs() <= row.latTypicalUs(), row.toString());
        if (name.endsWith("pingpong")) assertTrue(text.toString().contains("usec/iter"), text.toString());
    }

    /**
     * Over a lossy fabric the RC programs recover and still check every byte; ud_pingpong, as rdma-core's, cannot, and
     * says why.
     */
    @ParameterizedTest
    @CsvSource({"rc_pingpong", "write_bw", "write_lat", "send_bw", "send_lat", "read_bw", "read_lat", "atomic_bw",
            "ud_pingpong"})
    void underLossReliableProgramsRecoverAndUdSaysWhatWasLost(String name) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        World w = new World(2, Profiles.load("cx-gen3x16"), 5, Faults.parse("drop=0.02,reorder=0.02"));
        Options o = Options.defaults().with(set -> set.iters(300).size(name.contains("lat") ? 2 : 1024));
        Result r = Workloads.run(name, w, o, new PrintStream(b));
        assertTrue(w.sim.counters().get("Fabric.dropped") > 0, "the fabric lost packets");
        if (name.startsWith("ud"))
            assertTrue(!r.ok() && r.errors().get(0).contains("UD does not retransmit"), r.errors() + "\n" + b);
        else assertTrue(r.ok(), r.errors() + "\n" + b);
    }

    /**
     * Messages spread over QPs round robin: every byte lands where it should, receives on each QP, atomics not lost
     * between QPs.
     */
    @ParameterizedTest
    @CsvSource({"write_bw,1", "write_bw,7", "write_bw,150", "send_bw,3", "send_bw,40", "read_bw,5", "atomic_bw,3"})
    void bandwidthOverManyQpsChecksEveryByte(String name, int qps) {
        StringBuilder text = new StringBuilder();
        Result r = run(name, "cx-gen3x16", Options.defaults().with(set -> set.iters(600).size(2048).qps(qps)), text);
        assertTrue(r.ok(), r.errors() + "\n" + text);
        Result.Row row = r.rows().get(0);
        double least = name.equals("atomic_bw") ? 0.01 : 1;
        assertTrue(row.bwAvgGbps() > least && row.bwPeakGbps() <= 100.0, row.toString());
    }

    static Stream<Arguments> everyWorkloadOnEveryProfile() {
        return Profiles.BUILTIN.stream()
                .flatMap(p -> Workloads.NAMES.stream().filter(w -> !w.equals("pairs_write_bw"))
                .map(w -> Arguments.of(w, p)));
    }

    /** Issue 5's bar: every example program between two nodes on every profile, bytes and completions checked. */
    @ParameterizedTest
    @MethodSource("everyWorkloadOnEveryProfile")
    void everyWorkloadOnEveryProfile(String workload, String profile) {
        StringBuilder text = new StringBuilder();
        Result r = run(workload, profile, Options.defaults().with(set -> set.iters(12).size(1024)), text);
        assertTrue(r.ok(), workload + " on " + profile + ": " + r.errors() + "\n" + text);
        assertTrue(r.rows().get(0).simPicos() > 0);
    }

    @Test
    void everyPairWritesAtOnceAcrossTheSwitch() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Result r = Workloads.run("pairs_write_bw", new World(6, Profiles.load("cx-gen3x16"), 1, Faults.NONE),
                Options.defaults().with(set -> set.iters(60).size(16384)), new PrintStream(b));
        assertTrue(r.ok(), r.errors() + "\n" + b);
        assertTrue(r.rows().get(0).bwAvgGbps() > 100,
                "three pairs through a 100 Gb/s-per-port switch: " + r.rows().get(0));
    }

    /** Fewer writes than the eight buffer slots: only the slots written are compared (they were all, and failed). */
    @Test
    void pairsWithFewerWritesThanSlotsCheckTheSlotsWritten() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Result r = Workloads.run("pairs_write_bw", new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE),
                Options.defaults().with(set -> set.iters(3).size(65536)), new PrintStream(b));
        assertTrue(r.ok(), r.errors() + "\n" + b);
    }

    @ParameterizedTest
    @CsvSource({"1", "300"})
    void writeBwOverManyMrsChecksEveryByte(int mrs) {
        StringBuilder text = new StringBuilder();
        Options o = Options.defaults().with(set -> set.iters(400).size(4096).mrs(mrs));
        Result r = run("write_bw", "cx-gen3x16", o, text);
        assertTrue(r.ok(), r.errors() + "\n" + text);
    }

    @ParameterizedTest
    @CsvSource({"write_bw", "send_lat"})
    void theSameRunGivesTheSameFigures(String name) {
        Options o = Options.defaults().with(set -> set.iters(30).size(4096));
        StringBuilder a = new StringBuilder(), b = new StringBuilder();
        Result x = run(name, "cx-gen3x16", o, a), y = run(name, "cx-gen3x16", o, b);
        assertEquals(x.rows(), y.rows());
        assertEquals(a.toString(), b.toString());
    }

    @Test
    void sendBwKeepsUpWithWriteBwOnLongMessages() {
        // the responder takes a SEND's next packet once this one's writes are under way, as it does a WRITE's
        Options o = Options.defaults().with(set -> set.iters(200).size(65536));
        StringBuilder text = new StringBuilder();
        Result send = run("send_bw", "cx-gen3x16", o, text), write = run("write_bw", "cx-gen3x16", o, text);
        assertTrue(send.ok() && write.ok(), send.errors() + " " + write.errors() + "\n" + text);
        double ratio = send.rows().get(0).bwAvgGbps() / write.rows().get(0).bwAvgGbps();
        assertTrue(ratio > 0.9, "send_bw / write_bw at 64 KiB = " + ratio + "\n" + text);
    }
}
