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

    /**
     * QUERY's PATH answer, read as librdmacm reads it (infiniband/sa.h's struct ibv_path_record, which it converts
     * field by field): the service ID, both GIDs and LIDs, reversible with one path, the P_Key, and MTU, rate and
     * packet life time each with the selector "exactly".
     */
    @Test void aQueriedPathIsWhatLibrdmacmReads() throws Exception {
        byte[] dgid = SubnetManager.gid(3), sgid = SubnetManager.gid(2);
        byte[] rec = CmPaths.saPathRecord(0x0000_0000_0106_1cacL, dgid, sgid, 3, 2, 5);
        StringBuilder hex = new StringBuilder();
        for (byte x : rec) hex.append(String.format("\\x%02x", x & 0xff));
        Path dir = Files.createTempDirectory("nicsim-cm-path");
        Files.writeString(dir.resolve("path.c"), "#include <endian.h>\n#include <stdio.h>\n#include <string.h>\n"
                + "#include <infiniband/sa.h>\nint main(void) {\n\tstruct ibv_path_record p;\n"
                + "\tmemcpy(&p, \"" + hex + "\", sizeof p);\n"
                + "\tprintf(\"sid %llx dgid %x sgid %x dlid %u slid %u rev %x pkey %x mtu %x rate %x life %x\\n\",\n"
                + "\t       (unsigned long long)be64toh(p.service_id), p.dgid.raw[0] << 8 | p.dgid.raw[15],\n"
                + "\t       p.sgid.raw[0] << 8 | p.sgid.raw[15], be16toh(p.dlid), be16toh(p.slid),\n"
                + "\t       p.reversible_numpath, be16toh(p.pkey), p.mtu, p.rate, p.packetlifetime);\n"
                + "\treturn sizeof p != 64;\n}\n");
        Process gcc = new ProcessBuilder("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", "path", "path.c")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), out);
        Process run = new ProcessBuilder(dir.resolve("path").toString()).redirectErrorStream(true).start();
        String got = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, run.waitFor(), got);
        assertEquals("sid 1061cac dgid fe03 sgid fe02 dlid 3 slid 2 rev 81 pkey ffff mtu 85 rate 90 life 8d", got);
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
