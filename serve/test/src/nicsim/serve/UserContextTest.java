package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.driver.Driver;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.firmware.Resources;
import nicsim.profile.Profiles;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/**
 * A C driver's user context as the kernel keeps it, driven by the device's own commands on a real
 * adapter: what it may write in BAR0, what an importing process learns of its objects, and what is
 * destroyed when the last process holding it goes.
 */
class UserContextTest {
    private final Host host = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.NONE).host(0);
    private final Driver driver = host.driver();
    private final UserContext ctx = new UserContext(driver, null, 1);

    /** Runs {@code opcode} in the context; the output handle, or the test fails on a refusal. */
    private long make(int opcode, long... in) {
        long[] out = ctx.run(opcode, in, 1, v -> { }, null);
        assertEquals(0, out[0] >>> 32, Cmd.opcodeName(opcode) + " refused");
        return out[Cmd.OUT_HEADER_WORDS];
    }

    /** An MR of one 4 KiB page in {@code pd}. */
    private long mr(long pd) {
        long page = host.allocPhysical(4096, 4096), list = host.allocPhysical(8, 8);
        byte[] entry = new byte[8];
        BigEndian.put64(entry, 0, page);
        host.memory.write(list, entry);
        Cmd.CreateMkey c = new Cmd.CreateMkey(pd, 0x10000, 4096, AccessFlags.LOCAL_WRITE, 12, 0, 1, list);
        return make(Cmd.CREATE_MKEY, Cmd.CREATE_MKEY_IN.values(c));
    }

    @Test
    void whatALastHolderLeftIsDestroyedNewestFirstWithNothingRefused() {
        long pd1 = make(Cmd.ALLOC_PD);
        mr(pd1);
        long pd2 = make(Cmd.ALLOC_PD);
        mr(pd2);
        mr(pd1);
        assertEquals(5, ctx.objectsLeft());
        UserContext other = ctx.join();
        assertFalse(ctx.leave(), "the importing process still holds it");
        assertTrue(other.leave());
        // a PD goes only after its MRs (PD_IN_USE otherwise): the order it was made in, reversed
        assertEquals(List.of(), ctx.release());
        assertEquals(0, ctx.objectsLeft());
        Resources left = Resources.of(host.firmware);
        assertEquals(List.of(), left.mrs());
        assertEquals(List.of(), left.pds());
    }

    @Test
    void anImportingProcessLearnsAnObjectsLengthAndAHandleOfAnotherKindIsRefused() {
        long pd = make(Cmd.ALLOC_PD);
        long key = mr(pd);
        long dm = make(Cmd.ALLOC_DM, Cmd.ALLOC_DM_IN.values(new Cmd.AllocDm(256, 6)));
        assertEquals(4096, ctx.imported(Cmd.DESTROY_MKEY, key));
        assertEquals(256, ctx.imported(Cmd.DEALLOC_DM, dm));
        assertEquals(0, ctx.imported(Cmd.DEALLOC_PD, pd));
        assertEquals(List.of(key), ctx.owned(Cmd.DESTROY_MKEY));
        VerbsException kind = assertThrows(VerbsException.class, () -> ctx.imported(Cmd.DEALLOC_PD, key));
        assertEquals(Errno.EINVAL, kind.errno());
        VerbsException none = assertThrows(VerbsException.class, () -> ctx.imported(Cmd.DESTROY_MKEY, key + 1));
        assertEquals(Errno.ENOENT, none.errno());
    }

    @Test
    void itsDeviceMemoryIsItsToWriteUntilFreedAndNotAByteBeyond() {
        long dmBase = driver.caps().dmBase();
        long a = make(Cmd.ALLOC_DM, Cmd.ALLOC_DM_IN.values(new Cmd.AllocDm(64, 6)));
        long b = make(Cmd.ALLOC_DM, Cmd.ALLOC_DM_IN.values(new Cmd.AllocDm(128, 6)));
        assertTrue(ctx.mayWrite(dmBase + a, 8));
        assertTrue(ctx.mayWrite(dmBase + a + 56, 8));
        assertTrue(ctx.inOwnDm(dmBase + b + 64, 64));
        assertFalse(ctx.inOwnDm(dmBase + b + 64, 65), "past the end of the allocation");
        assertFalse(ctx.inOwnDm(dmBase - 8, 8), "below device memory");
        ctx.run(Cmd.DEALLOC_DM, new long[]{a}, 0, v -> { }, null);
        assertFalse(ctx.mayWrite(dmBase + a, 8), "freed");
        assertTrue(ctx.mayWrite(dmBase + b, 8));
    }
}
