package nicsim.kernel;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.abi.Cmd;
import nicsim.driver.DeviceHeader;
import nicsim.driver.KernelIfcHeader;
import org.junit.jupiter.api.Test;

/**
 * The kernel driver's device formats held to the device's ABI code: nicsim_ifc.h is generated from it
 * (nicsim.driver.KernelIfcHeader, the same values as libnicsim's device.h) and must be today's, and
 * nicsim_hw.h, written by hand, holds only what docs/device.md gives in prose: a command field that
 * moves, an opcode or a status that changes, fails here rather than in a guest. The drivers' C reaches queue
 * entries by those names only.
 */
class KernelHeaderTest {
    private static final Path DRIVER = Path.of("kernel", "drivers", "infiniband", "hw", "nicsim");
    private static final Pattern DEFINE =
            Pattern.compile("(?m)^#define\\s+(NICSIM_\\w+)\\s+(0x[0-9a-fA-F]+|\\d+)U?L*\\s*$");

    /**
     * The driver's names that the generated header does not have, each with the place in docs/device.md
     * that gives it (its prose, not a generated table).
     */
    private static final Set<String> PROSE_ONLY = Set.of(
            "NICSIM_MAILBOX_BYTES", // Commands: "mailboxes are at most 4096 bytes"
            "NICSIM_QP_FLAG_SIGNAL_ALL", // libnicsim's CREATE_QP flags word: 1, every send completes
            "NICSIM_MAX_MCAST_GROUPS", "NICSIM_MAX_MCAST_QP_ATTACH"); // Multicast (held to Cmd's limits below)

    private static Path root() { return Path.of(System.getProperty("nicsim.root")); }

    private static Map<String, Long> defines(String text) {
        Map<String, Long> m = new LinkedHashMap<>();
        Matcher x = DEFINE.matcher(text);
        while (x.find()) m.put(x.group(1), Long.decode(x.group(2)));
        return m;
    }

    @Test
    void theGeneratedHeaderIsTodays() throws Exception {
        String tree = Files.readString(root().resolve(KernelIfcHeader.PATH));
        assertEquals(KernelIfcHeader.render(), tree, KernelIfcHeader.PATH + " is stale: run ./mill -i "
                + "host-driver.runMain nicsim.driver.DeviceHeader");
        assertEquals(defines(DeviceHeader.render()), defines(tree), "libnicsim's and the kernel's names and values");
    }

    @Test
    void theHandWrittenConstantsAreOnlyTheManualsProse() throws Exception {
        String kernel = Files.readString(root().resolve(DRIVER).resolve("nicsim_hw.h"));
        assertTrue(kernel.contains("#include \"nicsim_ifc.h\""), "nicsim_hw.h takes the generated formats");
        Map<String, Long> ours = defines(kernel), device = defines(DeviceHeader.render());
        List<String> copied = new ArrayList<>(), unknown = new ArrayList<>();
        for (String name : ours.keySet()) {
            if (device.containsKey(name)) copied.add(name);
            else if (!PROSE_ONLY.contains(name)) unknown.add(name);
        }
        assertEquals(List.of(), copied, "nicsim_hw.h repeats what nicsim_ifc.h generates");
        assertEquals(List.of(), unknown, "nicsim_hw.h names what the device's ABI does not (or add it to PROSE_ONLY "
                + "with the place in docs/device.md that gives it)");
        // query_device's multicast limits are the ones ATTACH_MCAST enforces (QUERY_HCA_CAP does not report them)
        assertEquals((long) Cmd.MAX_MCAST_GROUPS, ours.get("NICSIM_MAX_MCAST_GROUPS"), "max_mcast_grp");
        assertEquals((long) Cmd.MAX_MCAST_QP_ATTACH, ours.get("NICSIM_MAX_MCAST_QP_ATTACH"), "max_mcast_qp_attach");
    }

    /**
     * A byte offset written as a number into a queue entry or segment: {@code cqe + 56}, {@code seg[14]} (not
     * {@code + 1}: provider's {@code cqe + 1} counts CQEs).
     */
    private static final Pattern HAND_OFFSET = Pattern.compile(
            "\\b(cqe|eqe|seg|w|wqe|body|dst|dest)\\s*(\\+\\s*([2-9]|[1-9][0-9]+)\\b|\\[[1-9][0-9]*\\])");

    /**
     * The drivers read and write queue entries (WQE segments, CQEs, EQEs) by the generated names: a field the
     * device's ABI moves then moves in every driver with the header, instead of leaving a number behind.
     */
    @Test
    void theDriversReachQueueEntriesByTheirFieldsNames() throws Exception {
        List<Path> sources = new ArrayList<>();
        for (Path dir : List.of(root().resolve(DRIVER), root().resolve("libnicsim/src"),
                root().resolve("libnicsim/provider"), root().resolve("libnicsim/examples")))
            try (var files = Files.list(dir)) {
                files.filter(f -> f.toString().endsWith(".c")).sorted().forEach(sources::add);
            }
        assertTrue(sources.size() > 20, "the drivers' sources were found: " + sources.size());
        List<String> found = new ArrayList<>();
        for (Path f : sources) {
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = HAND_OFFSET.matcher(lines.get(i));
                while (m.find()) found.add(f.getFileName() + ":" + (i + 1) + ": " + m.group());
            }
        }
        assertEquals(List.of(), found, "offsets by number: use nicsim_ifc.h's or device.h's names");
    }

    @Test
    void statusErrnosAreTheManualsOnes() throws Exception {
        String cmd = Files.readString(root().resolve(DRIVER).resolve("nicsim_cmd.c"));
        Map<String, Integer> errno =
                Map.of("0", 0, "-EIO", 5, "-EINVAL", 22, "-EBUSY", 16, "-ENOMEM", 12, "-EAGAIN", 11);
        Map<String, Long> device = defines(DeviceHeader.render());
        Matcher row = Pattern.compile("\\{ (NICSIM_STATUS_\\w+), (0|-E[A-Z]+), \"(\\w+)\" \\}").matcher(cmd);
        // the generated header's switch: "case 0x3: return 22;"
        Map<Long, Integer> expected = new LinkedHashMap<>();
        Matcher c = Pattern.compile("case (0x[0-9a-f]+): return (\\d+);").matcher(DeviceHeader.render());
        while (c.find()) expected.put(Long.decode(c.group(1)), Integer.parseInt(c.group(2)));
        int rows = 0;
        while (row.find()) {
            rows++;
            Long status = device.get(row.group(1));
            assertNotNull(status, row.group(1));
            assertEquals("NICSIM_STATUS_" + row.group(3), row.group(1), "the name printed is the status's");
            assertEquals(expected.get(status), errno.get(row.group(2)), row.group(1) + "'s errno");
        }
        assertEquals(expected.size(), rows, "every status of the device has its errno in nicsim_cmd.c");
    }

    /** A failed command is logged by its name: every command of the manual has one, not "UNKNOWN_COMMAND". */
    @Test
    void everyCommandHasItsNameInTheLog() throws Exception {
        String cmd = Files.readString(root().resolve(DRIVER).resolve("nicsim_cmd.c"));
        List<String> commands = new ArrayList<>();
        Matcher d = Pattern.compile("#define NICSIM_CMD_(\\w+)\\s+0x").matcher(KernelIfcHeader.render());
        while (d.find()) commands.add(d.group(1));
        assertTrue(commands.contains("RESIZE_CQ"), "the generated header's commands were read: " + commands);
        List<String> named = new ArrayList<>();
        Matcher row = Pattern.compile("\\{ NICSIM_CMD_(\\w+), \"(\\w+)\" \\}").matcher(cmd);
        while (row.find()) {
            assertEquals(row.group(1), row.group(2), "the name printed is the command's");
            named.add(row.group(1));
        }
        assertEquals(commands, named, "nicsim_cmd.c's command names, in the header's order");
    }

    @Test
    void syndromeNamesAreTheManualsInOrder() throws Exception {
        String cmd = Files.readString(root().resolve(DRIVER).resolve("nicsim_cmd.c"));
        String md = Files.readString(root().resolve("docs").resolve("device.md"));
        String table = md.substring(md.indexOf("<!-- generated: syndromes -->"),
                md.indexOf("<!-- end of generated: syndromes -->"));
        List<String> manual = new ArrayList<>();
        Matcher r = Pattern.compile("(?m)^- \\*\\*(\\d+)\\*\\* (\\w+):").matcher(table);
        while (r.find()) {
            assertEquals(manual.size(), Integer.parseInt(r.group(1)), "syndromes are numbered densely");
            manual.add(r.group(2));
        }
        int names = cmd.indexOf("nicsim_syndrome_names[] = {");
        String array = cmd.substring(names, cmd.indexOf("};", cmd.indexOf("nicsim_syndrome_names[]")));
        List<String> ours = new ArrayList<>();
        Matcher s = Pattern.compile("\"(\\w+)\"").matcher(array);
        while (s.find()) ours.add(s.group(1));
        assertTrue(manual.size() > 50, "the manual's syndromes table was read: " + manual.size());
        assertEquals(manual, ours, "nicsim_cmd.c's syndrome names, indexed by syndrome");
    }
}
