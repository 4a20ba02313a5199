package nicsim.sim;

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
    default java.util.List<String> gather(java.util.List<String> mine) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        try (java.io.DataOutputStream o = new java.io.DataOutputStream(b)) {
            for (String s : mine) o.writeUTF(s.length() > 16_000 ? s.substring(0, 16_000) : s); // writeUTF: < 64 KiB
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        java.util.List<String> all = new java.util.ArrayList<>();
        for (byte[] r : allGather(b.toByteArray())) {
            try (java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(r))) {
                while (in.available() > 0) all.add(in.readUTF());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return all;
    }
}
