package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import nicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/** CmLayout's kernel structs, against the kernel's own uapi headers (and cma.c's struct cma_hdr). */
class CmLayoutTest {
    /**
     * struct cma_hdr and its union as Linux's drivers/infiniband/core/cma.c declares them: the RDMA CM's header in a
     * REQ's private data, in no uapi header, so declared here for gcc to lay out.
     */
    private static final String CMA_HDR = "union cma_ip_addr {\n\tstruct in6_addr ip6;\n"
            + "\tstruct {\n\t\t__be32 pad[3];\n\t\t__be32 addr;\n\t} ip4;\n};\n"
            + "struct cma_hdr {\n\t__u8 cma_version;\n\t__u8 ip_version; /* IP version: 7:4 */\n\t__be16 port;\n"
            + "\tunion cma_ip_addr src_addr;\n\tunion cma_ip_addr dst_addr;\n};\n";

    /** What C program {@code source} prints, compiled warning-free as {@code name}; its exit status must be 0. */
    private static String run(String name, String source) throws Exception {
        Path dir = Files.createTempDirectory("nicsim-" + name);
        Files.writeString(dir.resolve(name + ".c"), source);
        Process gcc = new ProcessBuilder("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", name, name + ".c")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), out);
        Process run = new ProcessBuilder(dir.resolve(name).toString()).redirectErrorStream(true).start();
        String got = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, run.waitFor(), got);
        return got;
    }

    /** {@code b} as a C string literal's escapes. */
    private static String hex(byte[] b) {
        StringBuilder hex = new StringBuilder();
        for (byte x : b) hex.append(String.format("\\x%02x", x & 0xff));
        return hex.toString();
    }

    /**
     * gcc, given linux's rdma_user_cm.h and ib_user_mad.h (and what they include) and rdma-core's sa.h, finds every
     * field and struct where CmLayout has it.
     */
    @Test void everyFieldIsWhereTheUapiHeadersPutIt() throws Exception {
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <netinet/in.h>\n"
                + "#include <rdma/rdma_user_cm.h>\n#include <rdma/ib_user_mad.h>\n#include <infiniband/ib.h>\n"
                + "#include <infiniband/sa.h>\n" + CMA_HDR + "int main(void) {\n");
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
        assertEquals(expected, run("cm", c.append("\treturn 0;\n}\n").toString()).lines().toList());
    }

    /**
     * QUERY's PATH answer, read as librdmacm reads it (infiniband/sa.h's struct ibv_path_record, which it converts
     * field by field): the service ID, both GIDs and LIDs, reversible with one path, the P_Key, and MTU, rate and
     * packet life time each with the selector "exactly".
     */
    @Test void aQueriedPathIsWhatLibrdmacmReads() throws Exception {
        byte[] dgid = SubnetManager.gid(3), sgid = SubnetManager.gid(2);
        byte[] rec = CmPaths.saPathRecord(0x0000_0000_0106_1cacL, dgid, sgid, 3, 2, 5);
        String got = run("path", "#include <endian.h>\n#include <stdio.h>\n#include <string.h>\n"
                + "#include <infiniband/sa.h>\nint main(void) {\n\tstruct ibv_path_record p;\n"
                + "\tmemcpy(&p, \"" + hex(rec) + "\", sizeof p);\n"
                + "\tprintf(\"sid %llx dgid %x sgid %x dlid %u slid %u rev %x pkey %x mtu %x rate %x life %x\\n\",\n"
                + "\t       (unsigned long long)be64toh(p.service_id), p.dgid.raw[0] << 8 | p.dgid.raw[15],\n"
                + "\t       p.sgid.raw[0] << 8 | p.sgid.raw[15], be16toh(p.dlid), be16toh(p.slid),\n"
                + "\t       p.reversible_numpath, be16toh(p.pkey), p.mtu, p.rate, p.packetlifetime);\n"
                + "\treturn sizeof p != 64;\n}\n");
        assertEquals("sid 1061cac dgid fe03 sgid fe02 dlid 3 slid 2 rev 81 pkey ffff mtu 85 rate 90 life 8d", got);
    }

    /**
     * A REQ's private data as nicsim's CM sends it for a librdmacm program's rdma_connect (rping's: IPv4; an IPv6
     * identifier's: IPv4-mapped), read through struct cma_hdr as the kernel's cma reads it (cma_save_ip4_info and
     * _ip6_info): version 0, the IP version in the high nibble, the source port, both addresses, then the program's
     * own private data.
     */
    @Test void aRequestsRdmaCmHeaderIsWhatTheKernelReads() throws Exception {
        byte[] v4 = CmExchange.cmaHeader(new CmAbi.Addr(0x7f4d0001, 32768, false),
                new CmAbi.Addr(0x7f4d0002, 7174, false), "rping".getBytes(StandardCharsets.US_ASCII));
        byte[] v6 = CmExchange.cmaHeader(new CmAbi.Addr(0x7f4d0001, 40000, true),
                new CmAbi.Addr(0x7f4d0002, 7174, true), "ping6".getBytes(StandardCharsets.US_ASCII));
        String got = run("cma-hdr", "#include <arpa/inet.h>\n#include <stdio.h>\n#include <string.h>\n"
                + "#include <linux/types.h>\n" + CMA_HDR
                + "static void show(const char *priv, size_t len) {\n\tstruct cma_hdr h;\n"
                + "\tchar src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];\n\tint v6;\n"
                + "\tmemcpy(&h, priv, sizeof h);\n\tv6 = h.ip_version >> 4 == 6;\n"
                + "\tinet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (void *)&h.src_addr.ip6 : &h.src_addr.ip4.addr, src,"
                + " sizeof src);\n"
                + "\tinet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (void *)&h.dst_addr.ip6 : &h.dst_addr.ip4.addr, dst,"
                + " sizeof dst);\n"
                + "\tprintf(\"version %u ip %u port %u src %s dst %s data %.*s\\n\", h.cma_version,"
                + " h.ip_version >> 4,\n\t       ntohs(h.port), src, dst, (int)(len - sizeof h), priv + sizeof h);\n}\n"
                + "int main(void) {\n\tshow(\"" + hex(v4) + "\", " + v4.length + ");\n"
                + "\tshow(\"" + hex(v6) + "\", " + v6.length + ");\n\treturn 0;\n}\n");
        assertEquals("version 0 ip 4 port 32768 src 127.77.0.1 dst 127.77.0.2 data rping\n"
                + "version 0 ip 6 port 40000 src ::ffff:127.77.0.1 dst ::ffff:127.77.0.2 data ping6", got);
    }

    /**
     * Socket addresses as a librdmacm program's libc writes and reads them: an IPv4 one, an IPv6 identifier's
     * IPv4-mapped one (::ffff:a.b.c.d) and its "any" (::) read back from what nicsim writes; one libc made from
     * "::ffff:127.77.0.2" parsed as node 1's address, and a true IPv6 address refused naming the field.
     */
    @Test void socketAddressesAreWhatLibcWritesAndReads() throws Exception {
        byte[] v4 = new CmAbi.Addr(0x7f4d0001, 7174, false).sockaddr(CmLayout.SockaddrIn.S.size);
        byte[] v6 = new CmAbi.Addr(0x7f4d0001, 7174, true).sockaddr(CmLayout.SockaddrIn6.S.size);
        byte[] any = new CmAbi.Addr(0, 7175, true).sockaddr(CmLayout.SockaddrIn6.S.size);
        String got = run("sockaddr", "#include <arpa/inet.h>\n#include <stdio.h>\n#include <string.h>\n"
                + "static void show4(const char *b) {\n\tstruct sockaddr_in a;\n\tchar t[INET_ADDRSTRLEN];\n"
                + "\tmemcpy(&a, b, sizeof a);\n\tinet_ntop(AF_INET, &a.sin_addr, t, sizeof t);\n"
                + "\tprintf(\"%d %s %u\\n\", a.sin_family, t, ntohs(a.sin_port));\n}\n"
                + "static void show6(const char *b) {\n\tstruct sockaddr_in6 a;\n\tchar t[INET6_ADDRSTRLEN];\n"
                + "\tmemcpy(&a, b, sizeof a);\n\tinet_ntop(AF_INET6, &a.sin6_addr, t, sizeof t);\n"
                + "\tprintf(\"%d %s %u\\n\", a.sin6_family, t, ntohs(a.sin6_port));\n}\n"
                + "static void hex6(const char *text) {\n\tstruct sockaddr_in6 a;\n\tsize_t i;\n"
                + "\tmemset(&a, 0, sizeof a);\n\ta.sin6_family = AF_INET6;\n\ta.sin6_port = htons(7174);\n"
                + "\tinet_pton(AF_INET6, text, &a.sin6_addr);\n"
                + "\tfor (i = 0; i < sizeof a; i++) printf(\"%02x\", ((unsigned char *)&a)[i]);\n"
                + "\tprintf(\"\\n\");\n}\n"
                + "int main(void) {\n\tshow4(\"" + hex(v4) + "\");\n\tshow6(\"" + hex(v6) + "\");\n"
                + "\tshow6(\"" + hex(any) + "\");\n\thex6(\"::ffff:127.77.0.2\");\n\thex6(\"fe80::2\");\n"
                + "\treturn 0;\n}\n");
        List<String> lines = got.lines().toList();
        assertEquals(List.of("2 127.77.0.1 7174", "10 ::ffff:127.77.0.1 7174", "10 :: 7175"), lines.subList(0, 3));
        CmAbi.Addr mapped = CmAbi.addr(HexFormat.of().parseHex(lines.get(3)), 0, "dst_addr");
        assertEquals("127.77.0.2:7174", mapped.toString());
        assertEquals(CmAbi.AF_INET6, mapped.family());
        VerbsException e = assertThrows(VerbsException.class,
                () -> CmAbi.addr(HexFormat.of().parseHex(lines.get(4)), 0, "dst_addr"));
        assertEquals("EADDRNOTAVAIL: dst_addr: an IPv6 address; nicsim's nodes have IPv4 ones", e.getMessage());
    }

    /**
     * A umad file without P_Keys reads the old header, which Umad writes through the new one's fields: each of them
     * is where the new header has it, as wide and in the same byte order.
     */
    @Test void theOldUmadHeaderIsTheNewOnesStart() {
        assertEquals(places(CmLayout.UserMadHdr.S), places(CmLayout.UserMadHdrOld.S));
    }

    /** Each field of {@code s}: its name, offset, width and byte order. */
    private static List<String> places(CmLayout.Struct s) {
        return s.fields.stream()
                .map(f -> f.path() + " " + f.offset() + " " + f.bytes() + (f.be() ? " be" : ""))
                .toList();
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
