package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** Two serves whose sockets share a folder (/tmp/a.sock, /tmp/b.sock) keep their nodes' files apart. */
class ServeFilesTest {
    @Test
    void servesInOneFolderNeitherSeeNorRemoveEachOthersNodes() throws Exception {
        Path dir = Files.createTempDirectory("nicsim-files"), a = dir.resolve("a.sock"), b = dir.resolve("b.sock");
        PrintStream log = new PrintStream(new ByteArrayOutputStream(), true);
        Server one = new Server(new World(1, Profiles.load("cx-gen3x16"), 1, Faults.parse("none")), a,
                Server.DEFAULT_GRACE_MILLIS, Watchdog.DEFAULT_PICOS, log);
        try (Server two = new Server(Served.cluster(), b, Server.DEFAULT_GRACE_MILLIS, Watchdog.DEFAULT_PICOS, log)) {
            assertTrue(Files.isDirectory(Attach.sysfsRoot(a, 0)) && Files.isDirectory(Attach.sysfsRoot(b, 1)));
            assertFalse(Files.exists(Attach.sysfsRoot(a, 1)), "the one-node serve has no node 1");
            assertFalse(Files.readString(Attach.hostsFile(a)).contains("node1"), Files.readString(Attach.hostsFile(a)));
            assertTrue(Files.readString(Attach.hostsFile(b)).contains("127.77.0.2 node1"));
            one.close();
            assertFalse(Files.exists(Attach.sysfsRoot(a, 0)) || Files.exists(Attach.hostsFile(a)), "a's files went");
            assertTrue(Files.isDirectory(Attach.sysfsRoot(b, 1)) && Files.exists(Attach.hostsFile(b)), "b's stay");
        }
    }
}
