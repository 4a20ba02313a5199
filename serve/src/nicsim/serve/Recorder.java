package nicsim.serve;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import nicsim.serve.Transport.Connection;
import nicsim.verbs.VerbsException;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;

/**
 * serve --record: keeps, in the order the simulator's thread met them, everything a replay needs to do the run
 * again without its programs ({@link Replay}): each request (its connection, op and bytes, at the simulated time it
 * was served), each look at the programs that let simulated time move (from when to when, where among the events at
 * its end it stopped, and how many events it stepped), every access of the adapter to a program's memory that reached
 * the kernel (a read's bytes, a write's length and CRC-32, the mappings read, the kernel's refusals), each write a C
 * driver posted in its shared ring, and the length and CRC-32 of every message sent (for {@code replay --compare}).
 * Gzip-compressed, after a header naming the version and the World's options.
 *
 * <p>The entries of a look at the programs are written after the look (where time stopped is known only then), so
 * they wait in a buffer meanwhile; a replay reads them in that order too.
 */
public final class Recorder implements ProcMemory.Tap, AutoCloseable {
    /**
     * The recording's version: 3 replays a look by simulated time (to its end, {@link Pacer.Step}); 2 replayed it by
     * its number of events, which a model that steps fewer events for the same run (a coasting clock) broke.
     */
    static final int VERSION = 3;
    /** The first line of every recording. */
    static final String MAGIC = "nicsim-record " + VERSION;
    /** Entry tags. */
    static final int REQUEST = 'Q', STEP = 'S', OPENED = 'O', MOVED = 'M', MAPS = 'P', ANSWER = 'A', CLOSING = 'C',
            END = 'Z', RING = 'R', POSTED = 'W', DRAINED = 'w';
    /** A request's kind: a message, its connection's end, or framing that broke (the body says how). */
    static final int MESSAGE = 0, ENDED = 1, BROKEN = 2;

    private final Path file;
    private final DataOutputStream main;
    private final ByteArrayOutputStream held = new ByteArrayOutputStream();
    private final DataOutputStream heldOut = new DataOutputStream(held);
    /** Where entries go now: {@link #main}, or {@link #heldOut} during a look at the programs. */
    private DataOutputStream out;
    private long requests, bytes;
    private boolean closed;

    /**
     * Records to {@code file} (created or replaced); {@code header}: what the World was made of (profile, seed,
     * nodes, faults, grace-ms, watchdog-ps, strict...), which a replay makes it of again.
     */
    public Recorder(Path file, Map<String, String> header) throws IOException {
        this.file = file;
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) Files.createDirectories(dir);
        OutputStream raw = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
        main = new DataOutputStream(new GzipCompressorOutputStream(raw));
        out = main;
        StringBuilder h = new StringBuilder();
        for (var e : header.entrySet()) {
            if (e.getKey().contains("=") || e.getKey().contains("\n") || e.getValue().contains("\n"))
                throw new IllegalArgumentException("recording header " + e.getKey() + "=" + e.getValue()
                        + ": keys and values are one line each, keys without '='");
            h.append(e.getKey()).append('=').append(e.getValue()).append('\n');
        }
        main.writeUTF(MAGIC);
        main.writeUTF(h.toString());
    }

    /** The header a serve's World gets: the nicsim version and commit, and {@code options} after them. */
    public static Map<String, String> header(Map<String, String> options) {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("version", "nicsim 0.1");
        h.put("commit", commit());
        h.putAll(options);
        return h;
    }

    /** The commit of the working tree serve runs from (git), or "unknown". */
    private static String commit() {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "HEAD").redirectErrorStream(true).start();
            String s = new String(p.getInputStream().readAllBytes()).trim();
            return p.waitFor() == 0 && s.matches("[0-9a-f]{40}") ? s : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    public Path file() { return file; }

    /** Request {@code r}, about to be served at simulated time {@code now}. */
    synchronized void request(long now, Transport.Request r) {
        if (closed) return;
        try {
            out.writeByte(REQUEST);
            out.writeLong(now);
            out.writeInt(r.from().id);
            out.writeInt(r.rawOp());
            out.writeByte(r.op() != null ? MESSAGE : r.body() == null ? ENDED : BROKEN);
            byte[] b = r.body() == null ? new byte[0] : r.body();
            out.writeInt(b.length);
            out.write(b);
            requests++;
            bytes += b.length;
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    /** A look at the programs begins: its entries wait for it to end. */
    synchronized void stepBegins() {
        out = heldOut;
    }

    /** The look ended ({@code s}): it, then what it did. */
    synchronized void stepEnds(Pacer.Step s) {
        out = main;
        if (closed) return;
        try {
            main.writeByte(STEP);
            main.writeByte(s.kind);
            main.writeBoolean(s.quiet);
            main.writeBoolean(s.graced);
            main.writeBoolean(s.away);
            main.writeBoolean(s.threw);
            main.writeBoolean(s.held);
            main.writeLong(s.steps);
            main.writeLong(s.from);
            main.writeLong(s.to);
            main.writeByte(s.stop);
            main.writeLong(s.atTo);
            held.writeTo(main);
            held.reset();
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    /** Message {@code b} is sent on {@code c}: its length and checksum (b is not consumed). */
    synchronized void answer(Connection c, ByteBuffer b) {
        if (closed) return;
        try {
            out.writeByte(ANSWER);
            out.writeInt(c.id);
            out.writeInt(b.remaining());
            out.writeInt(crc(b, b.position(), b.limit()));
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    static int crc(ByteBuffer b, int from, int to) {
        CRC32 c = new CRC32();
        c.update(b.duplicate().limit(to).position(from));
        return (int) c.getValue();
    }

    @Override public boolean replaying() { return false; }

    @Override public synchronized void opened(int pid, IOException refused) {
        if (closed) return;
        try {
            out.writeByte(OPENED);
            out.writeInt(pid);
            refusal(refused);
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    @Override public synchronized void moved(int pid, long va, ByteBuffer buf, int start, boolean write,
            IOException refused) {
        if (closed) return;
        try {
            out.writeByte(MOVED);
            out.writeInt(pid);
            out.writeLong(va);
            out.writeBoolean(write);
            out.writeInt(buf.limit() - start);
            if (write) out.writeInt(crc(buf, start, buf.limit()));
            else {
                int n = buf.position() - start;
                out.writeInt(n);
                out.write(buf.array(), buf.arrayOffset() + start, n);
                bytes += n;
            }
            refusal(refused);
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    @Override public synchronized List<ProcMemory.Mapping> mappings(int pid, List<ProcMemory.Mapping> seen,
            IOException refused) {
        if (closed) return seen;
        try {
            out.writeByte(MAPS);
            out.writeInt(pid);
            refusal(refused);
            if (refused == null) {
                out.writeInt(seen.size());
                for (ProcMemory.Mapping m : seen) {
                    out.writeLong(m.lo());
                    out.writeLong(m.hi());
                    out.writeBoolean(m.readable());
                    out.writeBoolean(m.writable());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
        return seen;
    }

    @Override public synchronized void ringOpened(long pid, int fd, VerbsException refused) {
        entry(RING, pid, refused);
    }

    @Override public synchronized void posted(long pid, long offset, byte[] data) {
        if (closed) return;
        try {
            out.writeByte(POSTED);
            out.writeLong(pid);
            out.writeLong(offset);
            out.writeInt(data.length);
            out.write(data);
            bytes += data.length;
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    @Override public synchronized void drained(long pid, VerbsException refused) {
        entry(DRAINED, pid, refused);
    }

    /** An entry {@code tag} of process {@code pid}, with the verbs refusal it met (its errno and message) or none. */
    private void entry(int tag, long pid, VerbsException refused) {
        if (closed) return;
        try {
            out.writeByte(tag);
            out.writeLong(pid);
            out.writeInt(refused == null ? 0 : refused.errno());
            if (refused != null) out.writeUTF(refused.getMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    @Override public int drain(long pid, PostedRing.Sink sink) {
        throw new IllegalStateException("a recording does not replay");
    }

    private void refusal(IOException refused) throws IOException {
        out.writeBoolean(refused != null);
        if (refused != null) out.writeUTF(String.valueOf(refused.getMessage()));
    }

    /** The server begins to close: what its closing does follows. */
    synchronized void closing() {
        if (closed) return;
        try {
            out.writeByte(CLOSING);
        } catch (IOException e) {
            throw new UncheckedIOException("recording to " + file, e);
        }
    }

    /** Requests (and connections' ends) recorded, and the bytes of their bodies and of the programs' memory read. */
    public synchronized String summary() {
        return requests + " requests and connection ends, " + bytes + " bytes of requests and program memory";
    }

    /** Ends the recording at simulated time {@code now}. */
    synchronized void end(long now) throws IOException {
        if (closed) return;
        out = main;
        main.writeByte(END);
        main.writeLong(now);
        close();
    }

    @Override public synchronized void close() throws IOException {
        if (closed) return;
        closed = true;
        main.close();
    }
}
