package nicsim.verbs;

import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.BigEndian;
import nicsim.driver.Driver;
import nicsim.firmware.Cmd;
import nicsim.firmware.Cqe64;

/**
 * A completion queue (ibv_cq), mlx5-style: a ring of 64-byte CQEs in host memory that the adapter
 * writes, polled by owner bit; a doorbell record with the consumer index (which the adapter reads
 * when the ring looks full) and the arm word; arming by MMIO to the context's UAR page.
 */
public final class CompletionQueue extends VerbsObject {
    final Context ctx;
    private final Driver driver;
    final int cqn;
    private final int size;
    private final long ring, dbrec;
    private final CompletionChannel channel;
    private int consumer, armSn;
    private long events;

    CompletionQueue(Context ctx, int cqe, CompletionChannel channel) {
        super(ctx);
        this.ctx = ctx;
        this.driver = ctx.driver;
        this.channel = channel;
        if (cqe < 1 || cqe > driver.caps().maxCqe())
            throw new VerbsException(Errno.EINVAL, "createCq cqe " + cqe + " must be 1.." + driver.caps().maxCqe());
        int n = Integer.highestOneBit(cqe) << 1; // roundup_pow_of_two(cqe + 1)
        this.size = n;
        var host = driver.host();
        ring = host.allocPhysical(64L * n, 4096);
        for (int i = 0; i < n; i++) host.memory.write(ring + 64L * i + 63, new byte[]{(byte) 0xF0});
        dbrec = host.allocPhysical(8, 8);
        int vector = driver.claimVector(v -> {
            events++;
            if (this.channel != null && !isClosed()) this.channel.deliver(this);
        });
        cqn = (int) driver.command(Cmd.CREATE_CQ, Cmd.CREATE_CQ_IN, new Cmd.CreateCq(ctx.uar, ring, Integer.numberOfTrailingZeros(n), vector,
                dbrec), Cmd.HANDLE).handle();
        ctx.cqs.put(cqn, this);
    }

    /** The number of entries (the user's request rounded up, as ibv_create_cq reports it). */
    public int cqe() { return size - 1; }
    public int handle() { return cqn; }
    /** Interrupts (MSI-X) this CQ has raised. */
    public long interrupts() { return events; }

    void eventTaken() { armSn++; }

    /** Whether a completion waits to be polled: the next CQE is software's (a look that changes nothing). */
    public boolean ready() {
        checkOpen();
        int b = driver.host().memory.read(ring + 64L * (consumer & (size - 1)) + 63, 1)[0];
        return (b & 0xff) >> 4 != Cqe64.INVALID && (b & 1) == ((consumer & size) != 0 ? 1 : 0);
    }

    /** ibv_poll_cq: up to {@code max} completions, never blocking. */
    public List<WorkCompletion> poll(int max) {
        checkOpen();
        List<WorkCompletion> out = new ArrayList<>();
        var mem = driver.host().memory;
        while (out.size() < max) {
            long slot = ring + 64L * (consumer & (size - 1));
            byte[] e = mem.read(slot, 64);
            int op = (e[63] & 0xff) >> 4;
            if (op == Cqe64.INVALID || (e[63] & 1) != ((consumer & size) != 0 ? 1 : 0)) break;
            consumer++;
            WorkCompletion wc = decode(e);
            if (wc != null) out.add(wc);
        }
        if (!out.isEmpty() || consumer != 0) {
            byte[] ci = new byte[4];
            BigEndian.put32(ci, 0, consumer & 0xFFFFFF);
            mem.write(dbrec, ci);
        }
        if (!out.isEmpty()) driver.host().bus.cpuWork(driver.host().profile.picos("host.poll.cost") * out.size());
        return out;
    }

    private WorkCompletion decode(byte[] e) {
        Cqe64.View v = Cqe64.parse(e);
        QueuePair qp = ctx.qps.get((int) v.qpn());
        if (qp == null) return null; // a destroyed QP's completion
        return qp.complete(v, e);
    }

    /**
     * Removes the completions of {@code qpn} that software has not polled (done on a QP reset, as
     * mlx5's __mlx5_cq_clean): later entries move back over them.
     */
    void clean(int qpn) {
        var mem = driver.host().memory;
        int end = consumer;
        while (true) {
            byte[] e = mem.read(ring + 64L * (end & (size - 1)), 64);
            if ((e[63] & 0xff) >> 4 == Cqe64.INVALID || (e[63] & 1) != ((end & size) != 0 ? 1 : 0)) break;
            end++;
        }
        int kept = 0;
        for (int i = end - 1; i >= consumer; i--) {
            long at = ring + 64L * (i & (size - 1));
            byte[] e = mem.read(at, 64);
            if (Cqe64.parse(e).qpn() == qpn) { kept++; continue; }
            if (kept > 0) {
                int to = i + kept;
                e[63] = (byte) ((e[63] & ~1) | ((to & size) != 0 ? 1 : 0));
                mem.write(ring + 64L * (to & (size - 1)), e);
            }
        }
        for (int i = 0; i < kept; i++) {
            // the freed slots at the front become software-consumed
            consumer++;
        }
        if (kept > 0) {
            byte[] ci = new byte[4];
            BigEndian.put32(ci, 0, consumer & 0xFFFFFF);
            mem.write(dbrec, ci);
        }
    }

    /** ibv_req_notify_cq: the next completion (or next solicited one) raises an event on the channel. */
    public void reqNotify(boolean solicitedOnly) {
        checkOpen();
        int w0 = (armSn & 3) << 28 | (solicitedOnly ? 1 << 24 : 0) | (consumer & 0xFFFFFF);
        byte[] arm = new byte[4];
        BigEndian.put32(arm, 0, w0);
        driver.host().memory.write(dbrec + 4, arm);
        byte[] db = new byte[8];
        BigEndian.put32(db, 0, w0);
        BigEndian.put32(db, 4, cqn);
        driver.mmio(driver.cqDoorbell(ctx.uar), db);
    }

    @Override protected String describe() { return "CompletionQueue(" + cqn + ")"; }

    @Override protected void destroy() {
        driver.command(Cmd.DESTROY_CQ, Cmd.HANDLE, new Cmd.Handle(cqn), Cmd.EMPTY);
        ctx.cqs.remove(cqn);
    }
}
