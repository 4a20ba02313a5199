package nicsim.vm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Debian's own kernel for the guest: the package {@code linux-image-<release>} unpacked into the
 * cache (never into the host's /boot), with a modules.dep that depmod wrote for the unpacked tree,
 * since the package leaves that to its install script.
 */
public final class GuestKernel {
    private final String release;
    private final Path root;
    /** Module name (dashes as underscores) to its path under lib/modules/release, and its dependencies' paths. */
    private final Map<String, String> paths = new HashMap<>();
    private final Map<String, List<String>> deps = new HashMap<>();

    private GuestKernel(String release, Path root) throws IOException {
        this.release = release;
        this.root = root;
        for (String line : Files.readAllLines(modules().resolve("modules.dep"))) {
            int colon = line.indexOf(':');
            if (colon < 0) continue;
            String path = line.substring(0, colon);
            String rest = line.substring(colon + 1).trim();
            paths.put(name(path), path);
            deps.put(path, rest.isEmpty() ? List.of() : List.of(rest.split("\\s+")));
        }
    }

    /** The kernel of {@code release}, downloaded and unpacked under {@code cache} the first time. */
    static GuestKernel prepare(String release, Path cache, DebianPackages debs,
                               Consumer<String> progress) throws IOException {
        if (!release.matches("[0-9][0-9A-Za-z.+~-]*"))
            throw new IllegalArgumentException("kernel release '" + release
                    + "' (kernel/RELEASE) is not a release string");
        Path deb = debs.fetch("linux-image-" + release);
        Path root = cache.resolve("kernel");
        Path ready = root.resolve(".unpacked-from");
        String from = deb.getFileName().toString();
        if (!Files.isRegularFile(ready) || !Files.readString(ready).equals(from)) {
            Tools.require("depmod", "kmod");
            progress.accept("unpacking " + from + " into " + root);
            Vm.deleteTree(root);
            DebianPackages.unpack(deb, root);
            Tools.run(List.of(Tools.sbin("depmod"), "-b", root.toString(), release), null);
            Files.writeString(ready, from);
        }
        GuestKernel k = new GuestKernel(release, root);
        if (!Files.isRegularFile(k.vmlinuz())) throw new IOException(from + " has no " + k.vmlinuz());
        return k;
    }

    public String release() { return release; }

    public Path vmlinuz() { return root.resolve("boot/vmlinuz-" + release); }

    /** lib/modules/release of the unpacked package. */
    public Path modules() { return root.resolve("lib/modules/" + release); }

    /**
     * The modules {@code names} need, with everything they depend on, as paths relative to
     * {@link #modules()} (in no particular order: depmod indexes them again where they are copied).
     * A name the kernel has built in (modules.builtin) needs nothing; a name it has neither way is
     * an error naming it.
     */
    Set<String> closure(Collection<String> names) throws IOException {
        Set<String> builtin = new HashSet<>();
        for (String line : Files.readAllLines(modules().resolve("modules.builtin"))) builtin.add(name(line));
        Set<String> out = new TreeSet<>();
        Deque<String> todo = new ArrayDeque<>();
        for (String n : names) {
            String path = paths.get(n.replace('-', '_'));
            if (path != null) todo.add(path);
            else if (!builtin.contains(n.replace('-', '_')))
                throw new IllegalArgumentException("kernel module '" + n + "' is not in " + release + "'s modules");
        }
        while (!todo.isEmpty()) {
            String p = todo.pop();
            if (out.add(p)) todo.addAll(deps.getOrDefault(p, List.of()));
        }
        return out;
    }

    /** A module's name from its path: kernel/fs/9p/9p.ko is 9p; dashes read as underscores, as modprobe reads them. */
    private static String name(String path) {
        String file = path.substring(path.lastIndexOf('/') + 1);
        int dot = file.indexOf(".ko");
        return (dot < 0 ? file : file.substring(0, dot)).replace('-', '_');
    }
}
