package nicsim.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import nicsim.abi.Cmd;
import nicsim.abi.Cqe64;
import nicsim.driver.Driver;
import nicsim.provider.CqRing;

/**
 * A completion queue (ibv_cq). Its ring, owner bits, consumer index and arming are the provider's
 * ({@link CqRing}); this side turns each CQE into a work completion through the QP it names.
 */
public final class CompletionQueue extends VerbsObject {
    final Context ctx;
    private final Driver driver;
    final int cqn;
    private final CqRing ring;
    private final CompletionChannel channel;
    private final int vector;
    private long events;
    /**
     * Armed by software and not yet fired, as far as software knows: on a shared vector it tells this CQ's
     * interrupt from another's.
     */
    private boolean armed, armedSolicitedOnly;
    private final IntConsumer onInterrupt = this::interrupted;

    CompletionQueue(Context ctx, int cqe, CompletionChannel channel) {
        super(ctx);
        this.ctx = ctx;
        this.driver = ctx.driver;
        this.channel = channel;
        if (cqe < 1 || cqe > driver.caps().maxCqe())
            throw new VerbsException(Errno.EINVAL, "createCq cqe " + cqe + " must be 1.." + driver.caps().maxCqe());
        this.ring = new CqRing(driver, Integer.highestOneBit(cqe) << 1); // roundup_pow_of_two(cqe + 1)
        vector = driver.claimVector(onInterrupt);
        try {
            cqn = (int) DriverCommand.run(driver, Cmd.CREATE_CQ, Cmd.CREATE_CQ_IN, new Cmd.CreateCq(ctx.uar,
                    ring.base(), Integer.numberOfTrailingZeros(ring.size()), vector, ring.doorbellRecord()),
                    Cmd.HANDLE).handle();
        } catch (RuntimeException e) {
            driver.releaseVector(vector, onInterrupt);
            ring.free();
            throw e;
        }
        ctx.cqs.put(cqn, this);
        made();
    }

    private void interrupted(int v) {
        if (driver.vectorShared(v) && !(armed && ring.ready())) return; // another CQ's event
        armed = false;
        events++;
        if (channel != null && !isClosed()) channel.deliver(this);
    }

    /** The number of entries (the user's request rounded up, as ibv_create_cq reports it). */
    public int cqe() { return ring.size() - 1; }
    public int handle() { return cqn; }
    /** Where the CQ's doorbell record is in host memory (the consumer index at word 0). */
    long doorbellRecord() { return ring.doorbellRecord(); }
    /** Interrupts (MSI-X) this CQ has raised. */
    public long interrupts() { return events; }

    void eventTaken() { ring.eventTaken(); }

    /** Whether a completion waits to be polled: the next CQE is software's (a look that changes nothing). */
    public boolean ready() {
        checkOpen();
        return ring.ready();
    }

    /**
     * ibv_resize_cq: the CQ holds at least {@code cqe} entries from now on (rounded up as at create;
     * {@link #cqe()} tells how many), keeping the completions not yet polled, in order, and an arm.
     * EINVAL if {@code cqe} is out of 1..max_cqe or smaller than the completions waiting.
     */
    public synchronized void resize(int cqe) {
        checkOpen();
        if (cqe < 1 || cqe > driver.caps().maxCqe())
            throw new VerbsException(Errno.EINVAL, "resizeCq cqe " + cqe + " must be 1.." + driver.caps().maxCqe());
        int size = Integer.highestOneBit(cqe) << 1;
        if (size == ring.size()) return;
        if (ring.started()) ring.publishConsumer();
        long base = CqRing.invalidRing(driver, size);
        try {
            DriverCommand.run(driver, Cmd.RESIZE_CQ, Cmd.RESIZE_CQ_IN,
                    new Cmd.ResizeCq(cqn, base, Integer.numberOfTrailingZeros(size)), Cmd.EMPTY);
        } catch (RuntimeException e) {
            driver.host().freePhysical(base, 64L * size);
            throw e;
        }
        ring.moved(base, size);
        if (armed) ring.arm(cqn, ctx.uar, armedSolicitedOnly); // the adapter's arm did not move with the ring
    }

    /** ibv_poll_cq: up to {@code max} completions, never blocking. */
    public synchronized List<WorkCompletion> poll(int max) {
        checkOpen();
        List<WorkCompletion> out = new ArrayList<>();
        while (out.size() < max) {
            byte[] e = ring.next();
            if (e == null) break;
            WorkCompletion wc = decode(e);
            if (wc != null) out.add(wc.withTimestamp(Cqe64.timestamp(e)));
        }
        if (ring.started()) ring.publishConsumer();
        if (!out.isEmpty()) driver.host().bus.cpuWork(driver.host().config.pollCostPs() * out.size());
        return out;
    }

    private WorkCompletion decode(byte[] e) {
        Cqe64.View v = Cqe64.parse(e);
        QueuePair qp = ctx.qps.get((int) v.qpn());
        if (v.opcode() != Cqe64.REQ && v.opcode() != Cqe64.REQ_ERR) {
            // a receive of an XRC SRQ: its WQE is found by the SRQ's number (the target QP may be another process's)
            long srqn = v.opcode() == Cqe64.RESP_ERR ? Cqe64.parseError(e).srqn() : Cqe64.parseRecv(e).srqn();
            SharedReceiveQueue s = srqn == 0 ? null : ctx.srqs.get((int) srqn);
            if (s != null && s.type() == SrqType.TM) return s.tmCompletion(v, e);
            if (s != null && s.type() == SrqType.XRC) {
                if (qp != null && v.opcode() == Cqe64.RESP_ERR
                        && DeviceCodes.status(v.syndrome()) != WcStatus.WR_FLUSH_ERR)
                    qp.movedByDevice(QpState.ERR);
                byte[] inline = Cqe64.inlineData(e);
                if (inline != null) QueuePair.scatter(ctx.driver.host(), inline, s.sges(v.wqeCounter()));
                return QueuePair.received(s.take(v.wqeCounter()), v, e);
            }
        }
        if (qp == null) return null; // a destroyed QP's completion
        return qp.complete(v, e);
    }

    /**
     * Removes the completions of {@code qpn} that software has not polled (done on a QP reset, as mlx5's
     * __mlx5_cq_clean).
     */
    void clean(int qpn) { ring.clean(e -> Cqe64.parse(e).qpn() == qpn); }

    /** ibv_req_notify_cq: the next completion (or next solicited one) raises an event on the channel. */
    public void reqNotify(boolean solicitedOnly) {
        checkOpen();
        armed = true;
        armedSolicitedOnly = solicitedOnly;
        ring.arm(cqn, ctx.uar, solicitedOnly);
    }

    @Override protected String describe() { return "CompletionQueue(" + cqn + ")"; }

    @Override protected void destroy() {
        DriverCommand.run(driver, Cmd.DESTROY_CQ, Cmd.HANDLE, new Cmd.Handle(cqn), Cmd.EMPTY);
        driver.releaseVector(vector, onInterrupt);
        ctx.cqs.remove(cqn);
        ring.free();
    }
}
