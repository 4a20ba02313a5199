package nicsim.firmware;

import java.util.Arrays;
import nicsim.abi.Cmd;
import nicsim.abi.QCounter;

/**
 * The adapter's q counter sets (mlx5's q counters): a driver allocates a set, binds QPs to it, and reads
 * what the QPs bound to it did (each {@link QCounter}), while the adapter's own counters go on counting
 * everything. A QP counts in one set at a time; a QP destroyed leaves its counts in the set. Numbers run
 * from 1 ({@code SET_QP_COUNTER}'s 0 is "none") to {@link QCounter#MAX_SETS}.
 */
final class QCounters {
    private final Firmware fw;
    private final Table<long[]> sets = new Table<>(1, QCounter.MAX_SETS + 1L, Cmd.Syndrome.OUT_OF_Q_COUNTERS, false);

    QCounters(Firmware fw) { this.fw = fw; }

    /** How many sets are allocated: while none is, no QP counts its own. */
    int allocated() { return sets.all().size(); }

    /** TEARDOWN_HCA: every set goes with the adapter's state (the QPs are gone already). */
    void clear() {
        for (long n = 1; n <= QCounter.MAX_SETS; n++) sets.remove(n);
    }

    byte[] execute(int opcode, byte[] input) {
        return switch (opcode) {
            case Cmd.ALLOC_Q_COUNTER -> {
                Commands.in(Cmd.EMPTY, input);
                yield Commands.handle(sets.add(new long[QCounter.values().length]));
            }
            case Cmd.DEALLOC_Q_COUNTER -> { dealloc(Commands.in(Cmd.HANDLE, input).handle()); yield Commands.ok(); }
            case Cmd.QUERY_Q_COUNTER -> {
                Cmd.QCounterQuery q = Commands.in(Cmd.Q_COUNTER_QUERY_IN, input);
                long[] set = set(q.set());
                long[] values = set.clone();
                if (q.clear() != 0) Arrays.fill(set, 0);
                yield Commands.ok(Cmd.Q_COUNTER_VALUES, new Cmd.QCounterValues(values));
            }
            case Cmd.SET_QP_COUNTER -> { bind(Commands.in(Cmd.QP_COUNTER_IN, input)); yield Commands.ok(); }
            default -> throw new IllegalArgumentException("not a q counter command: " + Cmd.opcodeName(opcode));
        };
    }

    private long[] set(long n) {
        long[] s = n == 0 ? null : sets.get(n);
        if (s == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_Q_COUNTER, n);
        return s;
    }

    private void bind(Cmd.QpCounter b) {
        Qp q = fw.qps.get(b.qpn());
        if (q == null) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_QP, b.qpn());
        q.counterSet = b.set() == 0 ? null : set(b.set());
        q.counterSetId = b.set();
    }

    private void dealloc(long n) {
        set(n);
        for (Qp q : fw.qps.values())
            if (q.counterSetId == n) throw new CommandRefused(Cmd.Syndrome.Q_COUNTER_IN_USE, q.qpn);
        sets.remove(n);
    }
}
