package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C provider's files call only downward (issue 55): scripts/c-circles.py compiles each C file of libnicsim and
 * the provider and finds the files that use each other. A circle makes files that cannot be read, tested or
 * replaced one at a time; this keeps a new one from landing unnoticed.
 */
class ProviderShapeTest {
    private static final Path REPO = Path.of(System.getProperty("user.dir")).toAbsolutePath();

    private record Run(int exit, String out) { }

    private static Path repo() {
        Path p = REPO;
        while (p != null && !Files.exists(p.resolve("scripts/c-circles.py"))) p = p.getParent();
        if (p == null) throw new IllegalStateException("no scripts/c-circles.py above " + REPO);
        return p;
    }

    private static Run circles(Path tree) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("python3", repo().resolve("scripts/c-circles.py").toString());
        pb.environment().put("NICSIM_TREE", tree.toString());
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "c-circles.py did not finish");
        return new Run(p.exitValue(), out);
    }

    @Test
    void theProvidersFilesMakeNoCircle() throws Exception {
        Run r = circles(repo());
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains(" 0 circle(s)"), r.out());
    }

    @Test
    void twoFilesThatCallEachOtherAreNamed(@TempDir Path tmp) throws Exception {
        copy(repo().resolve("libnicsim"), tmp.resolve("libnicsim"));
        copy(repo().resolve("kernel/include"), tmp.resolve("kernel/include"));
        Path provider = tmp.resolve("libnicsim/provider");
        Files.writeString(provider.resolve("nicsim-zz-a.c"),
                "int nicsim_zz_b(int x);\nint nicsim_zz_a(int x) { return x > 0 ? nicsim_zz_b(x - 1) : 0; }\n");
        Files.writeString(provider.resolve("nicsim-zz-b.c"),
                "int nicsim_zz_a(int x);\nint nicsim_zz_b(int x) { return x > 0 ? nicsim_zz_a(x - 1) : 1; }\n");
        Run r = circles(tmp);
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.out().contains("nicsim-zz-a.c") && r.out().contains("nicsim-zz-b.c"), r.out());
    }

    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.naturalOrder())::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(t);
                else Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }
}
