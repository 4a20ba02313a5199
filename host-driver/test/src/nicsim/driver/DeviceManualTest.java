package nicsim.driver;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.CmdTable;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * docs/device.md holds what the device's code says: its generated tables are what DeviceManual
 * makes now, and the command table they come from is the firmware's: each listed command takes
 * exactly its input layout, and every opcode the firmware executes is listed.
 */
class DeviceManualTest {
    private static final Path PAGE = Path.of(System.getProperty("nicsim.root", ".")).resolve("docs/device.md");

    @Test
    void theManualsTablesAreTheCodes() throws Exception {
        String page = Files.readString(PAGE);
        assertEquals(DeviceManual.sections().keySet().stream().sorted().toList(),
                DeviceManual.blocks(page).stream().sorted().toList(),
                        "docs/device.md holds every generated table once");
        assertEquals(DeviceManual.render(page), page, "docs/device.md differs from the code: "
                + "./mill host-driver.runMain nicsim.driver.DeviceManual docs/device.md");
    }

    @Test
    void everyLineFitsAndATableTooWideIsAListNoBreakTurnsIntoMarkdown() {
        DeviceManual.sections().forEach((name, text) -> text.lines().forEach(l ->
                assertTrue(l.length() <= DeviceManual.WIDTH, name + " has a line of " + l.length() + ": " + l)));
        assertTrue(DeviceManual.table(List.of("a", "b"), List.of(List.of("1", "short"))).startsWith("| a | b |"));
        for (int n = 1; n < 40; n++) { // slide "- 1" and "2." across the line's end
            String text = "x".repeat(n) + " the key's bytes".repeat(6) + " start + length - 1 up to 2. and # more";
            String list = DeviceManual.table(List.of("bytes", "field"), List.of(List.of("40..47", text)));
            List<String> lines = list.lines().toList();
            assertEquals("- **40..47**: " + text,
                    String.join(" ", lines.subList(2, lines.size()).stream().map(String::strip).toList()));
            for (String l : lines.subList(3, lines.size())) {
                assertTrue(l.length() <= DeviceManual.WIDTH && l.startsWith("  "), l);
                assertFalse(l.trim().matches("([-+*>#=]+|\\d+[.)])( .*)?"), "a break made markdown of: " + l);
            }
        }
    }

    private static int syndrome(byte[] out) { return (int) (BigEndian.get64(out, 0) & 0xFFFF_FFFFL); }

    @Test
    void everyCommandTakesItsLayoutAndNoOtherIsExecuted() throws Exception {
        Driver d = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.NONE).host(0).driver();
        List<String> wrong = new ArrayList<>();
        List<CmdTable.Command> all = new ArrayList<>(CmdTable.ALL); // TEARDOWN_HCA last: it takes the adapter down
        all.sort(Comparator.comparing(c -> c.opcode() == Cmd.TEARDOWN_HCA));
        for (CmdTable.Command c : all) {
            int in = Cmd.bytes(c.in()), out = Cmd.OUT_HEADER_WORDS * 8 + Cmd.bytes(c.out());
            int longer = syndrome(d.raw(c.opcode(), new byte[in + 8], out));
            if (longer != Cmd.Syndrome.BAD_INPUT_LENGTH.ordinal())
                wrong.add(c.name() + " took " + (in + 8) + " input bytes: " + Cmd.Syndrome.values()[longer]);
            int exact = syndrome(d.raw(c.opcode(), new byte[in], out));
            if (exact == Cmd.Syndrome.BAD_INPUT_LENGTH.ordinal() || exact == Cmd.Syndrome.BAD_OPCODE.ordinal()
                    || exact == Cmd.Syndrome.BAD_OUTPUT_LENGTH.ordinal())
                wrong.add(c.name() + " refused its own layout: " + Cmd.Syndrome.values()[exact]);
        }
        assertEquals(List.of(), wrong);
        // every opcode constant of Cmd is either listed or refused as unknown
        for (Field f : Cmd.class.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || f.getType() != int.class) continue;
            int op = f.getInt(null);
            if (op < 0x100 || !Cmd.opcodeName(op).equals(f.getName()) || CmdTable.of(op) != null) continue;
            assertEquals(Cmd.Syndrome.BAD_OPCODE.ordinal(), syndrome(d.raw(op, new byte[0], 64)),
                    f.getName() + " is executed but not in CmdTable");
        }
        assertEquals(Cmd.Syndrome.BAD_OPCODE.ordinal(), syndrome(d.raw(0x999, new byte[0], 64)));
    }

    @Test
    void teardownWaitsForEveryObjectThenTheAdapterComesUpAgain() {
        Driver d = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.NONE).host(0).driver();
        long pd = BigEndian.get64(d.raw(Cmd.ALLOC_PD, new byte[0], 24), 16);
        byte[] refused = d.raw(Cmd.TEARDOWN_HCA, new byte[0], 16);
        assertEquals(Cmd.Syndrome.OBJECTS_LEFT.ordinal(), syndrome(refused));
        assertEquals(1, BigEndian.get64(refused, 8), "one object left: the PD");
        byte[] h = new byte[8];
        BigEndian.put64(h, 0, pd);
        assertEquals(0, syndrome(d.raw(Cmd.DEALLOC_PD, h, 16)));
        assertEquals(0, syndrome(d.raw(Cmd.TEARDOWN_HCA, new byte[0], 16)));
        assertEquals(Cmd.Syndrome.NOT_INITIALIZED.ordinal(), syndrome(d.raw(Cmd.ALLOC_PD, new byte[0], 24)));
        byte[] init = Cmd.encode(Cmd.INIT_HCA_IN, new Cmd.InitHca(1 << 20, 4, 2 << 20, 1024, 0, 0));
        assertEquals(0, syndrome(d.raw(Cmd.INIT_HCA, init, 16)), "a driver reloaded brings it up again");
        assertEquals(0, syndrome(d.raw(Cmd.ALLOC_PD, new byte[0], 24)));
    }
}
