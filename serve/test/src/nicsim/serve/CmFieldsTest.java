package nicsim.serve;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.fabric.Mad;
import org.junit.jupiter.api.Test;

/** CmFields' declarations, against Linux's own (include/rdma/ibta_vol1_c12.h). */
class CmFieldsTest {
    /**
     * Linux's IBTA chapter 12 header, from Debian's linux-headers for the guests' kernel (the release
     * in kernel/RELEASE, 6.1.0-57-amd64: its architecture-independent half is linux-headers-6.1.0-57-common).
     */
    private static Path linuxHeader() throws Exception {
        Path root = Path.of(System.getProperty("nicsim.root", "."));
        String release = Files.readString(root.resolve("kernel/RELEASE")).trim();
        Path h = Path.of("/usr/src/linux-headers-" + release.replaceFirst("-[^-]+$", "") + "-common", "include",
                "rdma", "ibta_vol1_c12.h");
        assertTrue(Files.exists(h), h + " is missing: run scripts/ensure-tools.sh --kernel");
        return h;
    }

    /**
     * gcc reads Linux's declaration of every field CmFields declares (its IBA_FIELD macros made to give the
     * MAD byte, bit and width), and finds each where CmFields has it.
     */
    @Test void everyFieldIsWhereLinuxDeclaresIt() throws Exception {
        Path dir = Files.createTempDirectory("nicsim-cm-fields");
        Files.createDirectories(dir.resolve("rdma"));
        Files.writeString(dir.resolve("rdma/iba.h"), "/* replaced by the macros below */\n");
        Files.copy(linuxHeader(), dir.resolve("ibta_vol1_c12.h"));
        StringBuilder c = new StringBuilder("""
                #include <stdio.h>
                /* the kernel's macros give a mask; these give where the field starts and its width */
                #define _IBA_DEFS_H_
                #define IBA_FIELD_BLOC(s, byte, bit, bits) (int)(byte), bit, bits
                #define IBA_FIELD8_LOC(s, byte, bits) (int)(byte), 0, bits
                #define IBA_FIELD16_LOC(s, byte, bits) (int)(byte), 0, bits
                #define IBA_FIELD32_LOC(s, byte, bits) (int)(byte), 0, bits
                #define IBA_FIELD64_LOC(s, byte) (int)(byte), 0, 64
                #define IBA_FIELD_MLOC(s, byte, bits, type) (int)(byte), 0, bits
                #define BUILD_BUG_ON_ZERO(e) 0
                typedef unsigned int u32;
                struct ib_mad_hdr { unsigned char bytes[24]; };
                #include "ibta_vol1_c12.h"
                static void p(const char *name, int byte, int bit, int bits) {
                	printf("%s %d %d %d\\n", name, byte, bit, bits);
                }
                #define P(f) p(#f, f)
                int main(void) {
                """);
        List<String> expected = new ArrayList<>();
        for (CmFields.Message m : CmFields.all()) {
            for (CmFields.Field f : m.fields) {
                c.append("\tP(").append(f.cName()).append(");\n");
                expected.add(f.cName() + " " + f.offset() + " " + f.bit() + " " + f.bits());
            }
        }
        Files.writeString(dir.resolve("fields.c"), c.append("\treturn 0;\n}\n"));
        Process gcc = new ProcessBuilder("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I.", "-o", "fields",
                "fields.c").directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), out);
        Process run = new ProcessBuilder(dir.resolve("fields").toString()).redirectErrorStream(true).start();
        List<String> got = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, run.waitFor());
        assertEquals(expected, got);
    }

    /** A message's fields do not overlap, and its private data is what they leave of the 256 bytes. */
    @Test void fieldsAreApartAndPrivateDataFillsTheRest() {
        for (CmFields.Message m : CmFields.all()) {
            boolean[] used = new boolean[CmMad.SIZE * 8];
            for (CmFields.Field f : m.fields) {
                for (int i = 0; i < f.bits(); i++) {
                    int b = f.offset() * 8 + f.bit() + i;
                    assertTrue(!used[b], f + " overlaps another field at bit " + b);
                    used[b] = true;
                }
            }
            CmFields.Field p = m.privateData();
            assertEquals(CmMad.SIZE, p.offset() + p.size(), m.name + "'s private data ends the MAD");
            assertEquals(CmMad.SIZE - p.offset(), CmMad.privateSize(m.attr));
        }
    }

    /** A field written leaves its neighbours' bits as they were, and reads back cut to its width. */
    @Test void aFieldTakesOnlyItsOwnBits() {
        byte[] mad = new byte[CmMad.SIZE];
        Arrays.fill(mad, (byte) 0xff);
        CmFields.Req.SRQ.put(mad, 0);
        assertEquals(0xf7, mad[CmFields.Req.SRQ.offset()] & 0xff, "SRQ: bit 4 of REQ's byte 51, from the top");
        CmFields.Req.STARTING_PSN.put(mad, 0x1abcdef);
        assertEquals(0xabcdef, CmFields.Req.STARTING_PSN.get(mad));
        assertEquals(31, CmFields.Req.LOCAL_CM_RESPONSE_TIMEOUT.get(mad), "the byte after the PSN is untouched");
        assertThrows(IllegalStateException.class, () -> CmFields.Req.PRIVATE_DATA.get(mad));
        assertThrows(IllegalStateException.class, () -> CmFields.Req.SERVICE_ID.u32(mad));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CmFields.of(0x11));
        assertTrue(e.getMessage().contains("0x11"), e.getMessage());
    }

    /** The MADs captured from a run (test resource nicsim/serve/cm-mads.txt), by message name. */
    private static Map<String, byte[]> captured() throws Exception {
        Map<String, byte[]> mads = new HashMap<>();
        String name = null;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (var in = CmFieldsTest.class.getResourceAsStream("/nicsim/serve/cm-mads.txt")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (line.startsWith("#")) continue;
                String[] w = line.trim().split(" +");
                if (w.length == 1) {
                    name = w[0];
                    bytes = new ByteArrayOutputStream();
                    continue;
                }
                for (int i = 1; i < w.length; i++) bytes.write(Integer.parseInt(w[i], 16));
                mads.put(name, bytes.toByteArray());
            }
        }
        return mads;
    }

    /**
     * rping's REQ as nicsim's CM sent it in a run, read field by field through the table: what rping asked for
     * (its QP, one read in flight each way, 7 retries and RNR retries), the CM's own choices, the path between
     * LIDs 1 and 2, and the RDMA CM's header in the private data (IPv4, the client's port and both addresses).
     * Decoding and encoding it again gives back every byte.
     */
    @Test void aRequestFromARunDecodesFieldByField() throws Exception {
        byte[] req = captured().get("REQ");
        assertEquals(CmMad.SIZE, req.length);
        assertEquals(Mad.CLASS_CM, Mad.mgmtClass(req));
        assertEquals(Mad.SEND, Mad.method(req));
        assertEquals(CmFields.Req.ATTR, Mad.attr(req));
        assertEquals(0x1000, CmFields.Req.LOCAL_COMM_ID.get(req), "the CM's first communication ID");
        assertEquals(0x0106_1c06L, CmFields.Req.SERVICE_ID.get(req), "RDMA_PS_TCP (0x0106), port 7174");
        assertEquals(0x0002_1de5_0000_0001L, CmFields.Req.LOCAL_CA_GUID.get(req), "node 0's adapter");
        assertEquals(0, CmFields.Req.LOCAL_Q_KEY.get(req));
        assertEquals(0x8002, CmFields.Req.LOCAL_QPN.get(req), "rping's QP");
        assertEquals(1, CmFields.Req.RESPONDER_RESOURCES.get(req));
        assertEquals(1, CmFields.Req.INITIATOR_DEPTH.get(req));
        assertEquals(CmMad.CM_RESPONSE_TIMEOUT, CmFields.Req.REMOTE_CM_RESPONSE_TIMEOUT.get(req));
        assertEquals(CmMad.TRANSPORT_RC, CmFields.Req.TRANSPORT_SERVICE_TYPE.get(req));
        assertEquals(0x779b97, CmFields.Req.STARTING_PSN.get(req));
        assertEquals(CmMad.CM_RESPONSE_TIMEOUT, CmFields.Req.LOCAL_CM_RESPONSE_TIMEOUT.get(req));
        assertEquals(7, CmFields.Req.RETRY_COUNT.get(req));
        assertEquals(0xffff, CmFields.Req.PARTITION_KEY.get(req), "the default partition, full member");
        assertEquals(5, CmFields.Req.PATH_PACKET_PAYLOAD_MTU.get(req), "IBA's code for 4096 bytes");
        assertEquals(7, CmFields.Req.RNR_RETRY_COUNT.get(req), "7: retry for ever");
        assertEquals(CmMad.MAX_CM_RETRIES, CmFields.Req.MAX_CM_RETRIES.get(req));
        assertEquals(0, CmFields.Req.SRQ.get(req));
        assertEquals(0, CmFields.Req.EXTENDED_TRANSPORT_TYPE.get(req));
        assertEquals(1, CmFields.Req.PRIMARY_LOCAL_PORT_LID.get(req));
        assertEquals(2, CmFields.Req.PRIMARY_REMOTE_PORT_LID.get(req));
        assertEquals(14, CmFields.Req.PRIMARY_LOCAL_ACK_TIMEOUT.get(req));
        // the RDMA CM's header (struct cma_hdr): version 0, IPv4, the source port, then each address's IPv4 part
        byte[] priv = CmFields.Req.PRIVATE_DATA.bytes(req);
        ByteBuffer cma = ByteBuffer.wrap(priv);
        assertEquals(CmLayout.CmaHdr.VERSION, CmLayout.CmaHdr.CMA_VERSION.u8(cma));
        assertEquals(0x40, CmLayout.CmaHdr.IP_VERSION.u8(cma), "IPv4");
        assertEquals(32768, CmLayout.CmaHdr.PORT.u16(cma), "the client's port");
        assertEquals(0x7f4d0001, CmLayout.CmaHdr.SRC_IP4.u32(cma), "127.77.0.1, node 0");
        assertEquals(0x7f4d0002, CmLayout.CmaHdr.DST_IP4.u32(cma), "127.77.0.2, node 1");
        int src = CmLayout.CmaHdr.SRC_ADDR.offset(), ip4 = CmLayout.CmaHdr.SRC_IP4.offset();
        assertArrayEquals(new byte[ip4 - src], Arrays.copyOfRange(priv, src, ip4), "an IPv4 identifier's: no ::ffff:");
        assertArrayEquals(req, CmMad.decode(req).encode());
    }

    /** The server's REP to it, and a REJ of a REQ to a port no one listened on: each field where it was sent. */
    @Test void theAnswersFromARunDecodeFieldByField() throws Exception {
        byte[] rep = captured().get("REP");
        assertEquals(CmFields.Rep.ATTR, Mad.attr(rep));
        assertEquals(0x1001, CmFields.Rep.LOCAL_COMM_ID.get(rep));
        assertEquals(0x1000, CmFields.Rep.REMOTE_COMM_ID.get(rep), "the REQ's");
        assertEquals(0, CmFields.Rep.LOCAL_Q_KEY.get(rep));
        assertEquals(0x8002, CmFields.Rep.LOCAL_QPN.get(rep), "the server's QP, on node 1");
        assertEquals(0x15d311, CmFields.Rep.STARTING_PSN.get(rep));
        assertEquals(1, CmFields.Rep.RESPONDER_RESOURCES.get(rep));
        assertEquals(1, CmFields.Rep.INITIATOR_DEPTH.get(rep));
        assertEquals(7, CmFields.Rep.RNR_RETRY_COUNT.get(rep));
        assertEquals(0, CmFields.Rep.SRQ.get(rep));
        assertEquals(0x0002_1de5_0000_0002L, CmFields.Rep.LOCAL_CA_GUID.get(rep), "node 1's adapter");
        assertArrayEquals(rep, CmMad.decode(rep).encode());
        byte[] rej = captured().get("REJ");
        assertEquals(CmFields.Rej.ATTR, Mad.attr(rej));
        assertEquals(0, CmFields.Rej.LOCAL_COMM_ID.get(rej), "no identifier on the refusing side");
        assertEquals(0x1000, CmFields.Rej.REMOTE_COMM_ID.get(rej));
        assertEquals(0, CmFields.Rej.MESSAGE_REJECTED.get(rej), "the REQ");
        assertEquals(CmMad.REJ_INVALID_SERVICE_ID, CmFields.Rej.REASON.get(rej));
        assertArrayEquals(rej, CmMad.decode(rej).encode());
    }
}
