package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.fabric.SwitchAgent;
import nicsim.firmware.Management;
import nicsim.profile.Profiles;
import nicsim.serve.Programs.Run;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * infiniband-diags' fabric tools as Debian ships them, on a 3-node serve: the topology ones walk the fabric
 * with directed-route SMPs through the switch's SMA (ibnetdiscover, iblinkinfo, ibhosts, ibswitches, ibroute,
 * ibportstate), and saquery asks the SA for the switch's and the links' records.
 */
class SubnetToolsTest {
    private static final int NODES = 3, SWITCH_LID = NODES + 1;
    private static final String SW = String.format("0x%016x", SwitchAgent.GUID);
    private Served served;

    @BeforeEach
    void serve() throws Exception {
        assumeTrue(new ProcessBuilder("sh", "-c", "command -v ibnetdiscover").start().waitFor() == 0,
                "infiniband-diags is not installed (apt-get install -y infiniband-diags)");
        served = new Served("nicsim-subnet").start(new World(NODES, Profiles.load("cx-gen3x16"), 1, Faults.NONE));
    }

    @AfterEach
    void stop() throws Exception { if (served != null) served.stop(); }

    private String run(int node, String... program) throws Exception { return Programs.runOk(served, node, program); }

    private static void has(String out, String regex) {
        assertTrue(Pattern.compile(regex, Pattern.MULTILINE).matcher(out).find(), regex + " in:\n" + out);
    }

    private static int count(String out, String regex) {
        Matcher m = Pattern.compile(regex, Pattern.MULTILINE).matcher(out);
        int n = 0;
        while (m.find()) n++;
        return n;
    }

    @Test
    void theTopologyToolsFindTheSwitchEveryAdapterAndTheLinksBetween() throws Exception {
        String net = run(1, "ibnetdiscover");
        has(net, "^Switch\\s+" + NODES + " \"S-" + SW.substring(2) + "\"\\s+# \"nicsim switch\" base port 0 lid "
                + SWITCH_LID);
        for (int n = 0; n < NODES; n++) {
            String ca = String.format("%016x", Management.nodeGuid(n));
            // the switch's port n+1 leads to node n's port 1, and node n's port 1 back to switch port n+1
            has(net, "^\\[" + (n + 1) + "\\]\\s+\"H-" + ca + "\"\\[1\\].*# \"node" + n + " nicsim0\" lid " + (n + 1)
                    + " 4xEDR");
            has(net, "^\\[1\\]\\(" + ca.replaceFirst("^0+", "") + "\\)\\s+\"S-" + SW.substring(2) + "\"\\[" + (n + 1)
                    + "\\]");
        }
        String route = run(0, "ibroute", String.valueOf(SWITCH_LID));
        for (int n = 0; n < NODES; n++)
            has(route, String.format("^0x%04x %03d : \\(Channel Adapter portguid 0x%016x: 'node%d nicsim0'\\)", n + 1,
                    n + 1, Management.nodeGuid(n), n));
        has(route, String.format("^0x%04x 000 : \\(Switch portguid %s: 'nicsim switch'\\)", SWITCH_LID, SW));
        has(route, "^" + (NODES + 1) + " valid lids dumped");
        String links = run(2, "iblinkinfo");
        assertEquals(2 * NODES, count(links, "==\\( 4X\\s+25.78125 Gbps Active/\\s+LinkUp\\)==>"), links);
        String hosts = run(0, "ibhosts"), switches = run(0, "ibswitches");
        assertEquals(NODES, count(hosts, "^Ca\\s+: 0x00021de50000000\\d ports 1 \"node\\d nicsim0\""), hosts);
        has(switches, "^Switch\\s+: " + SW + " ports " + NODES + " \"nicsim switch\" base port 0 lid " + SWITCH_LID);
        // the switch's port 3, then (a route LID-routed to the switch, then directed) the adapter behind it
        String port = run(1, "ibportstate", String.valueOf(SWITCH_LID), "3");
        has(port, "^Switch PortInfo:");
        has(port, "^# Port info: Lid " + SWITCH_LID + " port 3");
        has(port, "^Peer PortInfo:\n# Port info: Lid " + SWITCH_LID + " DR path slid 2; dlid 65535; 0,3 port 1");
        has(port, "^LinkSpeedExtActive:\\.+25.78125 Gbps");
        // the switch's PMA: every port's counters read, none in error; node 1's port (switch port 2) has traffic
        String errors = run(0, "ibqueryerrors");
        assertFalse(errors.contains("failed"), errors);
        has(errors, "## Summary: " + (NODES + 1) + " nodes checked, 0 bad nodes found");
        has(errors, "^##\\s+" + 2 * NODES + " ports checked, 0 ports have errors beyond threshold");
        String counters = run(1, "perfquery", "-x", String.valueOf(SWITCH_LID), "2");
        Matcher rcv = Pattern.compile("PortRcvPkts:\\.+(\\d+)").matcher(counters);
        assertTrue(rcv.find() && Long.parseLong(rcv.group(1)) >= 1, counters);
    }

    @Test
    void saqueryGetsTheSwitchTheLinksAndTheirTablesFromTheSa() throws Exception {
        String links = run(1, "saquery", "-x");
        assertEquals(2 * NODES, count(links, "^LinkRecord dump:"), links);
        has(links, "FromLID\\.+2\\s+FromPort\\.+1\\s+ToPort\\.+2\\s+ToLID\\.+" + SWITCH_LID);
        String si = run(1, "saquery", "SWIR");
        has(si, "LID\\.+" + SWITCH_LID + "\\s");
        has(si, "LinearFDBTop\\.+0x" + SWITCH_LID);
        String lft = run(1, "saquery", "LFTR", String.valueOf(SWITCH_LID));
        for (int lid = 1; lid <= NODES; lid++) has(lft, "^\\s+" + lid + "\\s+" + lid + "$");
        has(lft, "^\\s+" + SWITCH_LID + "\\s+0$");
        String sm = run(1, "saquery", "SMIR");
        has(sm, "GUID\\.+" + String.format("0x%016x", Management.nodeGuid(0)));
        has(sm, "SMState\\.+3");
        String guids = run(1, "saquery", "GIR");
        has(guids, "GUID 0\\.+" + SW);
        String pkeys = run(1, "saquery", "PKTR");
        assertEquals(NODES + NODES + 1, count(pkeys, "^PKeyTableRecord dump:"), "adapters' ports, switch ports 0..N");
        String isSm = run(1, "saquery", "-s");
        assertEquals(1, count(isSm, "^PortInfoRecord dump:"), isSm);
        has(isSm, "EndPortLid\\.+1$");
        // no service registered, no subscription: empty tables, not an error
        assertEquals("", run(1, "saquery", "-S").strip());
        assertEquals("", run(1, "saquery", "-I").strip());
    }

    /**
     * One data VL everywhere: the SA's SL2VL records map every SL to VL0 on each adapter's port and on the switch's
     * every input-to-output pair, its VLArbitration records give VL0 the low-priority table's first entry, and the
     * SMA answers the same tables when asked directly (once status 0x000C, "not built").
     */
    @Test
    void saqueryAndSmpqueryShowOneDataVl() throws Exception {
        String sl2vl = run(1, "saquery", "SL2VL");
        // adapters: in 0 to out 1; the switch: in 0..N to out 1..N
        assertEquals(NODES + (NODES + 1) * NODES, count(sl2vl, "^SL2VLTableRecord dump:"), sl2vl);
        assertEquals(count(sl2vl, "^SL2VLTableRecord dump:"), count(sl2vl, "^\\s+VL:( 0\\|){16}$"), sl2vl);
        has(sl2vl, "LID\\.+" + SWITCH_LID + "\\s+InPort\\.+" + NODES + "\\s+OutPort\\.+" + NODES + "$");
        String vlarb = run(1, "saquery", "VLAR", "2");
        assertEquals(4, count(vlarb, "^VLArbTableRecord dump:"), "blocks 1..4 of LID 2's port 1:\n" + vlarb);
        has(vlarb, "Block\\.+1\\s+VL    :( 0\\|){16}\\s+Weight:255\\|( 0\\|){15}$");
        assertEquals(1, count(vlarb, "255"), vlarb);
        String sma = run(0, "smpquery", "vlarb", "2");
        has(sma, "LowCap 8 HighCap 8");
        has(sma, "WEIGHT: \\|0xFF\\|");
        String switchSl2vl = run(0, "smpquery", "sl2vl", String.valueOf(SWITCH_LID));
        has(switchSl2vl, "^ports: in  " + NODES + ", out  0: \\|( 0\\|){16}$");
    }

    /**
     * ibsysstat's own MAD class between two nodes: with `ibsysstat -S` serving on node 0, node 2 asks it for its
     * host name (node 0's own, as attach names each node) and its CPUs.
     */
    @Test
    void ibsysstatAsksAnotherNodeForItsNameAndCpus() throws Exception {
        Run server = Programs.start(served, 0, false, "ibsysstat", "-S");
        try {
            String host = "";
            for (int i = 0; i < 50 && !host.contains("node0"); i++) {
                Thread.sleep(200); // until the server's agent is registered: before, the class is unclaimed
                Run ask = Programs.start(served, 2, false, "ibsysstat", "1", "host");
                ask.await(60);
                host = ask.output();
            }
            assertTrue(host.contains("node0"), "node 0's host name:\n" + host + server.output());
            has(run(2, "ibsysstat", "1", "cpu"), "^cpu 0: model ");
        } finally {
            server.process().destroy();
            server.await(30);
        }
    }

    /**
     * ibacm, the address and route service, on node 1, and ib_acme asking it for a path by LID and by GID (its SA
     * query through the port's umad). ibacm writes /etc/rdma, /var/log and /run as on any host: the program's own
     * mount namespace (attach's) holds them, so nothing of the host's is touched.
     */
    @Test
    void ibacmAnswersIbAcmeWithAPathTheSaVerified() throws Exception {
        assumeTrue(new ProcessBuilder("sh", "-c", "command -v ibacm").start().waitFor() == 0,
                "ibacm is not installed (apt-get install -y ibacm)");
        String out = run(1, "sh", "-c", String.join("\n",
                "d=$(mktemp -d); cp -a /etc/rdma/. \"$d\"/ 2>/dev/null",
                "mkdir -p /etc/rdma; mount --bind \"$d\" /etc/rdma",
                "mount -t tmpfs nicsim-log /var/log && mount -t tmpfs nicsim-run /run",
                "ibacm -P & acm=$!",
                "for i in $(seq 100); do [ -S /run/ibacm-unix.sock ] && break; sleep 0.2; done",
                "ib_acme -f l -d 1 -s 2 -v; r1=$?",
                "ib_acme -f g -d fe80::2:1de5:0:1 -s fe80::2:1de5:0:2; r2=$?",
                "kill $acm; wait $acm",
                "echo \"STATUS=$r1,$r2\""));
        has(out, "^STATUS=0,0$");
        has(out, "^SA verification: success$");
        assertEquals(2, count(out, "^return status 0x0$"), out);
        assertEquals(2, count(out, "^\\s+dlid: 1$"), out);
        assertEquals(2, count(out, "^\\s+slid: 2$"), out);
    }
}
