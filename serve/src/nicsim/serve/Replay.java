package nicsim.serve;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.serve.Transport.Connection;
import nicsim.sim.Simulator;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;

/**
 * nicsim replay: does a run that serve --record kept ({@link Recorder}) again, without its programs. The same World
 * is made from the header; each recorded request is served at its point, each look at the programs is done again
 * (the same answers handed out, time moved to the same point: not by the number of events, which a model that
 * coasts where another steps changes, {@link Pacer.Step}), the programs' memory is read from the recording and what
 * the adapter writes there is checked against the recorded CRC-32. The log gets what serve's got (the
 * programs attaching, faults with their simulated time, violations) and the summary with its counters.
 *
 * <p>A replay that leaves the recording (the next access the model makes is not the one recorded) cannot go on:
 * it stops, naming the request. An answer that differs only in its bytes is counted, and the first is named;
 * {@code --compare} makes that a failure.
 */
public final class Replay implements ProcMemory.Tap {
    /** The replay left the recording: what was recorded next is not what the model did. */
    static final class Diverged extends Error {
        Diverged(String why) { super(why); }
    }

    /** The recording ends before serve closed it (serve was killed), met inside the model. */
    static final class Cut extends Error {
        Cut() { super("the recording ends early"); }
    }

    /** What reading the recording failing inside the model means: the recording ends early, or it is broken. */
    private static Error unreadable(IOException e) {
        return e instanceof EOFException ? new Cut() : new Diverged("reading the recording: " + e);
    }

    private final Path file;
    private final DataInputStream in;
    private final Map<String, String> header;
    private final PrintStream log;
    private final Map<Integer, Connection> connections = new HashMap<>();
    private Server server;
    /** The request served last (1-based), and what it was: to name where an answer differed. */
    private long request;
    private String lastRequest = "before the first request";
    private long answers, differing, writes, writesDiffering;
    /** Looks at the programs whose replay stepped another number of events than recorded. */
    private long otherEvents;
    private String firstDifference;
    /** replay --beat-by-beat: the DMA channels' clocks do not coast. */
    private boolean beatByBeat;

    private Replay(Path file, PrintStream log) throws IOException {
        this.file = file;
        this.log = log;
        if (!Files.isRegularFile(file)) throw new IllegalArgumentException("replay: no recording " + file);
        in = new DataInputStream(new BufferedInputStream(new GzipCompressorInputStream(
                new BufferedInputStream(Files.newInputStream(file)))));
        String magic = in.readUTF();
        if (magic.startsWith("nicsim-record ") && !magic.equals(Recorder.MAGIC))
            throw new IllegalArgumentException("replay: " + file + " is a recording of version "
                    + magic.substring("nicsim-record ".length()) + "; this nicsim replays version " + Recorder.VERSION
                    + " only (record the run again with it)");
        if (!magic.equals(Recorder.MAGIC))
            throw new IllegalArgumentException("replay: " + file + " is not a nicsim recording (it begins '" + magic
                    + "', not '" + Recorder.MAGIC + "')");
        header = new LinkedHashMap<>();
        for (String line : in.readUTF().split("\n"))
            if (!line.isEmpty())
                header.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
    }

    /**
     * What a replay found: requests replayed, answers compared, how many differed and the first; where it left the
     * recording (null: it did not); whether the recording was whole (serve closed it) or ends early; the simulator
     * events it ran, and the looks at the programs that took another number of them than recorded (0 on the model
     * the run was recorded on; time moves to the same points however many there are).
     */
    public record Result(long requests, long answers, long differing, String firstDifference, String diverged,
            boolean whole, long events, long looksOfOtherEvents) {
        public boolean same() { return differing == 0 && diverged == null; }
    }

    /**
     * Replays {@code file}, logging to {@code log} as serve did and printing the summary there; what it found. A
     * recording that cannot be replayed (no such file, not a recording) throws IllegalArgumentException naming it.
     */
    public static Result run(Path file, PrintStream log) throws IOException {
        return run(file, log, false);
    }

    /**
     * As {@link #run(Path, PrintStream)}, with {@code beatByBeat}: every edge of the DMA channels' clocks through the
     * blocks' wires (run --beat-by-beat), where the recording was made coasting: more events, the same run.
     */
    public static Result run(Path file, PrintStream log, boolean beatByBeat) throws IOException {
        Replay r = new Replay(file, log);
        r.beatByBeat = beatByBeat;
        return r.replay();
    }

    /** The recording's header (version, commit, profile, seed, nodes, faults...). */
    public static Map<String, String> header(Path file) throws IOException {
        return new Replay(file, System.err).header;
    }

    private String option(String key) {
        String v = header.get(key);
        if (v == null) throw new IllegalArgumentException("replay: " + file + "'s header has no " + key);
        return v;
    }

    private World world() {
        Profile p = Profiles.load(option("profile"));
        for (int i = 1; header.containsKey("set." + i); i++) { // serve's --set KEY=VALUE, in order
            String o = header.get("set." + i);
            p = p.with(o.substring(0, o.indexOf('=')).strip(), o.substring(o.indexOf('=') + 1).strip());
        }
        World w = new World(Integer.parseInt(option("nodes")), p, Long.parseLong(option("seed")),
                Faults.parse(option("faults")));
        for (Simulator s : w.partitions()) s.coasting(!beatByBeat);
        String inject = header.get("inject-cqe-fault"); // NODE:AFTER:WHY, a test's fault inside an adapter
        if (inject != null) {
            String[] f = inject.split(":", 3);
            w.host(Integer.parseInt(f[0])).adapter.cqeWriter().injectFault(f[2], Long.parseLong(f[1]));
        }
        return w;
    }

    private Result replay() throws IOException {
        World world = world();
        server = Server.replaying(world, Long.parseLong(option("grace-ms")), Long.parseLong(option("watchdog-ps")),
                log).strict(Boolean.parseBoolean(header.getOrDefault("strict", "false")));
        log.printf("nicsim replay: %s nodes on %s, seed %s, faults %s; recorded by %s (%s)%n", option("nodes"),
                option("profile"), option("seed"), option("faults"), option("version"), option("commit"));
        ProcMemory.TAP.set(this);
        boolean whole = true;
        String diverged = null;
        try {
            loop(world);
        } catch (EOFException | Cut e) {
            whole = false;
            log.println("nicsim replay: the recording ends early (serve did not close it): replayed what it holds");
        } catch (Diverged d) {
            diverged = "request " + request + " (" + lastRequest + "): " + d.getMessage();
            log.println("nicsim replay: the replay left the recording at " + diverged);
        } finally {
            ProcMemory.TAP.remove();
            in.close();
        }
        if (diverged == null) server.summary(log);
        log.printf("nicsim replay: %d requests and connection ends; %d answers, %s; %d memory writes checked%s%n",
                request, answers,
                differing == 0 ? "each as recorded" : differing + " differ from the recording (first: "
                        + firstDifference + ")", writes,
                writesDiffering == 0 ? "" : ", " + writesDiffering + " differ");
        return new Result(request, answers, differing, firstDifference, diverged, whole, world.sim.eventsExecuted(),
                otherEvents);
    }

    private void loop(World world) throws IOException {
        while (true) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case Recorder.REQUEST -> request(world);
                case Recorder.STEP -> step(world);
                case Recorder.CLOSING -> {
                    server.close();
                    expect(Recorder.END, "the recording's end");
                    long end = in.readLong();
                    if (end != world.now()) throw new Diverged("the recording ends at " + end + " ps, the replay at "
                            + world.now() + " ps");
                    return;
                }
                default -> throw new Diverged("the recording has " + what(tag) + " next, where the replay serves the "
                        + "next request or moves time");
            }
        }
    }

    private void request(World world) throws IOException {
        long now = in.readLong();
        int conn = in.readInt(), rawOp = in.readInt(), kind = in.readUnsignedByte(), len = in.readInt();
        byte[] body = new byte[len];
        in.readFully(body);
        request++;
        Wire.Op op = Wire.Op.of(rawOp);
        lastRequest = (kind == Recorder.MESSAGE ? String.valueOf(op) : kind == Recorder.ENDED ? "end"
                : "broken framing") + " on connection " + conn + " at " + now + " ps";
        if (now != world.now()) throw new Diverged("recorded at " + now + " ps, replayed at " + world.now() + " ps");
        Connection c = connections.computeIfAbsent(conn, id -> server.replayConnection(id, this::sent));
        server.replayRequest(new Transport.Request(c, kind == Recorder.MESSAGE ? op : null, rawOp,
                kind == Recorder.ENDED ? null : body));
    }

    private void step(World world) throws IOException {
        Pacer.Step s = new Pacer.Step();
        s.kind = in.readUnsignedByte();
        s.quiet = in.readBoolean();
        s.graced = in.readBoolean();
        s.away = in.readBoolean();
        s.threw = in.readBoolean();
        s.held = in.readBoolean();
        s.steps = in.readLong();
        s.from = in.readLong();
        s.to = in.readLong();
        s.stop = in.readUnsignedByte();
        s.atTo = in.readLong();
        boolean threw = server.replayStep(s);
        if (s.kind == Pacer.Step.RUN && s.replayed != s.steps) otherEvents++;
        if (threw != s.threw) throw new Diverged("time moved from " + s.from + " ps " + (s.threw
                ? "to a fault in the recording, without one in the replay" : "without a fault in the recording, to "
                + "one in the replay") + " at " + world.now() + " ps");
        if (s.kind == Pacer.Step.RUN && world.now() != s.to)
            throw new Diverged("time moved from " + s.from + " ps to " + s.to + " ps in the recording, stopping "
                    + Pacer.Step.stopped(s.stop) + ", to " + world.now() + " ps in the replay");
    }

    private void expect(int tag, String what) throws IOException {
        int got = in.readUnsignedByte();
        if (got != tag) throw new Diverged("the recording has " + what(got) + " next, where the replay made " + what);
    }

    private static String what(int tag) {
        return switch (tag) {
            case Recorder.REQUEST -> "a request";
            case Recorder.STEP -> "a move of time";
            case Recorder.OPENED -> "an opening of a program's memory";
            case Recorder.MOVED -> "an access to a program's memory";
            case Recorder.MAPS -> "a reading of a program's mappings";
            case Recorder.ANSWER -> "an answer to a program";
            case Recorder.CLOSING -> "serve's closing";
            case Recorder.END -> "its end";
            case Recorder.RING -> "the mapping of a driver's posted-write ring";
            case Recorder.POSTED -> "a write from a driver's posted-write ring";
            case Recorder.DRAINED -> "the end of a drain of a driver's posted-write ring";
            default -> "an entry tagged " + tag + " (not a recording of this version?)";
        };
    }

    /** A message the replayed server sent on {@code c}: compared with the one recorded there. */
    private void sent(Connection c, ByteBuffer b) {
        try {
            expect(Recorder.ANSWER, "an answer on connection " + c.id);
            int conn = in.readInt(), len = in.readInt(), crc = in.readInt();
            if (conn != c.id) throw new Diverged("the recording answers connection " + conn + " next, the replay "
                    + "connection " + c.id);
            answers++;
            int got = Recorder.crc(b, b.position(), b.limit());
            if (len == b.remaining() && crc == got) return;
            if (differing++ == 0)
                firstDifference = String.format("the answer to request %d (%s): recorded %d bytes, CRC-32 %08x; "
                        + "replayed %d bytes, CRC-32 %08x", request, lastRequest, len, crc, b.remaining(), got);
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    @Override public boolean replaying() { return true; }

    /** A refusal of the kernel's, as recorded: the model gets it as an IOException. */
    private static final class Recorded extends Exception {
        Recorded(String why) { super(why, null, false, false); }
    }

    /** Reading the recording inside the model: a recorded refusal is its IOException; a cut or broken file is not. */
    private interface Read<T> { T read() throws IOException, Recorded; }

    private static <T> T reading(Read<T> r) throws IOException {
        try {
            return r.read();
        } catch (Recorded x) {
            throw new IOException(x.getMessage());
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    @Override public void opened(int pid, IOException refused) throws IOException {
        reading(() -> readOpened(pid));
    }

    private Void readOpened(int pid) throws IOException, Recorded {
        expect(Recorder.OPENED, "an opening of process " + pid + "'s memory");
        int was = in.readInt();
        if (was != pid)
            throw new Diverged("the recording opens process " + was + "'s memory, the replay " + pid + "'s");
        refusal();
        return null;
    }

    @Override public void moved(int pid, long va, ByteBuffer buf, int start, boolean write, IOException refused)
            throws IOException {
        reading(() -> readMoved(pid, va, buf, start, write));
    }

    private Void readMoved(int pid, long va, ByteBuffer buf, int start, boolean write) throws IOException, Recorded {
        String access = String.format("a %s of %d bytes at 0x%x of process %d", write ? "write" : "read",
                buf.limit() - start, va, pid);
        expect(Recorder.MOVED, access);
        int wasPid = in.readInt();
        long wasVa = in.readLong();
        boolean wasWrite = in.readBoolean();
        int len = in.readInt();
        if (wasPid != pid || wasVa != va || wasWrite != write || len != buf.limit() - start)
            throw new Diverged(String.format("the recording has a %s of %d bytes at 0x%x of process %d, the replay %s",
                    wasWrite ? "write" : "read", len, wasVa, wasPid, access));
        if (write) {
            int crc = in.readInt();
            writes++;
            if (crc != Recorder.crc(buf, start, buf.limit()) && writesDiffering++ == 0 && differing++ == 0)
                firstDifference = "after request " + request + " (" + lastRequest + "), " + access
                        + " wrote other bytes than recorded";
            buf.position(buf.limit());
        } else {
            int n = in.readInt();
            in.readFully(buf.array(), buf.arrayOffset() + start, n);
            buf.position(start + n);
        }
        refusal();
        return null;
    }

    @Override public List<ProcMemory.Mapping> mappings(int pid, List<ProcMemory.Mapping> seen, IOException refused)
            throws IOException {
        return reading(() -> readMappings(pid));
    }

    private List<ProcMemory.Mapping> readMappings(int pid) throws IOException, Recorded {
        expect(Recorder.MAPS, "a reading of process " + pid + "'s mappings");
        int was = in.readInt();
        if (was != pid) throw new Diverged("the recording reads process " + was + "'s mappings, the replay " + pid
                + "'s");
        refusal();
        int n = in.readInt();
        List<ProcMemory.Mapping> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
            out.add(new ProcMemory.Mapping(in.readLong(), in.readLong(), in.readBoolean(), in.readBoolean()));
        return out;
    }

    @Override public void ringOpened(long pid, int fd, VerbsException refused) {
        entry(Recorder.RING, pid, "the mapping of process " + pid + "'s posted-write ring (fd " + fd + ")");
    }

    @Override public void posted(long pid, long offset, byte[] data) {
        throw new IllegalStateException("a replay does not record");
    }

    @Override public void drained(long pid, VerbsException refused) {
        throw new IllegalStateException("a replay does not record");
    }

    @Override public int drain(long pid, PostedRing.Sink sink) {
        int n = 0;
        try {
            while (true) {
                int tag = in.readUnsignedByte();
                if (tag == Recorder.DRAINED) {
                    refused(pid, "the end of a drain of process " + pid + "'s posted-write ring");
                    return n;
                }
                if (tag != Recorder.POSTED)
                    throw new Diverged("the recording has " + what(tag) + " next, where the replay drains process "
                            + pid + "'s posted-write ring");
                long was = in.readLong(), offset = in.readLong();
                byte[] data = new byte[in.readInt()];
                in.readFully(data);
                if (was != pid) throw new Diverged("the recording drains process " + was + "'s ring, the replay "
                        + pid + "'s");
                n++;
                sink.write(offset, data);
            }
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    /** Reads entry {@code tag} of process {@code pid} ({@code what}), throwing the verbs refusal it recorded. */
    private void entry(int tag, long pid, String what) {
        try {
            expect(tag, what);
            refused(pid, what);
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    private void refused(long pid, String what) throws IOException {
        long was = in.readLong();
        int errno = in.readInt();
        String message = errno == 0 ? null : in.readUTF();
        if (was != pid) throw new Diverged("the recording has process " + was + "'s " + what + ", the replay " + pid
                + "'s");
        if (errno == 0) return;
        String prefix = Errno.name(errno) + ": "; // the exception puts it back
        throw new VerbsException(errno, message.startsWith(prefix) ? message.substring(prefix.length())
                : message);
    }

    /** The kernel's refusal recorded with an access, thrown; none, nothing. */
    private void refusal() throws IOException, Recorded {
        if (in.readBoolean()) throw new Recorded(in.readUTF());
    }
}
