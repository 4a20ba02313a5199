package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** CmLayout's kernel structs, against the kernel's own uapi headers. */
class CmLayoutTest {
    /** gcc, given linux's rdma_user_cm.h (and what it includes), finds every field and struct where CmLayout has it. */
    @Test void everyFieldIsWhereTheUapiHeadersPutIt() throws Exception {
        Path dir = Files.createTempDirectory("nicsim-cm-layout");
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <netinet/in.h>\n"
                + "#include <rdma/rdma_user_cm.h>\n#include <infiniband/ib.h>\nint main(void) {\n");
        List<String> expected = new ArrayList<>();
        for (CmLayout.Struct s : CmLayout.all()) {
            c.append("\tprintf(\"%s %zu\\n\", \"").append(s.name).append("\", sizeof(struct ").append(s.name)
                    .append("));\n");
            expected.add(s.name + " " + s.size);
            for (CmLayout.Field f : s.fields) {
                c.append("\tprintf(\"%s.%s %zu %zu\\n\", \"").append(s.name).append("\", \"").append(f.path())
                        .append("\", offsetof(struct ").append(s.name).append(", ").append(f.path())
                        .append("), sizeof(((struct ").append(s.name).append(" *)0)->").append(f.path())
                        .append("));\n");
                expected.add(s.name + "." + f.path() + " " + f.offset() + " " + f.bytes());
            }
        }
        Files.writeString(dir.resolve("cm.c"), c.append("\treturn 0;\n}\n"));
        Process gcc = new ProcessBuilder("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", "cm", "cm.c")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), out);
        Process run = new ProcessBuilder(dir.resolve("cm").toString()).redirectErrorStream(true).start();
        List<String> got = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, run.waitFor());
        assertEquals(expected, got);
    }

    /** A field read at the wrong width is caught; one in network order is read so. */
    @Test void widthsAndByteOrderAreTheFieldsOwn() {
        ByteBuffer b = CmAbi.le(new byte[CmLayout.PathRec.S.size]);
        assertThrows(IllegalStateException.class, () -> CmLayout.Connect.ID.u16(b));
        CmLayout.PathRec.DLID.put16(b, 0, 0x1234);
        assertEquals(0x12, b.get(CmLayout.PathRec.DLID.offset()));
        assertEquals(0x1234, CmLayout.PathRec.DLID.u16(b));
    }
}
