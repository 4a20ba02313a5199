package nicsim.cosim.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.sim.Counters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guest kernel's own MAD stack on nicsim_ib's QP0 and QP1: ib_mad, ib_sa, ib_cm and ib_umad attach to the
 * port, and infiniband-diags, through the kernel's /dev/infiniband/umad0, ask serve's subnet manager and the
 * adapters' agents: sminfo and saquery -p the SM and SA beside node 0's port, perfquery node 0's own PMA (a
 * MAD the adapter loops back), smpquery nodeinfo node 1's SMA across the fabric (docs/device.md,
 * "Management: QP0 and QP1").
 */
class GuestMadTest {
    @TempDir Path share;

    private static final String SCRIPT = String.join("; ",
            "P=/sys/class/infiniband/nicsim_0/ports/1",
            "echo SM_LID=$(cat $P/sm_lid) LID=$(cat $P/lid) CAP_MASK=$(cat $P/cap_mask)",
            "ls /dev/infiniband",
            "sminfo; echo SMINFO=$?",
            "perfquery; echo PERFQUERY=$?",
            "smpquery nodeinfo 2; echo NODEINFO=$?",
            "saquery -p; echo SAQUERY=$?",
            "dmesg | grep -iE 'nicsim|mad|ib_cm|ib_sa' | tail -20");

    @Test void theGuestKernelsMadStackAsksTheFabricsAgentsThroughItsOwnQp0AndQp1() throws Exception {
        GuestRun run = GuestRun.onNode0("guest-mad", SCRIPT, share, null, 300);
        String text = run.console();
        Counters node0 = run.served().world.sim.counters().scope("node0");
        Counters node1 = run.served().world.sim.counters().scope("node1");
        System.out.println("--- node0's counters: " + node0.snapshot() + "\n--- node1's: " + node1.snapshot());
        assertEquals(0, run.status(), "the guest ran the diags: " + text);
        assertTrue(text.contains("SM_LID=0x1 LID=0x1"), "the port reports serve's SM at LID 1: " + text);
        Matcher cap = Pattern.compile("CAP_MASK=0x([0-9a-f]+)").matcher(text);
        assertTrue(cap.find(), "the port's capability mask: " + text);
        long mask = Long.parseLong(cap.group(1), 16);
        assertEquals(0x10000, mask & 0x10000, "ib_cm set IsCommunicationManagementSupported: " + text);
        assertEquals(0x2, mask & 0x2, "IsSM: serve's SM is beside node 0's port: " + text);
        assertTrue(text.contains("umad0"), "ib_umad made the kernel's umad device: " + text);
        for (String tool : new String[] {"SMINFO", "PERFQUERY", "NODEINFO", "SAQUERY"})
            assertTrue(text.contains(tool + "=0"), tool + " succeeded: " + text);
        assertTrue(text.contains("sm lid 1 sm guid 0x21de500000001") && text.contains("SMINFO_MASTER"),
                "sminfo: the master SM at LID 1, node 0's GUID: " + text);
        assertTrue(text.matches("(?s).*PortXmitData:\\.+\\d+.*"), "perfquery: node 0's port counters: " + text);
        assertTrue(text.matches("(?s).*(Guid|NodeGuid):\\.+0x00021de500000002.*"), "smpquery: node 1's GUID: " + text);
        assertTrue(text.contains("PathRecord dump") && text.matches("(?s).*\\sdlid\\.+2\\s.*"),
                "saquery -p: the SA's path records, node 1's LID among them: " + text);
        // at least the four tools' requests (ib_sa's and RMPP's own come on top): three to LID 1, in the adapter
        assertTrue(node0.get("Firmware.mads_from_driver") >= 4, "the guest's MADs left its QPs: " + node0.snapshot());
        assertTrue(node0.get("Firmware.mads_looped_back") >= 3, "those to LID 1 stayed in the adapter: "
                + node0.snapshot());
        assertTrue(node1.get("Firmware.mads_in") >= 1, "smpquery's SMP crossed the fabric: " + node1.snapshot());
        assertTrue(node0.get("Firmware.mads_to_driver") >= 4, "answers into the driver's QPs: " + node0.snapshot());
        assertTrue(node0.get("Firmware.mads_answered") >= 2, "node 0's PMA answered perfquery: " + node0.snapshot());
        assertTrue(node1.get("Firmware.mads_answered") >= 1, "node 1's SMA answered smpquery: " + node1.snapshot());
        run.assertTheAdapterWasUsedCleanly();
    }
}
