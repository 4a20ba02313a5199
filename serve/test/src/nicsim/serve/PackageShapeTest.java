package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java packages' shape (issue 55): a package's classes live in one module's main sources, and the packages of
 * one module import each other one way only. A package split across two modules can be understood (and moved)
 * only with both; two packages that import each other are one package in two halves. The check reads the sources:
 * every {@code <module>/src} folder outside {@code out/} and the tests' own ({@code <module>/test/src}).
 */
class PackageShapeTest {
    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;?", Pattern.MULTILINE);
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+?)(?:\\.\\*)?\\s*;",
            Pattern.MULTILINE);

    /** One main source file: its module (the folder holding src/), package and imports. */
    private record Source(String module, Path file, String pkg, List<String> imports) { }

    private static Path repo() {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("build.sc"))) p = p.getParent();
        if (p == null) throw new IllegalStateException("no build.sc above " + System.getProperty("user.dir"));
        return p;
    }

    private static List<Source> sources(Path root) throws IOException {
        List<Source> out = new ArrayList<>();
        try (Stream<Path> all = Files.walk(root)) {
            for (Path f : (Iterable<Path>) all::iterator) {
                String name = f.getFileName().toString();
                if (!name.endsWith(".java") && !name.endsWith(".scala")) continue;
                Path rel = root.relativize(f);
                int src = -1;
                for (int i = 0; i < rel.getNameCount() && src < 0; i++)
                    if (rel.getName(i).toString().equals("src")) src = i;
                String first = rel.getName(0).toString();
                if (src < 1 || first.equals("out") || first.startsWith(".")) continue;
                if (rel.getName(src - 1).toString().equals("test")) continue; // a module's tests
                String text = Files.readString(f);
                Matcher m = PACKAGE.matcher(text);
                if (!m.find()) continue;
                List<String> imports = new ArrayList<>();
                for (Matcher i = IMPORT.matcher(text); i.find(); ) imports.add(i.group(1));
                out.add(new Source(rel.subpath(0, src).toString(), rel, m.group(1), imports));
            }
        }
        return out;
    }

    /** Each package in more than one module, with its modules and a file of each. */
    static List<String> splitPackages(Path root) throws IOException {
        Map<String, Map<String, Path>> where = new TreeMap<>();
        for (Source s : sources(root))
            where.computeIfAbsent(s.pkg(), k -> new TreeMap<>()).putIfAbsent(s.module(), s.file());
        List<String> out = new ArrayList<>();
        where.forEach((pkg, modules) -> { if (modules.size() > 1) out.add(pkg + " is in " + modules); });
        return out;
    }

    /** Each pair of one module's packages that import each other, directly or through others of the module. */
    static List<String> circles(Path root) throws IOException {
        List<Source> all = sources(root);
        Set<String> packages = new TreeSet<>();
        for (Source s : all) packages.add(s.pkg());
        Map<String, Map<String, Map<String, Path>>> uses = new TreeMap<>(); // module -> package -> package used -> by
        for (Source s : all) {
            var mine = uses.computeIfAbsent(s.module(), k -> new TreeMap<>())
                    .computeIfAbsent(s.pkg(), k -> new TreeMap<>());
            for (String imp : s.imports()) {
                String to = null;
                for (String p : packages)
                    if ((imp.equals(p) || imp.startsWith(p + ".")) && (to == null || p.length() > to.length())) to = p;
                if (to != null && !to.equals(s.pkg())) mine.putIfAbsent(to, s.file());
            }
        }
        List<String> out = new ArrayList<>();
        uses.forEach((module, graph) -> {
            for (String a : graph.keySet())
                for (String b : graph.keySet())
                    if (a.compareTo(b) < 0 && reaches(graph, a, b) && reaches(graph, b, a))
                        out.add(module + ": " + a + " and " + b + " import each other, directly or through others ("
                                + a + " by " + first(graph, a, b) + ", " + b + " by " + first(graph, b, a) + ")");
        });
        return out;
    }

    private static boolean reaches(Map<String, Map<String, Path>> graph, String from, String to) {
        Set<String> seen = new TreeSet<>();
        ArrayDeque<String> todo = new ArrayDeque<>(List.of(from));
        while (!todo.isEmpty())
            for (String next : graph.getOrDefault(todo.pop(), Map.of()).keySet())
                if (graph.containsKey(next) && seen.add(next)) todo.push(next);
        return seen.contains(to);
    }

    /** The file by which {@code a} imports {@code b}; else its first import of another package of the module. */
    private static Path first(Map<String, Map<String, Path>> graph, String a, String b) {
        Path direct = graph.get(a).get(b);
        if (direct != null) return direct;
        for (var e : graph.get(a).entrySet()) if (graph.containsKey(e.getKey())) return e.getValue();
        return null;
    }

    @Test
    void noPackageIsSplitAcrossModules() throws IOException {
        assertEquals(List.of(), splitPackages(repo()));
    }

    @Test
    void noTwoPackagesOfAModuleImportEachOther() throws IOException {
        assertEquals(List.of(), circles(repo()));
    }

    @Test
    void aSplitPackageAndACircleAreNamed(@TempDir Path tmp) throws IOException {
        write(tmp.resolve("lower/src/nicsim/shared/A.java"), "package nicsim.shared;\npublic class A { }\n");
        write(tmp.resolve("upper/src/nicsim/shared/B.java"), "package nicsim.shared;\npublic class B { }\n");
        // a test of lower's in upper's package: tests are not main sources, so it splits nothing
        write(tmp.resolve("lower/test/src/nicsim/up/T.java"), "package nicsim.up;\nimport nicsim.shared.A;\n");
        write(tmp.resolve("upper/src/nicsim/up/C.java"), "package nicsim.up;\n\nimport nicsim.down.D;\n");
        write(tmp.resolve("upper/src/nicsim/down/D.java"), "package nicsim.down;\n\nimport static nicsim.up.C.x;\n");
        List<String> split = splitPackages(tmp);
        assertEquals(1, split.size(), split.toString());
        assertTrue(split.get(0).startsWith("nicsim.shared is in {lower=") && split.get(0).contains("upper="),
                split.get(0));
        List<String> circles = circles(tmp);
        assertEquals(1, circles.size(), circles.toString());
        assertTrue(circles.get(0).startsWith("upper: nicsim.down and nicsim.up import each other"), circles.get(0));
    }

    private static void write(Path f, String text) throws IOException {
        Files.createDirectories(f.getParent());
        Files.writeString(f, text);
    }
}
