package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.fabric.Mad;
import nicsim.fabric.SwitchAgent;
import nicsim.firmware.Management;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** The fabric's SM and SA on node 0, asked from node 2 across the fabric as saquery and sminfo ask. */
class SubnetManagerTest {
    private final World w = new World(3, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
    private final SubnetManager sm = new SubnetManager(w);
    private final List<byte[]> got = new ArrayList<>();

    SubnetManagerTest() {
        w.host(2).firmware.management().listen((qp, slid, src, mad) -> Mad.isResponse(mad) && got.add(mad));
    }

    private List<byte[]> ask(int qp, byte[] mad) {
        got.clear();
        w.host(2).within(() -> { w.host(2).firmware.management().send(qp, 1, qp, mad); return null; });
        w.runFor(500_000_000L);
        return List.copyOf(got);
    }

    private static byte[] sa(int method, int attr, long mask) {
        byte[] m = Mad.request(Mad.CLASS_SUBN_ADM, SubnetManager.SA_VERSION, method, 42, attr, 0);
        BigEndian.put64(m, SubnetManager.SA_COMP_MASK, mask);
        return m;
    }

    @Test
    void pathRecordToAPortByItsLid() {
        byte[] q = sa(Mad.GET, SubnetManager.ATTR_PATH_RECORD, 1 << 4 | 1 << 5);
        Mad.put16(q, SubnetManager.SA_DATA + 40, 2); // DLID: node 1
        Mad.put16(q, SubnetManager.SA_DATA + 42, 3); // SLID: node 2, the asker
        List<byte[]> r = ask(1, q);
        assertEquals(1, r.size());
        byte[] p = r.get(0);
        assertEquals(Mad.GET_RESP, Mad.method(p));
        assertEquals(0, Mad.status(p));
        assertEquals(42, Mad.tid(p));
        assertEquals(2, Mad.get16(p, SubnetManager.SA_DATA + 40));
        assertArrayEquals(SubnetManager.gid(2),
                Arrays.copyOfRange(p, SubnetManager.SA_DATA + 8, SubnetManager.SA_DATA + 24));
        assertEquals(16, p[SubnetManager.SA_DATA + 55] & 0x3f, "100 Gb/s");
        assertEquals(1, sm.answered());
    }

    @Test
    void pathRecordToAPortByItsIbaGidAnswersIt() {
        // srp_daemon's dgid: the subnet prefix and the port GUID of the NodeRecord, the GID in the ports' tables
        byte[] q = sa(Mad.GET, SubnetManager.ATTR_PATH_RECORD, 1 << 2 | 1 << 3);
        BigEndian.put64(q, SubnetManager.SA_DATA + 8, 0xfe80_0000_0000_0000L);
        BigEndian.put64(q, SubnetManager.SA_DATA + 16, Management.nodeGuid(1));
        System.arraycopy(SubnetManager.gid(3), 0, q, SubnetManager.SA_DATA + 24, 16);
        List<byte[]> r = ask(1, q);
        assertEquals(1, r.size());
        assertEquals(0, Mad.status(r.get(0)));
        assertEquals(2, Mad.get16(r.get(0), SubnetManager.SA_DATA + 40), "DLID: node 1's");
        assertArrayEquals(SubnetManager.gid(2),
                Arrays.copyOfRange(r.get(0), SubnetManager.SA_DATA + 8, SubnetManager.SA_DATA + 24),
                "the DGID asked, the one the ports' GID tables hold");
        assertEquals(Management.nodeGuid(1), BigEndian.get64(SubnetManager.gid(2), 8), "a port's GID is its GUID's");
        BigEndian.put64(q, SubnetManager.SA_DATA + 16, Management.nodeGuid(1) + 100);
        assertEquals(SubnetManager.SA_NO_RECORDS, Mad.status(ask(1, q).get(0)), "no port has that GUID: no record");
    }

    @Test
    void nodeRecordTableComesInRmppSegments() {
        List<byte[]> r = ask(1, sa(Mad.GET_TABLE, SubnetManager.ATTR_NODE_RECORD, 0));
        assertEquals(3, r.size(), "four 112-byte records (three adapters, the switch): 448 bytes in 200-byte segments");
        assertEquals(Mad.GET_TABLE_RESP, Mad.method(r.get(0)));
        assertEquals(3, r.get(0)[SubnetManager.RMPP + 2] & 7, "ACTIVE | FIRST");
        assertEquals(1, r.get(1)[SubnetManager.RMPP + 2] & 7, "ACTIVE");
        assertEquals(5, r.get(2)[SubnetManager.RMPP + 2] & 7, "ACTIVE | LAST");
        assertEquals(448 + 60, BigEndian.get32(r.get(0), SubnetManager.RMPP + 8));
        byte[] all = new byte[600];
        for (int i = 0; i < 3; i++) System.arraycopy(r.get(i), SubnetManager.SA_DATA, all, i * 200, 200);
        for (int n = 0; n < 3; n++) {
            assertEquals(n + 1, Mad.get16(all, n * 112), "LID of record " + n);
            assertEquals(Management.nodeGuid(n), BigEndian.get64(all, n * 112 + 4 + 12), "node GUID of record " + n);
        }
        assertEquals(4, Mad.get16(all, 3 * 112), "the switch's LID, after the adapters'");
        assertEquals(2, all[3 * 112 + 4 + 2], "node type: switch");
        assertEquals(SwitchAgent.GUID, BigEndian.get64(all, 3 * 112 + 4 + 12));
    }

    @Test
    void nodeRecordByLidAndNoRecordForAnUnknownOne() {
        byte[] q = sa(Mad.GET, SubnetManager.ATTR_NODE_RECORD, 1);
        Mad.put16(q, SubnetManager.SA_DATA, 2);
        byte[] r = ask(1, q).get(0);
        assertEquals("node1 nicsim0", new String(r, SubnetManager.SA_DATA + 44, 13));
        Mad.put16(q, SubnetManager.SA_DATA, 9);
        assertEquals(SubnetManager.SA_NO_RECORDS, Mad.status(ask(1, q).get(0)));
    }

    @Test
    void smInfoNamesTheMaster() {
        byte[] r = ask(0, Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 5, Mad.ATTR_SM_INFO, 0)).get(0);
        assertEquals(0, Mad.status(r));
        assertEquals(Management.nodeGuid(0), BigEndian.get64(r, Mad.SMP_DATA));
        assertEquals(SubnetManager.SM_MASTER, r[Mad.SMP_DATA + 20] & 0xf);
        byte[] pi = ask(0, Mad.request(Mad.CLASS_SUBN_LID, 1, Mad.GET, 6, Mad.ATTR_PORT_INFO, 0)).get(0);
        assertEquals(1, Mad.get16(pi, Mad.SMP_DATA + 18), "every port's MasterSMLID is the SM's");
    }
}
