package nicsim.vm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Runs the host's tools (apt-get, dpkg-deb, depmod, ldd) and finds them where Debian puts them. */
public final class Tools {
    private Tools() { }

    /**
     * Runs {@code cmd} in {@code dir} and returns its standard output; a non-zero exit is an
     * IOException naming the command and carrying what it printed, so the user sees apt's own words.
     */
    static String run(List<String> cmd, Path dir, Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(false);
        if (dir != null) pb.directory(dir.toFile());
        pb.environment().putAll(env);
        Path err = Files.createTempFile("nicsim-vm-", ".err");
        try {
            Process p = pb.redirectError(err.toFile()).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int rc = p.waitFor();
            if (rc != 0)
                throw new IOException(String.join(" ", cmd) + " failed (exit status " + rc + "): "
                        + (Files.readString(err) + out).strip());
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", cmd) + " interrupted", e);
        } finally {
            Files.deleteIfExists(err);
        }
    }

    static String run(List<String> cmd, Path dir) throws IOException {
        return run(cmd, dir, Map.of());
    }

    /** A tool in /usr/sbin or /sbin, which an ordinary user's PATH often lacks (depmod, ldconfig). */
    static String sbin(String name) {
        for (String d : List.of("/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"))
            if (Files.isExecutable(Path.of(d + name))) return d + name;
        return name;
    }

    /** What to install when a tool is missing: the one line a user needs. */
    static void require(String tool, String debianPackage) throws IOException {
        boolean found = !sbin(tool).equals(tool);
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
            found |= Files.isExecutable(Path.of(d, tool));
        if (!found)
            throw new MissingTool(tool + " is not installed; install it with: sudo apt-get install -y " + debianPackage
                    + " (scripts/ensure-tools.sh --vm does, as root)");
    }

    /** A host tool the guest cannot be built or booted without. */
    public static final class MissingTool extends IOException {
        private static final long serialVersionUID = 1L;

        MissingTool(String message) { super(message); }
    }
}
