package nicsim.vm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Completes a staging root's shared-library closure: every library its programs and libraries
 * need (ldd, with the root's own library folders searched first) that the unpacked packages did
 * not bring is copied from the host at the same path. The host is Debian 12 like the guest's
 * packages, so its libc and friends are the ones those packages were built against.
 */
final class SharedLibraries {
    private static final Pattern RESOLVED = Pattern.compile("^\\s*(\\S+) => (/\\S+) \\(0x");
    private static final Pattern LOADER = Pattern.compile("^\\s*(/\\S+) \\(0x");
    private static final Pattern MISSING = Pattern.compile("^\\s*(\\S+) => not found");
    private static final List<String> LIB_DIRS = List.of("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu",
            "usr/lib/x86_64-linux-gnu/libibverbs");

    private SharedLibraries() { }

    static void close(Path root) throws IOException {
        Tools.require("ldd", "libc-bin");
        List<String> path = new ArrayList<>();
        for (String d : LIB_DIRS) path.add(root.resolve(d).toString());
        Set<String> missing = new TreeSet<>();
        Set<String> copied = new TreeSet<>();
        List<Path> elves = elves(root);
        // ldd takes many files at once; a batch keeps the process count small
        for (int i = 0; i < elves.size(); i += 64) {
            List<String> cmd = new ArrayList<>(List.of("ldd"));
            for (Path p : elves.subList(i, Math.min(elves.size(), i + 64))) cmd.add(p.toString());
            // ldd heads each file's lines with its name only when it is given several
            String file = cmd.size() == 2 ? root.relativize(Path.of(cmd.get(1))).toString() : "";
            for (String line : ldd(cmd, String.join(":", path)).split("\n")) {
                if (!line.startsWith("\t") && line.endsWith(":")) {
                    file = root.relativize(Path.of(line.substring(0, line.length() - 1))).toString();
                    continue;
                }
                Matcher m = MISSING.matcher(line);
                if (m.find()) {
                    missing.add(m.group(1) + " (needed by /" + file + ")");
                    continue;
                }
                m = RESOLVED.matcher(line);
                String lib = m.find() ? m.group(2) : null;
                if (lib == null && (m = LOADER.matcher(line)).find()) lib = m.group(1);
                if (lib == null || lib.startsWith(root.toString())) continue;
                Path dest = root.resolve(lib.substring(1));
                if (Files.exists(dest, LinkOption.NOFOLLOW_LINKS)) continue;
                Files.createDirectories(dest.getParent());
                Files.copy(Path.of(lib), dest); // follows the host's symlink: the guest gets the file under this name
                copied.add(lib);
            }
        }
        if (!missing.isEmpty())
            throw new IOException("shared libraries neither in the guest's packages nor on this host: "
                    + String.join(", ", missing));
    }

    /** Dynamically linked programs and libraries under root (ELF files; kernel modules are ELF too, but not ldd's). */
    private static List<Path> elves(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted().toList()) {
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) || p.toString().endsWith(".ko")) continue;
                try (InputStream in = Files.newInputStream(p)) {
                    byte[] head = in.readNBytes(4);
                    if (Arrays.equals(head, new byte[] {0x7f, 'E', 'L', 'F'})) out.add(p);
                }
            }
        }
        return out;
    }

    /** ldd's report; its exit status is ignored, since a static program in the batch makes it non-zero. */
    private static String ldd(List<String> cmd, String libraryPath) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("LD_LIBRARY_PATH", libraryPath);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("ldd interrupted", e);
        }
        return out;
    }
}
