package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The messages' fixed parts: one list of fields each, which the C structs and the Java readers follow. */
class WireLayoutTest {
    /** gcc lays each generated struct out at the offsets the Java side reads and writes. */
    @Test void cStructsHaveTheJavaOffsets() throws Exception {
        Path dir = Files.createTempDirectory("nicsim-layout");
        Files.writeString(dir.resolve("nicsim-wire.h"), Wire.cHeader());
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include \"nicsim-wire.h\"\n"
                + "int main(void) {\n");
        List<String> expected = new ArrayList<>();
        for (WireLayout l : WireLayout.values()) {
            int at = 0;
            for (WireLayout.Field f : l.fields) {
                c.append("\tprintf(\"%s.%s %zu\\n\", \"").append(l).append("\", \"").append(f.name())
                        .append("\", offsetof(struct ").append(l.cName()).append(", ").append(f.name()).append("));\n");
                expected.add(l + "." + f.name() + " " + at);
                at += f.kind().bytes;
            }
        }
        Files.writeString(dir.resolve("offsets.c"), c.append("\treturn 0;\n}\n"));
        Process gcc = new ProcessBuilder("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", "offsets", "offsets.c")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), out);
        Process run = new ProcessBuilder(dir.resolve("offsets").toString()).redirectErrorStream(true).start();
        List<String> got = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, run.waitFor());
        assertEquals(expected, got);
    }

    /** A reply written out of its layout's order, or short of it, is caught before it is sent. */
    @Test void outOfOrderOrShortWritesAreRefused() {
        Wire.Out swapped = new Wire.Out(WireLayout.CREATE_SRQ_REPLY).u32("handle", 1);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> swapped.u32("max_sge", 2));
        assertTrue(e.getMessage().contains("max_wr"), e.getMessage());
        Wire.Out shortOne = new Wire.Out(WireLayout.CREATE_SRQ_REPLY).u32("handle", 1).u32("max_wr", 2);
        assertThrows(IllegalStateException.class, () -> shortOne.finish(0));
        Wire.Out unnamed = new Wire.Out(WireLayout.CREATE_SRQ_REPLY);
        assertThrows(IllegalStateException.class, () -> unnamed.u32(1));
        Wire.Out whole = new Wire.Out(WireLayout.CREATE_SRQ_REPLY).u32("handle", 1).u32("max_wr", 2)
                .u32("max_sge", 3).u32("srq_num", 4);
        assertEquals(8 + WireLayout.CREATE_SRQ_REPLY.bytes(), whole.finish(0).remaining());
    }

    /** A request read with a field of the wrong name or width, or not read to its layout's end, is caught. */
    @Test void misreadRequestsAreRefused() {
        byte[] body = new byte[WireLayout.CREATE_QP_REQUEST.bytes()];
        Wire.In wrongName = new Wire.In(body).expect(WireLayout.CREATE_QP_REQUEST);
        wrongName.u32("pd");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> wrongName.u32("qp_type"));
        assertTrue(e.getMessage().contains("xrcd"), e.getMessage());
        Wire.In wrongWidth = new Wire.In(body).expect(WireLayout.CREATE_QP_REQUEST);
        assertThrows(IllegalStateException.class, () -> wrongWidth.u64("pd"));
        Wire.In partly = new Wire.In(body).expect(WireLayout.CREATE_QP_REQUEST);
        partly.u32("pd");
        assertThrows(IllegalStateException.class, partly::complete);
    }
}
