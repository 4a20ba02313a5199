package nicsim.profile;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Loads profiles: the built-in ones (resources under nicsim/profiles) by name, or any file by path.
 *
 * <p>File format, one item a line; '#' starts a comment line:
 * <pre>
 * profile  cx-gen3x16
 * about    A modern adapter: PCIe Gen3 x16, ...
 * extends  other-profile          (optional: start from its parameters)
 * core.clock = 250 MHz | core clock of the adapter's blocks | docs/sources.md#connectx-figures
 * </pre>
 * A parameter line is {@code name = value [unit] | description | source}; the description is
 * required, because every figure in a profile must say what it is.
 *
 * <p>A line that starts with a space or a tab (and is not blank or a comment) continues the item
 * above it: its text is joined to that item's with one space, so a '|' that opens it starts the
 * next field and any other text goes on with the field the item's line ended in:
 * <pre>
 * dma.clock = 500 MHz | clock of the DMA engines and their local bus to SRAM
 *                       (one beat per cycle)
 *                     | derived: docs/sources.md#connectx-figures
 * </pre>
 */
public final class Profiles {
    public static final List<String> BUILTIN = List.of("lanai43", "lanai72", "cx-gen3x16", "cx6-gen4x16");
    public static final String DEFAULT = "cx-gen3x16";

    private Profiles() {}

    /** A built-in profile by name, or a profile file by path. */
    public static Profile load(String nameOrPath) {
        if (BUILTIN.contains(nameOrPath)) return builtin(nameOrPath);
        Path p = Path.of(nameOrPath);
        if (Files.isRegularFile(p)) {
            try {
                return parse(Files.readString(p), p.toString());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read profile file " + p, e);
            }
        }
        throw new IllegalArgumentException("unknown profile '" + nameOrPath + "': not a built-in profile "
                + BUILTIN + " nor a readable file");
    }

    public static Profile builtin(String name) {
        String res = "/nicsim/profiles/" + name + ".profile";
        try (InputStream in = Profiles.class.getResourceAsStream(res)) {
            if (in == null)
                throw new IllegalArgumentException("unknown profile '" + name + "' (built-in: " + BUILTIN + ")");
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            StringBuilder sb = new StringBuilder();
            String l;
            while ((l = r.readLine()) != null) sb.append(l).append('\n');
            return parse(sb.toString(), res);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read built-in profile " + res, e);
        }
    }

    public static Profile parse(String text, String source) {
        String name = null, about = "";
        Map<String, Param> params = new LinkedHashMap<>();
        for (Item item : items(text, source)) {
            String where = item.where(), line = item.text();
            if (line.startsWith("profile ")) { name = line.substring(8).strip(); continue; }
            if (line.startsWith("about ")) { about = line.substring(6).strip(); continue; }
            if (line.startsWith("extends ")) { params.putAll(load(line.substring(8).strip()).params()); continue; }
            int eq = line.indexOf('=');
            if (eq < 0)
                throw new IllegalArgumentException(where + ": expected 'name = value | description | source', got '"
                        + line + "'");
            String key = line.substring(0, eq).strip();
            if (!key.matches("[a-z0-9][a-z0-9_.\\-]*"))
                throw new IllegalArgumentException(where + ": parameter name '" + key
                        + "' must be lower-case words joined by dots");
            String[] parts = line.substring(eq + 1).split("\\|", -1);
            if (parts.length < 2 || parts[1].isBlank())
                throw new IllegalArgumentException(where + ": parameter " + key
                        + " has no description (name = value | description | source)");
            String from = parts.length > 2 ? parts[2].strip() : "";
            params.put(key, Param.parse(key, parts[0], parts[1].strip(), from, where));
        }
        if (name == null) throw new IllegalArgumentException(source + ": no 'profile <name>' line");
        return new Profile(name, about, params);
    }

    /** One item of a profile file: its text with continuation lines joined, and where its first line is. */
    private record Item(String where, String text) {}

    /** The file's items: comments and blank lines dropped, each indented line joined to the item above it. */
    private static List<Item> items(String text, String source) {
        List<Item> items = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        boolean open = false;   // the line above is an item's, so an indented line may continue it
        for (int i = 0; i < lines.length; i++) {
            String raw = lines[i], line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) { open = false; continue; }
            boolean continues = raw.charAt(0) == ' ' || raw.charAt(0) == '\t';
            if (!continues) {
                items.add(new Item(source + ":" + (i + 1), line));
                open = true;
            } else if (open) {
                Item above = items.get(items.size() - 1);
                items.set(items.size() - 1, new Item(above.where(), above.text() + " " + line));
            } else {
                throw new IllegalArgumentException(source + ":" + (i + 1) + ": indented line '" + line
                        + "' continues an item, but the line above it is blank or a comment");
            }
        }
        return items;
    }
}
