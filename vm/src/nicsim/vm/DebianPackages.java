package nicsim.vm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Debian packages fetched with {@code apt-get download} (nothing is installed on the host) into one
 * folder that is their cache: a package is downloaded once, and its file name, which carries its
 * version, is what the initramfs's cache key is made of.
 */
final class DebianPackages {
    private final Path dir;
    private final Consumer<String> progress;
    /** Whether this run has updated the package lists once already. */
    private boolean listsUpdated;

    DebianPackages(Path dir, Consumer<String> progress) {
        this.dir = dir;
        this.progress = progress;
    }

    /** The .deb of {@code name} (a binary package of this host's architecture), downloading it the first time. */
    Path fetch(String name) throws IOException {
        Optional<Path> have = find(name);
        if (have.isPresent()) return have.get();
        Tools.require("apt-get", "apt");
        Files.createDirectories(dir);
        progress.accept("downloading " + name + " (apt-get download)");
        try {
            download(name);
        } catch (IOException e) {
            throw new IOException("could not download the Debian package '" + name
                    + "' (is 'apt-get update' done, and is deb.debian.org reachable?): " + e.getMessage(), e);
        }
        return find(name).orElseThrow(() ->
                new IOException("apt-get download " + name + " left no " + name + "_*.deb in " + dir));
    }

    /**
     * apt-get download, after an apt-get update when it fails as root: a fresh machine (a CI
     * container) has no package lists yet, and root may fetch them.
     */
    private void download(String name) throws IOException {
        try {
            Tools.run(List.of("apt-get", "download", "-q", name), dir);
        } catch (IOException first) {
            if (!"root".equals(System.getProperty("user.name")) || listsUpdated) throw first;
            progress.accept("apt-get download " + name + " failed; updating the package lists (apt-get update)");
            Tools.run(List.of("apt-get", "update", "-q"), dir);
            listsUpdated = true;
            Tools.run(List.of("apt-get", "download", "-q", name), dir);
        }
    }

    /** Unpacks a package's files under {@code root}, as dpkg would place them, without running its scripts. */
    static void unpack(Path deb, Path root) throws IOException {
        Tools.require("dpkg-deb", "dpkg");
        Files.createDirectories(root);
        Tools.run(List.of("dpkg-deb", "-x", deb.toString(), root.toString()), null);
    }

    /** The newest downloaded file of the package (names sort by version within one package here). */
    private Optional<Path> find(String name) throws IOException {
        if (!Files.isDirectory(dir)) return Optional.empty();
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(name + "_") && p.toString().endsWith(".deb"))
                    .max(Path::compareTo);
        }
    }
}
