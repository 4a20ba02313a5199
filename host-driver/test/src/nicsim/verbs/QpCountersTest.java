package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import nicsim.abi.QCounter;
import nicsim.driver.ErrnoException;
import nicsim.driver.QpCounters;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * The kernel's QP counters (ib_core's rules, as `rdma statistic qp` drives them) over the adapter's q counter
 * sets: auto mode binds QPs entering INIT by type or process, a counter goes with its last QP, and the mode
 * is the port's before the driver probes. serve calls {@link QpCounters#modified} after each MODIFY_QP, as
 * this test does.
 */
class QpCountersTest {
    private static final long TO_INIT = QpAttrMask.STATE | QpAttrMask.PORT;

    private static QueuePair rc(Pair p) {
        return p.a.pd.createQp(Pair.defaults().qpType(QpType.RC).sendCq(p.a.cq).recvCq(p.a.cq));
    }

    @Test
    void autoModeByTypeSharesACounterAndByPidSplitsIt() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        QpCounters k = p.world.host(0).qpCounters();
        k.setAuto(QpCounters.MASK_QP_TYPE);
        int init = QpState.INIT.value();
        QueuePair q1 = p.a.qp, q2 = rc(p);
        k.modified(q1.qpNum(), TO_INIT, init, 100);
        k.modified(q2.qpNum(), TO_INIT, init, 200);
        k.modified(q2.qpNum(), TO_INIT, init, 200); // INIT to INIT again: bound already
        assertEquals(1, k.counters().size(), "one RC counter for both processes: " + k.counters());
        QpCounters.Counter c = k.counters().get(0);
        assertEquals(List.of((long) q1.qpNum(), (long) q2.qpNum()), List.copyOf(c.qps()));
        assertEquals(QpType.RC.value(), c.qpType());
        ErrnoException busy = assertThrows(ErrnoException.class, () -> k.setAuto(QpCounters.MASK_PID));
        assertEquals(Errno.EBUSY, busy.errno(), busy.getMessage());
        q1.close();
        assertEquals(List.of((long) q2.qpNum()), List.copyOf(k.counters().get(0).qps()), "q1 left its counter");
        q2.close();
        assertEquals(List.of(), k.counters(), "the counter went with its last QP");
        k.setAuto(QpCounters.MASK_PID);
        QueuePair q3 = rc(p), q4 = rc(p), kernels = rc(p);
        k.modified(q3.qpNum(), TO_INIT, init, 300);
        k.modified(q4.qpNum(), TO_INIT, init, 400);
        k.modified(kernels.qpNum(), TO_INIT, init, 0);
        assertEquals(2, k.counters().size(), "one counter per process, none for the kernel's QP: " + k.counters());
        assertEquals(0, k.values(k.counters().get(0)).get(QCounter.PACKETS_OUT), "no traffic yet");
    }

    @Test
    void theModeIsThePortsBeforeTheDriverProbesAndManualBindsAreChecked() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        QpCounters k = p.world.host(1).qpCounters();
        var fresh = new World(1, Profiles.load("cx-gen3x16"), 1,
                Faults.NONE).host(0);
        fresh.qpCounters().setAuto(QpCounters.MASK_QP_TYPE);
        assertFalse(fresh.probed(), "setting the mode needs no driver");
        assertEquals(QpCounters.MODE_AUTO, fresh.qpCounters().mode());
        QpCounters.Qp qp = new QpCounters.Qp(p.b.qp.qpNum(), QpType.RC.value(), 500);
        long id = k.bind(qp, null, qp.qpn());
        assertEquals(QpCounters.MODE_MANUAL, k.mode());
        assertEquals(Errno.EINVAL, assertThrows(ErrnoException.class, () -> k.bind(qp, null, qp.qpn())).errno(),
                "bound once");
        assertEquals(Errno.ENOENT, assertThrows(ErrnoException.class, () -> k.bind(null, null, 999_999)).errno());
        assertEquals(Errno.EINVAL, assertThrows(ErrnoException.class, () -> k.setAuto(4)).errno(), "mask 4");
        assertEquals(Errno.EINVAL, assertThrows(ErrnoException.class, () -> k.unbind(qp.qpn(), id + 1, true))
                .errno(), "not its counter");
        k.unbind(qp.qpn(), id, true);
        assertEquals(List.of(), k.counters());
        assertEquals(QpCounters.MODE_NONE, k.mode(), "manual mode ends with its last counter");
    }
}
