package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** A create the checks refuse leaves nothing behind: closing its parent later destroys only what was made. */
class RefusedCreateTest {
    @Test
    void refusedCreatesLeaveNoPhantomChildren() {
        World w = new World(1, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        Context ctx = new Device(w.host(0)).open();
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue cq = ctx.createCq(16);
        HostBuffer buf = new ProcessMemory(w.host(0)).alloc(4096);
        // REMOTE_WRITE without LOCAL_WRITE
        VerbsException mr = assertThrows(VerbsException.class, () -> pd.regMr(buf, AccessFlags.REMOTE_WRITE));
        assertEquals(Errno.EINVAL, mr.errno());
        VerbsException qp = assertThrows(VerbsException.class,
                () -> pd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(cq).recvCq(cq)
                        .maxSendWr(1 << 30).maxRecvWr(1)));
        assertEquals(Errno.EINVAL, qp.errno());
        VerbsException big = assertThrows(VerbsException.class, () -> ctx.createCq(Integer.MAX_VALUE));
        assertEquals(Errno.EINVAL, big.errno());
        VerbsException srq = assertThrows(VerbsException.class,
                () -> pd.createSrq(new SrqInitAttr().maxWr(0).maxSge(1)));
        assertEquals(Errno.EINVAL, srq.errno());
        MemoryRegion good = pd.regMr(buf, AccessFlags.LOCAL_WRITE);
        assertDoesNotThrow(pd::close, "the PD closes: only its one real MR is destroyed with it");
        assertTrue(good.isClosed());
        assertDoesNotThrow(ctx::close, "and the context, with its one real CQ");
        assertTrue(cq.isClosed());
    }
}
