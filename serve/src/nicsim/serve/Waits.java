package nicsim.serve;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import nicsim.verbs.CompletionChannel;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;

/**
 * A device context's completion queues as its program polls them, and what the program waits for:
 * a poll that found nothing stays open until a completion comes (or the simulation has nothing more
 * to do), and a reading of the simulated clock is answered when every program waits.
 */
final class Waits {
    /** A request left open until the simulation gives it something. */
    record Wait(Wire.Op op, CompletionQueue cq, int max, Consumer<ByteBuffer> replyTo,
            Set<CompletionQueue> readyBefore) {}

    private final Session session;
    /** What the program waits for (a poll that found nothing, a clock reading), or null. */
    private Wait wait;
    /** Empty polls answered at once, since it last waited, because another of its CQs had completions. */
    private int quickAnswers;
    /** Error completions the program was given, with the model's reason (the first few, for the simulator's log). */
    final List<String> errors = new ArrayList<>();
    long errorCompletions;

    Waits(Session session) { this.session = session; }

    /** Runs a CQ or clock request; null when the program now waits (the reply goes to {@code replyTo} later). */
    Wire.Out handle(Wire.Op op, Wire.In in, Consumer<ByteBuffer> replyTo) {
        return switch (op) {
            case CREATE_CQ -> createCq(in);
            case DESTROY_CQ -> {
                int h = Session.handle(in);
                session.get(h, CompletionQueue.class).close();
                session.handles.remove(h);
                yield new Wire.Out();
            }
            case POLL_CQ -> pollCq(in, replyTo);
            case RESIZE_CQ -> {
                WireLayout.ResizeCqRequest q = in.read(WireLayout.ResizeCqRequest.class);
                CompletionQueue cq = session.get(q.cq(), CompletionQueue.class);
                cq.resize(q.cqe());
                yield new Wire.Out(new WireLayout.CqSize(cq.cqe()));
            }
            case REQ_NOTIFY_CQ -> {
                WireLayout.ReqNotifyCqRequest q = in.read(WireLayout.ReqNotifyCqRequest.class);
                session.get(q.cq(), CompletionQueue.class).reqNotify(q.solicited());
                yield new Wire.Out();
            }
            case TIME -> { // read at the next moment every program waits: then where its reading falls is no race
                wait = new Wait(Wire.Op.TIME, null, 0, replyTo, Set.of());
                yield null;
            }
            default -> throw new IllegalStateException(op + " is not a CQ's");
        };
    }

    private Wire.Out createCq(Wire.In in) {
        WireLayout.CreateCqRequest q = in.read(WireLayout.CreateCqRequest.class);
        CompletionChannel ch = q.channel() == Wire.NONE ? null : session.events.channel(q.channel());
        CompletionQueue cq = session.context().createCq(q.cqe(), ch);
        return new Wire.Out(new WireLayout.CreateCqReply(session.handles.add(cq, null), cq.cqe()));
    }

    private Wire.Out pollCq(Wire.In in, Consumer<ByteBuffer> replyTo) {
        WireLayout.PollCqRequest q = in.read(WireLayout.PollCqRequest.class);
        CompletionQueue cq = session.get(q.cq(), CompletionQueue.class);
        int max = q.max();
        if (max > 0 && !cq.ready()) {
            List<CompletionQueue> cqs = session.handles.cqs();
            Set<CompletionQueue> ready = new HashSet<>();
            for (CompletionQueue other : cqs) if (other != cq && other.ready()) ready.add(other);
            // another of its CQs has completions: it polls its CQs in turn, so it looks there within a round
            if (!ready.isEmpty() && quickAnswers++ < cqs.size()) return completions(cq, max);
            quickAnswers = 0; // a round went by without them: those it leaves are no reason to let it go on
            wait = new Wait(Wire.Op.POLL_CQ, cq, max, replyTo, ready);
            return null;
        }
        return completions(cq, max);
    }

    private Wire.Out completions(CompletionQueue cq, int max) {
        List<WorkCompletion> wcs = cq.poll(max);
        if (!wcs.isEmpty()) quickAnswers = 0;
        Wire.Out out = new Wire.Out().u32(wcs.size());
        for (WorkCompletion w : wcs) {
            if (w.status() != WcStatus.SUCCESS && w.status() != WcStatus.WR_FLUSH_ERR && errorCompletions++ < 8)
                errors.add(w.toString());
            out.put(new WireLayout.WorkCompletion(w.wrId(), w.status().value(), w.opcode().value(), w.vendorErr(),
                    w.byteLen(), w.immData(), w.qpNum(), w.srcQp(), w.wcFlags(), 0, w.slid(), 0, 0, w.tmTag(),
                    w.tmPriv(), w.timestamp()));
        }
        return out;
    }

    /** What the program waits for, or null. */
    Wait waiting() { return wait; }

    /** It waits no more (its context closes). */
    void forget() { wait = null; }

    /**
     * Whether what the program waits for has come: a completion on the CQ it polls, or on another of
     * its CQs that had none when it began to wait (a program polling its CQs in turn, as UCX polls
     * its receive and send CQs, must see it before simulated time goes further).
     */
    boolean satisfied() {
        return wait != null && wait.cq() != null && (wait.cq().ready() || anotherCqReady(wait));
    }

    private boolean anotherCqReady(Wait w) {
        for (CompletionQueue other : session.handles.cqs())
            if (other != w.cq() && !w.readyBefore().contains(other) && !other.isClosed() && other.ready()) return true;
        return false;
    }

    /** Whether the program waits for a reading of the simulated clock. */
    boolean readingClock() { return wait != null && wait.op() == Wire.Op.TIME; }

    /** Answers the clock's reading, which ends the wait. */
    void answerClock() {
        Wait w = wait;
        wait = null;
        w.replyTo().accept(new Wire.Out(new WireLayout.Time(session.host.sim.now())).finish(0));
    }

    /**
     * Answers the open poll if it is satisfied or, with {@code giveUp} (the simulation has nothing
     * more to do for now), empty, so the program can look elsewhere; whether it answered.
     */
    boolean answer(boolean giveUp) {
        Wait w = wait;
        if (w == null || w.cq() == null || !(w.cq().ready() || giveUp || anotherCqReady(w))) return false;
        wait = null;
        w.replyTo().accept(completions(w.cq(), w.max()).finish(0));
        return true;
    }
}
