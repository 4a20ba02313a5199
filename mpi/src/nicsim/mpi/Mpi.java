package nicsim.mpi;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import nicsim.sim.Peers;

/**
 * The ranks of an {@code mpirun} as {@link Peers}: a thin JNI binding to Open MPI's C library (Debian
 * has no Java bindings for it), built by Mill from {@code mpi/native/nicsim_mpi.c} and carried as a
 * resource. One per process: {@link #world()} initializes MPI on first use, {@link #close()} finalizes it.
 */
public final class Mpi implements Peers, AutoCloseable {
    private static final int MIN = 0, MAX = 1, SUM = 2;
    private static Mpi world;

    private final int rank, size;

    private Mpi(boolean poll) {
        init();
        waiting(poll ? 0 : 1);
        rank = commRank();
        size = commSize();
    }

    /** Whether this process was started by Open MPI's {@code mpirun} (it sets OMPI_COMM_WORLD_SIZE). */
    public static boolean launched() { return System.getenv("OMPI_COMM_WORLD_SIZE") != null; }

    /**
     * How a rank waits for the others in a collective, from the environment variable NICSIM_MPI_WAIT (mpirun passes
     * its environment on, or {@code -x}): {@code sleep} (the default) tests the collective, then yields the core,
     * then sleeps between tests, so that on a machine with more runnable threads than cores the rank waited for
     * gets the core; {@code poll} waits in Open MPI's blocking call, which polls without a pause (the lower
     * latency, on a rank with a core to itself).
     */
    public static boolean polls() {
        String v = System.getenv().getOrDefault("NICSIM_MPI_WAIT", "sleep");
        if (!v.equals("sleep") && !v.equals("poll"))
            throw new IllegalArgumentException("NICSIM_MPI_WAIT '" + v + "' must be sleep or poll");
        return v.equals("poll");
    }

    /** MPI_COMM_WORLD, MPI initialized on the first call. */
    public static synchronized Mpi world() {
        if (world == null) {
            boolean poll = polls();
            load();
            world = new Mpi(poll);
        }
        return world;
    }

    @Override public int rank() { return rank; }
    @Override public int size() { return size; }
    @Override public long min(long v) { return allreduce(v, MIN); }
    @Override public long max(long v) { return allreduce(v, MAX); }
    @Override public long sum(long v) { return allreduce(v, SUM); }

    @Override public byte[][] allGather(byte[] mine) {
        int[] lens = new int[size];
        byte[] all = allgather(mine, lens);
        byte[][] out = new byte[size][];
        int at = 0;
        for (int r = 0; r < size; r++) {
            out[r] = Arrays.copyOfRange(all, at, at + lens[r]);
            at += lens[r];
        }
        return out;
    }

    /** MPI_Finalize: no call may follow. */
    @Override public void close() { finish(); }

    private static void load() {
        String res = "/nicsim/mpi/libnicsim-mpi.so";
        try (InputStream in = Mpi.class.getResourceAsStream(res)) {
            if (in == null)
                throw new IllegalStateException("resource " + res + " missing: it is built when Open MPI's mpicc is "
                        + "installed (libopenmpi-dev: scripts/ensure-tools.sh --rdma), then ./mill mpi.compile");
            Path tmp = Files.createTempFile("nicsim-mpi", ".so");
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            tmp.toFile().deleteOnExit();
            System.load(tmp.toString());
        } catch (IOException e) {
            throw new IllegalStateException("loading " + res + ": " + e.getMessage(), e);
        }
    }

    private static native void init();
    private static native void waiting(int how);
    private static native int commRank();
    private static native int commSize();
    private static native long allreduce(long v, int op);
    private static native byte[] allgather(byte[] mine, int[] lens);
    private static native void finish();
}
