package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Debian's Open MPI 4.1, unchanged, with rank r on node r (as 'mpirun ... ./nicsim attach --node
 * rank -- PROGRAM' runs it; here a small script picks each rank's attach command): a ping-pong of
 * 1 B to 1 MiB with every byte checked and an MPI_Allreduce, over UCX on four nodes (pml ucx) and
 * over the openib BTL on two (pml ob1), both through the simulated fabric; each with the provider's
 * Java driver and its C driver (NICSIM_DRIVER=c).
 */
class MpiTest {
    private Served served;
    private Path dir;

    @BeforeEach
    void serve() throws Exception {
        served = new Served("nicsim-mpi").start(new World(4, Profiles.load("cx-gen3x16"), 1, Faults.parse("none")));
        dir = MpiJobs.compilePingpong("mpicc");
    }

    @AfterEach
    void stop() throws Exception { served.stop(); }

    @ParameterizedTest
    @ValueSource(strings = {"java", "c"})
    void pmlUcxOnFourNodes(String driver) throws Exception {
        String out = mpirun(driver, 4, "--mca", "pml", "ucx");
        assertTrue(out.contains("allreduce over 4 ranks; 0 wrong"), out);
        assertTraffic(4);
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "c"})
    void pmlOb1WithTheOpenibBtl(String driver) throws Exception {
        String out = mpirun(driver, 2, "--mca", "pml", "ob1", "--mca", "btl", "openib,self", "--mca",
                "btl_openib_allow_ib", "1", "--mca", "btl_openib_warn_no_device_params_found", "0");
        assertTrue(out.contains("allreduce over 2 ranks; 0 wrong"), out);
        assertTraffic(2);
    }

    /** Runs the job on {@code ranks} ranks with the MCA options given; its output (it must exit 0). */
    private String mpirun(String driver, int ranks, String... mca) throws Exception {
        Path perRank = MpiJobs.perRankScript(dir, "OMPI_COMM_WORLD_RANK", ranks, r -> Attach.command(served.socket, r,
                Attach.withDriver(driver, List.of(dir.resolve("mpi-pingpong").toString()))));
        List<String> cmd = new ArrayList<>(List.of("mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                Integer.toString(ranks)));
        cmd.addAll(List.of(mca));
        cmd.add(perRank.toString());
        return MpiJobs.run(cmd, served);
    }

    /**
     * Every rank's node sent packets, and its program's table (the adapter's record of its QPs, whichever
     * driver it used) shows RC traffic: the job went through the adapters.
     */
    private void assertTraffic(int ranks) throws Exception {
        long t0 = System.nanoTime();
        while (served.server.attached() > 0 && System.nanoTime() - t0 < 30_000_000_000L) Thread.sleep(20);
        for (int r = 0; r < ranks; r++)
            assertTrue(served.world.sim.counters().scope("node" + r).get("Firmware.packets_out") >= 10,
                    "node " + r + " sent: " + served.world.sim.counters().scope("node" + r).snapshot());
        MpiJobs.assertSentOverRc(served, ranks);
        assertTrue(served.world.sim.counters().get("Fabric.packets") >= 100 * ranks,
                "the traffic crossed the simulated fabric");
    }
}
