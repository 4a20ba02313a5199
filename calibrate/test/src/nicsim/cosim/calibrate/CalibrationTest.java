package nicsim.cosim.calibrate;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.workloads.Options;
import nicsim.workloads.Workloads;
import org.junit.jupiter.api.Test;

/**
 * nicsim calibrate: perftest's tables read as perftest prints them, and three parameters hidden in
 * a profile found again, within 5 %, from that profile's own simulated perftest output.
 */
class CalibrationTest {
    private static final String PERFTEST_BW = String.join("\n",
            "---------------------------------------------------------------------------------------",
            "                    RDMA_Write BW Test",
            " Dual-port       : OFF\t\tDevice         : mlx5_0",
            "---------------------------------------------------------------------------------------",
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
            " 65536      5000             11464.31            11461.10\t\t   0.183378",
            "---------------------------------------------------------------------------------------", "");

    @Test
    void perftestTablesAreReadAsPerftestPrintsThem() throws Exception {
        List<PerftestOutput.Point> bw = PerftestOutput.parse(PERFTEST_BW, "bw.txt");
        assertEquals(1, bw.size());
        assertEquals("write_bw", bw.get(0).workload());
        assertEquals(65536, bw.get(0).bytes());
        // perftest's MB are 2^20 bytes
        assertEquals(11461.10 * 1048576 * 8 / 1e9, bw.get(0).value(), 1e-9);
        List<PerftestOutput.Point> pub = PerftestOutput.parse(
                Files.readString(Path.of(System.getProperty("nicsim.root", "."))
                        .resolve("docs/examples/connectx5-edr.perftest")),
                "published");
        assertEquals(List.of("send_lat 32 0.83", "send_lat 1024 1.61", "send_lat 4096 2.28", "send_lat 32768 4.57",
                        "write_bw 65536 96.6"),
                pub.stream().map(p -> p.workload() + " " + p.bytes() + " " + p.value()).toList());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PerftestOutput.parse("nothing here\n", "empty.txt"));
        assertTrue(e.getMessage().startsWith("empty.txt: no perftest table"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PerftestOutput.parse(
                PERFTEST_BW.replace("11461.10", "lots"), "bad.txt"));
        assertEquals("bad.txt:6: 'lots' is not a number", e.getMessage());
    }

    /** What `nicsim run WORKLOAD --size SIZE --iters 100` prints on profile p. */
    private static String run(Profile p, String workload, long size) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Options o = Options.defaults().with(set -> set.size(size).iters(100));
        Workloads.run(workload, new World(2, p, 1, Faults.NONE), o, new PrintStream(b, true, StandardCharsets.UTF_8));
        return b.toString(StandardCharsets.UTF_8);
    }

    @Test
    void threeHiddenParametersAreFoundAgainFromTheirOwnOutput() {
        Profile base = Profiles.load("cx-gen3x16");
        Profile hidden = base.with("pci.link.latency", "200 ns").with("host.memory.read.latency", "300 ns")
                .with("link.rate", "80 Gb/s");
        List<PerftestOutput.Point> measured = new ArrayList<>();
        for (String w : List.of("send_lat", "read_lat"))
            for (long size : List.of(2L, 4096L)) measured.addAll(PerftestOutput.parse(run(hidden, w, size), w));
        for (long size : List.of(64L, 4096L, 65536L)) measured.addAll(PerftestOutput.parse(run(hidden, "write_bw",
                size), "bw"));
        List<String> keys = List.of("pci.link.latency", "host.memory.read.latency", "link.rate");
        Calibration c = new Calibration(base, keys, measured, 100, 2);
        Calibration.Fit fit = c.fit(200, line -> { });
        assertTrue(fit.startError() > 0.05, "the hidden values moved the figures: " + fit.startError());
        for (int i = 0; i < keys.size(); i++) {
            double want = hidden.param(keys.get(i)).value(), got = fit.fitted()[i];
            assertEquals(want, got, 0.05 * want, keys.get(i) + " fitted " + got + ", hidden " + want);
        }
        assertTrue(fit.rmsError() < 0.01, "rms error " + fit.rmsError());
        // the profile written loads, and gives the fitted figures
        Profile written = Profiles.parse(c.profileFile(fit, "cx-gen3x16", base, "test"), "fitted.profile");
        assertEquals(fit.fitted()[0], written.param("pci.link.latency").value());
        assertEquals(fit.fitted()[1], written.param("host.memory.read.latency").value());
    }

    @Test
    void aParameterThatIsNotThereOrMovesNothingIsNamed() {
        Profile base = Profiles.load("cx-gen3x16");
        List<PerftestOutput.Point> pts = PerftestOutput.parse(run(base, "send_lat", 2), "lat");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Calibration(base, List.of("pci.no.such"), pts, 50, 1));
        assertTrue(e.getMessage().startsWith("--fit pci.no.such: profile cx-gen3x16 has no such parameter"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new Calibration(base, List.of("pci.link.latency", "tm.op.latency"), pts, 50, 1).fit(50,
                        l -> { }));
        assertTrue(e.getMessage().startsWith("--fit tm.op.latency: doubling it changes none"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new Calibration(base, List.of("pci.kind"), pts, 50, 1));
        assertTrue(e.getMessage().contains("is not a positive number with a unit"), e.getMessage());
    }
}
