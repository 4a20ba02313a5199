package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.driver.Driver;
import nicsim.driver.ErrnoException;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** The adapter's command interface refuses malformed commands with a status and a syndrome, and changes nothing. */
class CommandInterfaceTest {
    private static Driver driver() {
        return new World(1, Profiles.load("cx-gen3x16"), 1, Faults.NONE).host(0).driver();
    }

    private static Cmd.Status status(byte[] out) { return Cmd.Status.of((int) (BigEndian.get64(out, 0) >>> 32)); }
    private static Cmd.Syndrome syndrome(byte[] out) {
        return Cmd.Syndrome.values()[(int) (BigEndian.get64(out, 0) & 0xFFFF)];
    }

    @Test
    void anUnknownOpcodeIsBadOp() {
        byte[] out = driver().raw(0x7777, new byte[0], 16);
        assertEquals(Cmd.Status.BAD_OP, status(out));
        assertEquals(Cmd.Syndrome.BAD_OPCODE, syndrome(out));
        assertEquals(0x7777, BigEndian.get64(out, 8), "the offending value comes back");
    }

    @Test
    void aShortInputMailboxIsBadInputLength() {
        byte[] out = driver().raw(Cmd.CREATE_CQ, new byte[16], 24);
        assertEquals(Cmd.Status.BAD_INPUT_LEN, status(out));
        assertEquals(16, BigEndian.get64(out, 8));
    }

    @Test
    void aFieldWiderThanItsLayoutIsRefused() {
        byte[] in = new byte[Cmd.bytes(Cmd.CREATE_CQ_IN)];
        BigEndian.put64(in, 0, 1L << 40); // uar: 24 bits
        byte[] out = driver().raw(Cmd.CREATE_CQ, in, 24);
        assertEquals(Cmd.Status.BAD_PARAM, status(out));
    }

    @Test
    void refusedCommandsBecomeErrnoExceptionsWithTheMappedErrno() {
        Driver d = driver();
        ErrnoException e = assertThrows(ErrnoException.class,
                () -> d.command(Cmd.DEALLOC_PD, Cmd.HANDLE, new Cmd.Handle(999), Cmd.EMPTY));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("DEALLOC_PD") && e.getMessage().contains("protection domain"),
                e.getMessage());
        e = assertThrows(ErrnoException.class,
                () -> d.command(Cmd.INIT_HCA, Cmd.INIT_HCA_IN, new Cmd.InitHca(0, 4, 0, 16), Cmd.EMPTY));
        assertEquals(Errno.EIO, e.errno(), "a second INIT_HCA: BAD_SYS_STATE");
    }

    @Test
    void aWriteToAnUnknownInitRegisterIsCountedAndReported() {
        Driver d = driver();
        d.mmio(0x40, new byte[]{1, 2, 3, 4});
        d.host().sim.runUntilIdle(1_000_000_000L);
        assertTrue(d.host().adapter.errors().stream().anyMatch(o -> o.toString().contains("BAR0+0x40")),
                d.host().adapter.errors().toString());
    }
}
