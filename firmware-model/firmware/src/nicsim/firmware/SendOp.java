package nicsim.firmware;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import nicsim.abi.WqeFormat.SendWqe;
import nicsim.abi.WqeLayout;
import nicsim.fabric.Fabric;
import nicsim.fabric.Packet;

/**
 * A send WQE on its way: its PSNs, packets (kept for retransmission), and what has come back. It hears as each of its
 * packets leaves the fabric ({@link Fabric.Gone}), so the arrays they carry go back to the pool only once acknowledged
 * and with no copy of a packet still on its way (a go-back-N resend sent before the ACK came).
 */
final class SendOp implements Fabric.Gone {
    final int index, opcode;
    final SendWqe w;
    final long length;
    int firstPsn, lastPsn, respPsn;
    byte[] payload;
    byte[][] chunks; // a streamed op's packets' bytes, each as it came into SRAM (payload is then unused)
    /** Where its chunks go back (null: they are not pooled, as an unreliable service's). */
    PayloadPool pool;
    /** Copies of its packets sent and not yet out of the fabric; whether an ACK covered it (its chunks then free). */
    private int inFabric;
    private boolean acked;
    /**
     * Where the operation is in its life, in order, each stage implying those before it:
     * started (its payload being read or its local work being done), ready (its packets can be
     * built), sent (every packet handed to the link), answered (a READ's or atomic's response is
     * in, being written locally), done (acknowledged, or answered and written: it may complete).
     */
    enum Stage { STARTED, READY, SENT, ANSWERED, DONE }

    Stage stage = Stage.STARTED;
    /** Its first packet's trace was written. */
    boolean onWire;
    /** A response's local page is being brought in (on-demand paging): the responses are asked for again after. */
    boolean faulting;

    /** Moves on to {@code s} (never back). */
    void reach(Stage s) { if (s.compareTo(stage) > 0) stage = s; }

    boolean atLeast(Stage s) { return stage.compareTo(s) >= 0; }

    boolean done() { return stage == Stage.DONE; }
    /** Streamed: packets leave as soon as their bytes have been read from the host (cut-through). */
    boolean streaming;
    int npkts, sent;
    /** A streamed op's packets whose bytes are not all in SRAM yet. */
    int unread;
    /** A streamed op's packets whose head left the send engine: packet k's feed time in ps, or -1 (not yet). */
    long[] heads;
    final List<Packet> packets;
    /**
     * Not a work request: the transport's own (a DC connect), which takes a PSN and is acknowledged but never
     * completes.
     */
    final boolean control;

    SendOp(int index, SendWqe w, long length) { this(index, w, length, false, 1); }

    /**
     * A work request on a path of {@code mtu} bytes: its packet list made for the packets it sends (a READ or atomic
     * one, a SEND or WRITE its payload's, up to {@link #PACKETS_MADE}; a guess, as the path may change).
     */
    SendOp(int index, SendWqe w, long length, int mtu) {
        this(index, w, length, false, readOrAtomic(w.opcode()) || mtu <= 0 ? 1
                : (int) Math.max(1, Math.min(PACKETS_MADE, (length + mtu - 1) / mtu)));
    }

    /** The most packets a new op's list has room for: a longer message's grows as it goes. */
    private static final int PACKETS_MADE = 256;

    private SendOp(int index, SendWqe w, long length, boolean control, int packets) {
        this.index = index;
        this.opcode = w.opcode();
        this.w = w;
        this.length = length;
        this.control = control;
        this.packets = new ArrayList<>(packets);
    }

    /**
     * Not a work request: the adapter's own READ or SEND (tag matching's rendezvous), which
     * completes to nobody; {@code failed} hears its error syndrome and vendor code instead.
     */
    static SendOp offloaded(SendWqe w, long length, BiConsumer<Integer, Integer> failed) {
        SendOp op = new SendOp(-1, w, length, true, 1);
        op.failed = failed;
        op.onWire = true;
        return op;
    }

    /** An offloaded operation's error handler (null: a DC connect, whose error goes to the work request it was for). */
    BiConsumer<Integer, Integer> failed;

    /** A DC connect: one packet, at PSN {@code psn}. */
    static SendOp connect(int psn, Packet p) {
        SendWqe nop = new SendWqe(WqeLayout.OP_NOP, -1, 0, 0, 0, null, 0, 0, 0, 0, List.of(), null);
        SendOp op = new SendOp(-1, nop, 0, true, 1);
        op.firstPsn = op.respPsn = op.lastPsn = psn;
        op.packets.add(p);
        op.reach(Stage.READY);
        op.onWire = true;
        return op;
    }

    /** What waits for this READ or atomic, answered, to be done (its data written locally). */
    private Runnable afterDone;

    void whenDone(Runnable r) {
        Runnable before = afterDone;
        afterDone = before == null ? r : () -> { before.run(); r.run(); };
    }

    void finished() {
        Runnable r = afterDone;
        afterDone = null;
        if (r != null) r.run();
    }

    /** One of its packets goes to the fabric, which tells it ({@link #gone}) once that copy is out again. */
    void toFabric() { inFabric++; }

    @Override public void gone(Packet p) {
        if (--inFabric == 0 && acked) giveBack();
    }

    /** Acknowledged: the responder reads none of its bytes again, and they go back once no packet is in the fabric. */
    void acknowledged() {
        acked = true;
        if (inFabric == 0) giveBack();
    }

    private void giveBack() {
        if (pool == null || chunks == null) return;
        for (int k = 0; k < chunks.length; k++) {
            pool.give(chunks[k]);
            chunks[k] = null;
        }
    }

    boolean readOrAtomic() { return readOrAtomic(opcode); }

    static boolean readOrAtomic(int opcode) {
        return opcode == WqeLayout.OP_RDMA_READ || opcode == WqeLayout.OP_ATOMIC_CS || opcode == WqeLayout.OP_ATOMIC_FA;
    }
}
