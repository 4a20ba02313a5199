package nicsim.vm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.cpio.CpioArchiveEntry;
import org.apache.commons.compress.archivers.cpio.CpioArchiveInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The archive the kernel unpacks: what it holds, and the same bytes for the same tree (the cache relies on it). */
class InitramfsTest {
    @TempDir Path root;

    private byte[] archive(Map<String, byte[]> extra) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Initramfs.write(root, extra, out);
        return out.toByteArray();
    }

    /** Entry name to "mode-in-octal size" (a symlink's target, a device's numbers), read back by Commons Compress. */
    private static Map<String, String> entries(byte[] gz) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        try (CpioArchiveInputStream in =
                     new CpioArchiveInputStream(new GZIPInputStream(new ByteArrayInputStream(gz)))) {
            for (CpioArchiveEntry e; (e = in.getNextCPIOEntry()) != null; ) {
                String data = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                String what = e.isSymbolicLink() ? "-> " + data : e.isCharacterDevice()
                        ? "char " + e.getRemoteDeviceMaj() + ":" + e.getRemoteDeviceMin() : data;
                out.put(e.getName(), Long.toOctalString(e.getMode()) + " uid " + e.getUID() + " " + what);
            }
        }
        return out;
    }

    @Test void holdsTheTreeWithModesLinksAndAConsoleForInit() throws Exception {
        Files.createDirectories(root.resolve("bin"));
        Files.writeString(root.resolve("bin/busybox"), "prog");
        Files.setPosixFilePermissions(root.resolve("bin/busybox"), Initramfs.perms(0755));
        Files.createSymbolicLink(root.resolve("bin/sh"), Path.of("busybox"));
        Files.writeString(root.resolve("init"), "#!/bin/busybox sh\n");
        Files.setPosixFilePermissions(root.resolve("init"), Initramfs.perms(0700));
        Map<String, String> e = entries(archive(Map.of("etc/nicsim/run", "true\n".getBytes(StandardCharsets.UTF_8))));
        assertEquals("100755 uid 0 prog", e.get("bin/busybox"));
        assertEquals("120777 uid 0 -> busybox", e.get("bin/sh"));
        assertEquals("100700 uid 0 #!/bin/busybox sh\n", e.get("init"));
        assertEquals("20600 uid 0 char 5:1", e.get("dev/console"), "the kernel opens /dev/console for /init");
        assertEquals("100644 uid 0 true\n", e.get("etc/nicsim/run"));
        assertEquals("40755", e.get("bin").split(" ")[0]);
    }

    @Test void theSameTreeGivesTheSameBytesWhateverItsFilesTimes() throws Exception {
        Files.createDirectories(root.resolve("lib/modules"));
        Files.writeString(root.resolve("lib/modules/a.ko"), "module");
        byte[] first = archive(Map.of());
        Files.setLastModifiedTime(root.resolve("lib/modules/a.ko"), FileTime.fromMillis(123_456_789L));
        assertArrayEquals(first, archive(Map.of()));
    }
}
