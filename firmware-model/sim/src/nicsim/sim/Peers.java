package nicsim.sim;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The other processes (ranks) of one run spread over several processes, as MPI names them: what the
 * partitioned simulator ({@link Windows}, the fabric's switch) needs of them between windows, and no
 * more. Every call is collective: each rank makes the same calls in the same order, and each returns
 * the same result on every rank. The MPI binding (module {@code mpi}) implements it.
 */
public interface Peers {
    /** This process's number, 0 to {@link #size()} - 1. */
    int rank();

    /** How many processes share the run. */
    int size();

    /** Every rank's {@code mine}, indexed by rank (this rank's own among them). */
    byte[][] allGather(byte[] mine);

    /** The least of every rank's {@code v}. */
    long min(long v);

    /** The greatest of every rank's {@code v}. */
    long max(long v);

    /** The sum of every rank's {@code v}. */
    long sum(long v);

    /** Whether {@code v} holds on every rank. */
    default boolean all(boolean v) { return min(v ? 1 : 0) == 1; }

    /** Every rank's lines, in rank order (a line of more than 16,000 characters is cut there). */
    default List<String> gather(List<String> mine) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DataOutputStream o = new DataOutputStream(b)) {
            for (String s : mine) o.writeUTF(s.length() > 16_000 ? s.substring(0, 16_000) : s); // writeUTF: < 64 KiB
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> all = new ArrayList<>();
        for (byte[] r : allGather(b.toByteArray())) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(r))) {
                while (in.available() > 0) all.add(in.readUTF());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return all;
    }
}
