package nicsim.wave;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A streaming VCD writer. Declare every wire first (scope path + name + width), then report value
 * changes in non-decreasing time order; only real changes are written. Time is in units of the
 * timescale given at construction (the simulation kernel uses "1ps").
 *
 * <p>Scope paths are dot-separated ("top.DoorbellDecoder"), so a Java block traced under the same
 * hierarchy and signal names as its RTL twin lines up with the Verilator trace in a viewer.
 */
public final class VcdWriter implements AutoCloseable {
    /** A declared wire. Widths up to 64 bits take {@code long} values; wider ones take BigInteger. */
    public static final class Wire {
        final String scope;
        final String name;
        final int width;
        final String id;
        final VcdWriter owner;
        String last; // last written value text, null before the first write
        // the last value written through set(long), when that was the last write: an unchanged value
        // is recognised without making its text (most samples of most wires change nothing)
        long lastLong;
        boolean lastIsLong;

        private Wire(VcdWriter owner, String scope, String name, int width, String id) {
            this.owner = owner; this.scope = scope; this.name = name; this.width = width; this.id = id;
        }
        public String scope() { return scope; }
        public String name() { return name; }
        public int width() { return width; }
        public String fullName() { return scope.isEmpty() ? name : scope + "." + name; }
    }

    private final Writer out;
    private final String timescale;
    private final List<Wire> wires = new ArrayList<>();
    private final Map<String, Wire> byFullName = new HashMap<>();
    private boolean headerWritten;
    private long currentTime = -1;
    private long changes;
    /** The file written, when opened by {@link #open}: its GTKWave save file goes beside it on close. */
    private Path file;

    public VcdWriter(OutputStream stream, String timescale) {
        if (!timescale.matches("(1|10|100)\\s*(s|ms|us|ns|ps|fs)"))
            throw new IllegalArgumentException("timescale '" + timescale + "' is not a VCD timescale (e.g. 1ps)");
        this.out = new BufferedWriter(new OutputStreamWriter(stream, StandardCharsets.US_ASCII), 1 << 16);
        this.timescale = timescale;
    }

    /**
     * Opens a file; compression follows the name (.vcd, .vcd.gz, .vcd.xz). Closing it also writes
     * a GTKWave save file beside it ({@link GtkwSave}), so {@code gtkwave <name>.gtkw} opens it with
     * the ports grouped by block.
     */
    public static VcdWriter open(Path file, String timescale) throws IOException {
        VcdWriter w = new VcdWriter(WaveFiles.openOutput(file), timescale);
        w.file = file;
        return w;
    }

    public Wire wire(String scope, String name, int width) {
        String full = scope + "." + name;
        if (headerWritten) throw new IllegalStateException("wire " + full + " declared after the first value change");
        if (width < 1) throw new IllegalArgumentException("wire " + full + ": width " + width + " must be >= 1");
        if (!name.matches("[A-Za-z_][A-Za-z0-9_$\\[\\]]*"))
            throw new IllegalArgumentException("wire name '" + name + "' is not a VCD identifier");
        Wire w = new Wire(this, scope, name, width, idCode(wires.size()));
        if (byFullName.putIfAbsent(w.fullName(), w) != null)
            throw new IllegalArgumentException("wire " + w.fullName() + " declared twice");
        wires.add(w);
        return w;
    }

    public List<Wire> wires() { return List.copyOf(wires); }

    /** Records a value at {@code time}; times must not go backwards. Values wider than the wire are an error. */
    public void set(long time, Wire w, long value) {
        if (w.width < 64 && (value >>> w.width) != 0)
            throw new IllegalArgumentException("value 0x" + Long.toHexString(value) + " does not fit wire "
                    + w.fullName() + " of width " + w.width);
        if (w.lastIsLong && w.lastLong == value) {
            owned(w);
            return;
        }
        emit(time, w, w.width == 1 ? (value == 0 ? "0" : "1") : "b" + Long.toBinaryString(value));
        w.lastLong = value;
        w.lastIsLong = true;
    }

    public void set(long time, Wire w, BigInteger value) {
        if (value.signum() < 0 || value.bitLength() > w.width)
            throw new IllegalArgumentException("value " + value + " does not fit wire " + w.fullName() + " of width "
                    + w.width);
        emit(time, w, w.width == 1 ? (value.signum() == 0 ? "0" : "1") : "b" + value.toString(2));
    }

    /** Marks a wire unknown ('x'), as an undriven port would be. */
    public void setUnknown(long time, Wire w) {
        emit(time, w, w.width == 1 ? "x" : "bx");
    }

    /** Moves time forward without a change, so the dump ends at the simulation's end time. */
    public void advanceTo(long time) {
        try {
            ensureHeader();
            moveTime(time);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public long changes() { return changes; }

    private void owned(Wire w) {
        if (w.owner != this) throw new IllegalArgumentException("wire " + w.fullName() + " belongs to another writer");
    }

    private void emit(long time, Wire w, String text) {
        owned(w);
        w.lastIsLong = false;
        if (text.equals(w.last)) return;
        try {
            ensureHeader();
            moveTime(time);
            out.write(text);
            if (text.length() > 1) out.write(' ');
            out.write(w.id);
            out.write('\n');
            w.last = text;
            changes++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void moveTime(long time) throws IOException {
        if (time < currentTime)
            throw new IllegalArgumentException("time " + time + " is before the last written time " + currentTime);
        if (time != currentTime) {
            out.write('#');
            out.write(Long.toString(time));
            out.write('\n');
            currentTime = time;
        }
    }

    private void ensureHeader() throws IOException {
        if (headerWritten) return;
        headerWritten = true;
        out.write("$version nicsim $end\n");
        out.write("$timescale " + timescale + " $end\n");
        // group wires by scope, emitting nested $scope blocks in declaration order
        Map<String, List<Wire>> byScope = new LinkedHashMap<>();
        for (Wire w : wires) byScope.computeIfAbsent(w.scope, k -> new ArrayList<>()).add(w);
        List<String> open = new ArrayList<>();
        for (Map.Entry<String, List<Wire>> e : byScope.entrySet()) {
            List<String> path = e.getKey().isEmpty() ? List.of() : List.of(e.getKey().split("\\."));
            int common = 0;
            while (common < open.size() && common < path.size() && open.get(common).equals(path.get(common))) common++;
            while (open.size() > common) { out.write("$upscope $end\n"); open.remove(open.size() - 1); }
            for (int i = common; i < path.size(); i++) {
                out.write("$scope module " + path.get(i) + " $end\n");
                open.add(path.get(i));
            }
            for (Wire w : e.getValue()) {
                String range = w.width > 1 ? " [" + (w.width - 1) + ":0]" : "";
                out.write("$var wire " + w.width + " " + w.id + " " + w.name + range + " $end\n");
            }
        }
        while (!open.isEmpty()) { out.write("$upscope $end\n"); open.remove(open.size() - 1); }
        out.write("$enddefinitions $end\n");
    }

    /** VCD identifier codes: base-94 over the printable characters '!'..'~'. */
    static String idCode(int index) {
        StringBuilder sb = new StringBuilder();
        int n = index;
        do {
            sb.append((char) ('!' + n % 94));
            n = n / 94 - 1;
        } while (n >= 0);
        return sb.toString();
    }

    @Override
    public void close() throws IOException {
        ensureHeader();
        out.close();
        if (file != null) GtkwSave.write(file, wires);
    }
}
