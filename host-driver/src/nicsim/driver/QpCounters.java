package nicsim.driver;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import nicsim.abi.Cmd;
import nicsim.abi.QpModifyMask;
import nicsim.abi.QpcState;
import nicsim.firmware.Resources;

/**
 * The kernel's QP counters on the adapter's port (ib_core's rdma_counter, driven by `rdma statistic qp`):
 * counter objects, each one of the adapter's q counter sets (ALLOC_Q_COUNTER; the counter's id is the set's
 * number, as mlx5_ib makes it), with the QPs bound to it. In auto mode a QP is bound as it enters INIT with
 * its port named, to the counter of the QPs that match it (by type, by process, as the mode's mask says) or
 * to a new one; in manual mode QPs are bound and unbound by hand. A counter goes (DEALLOC_Q_COUNTER) with
 * the last QP bound to it; a QP destroyed leaves its counter. Kernel QPs (owner pid 0) are never bound
 * automatically. The mode is the port's from the start; counters need the kernel's driver, which the first
 * program's verbs probe. Simulator thread only.
 */
public final class QpCounters {
    /** rdma_nl_counter_mode and rdma_nl_counter_mask. */
    public static final int MODE_NONE = 0, MODE_AUTO = 1, MODE_MANUAL = 2, MASK_QP_TYPE = 1, MASK_PID = 2;

    /** A QP as the kernel's resource tracking knows it: number, type (ibv_qp_type), owner's pid (0: the kernel's). */
    public record Qp(long qpn, int type, int pid) {}

    /** A counter: its id (the q counter set), how it was made, the QP type and process it stands for, its QPs. */
    public record Counter(long id, int mode, int mask, int qpType, int pid, TreeSet<Long> qps) {}

    private final Host host;
    private int mode = MODE_NONE, mask;
    private final Map<Long, Counter> counters = new TreeMap<>();
    private final Map<Long, Counter> byQp = new TreeMap<>();

    QpCounters(Host host) { this.host = host; }

    /** The kernel's driver of the adapter: a counter exists only for QPs, which the driver's probe came before. */
    private Driver driver() { return host.driver(); }

    public int mode() { return mode; }

    public int mask() { return mask; }

    /** The counters, by id. */
    public List<Counter> counters() { return List.copyOf(counters.values()); }

    /** A counter's counts now (QUERY_Q_COUNTER). */
    public Cmd.QCounterValues values(Counter c) {
        return driver().command(Cmd.QUERY_Q_COUNTER, Cmd.Q_COUNTER_QUERY_IN, new Cmd.QCounterQuery(c.id(), 0),
                Cmd.Q_COUNTER_VALUES);
    }

    /**
     * `rdma statistic qp set ... auto`: {@code newMask} 0 turns auto mode off (to manual while counters are
     * left, else none). EINVAL for a criterion other than type and pid; EBUSY to turn it on while counters
     * exist, as rdma_counter_set_auto_mode answers.
     */
    public void setAuto(int newMask) {
        if ((newMask & ~(MASK_QP_TYPE | MASK_PID)) != 0)
            throw new ErrnoException(LinuxErrno.EINVAL, String.format("auto mode mask 0x%x: only type (1) and pid (2)",
                    newMask));
        int newMode = newMask != 0 ? MODE_AUTO : counters.isEmpty() ? MODE_NONE : MODE_MANUAL;
        if (newMode == mode && newMask == mask) return;
        if (newMode == MODE_AUTO && !counters.isEmpty())
            throw new ErrnoException(LinuxErrno.EBUSY, "Modifying auto mode is not allowed when there is a bound QP ("
                    + counters.size() + " counters)");
        mode = newMode;
        mask = newMask;
    }

    /**
     * A MODIFY_QP of QP {@code qpn} by process {@code pid} succeeded with attribute mask {@code attrMask} to
     * state {@code state}: in auto mode a QP entering INIT with its port named is bound, if it is not yet.
     * A bind the adapter refuses (no set left) leaves the QP unbound, as ib_core ignores it.
     */
    public void modified(long qpn, long attrMask, int state, int pid) {
        if (mode != MODE_AUTO || pid == 0 || byQp.containsKey(qpn) || state != QpcState.INIT.value()
                || (attrMask & (QpModifyMask.STATE | QpModifyMask.PORT)) != (QpModifyMask.STATE | QpModifyMask.PORT))
            return;
        Qp qp = find(qpn, pid);
        if (qp == null) return;
        Counter c = null;
        for (Counter k : counters.values())
            if (k.mode() == MODE_AUTO && ((mask & MASK_QP_TYPE) == 0 || k.qpType() == qp.type())
                    && ((mask & MASK_PID) == 0 || k.pid() == qp.pid())) {
                c = k;
                break;
            }
        try {
            if (c == null) c = allocate(MODE_AUTO, mask, qp);
            attach(c, qpn);
        } catch (ErrnoException refused) {
            if (c != null && c.qps().isEmpty()) free(c);
        }
    }

    /**
     * `rdma statistic qp bind`: QP {@code qp} (null: no such QP, ENOENT) to counter {@code id}, or to a new
     * counter if {@code id} is null; the counter's id. EINVAL in auto mode, for a QP already bound, or a kernel
     * QP with a user's counter (and the reverse); ENOENT for no such counter.
     */
    public long bind(Qp qp, Long id, long qpn) {
        if (mode == MODE_AUTO) throw new ErrnoException(LinuxErrno.EINVAL, "the port's counters are in auto mode: "
                + "`rdma statistic qp set link ... auto off` first");
        if (qp == null) throw new ErrnoException(LinuxErrno.ENOENT, String.format("no QP %d on this adapter", qpn));
        if (byQp.containsKey(qp.qpn()))
            throw new ErrnoException(LinuxErrno.EINVAL, String.format("QP %d is bound to counter %d already", qp.qpn(),
                    byQp.get(qp.qpn()).id()));
        Counter c;
        if (id != null) {
            c = counters.get(id);
            if (c == null) throw new ErrnoException(LinuxErrno.ENOENT, "no counter " + id);
            if ((c.pid() == 0) != (qp.pid() == 0))
                throw new ErrnoException(LinuxErrno.EINVAL, String.format("counter %d is %s, QP %d is not", id,
                        c.pid() == 0 ? "the kernel's" : "a process's", qp.qpn()));
        } else {
            c = allocate(MODE_MANUAL, 0, qp);
            mode = MODE_MANUAL;
        }
        try {
            attach(c, qp.qpn());
        } catch (ErrnoException refused) {
            if (c.qps().isEmpty()) free(c);
            throw refused;
        }
        return c.id();
    }

    /**
     * `rdma statistic qp unbind`: QP {@code qpn} (ENOENT if none) from counter {@code id} (EINVAL if that is not
     * its counter, or the port is not in manual mode).
     */
    public void unbind(long qpn, long id, boolean qpExists) {
        if (!qpExists) throw new ErrnoException(LinuxErrno.ENOENT, String.format("no QP %d on this adapter", qpn));
        Counter c = byQp.get(qpn);
        if (c == null || c.id() != id || mode != MODE_MANUAL)
            throw new ErrnoException(LinuxErrno.EINVAL,
                    String.format("QP %d is not bound to counter %d by hand", qpn, id));
        driver().command(Cmd.SET_QP_COUNTER, Cmd.QP_COUNTER_IN, new Cmd.QpCounter(qpn, 0), Cmd.EMPTY);
        detach(c, qpn);
    }

    /** QP {@code qpn} was destroyed: its counter loses it (and goes, if it was the last). */
    public void destroyed(long qpn) {
        Counter c = byQp.get(qpn);
        if (c != null) detach(c, qpn);
    }

    private Qp find(long qpn, int pid) {
        for (Resources.QpRow r : Resources.of(host.firmware).qps())
            if (r.qpn() == qpn) return new Qp(qpn, r.type(), pid);
        return null;
    }

    private Counter allocate(int how, int withMask, Qp qp) {
        long set = driver().command(Cmd.ALLOC_Q_COUNTER, Cmd.EMPTY, new Cmd.Empty(), Cmd.HANDLE).handle();
        Counter c = new Counter(set, how, withMask, qp.type(), qp.pid(), new TreeSet<>());
        counters.put(set, c);
        return c;
    }

    private void attach(Counter c, long qpn) {
        driver().command(Cmd.SET_QP_COUNTER, Cmd.QP_COUNTER_IN, new Cmd.QpCounter(qpn, c.id()), Cmd.EMPTY);
        c.qps().add(qpn);
        byQp.put(qpn, c);
    }

    private void detach(Counter c, long qpn) {
        c.qps().remove(qpn);
        byQp.remove(qpn);
        if (c.qps().isEmpty()) free(c);
    }

    private void free(Counter c) {
        counters.remove(c.id());
        try {
            driver().command(Cmd.DEALLOC_Q_COUNTER, Cmd.HANDLE, new Cmd.Handle(c.id()), Cmd.EMPTY);
        } catch (ErrnoException gone) { // the adapter lost it (a teardown): nothing is left to free
        }
        if (counters.isEmpty() && mode == MODE_MANUAL) mode = MODE_NONE;
    }
}
