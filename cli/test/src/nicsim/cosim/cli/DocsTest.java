package nicsim.cosim.cli;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The README and the pages under docs/ say what is true: every command the README shows runs as
 * shown, every page and section the code cites exists, nothing cites a document outside this
 * repository, and the reference pages name every command, option and example as the code has them.
 */
class DocsTest {
    private static final Path ROOT = Path.of(System.getProperty("nicsim.root", ".")).toAbsolutePath();

    /** The repository's own text files: sources, profiles, scripts, docs (not build output). */
    private static List<Path> textFiles() throws IOException {
        try (Stream<Path> s = Files.walk(ROOT)) {
            return s.filter(Files::isRegularFile)
                    .filter(p -> {
                        String rel = ROOT.relativize(p).toString();
                        return !rel.startsWith("out/") && !rel.startsWith(".git/") && !rel.contains("node_modules/")
                                && !rel.startsWith("bench-report/") && !rel.startsWith(".")
                                && rel.matches(".*\\.(java|scala|sc|profile|md|sh|vlt)$|^(nicsim|run-tests|mill)$");
                    })
                    .sorted().toList();
        }
    }

    /** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
    private static String anchor(String heading) {
        return heading.strip().toLowerCase().replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    private static Set<String> anchorsOf(Path page) throws IOException {
        Set<String> a = new TreeSet<>();
        boolean code = false;
        for (String l : Files.readAllLines(page)) {
            if (l.startsWith("```")) code = !code;
            else if (!code && l.startsWith("#")) a.add(anchor(l.replaceFirst("^#+", "")));
        }
        return a;
    }

    @Test
    void everyCitedPageAndSectionExists() throws IOException {
        Pattern cite = Pattern.compile("docs/([a-z-]+\\.md)(#[a-z0-9-]+)?");
        Pattern link = Pattern.compile("\\]\\(([^)#:]*\\.md)?(#[a-z0-9-]+)?\\)");
        List<String> broken = new ArrayList<>();
        int citations = 0;
        for (Path f : textFiles()) {
            String rel = ROOT.relativize(f).toString();
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = cite.matcher(lines.get(i));
                while (m.find()) {
                    citations++;
                    check(ROOT.resolve("docs").resolve(m.group(1)), m.group(2), rel + ":" + (i + 1), broken);
                }
                if (!rel.endsWith(".md")) continue;
                Matcher l = link.matcher(lines.get(i));
                while (l.find()) {
                    boolean here = l.group(1) == null || l.group(1).isEmpty();
                    Path target = here ? f : f.getParent().resolve(l.group(1)).normalize();
                    check(target, l.group(2), rel + ":" + (i + 1), broken);
                }
            }
        }
        assertTrue(citations > 50, "the code cites its sources: " + citations);
        assertEquals(List.of(), broken);
    }

    private static void check(Path page, String anchor, String where, List<String> broken) throws IOException {
        if (!Files.isRegularFile(page)) broken.add(where + ": no page " + ROOT.relativize(page));
        else if (anchor != null && !anchorsOf(page).contains(anchor.substring(1)))
            broken.add(where + ": no section " + anchor + " in " + ROOT.relativize(page) + " " + anchorsOf(page));
    }

    @Test
    void nothingCitesADocumentOutsideThisRepository() throws IOException {
        Pattern outside = Pattern.compile("REFERENCE \\d|\\bseed [a-z]+-[a-z]|\\.\\./shared|VERBS-API"
                + "|ARCHITECTURE\\.md|TOOLCHAIN\\.md|\\bseeds?/");
        List<String> found = new ArrayList<>();
        for (Path f : textFiles()) {
            if (f.endsWith("DocsTest.java")) continue;
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++)
                if (outside.matcher(lines.get(i)).find())
                    found.add(ROOT.relativize(f) + ":" + (i + 1) + ": " + lines.get(i).strip());
        }
        assertEquals(List.of(), found);
    }

    /** Shell words: blanks split, double quotes group (enough for the README's commands). */
    static List<String> words(String line) {
        List<String> w = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false, any = false;
        for (char c : line.toCharArray()) {
            if (c == '"') { quoted = !quoted; any = true; }
            else if (c == ' ' && !quoted) { if (any) w.add(cur.toString()); cur.setLength(0); any = false; }
            else { cur.append(c); any = true; }
        }
        if (any) w.add(cur.toString());
        return w;
    }

    /** The lines of the README's shell blocks, in order. */
    private static List<String> readmeCommands() throws IOException {
        List<String> cmds = new ArrayList<>();
        boolean sh = false;
        for (String l : Files.readAllLines(ROOT.resolve("README.md"))) {
            if (l.startsWith("```")) sh = l.equals("```sh");
            else if (sh && !l.isBlank()) cmds.add(l.strip());
        }
        return cmds;
    }

    @Test
    void everyCommandTheReadmeShowsWorksAsShown() throws Exception {
        List<String> cmds = readmeCommands();
        assertTrue(cmds.size() >= 6, cmds.toString());
        assertTrue(cmds.contains("./nicsim"), "the tour starts with the main job");
        Path dir = Files.createTempDirectory("nicsim-readme");
        String oldDir = System.getProperty("user.dir");
        for (String cmd : cmds) {
            List<String> w = words(cmd);
            switch (w.get(0)) {
                case "./nicsim" -> {
                    // out/ and bench-report/ go to a scratch folder: Main resolves them against the current directory
                    List<String> args = new ArrayList<>(w.subList(1, w.size()));
                    if (!args.isEmpty() && args.get(0).equals("bench"))
                        args.addAll(List.of("--out", dir.resolve("bench-report").toString()));
                    if (!args.isEmpty() && args.get(0).equals("sweep")) {
                        // the sweep file is the repository's; its results go to the scratch folder
                        args.set(1, ROOT.resolve(args.get(1)).toString());
                        args = new ArrayList<>(List.of(relocate(args.toArray(String[]::new), dir)));
                    }
                    if (args.isEmpty()) { // what ./nicsim alone runs
                        args.add("run");
                        args.addAll(List.of(relocate(Main.DEFAULT_RUN, dir)));
                    }
                    String[] a = args.toArray(String[]::new);
                    PrintStream old = System.out;
                    ByteArrayOutputStream b = new ByteArrayOutputStream();
                    System.setOut(new PrintStream(b));
                    int rc;
                    try { rc = Main.run(a); } finally { System.setOut(old); }
                    assertEquals(0, rc, cmd + ":\n" + b);
                }
                case "gtkwave" -> {
                    Path save = dir.resolve(w.get(1));
                    assertTrue(Files.exists(save), cmd + ": no " + save);
                    String dump = Files.readAllLines(save).stream().filter(l -> l.startsWith("[dumpfile]")).findFirst()
                            .orElseThrow();
                    assertTrue(Files.size(Path.of(dump.replaceFirst("^\\[dumpfile\\] \"(.*)\"$", "$1"))) > 1000, dump);
                }
                default -> fail("the README shows a command this test does not know how to check: " + cmd);
            }
        }
        assertEquals(oldDir, System.getProperty("user.dir"));
        assertTrue(Files.size(dir.resolve("out/nicsim-run-timeline.json")) > 1000, "the timeline the tour opens");
        assertTrue(Files.exists(dir.resolve("bench-report/report.md")), "the bench's report");
        long rows = Files.readString(dir.resolve("out/sweep-dma-channels/results.csv")).lines().count();
        assertTrue(rows > 10, "the sweep's table");
    }

    /** The default run's output paths (out/...) put under {@code dir}. */
    private static String[] relocate(String[] args, Path dir) {
        String[] a = args.clone();
        for (int i = 0; i < a.length; i++) if (a[i].startsWith("out/")) a[i] = dir.resolve(a[i]).toString();
        return a;
    }

    @Test
    void theCommandLinePageNamesEveryCommandAndOption() throws IOException {
        String page = Files.readString(ROOT.resolve("docs/cli.md"));
        List<String> missing = new ArrayList<>();
        for (CommandLine sub : new CommandLine(new Main()).getSubcommands().values()) {
            if (!page.contains("## " + sub.getCommandName())) missing.add("command " + sub.getCommandName());
            for (OptionSpec o : sub.getCommandSpec().options()) {
                if (o.usageHelp() || o.versionHelp()) continue;
                if (!page.contains(o.longestName())) missing.add(sub.getCommandName() + " " + o.longestName());
            }
        }
        assertEquals(List.of(), missing);
    }

    @Test
    void theVerbsPagesExampleIsTheOneTheTestsRun() throws IOException {
        List<String> src =
                Files.readAllLines(ROOT.resolve("cosim/test/src/nicsim/cosim/example/WriteExampleTest.java"));
        int from = -1, to = -1;
        for (int i = 0; i < src.size(); i++) {
            if (src.get(i).contains("docs/verbs.md example begins")) from = i + 1;
            if (src.get(i).contains("docs/verbs.md example ends")) to = i;
        }
        String indent = src.get(from).replaceFirst("\\S.*", "");
        StringBuilder expected = new StringBuilder();
        for (String l : src.subList(from, to))
            expected.append(l.startsWith(indent) ? l.substring(indent.length()) : l.strip()).append('\n');
        expected.append("}\n");
        String page = Files.readString(ROOT.resolve("docs/verbs.md"));
        Matcher m = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(page);
        assertTrue(m.find(), "docs/verbs.md has a Java example");
        assertEquals(expected.toString(), m.group(1));
    }

    @Test
    void theProfilesPagesExampleFileLoads() throws IOException {
        String page = Files.readString(ROOT.resolve("docs/profiles.md"));
        Matcher m = Pattern.compile("```\n(profile .*?)```", Pattern.DOTALL).matcher(page);
        assertTrue(m.find(), "docs/profiles.md has an example profile file");
        Profile p = Profiles.parse(m.group(1), "docs/profiles.md");
        assertEquals(16_000_000_000L, p.bitsPerSecond("pci.lane.rate"), "the override");
        assertEquals("Gen4 per-lane transfer rate, twice Gen3's", p.param("pci.lane.rate").description(),
                "the description goes on in an indented line");
        assertEquals("PCIe 4.0", p.param("pci.lane.rate").source(), "an indented line opening with | is the source");
        assertEquals(Profiles.load("cx-gen3x16").bytes("pci.max.payload"), p.bytes("pci.max.payload"),
                "the rest from cx-gen3x16");
    }
}
