package nicsim.firmware;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The firmware counts through one table of names; whoever reads a firmware counter by name reads one of them. */
class FirmwareStatTest {
    @Test
    void everyFirmwareCounterSomeoneReadsIsOneTheFirmwareCounts() throws IOException {
        Set<String> counted = Arrays.stream(FirmwareStat.values()).map(FirmwareStat::counterName)
                .collect(Collectors.toSet());
        assertEquals(FirmwareStat.values().length, counted.size(), "distinct names");
        Path root = Path.of(System.getProperty("nicsim.root", "."));
        Pattern read = Pattern.compile("\"(Firmware\\.[a-z_]+)\"");
        Set<String> unknown = new TreeSet<>();
        int reads = 0;
        String[] modules = {"firmware-model", "host-driver", "cosim", "bench", "calibrate", "sweep", "cli"};
        for (String module : modules)
            try (Stream<Path> files = Files.walk(root.resolve(module))) {
                List<Path> sources =
                        files.filter(p -> p.toString().endsWith(".java") && !p.toString().contains("/out/")).toList();
                for (Path f : sources) {
                    if (f.endsWith("CountersTest.java")) continue; // counts names of its own, on purpose
                    Matcher m = read.matcher(Files.readString(f));
                    while (m.find()) {
                        reads++;
                        if (!counted.contains(m.group(1))) unknown.add(m.group(1) + " in " + root.relativize(f));
                    }
                }
            }
        assertTrue(reads > 30, "the readers were found: " + reads);
        assertEquals(Set.of(), unknown, "a name no firmware counter has reads 0 for ever");
    }
}
