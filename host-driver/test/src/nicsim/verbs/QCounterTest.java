package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.Cmd;
import nicsim.abi.QCounter;
import nicsim.driver.Driver;
import nicsim.driver.ErrnoException;
import org.junit.jupiter.api.Test;

/** q counter sets: a QP bound to one counts its own traffic there, the adapter's counters go on counting all. */
class QCounterTest {
    private static long alloc(Driver d) {
        return d.command(Cmd.ALLOC_Q_COUNTER, Cmd.EMPTY, new Cmd.Empty(), Cmd.HANDLE).handle();
    }

    private static void bind(Driver d, QueuePair qp, long set) {
        d.command(Cmd.SET_QP_COUNTER, Cmd.QP_COUNTER_IN, new Cmd.QpCounter(qp.qpNum(), set), Cmd.EMPTY);
    }

    private static Cmd.QCounterValues query(Driver d, long set, boolean clear) {
        return d.command(Cmd.QUERY_Q_COUNTER, Cmd.Q_COUNTER_QUERY_IN, new Cmd.QCounterQuery(set, clear ? 1 : 0),
                Cmd.Q_COUNTER_VALUES);
    }

    private static void write(Pair p, int bytes) {
        p.a.qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(p.a.buf.addr(), bytes, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
    }

    @Test
    void aBoundQpCountsItsOwnTrafficFromTheBindOn() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 64 * 1024).up(Mtu.MTU_1024);
        Driver d = p.a.ctx.driver();
        write(p, 5000); // before the bind: the adapter's alone
        long set = alloc(d);
        assertEquals(1, set, "sets are numbered from 1");
        assertArrayEquals(new long[QCounter.values().length], query(d, set, false).values(), "a new set is zeroed");
        bind(d, p.a.qp, set);
        write(p, 10_000);
        Cmd.QCounterValues v = query(d, set, false);
        assertEquals(10_000, v.get(QCounter.DMA_READ_BYTES), "the payload the requester read, this write's only");
        assertEquals(10, v.get(QCounter.PACKETS_OUT), "10 000 bytes in 1024-byte packets");
        assertTrue(v.get(QCounter.PACKETS_IN) >= 1, "the acknowledgements: " + v.get(QCounter.PACKETS_IN));
        assertEquals(0, v.get(QCounter.RETRANSMITS));
        long adapterBytes = p.world.sim.counters().scope("node0").snapshot().get(QCounter.DMA_READ_BYTES.counterName());
        assertTrue(adapterBytes >= 15_000, "the adapter counted both writes: " + adapterBytes);
        assertEquals(10_000, query(d, set, true).get(QCounter.DMA_READ_BYTES), "read, then cleared");
        assertEquals(0, query(d, set, false).get(QCounter.DMA_READ_BYTES));
    }

    @Test
    void aSetInUseStaysAndAnUnknownOneIsNamed() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096).up(Mtu.MTU_1024);
        Driver d = p.a.ctx.driver();
        long set = alloc(d);
        bind(d, p.a.qp, set);
        ErrnoException busy = assertThrows(ErrnoException.class,
                () -> d.command(Cmd.DEALLOC_Q_COUNTER, Cmd.HANDLE, new Cmd.Handle(set), Cmd.EMPTY));
        assertEquals(Errno.EBUSY, busy.errno(), busy.getMessage());
        assertTrue(busy.getMessage().contains(String.format("0x%x", p.a.qp.qpNum())), busy.getMessage());
        bind(d, p.a.qp, 0);
        d.command(Cmd.DEALLOC_Q_COUNTER, Cmd.HANDLE, new Cmd.Handle(set), Cmd.EMPTY);
        ErrnoException gone = assertThrows(ErrnoException.class, () -> query(d, set, false));
        assertEquals(Errno.EINVAL, gone.errno());
        assertTrue(gone.getMessage().contains("no such q counter set"), gone.getMessage());
        ErrnoException noQp = assertThrows(ErrnoException.class,
                () -> d.command(Cmd.SET_QP_COUNTER, Cmd.QP_COUNTER_IN, new Cmd.QpCounter(0xabcde, 0), Cmd.EMPTY));
        assertEquals(Errno.EINVAL, noQp.errno());
    }

    @Test
    void theAdapterHasAsManySetsAsItSays() {
        Pair p = new Pair("cx-gen3x16", QpType.RC, 4096);
        Driver d = p.a.ctx.driver();
        List<Long> sets = new ArrayList<>();
        for (int i = 0; i < QCounter.MAX_SETS; i++) sets.add(alloc(d));
        assertEquals(QCounter.MAX_SETS, sets.get(sets.size() - 1));
        ErrnoException full = assertThrows(ErrnoException.class, () -> alloc(d));
        assertEquals(Errno.ENOMEM, full.errno(), full.getMessage());
    }
}
