package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/** The messages' fixed parts: one record each, which the C structs and the Java readers follow. */
class WireLayoutTest {
    /**
     * The ops whose fields both sides still read and write one by one (WireLayout.Message.byHand):
     * none now, and a new op cannot be one unnoticed.
     */
    private static final Set<Wire.Op> BY_HAND = EnumSet.noneOf(Wire.Op.class);

    /**
     * Every op has its messages declared (or is one of the few still by hand), every record an op
     * names is generated into C, and no record is declared that no op uses.
     */
    @Test void everyOpHasItsMessagesDeclared() {
        Set<Class<?>> used = new HashSet<>();
        Set<Wire.Op> byHand = EnumSet.noneOf(Wire.Op.class);
        for (Wire.Op op : Wire.Op.values()) {
            WireLayout.Message m = WireLayout.of(op);
            if (!m.declared()) {
                byHand.add(op);
                continue;
            }
            for (Class<?> t : Arrays.asList(m.request(), m.reply())) if (t != null) use(t, used);
            // the records its variable part names (Sge, SendWr...) are used too
            for (Class<? extends Record> t : WireLayout.ALL)
                if (m.rest().matches(".*\\b" + t.getSimpleName() + "\\b.*")) use(t, used);
        }
        assertEquals(BY_HAND, byHand);
        for (Class<?> t : used) assertTrue(WireLayout.ALL.contains(t), t + " is not in WireLayout.ALL");
        for (Class<?> t : WireLayout.ALL) assertTrue(used.contains(t), t + " is declared and no op uses it");
    }

    /** {@code t} and the records within it. */
    private static void use(Class<?> t, Set<Class<?>> used) {
        used.add(t);
        for (WireCodec.Field f : WireCodec.shape(t).fields) if (f.kind() == WireCodec.Kind.STRUCT) use(f.type(), used);
    }

    /** The header in the tree is the one the declarations give today (libnicsim's C build reads it). */
    @Test void theHeaderInTheTreeIsTodays() throws Exception {
        Path include = Path.of(System.getProperty("nicsim.root", "."), "libnicsim", "include", "nicsim");
        assertEquals(Wire.cHeader(), Files.readString(include.resolve("wire.h")),
                "libnicsim/include/nicsim/wire.h: rewrite it with ./mill serve.runMain nicsim.serve.Wire");
    }

    /** gcc lays each generated struct out at the offsets the Java side reads and writes. */
    @Test void cStructsHaveTheJavaOffsets() throws Exception {
        Path dir = Files.createTempDirectory("nicsim-layout");
        Files.writeString(dir.resolve("nicsim-wire.h"), Wire.cHeader());
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include \"nicsim-wire.h\"\n"
                + "int main(void) {\n");
        List<String> expected = new ArrayList<>();
        for (Class<? extends Record> t : WireLayout.ALL) {
            WireCodec.Shape s = WireCodec.shape(t);
            int at = 0;
            for (WireCodec.Field f : s.fields) {
                c.append("\tprintf(\"%s.%s %zu\\n\", \"").append(s.cName()).append("\", \"").append(f.name())
                        .append("\", offsetof(struct ").append(s.cName()).append(", ").append(f.name()).append("));\n");
                expected.add(s.cName() + "." + f.name() + " " + at);
                at += f.bytes();
            }
        }
        Files.writeString(dir.resolve("offsets.c"), c.append("\treturn 0;\n}\n"));
        Process gcc = new ProcessBuilder("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", "offsets",
                "offsets.c").directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), out);
        Process run = new ProcessBuilder(dir.resolve("offsets").toString()).redirectErrorStream(true).start();
        List<String> got = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, run.waitFor());
        assertEquals(expected, got);
    }

    /** A record written is read back the same, field for field, in its declared number of bytes. */
    @Test void recordsGoAndComeBackWhole() {
        var q = new WireLayout.CreateQpRequest(1, Wire.NONE, 2, 3, 4, Wire.NONE, 16, 8, 2, 1, 64, true, 0, -7L);
        ByteBuffer b = new Wire.Out(q).finish(0);
        assertEquals(8 + WireCodec.bytes(WireLayout.CreateQpRequest.class), b.remaining());
        byte[] body = Arrays.copyOfRange(b.array(), 8, b.limit());
        assertEquals(q, new Wire.In(body).read(WireLayout.CreateQpRequest.class));
        // sq_sig_all, a boolean, is u32 1 at its C offset: 11 u32 fields before it
        assertEquals(1, ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN).getInt(44));
    }

    /** A text field is cut to its bytes less the NUL, and read back up to the NUL. */
    @Test void textIsNulPadded() {
        String long80 = "v".repeat(80);
        var reply = new WireLayout.QueryDeviceReply(1, 1, 1, 4096, 2, 3, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                0, long80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, -1, 0, 0, 0);
        ByteBuffer b = new Wire.Out(reply).finish(0);
        byte[] body = Arrays.copyOfRange(b.array(), 8, b.limit());
        assertEquals("v".repeat(WireCodec.TEXT_BYTES - 1),
                new Wire.In(body).read(WireLayout.QueryDeviceReply.class).fwVer());
    }

    /** A count past 2^31 - 1 is EINVAL naming its field; a message short of its record is malformed. */
    @Test void badCountsAndShortMessagesAreRefused() {
        byte[] body = new byte[WireCodec.bytes(WireLayout.CreateSrqRequest.class)];
        ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN).putInt(4, -1); // max_wr
        VerbsException e = assertThrows(VerbsException.class,
                () -> new Wire.In(body).read(WireLayout.CreateSrqRequest.class));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("max_wr 4294967295"), e.getMessage());
        Wire.Malformed m = assertThrows(Wire.Malformed.class,
                () -> new Wire.In(Arrays.copyOf(body, 13)).read(WireLayout.Sge.class));
        assertTrue(m.getMessage().contains("lkey"), m.getMessage());
    }
}
