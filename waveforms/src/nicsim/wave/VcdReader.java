package nicsim.wave;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a VCD file (plain, .gz or .xz: detected from its bytes) into a {@link Waveform}.
 * Accepts what our writer, Verilator and GTKWave produce: nested scopes, vector declarations
 * with a bit range, $dumpvars blocks, aliased identifier codes. Real values are not supported
 * and are reported with their line number.
 */
public final class VcdReader {
    private VcdReader() {}

    public static Waveform read(Path file) throws IOException {
        try (InputStream in = WaveFiles.openInput(file)) {
            return read(in, file.toString());
        }
    }

    public static Waveform read(InputStream in, String sourceName) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII), 1 << 16);
        Tokenizer t = new Tokenizer(r);
        String timescale = "1ns";
        Deque<String> scope = new ArrayDeque<>();
        Map<String, List<Waveform.Signal>> byId = new HashMap<>();
        Map<String, Integer> widthById = new HashMap<>();
        List<Object[]> pending = new ArrayList<>(); // declarations before the Waveform exists
        String tok;
        // header
        while ((tok = t.next()) != null && !tok.equals("$enddefinitions")) {
            switch (tok) {
                case "$timescale": timescale = String.join("", t.until("$end")); break;
                case "$scope": {
                    List<String> parts = t.until("$end");
                    scope.addLast(parts.get(parts.size() - 1));
                    break;
                }
                case "$upscope": t.until("$end"); scope.pollLast(); break;
                case "$var": {
                    List<String> p = t.until("$end");
                    if (p.size() < 4) throw new IOException(sourceName + ":" + t.line + ": malformed $var " + p);
                    int width = Integer.parseInt(p.get(1));
                    String id = p.get(2);
                    String name = String.join(".", scope) + (scope.isEmpty() ? "" : ".") + p.get(3);
                    pending.add(new Object[]{id, name, width});
                    widthById.put(id, width);
                    break;
                }
                default: if (tok.startsWith("$")) t.until("$end");
            }
        }
        if (tok == null) throw new IOException(sourceName + ": no $enddefinitions: not a VCD file");
        t.until("$end");
        Waveform w = new Waveform(timescale);
        for (Object[] d : pending)
            byId.computeIfAbsent((String) d[0], k -> new ArrayList<>()).add(w.declare((String) d[1], (Integer) d[2]));
        long time = 0;
        while ((tok = t.next()) != null) {
            char c = tok.charAt(0);
            if (c == '#') {
                long next = Long.parseLong(tok.substring(1));
                if (next < time)
                    throw new IOException(sourceName + ":" + t.line + ": time goes backwards (" + next + " < " + time
                            + ")");
                time = next;
                w.setEndTime(time);
            } else if (c == '$') {
                // $dumpvars/$dumpon/$dumpoff/$dumpall wrap ordinary changes; $comment is skipped
                if (tok.equals("$comment")) t.until("$end");
            } else if (c == 'b' || c == 'B') {
                String id = t.next();
                apply(byId, widthById, id, tok.substring(1), time, sourceName, t.line);
            } else if (c == 'r' || c == 'R') {
                throw new IOException(sourceName + ":" + t.line + ": real values are not supported (" + tok + ")");
            } else if ("01xXzZ".indexOf(c) >= 0) {
                apply(byId, widthById, tok.substring(1), tok.substring(0, 1), time, sourceName, t.line);
            } else {
                throw new IOException(sourceName + ":" + t.line + ": unexpected token '" + tok + "'");
            }
        }
        return w;
    }

    private static void apply(Map<String, List<Waveform.Signal>> byId, Map<String, Integer> widths, String id,
                              String value, long time, String src, long line) throws IOException {
        List<Waveform.Signal> sigs = byId.get(id);
        if (sigs == null) throw new IOException(src + ":" + line + ": value change for undeclared id '" + id + "'");
        String v = Waveform.canonical(value, widths.get(id));
        for (Waveform.Signal s : sigs) s.add(time, v);
    }

    /** Splits on white space, counting lines for error messages. */
    private static final class Tokenizer {
        private final BufferedReader r;
        private String[] parts = new String[0];
        private int idx;
        long line;

        Tokenizer(BufferedReader r) { this.r = r; }

        String next() throws IOException {
            while (idx >= parts.length) {
                String l = r.readLine();
                if (l == null) return null;
                line++;
                l = l.trim();
                parts = l.isEmpty() ? new String[0] : l.split("\\s+");
                idx = 0;
            }
            return parts[idx++];
        }

        List<String> until(String end) throws IOException {
            List<String> out = new ArrayList<>();
            String s;
            while ((s = next()) != null && !s.equals(end)) out.add(s);
            return out;
        }
    }
}
