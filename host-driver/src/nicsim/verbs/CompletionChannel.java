package nicsim.verbs;

import java.util.ArrayDeque;
import java.util.Optional;

/**
 * A completion channel (ibv_comp_channel): armed CQs that complete deliver an event here, raised by
 * the adapter's MSI-X after the CQE is in memory.
 */
public final class CompletionChannel extends VerbsObject {
    private final ArrayDeque<CompletionQueue> events = new ArrayDeque<>();
    private long delivered;
    private Runnable listener;

    CompletionChannel(Context ctx) {
        super(ctx);
        made();
    }

    void deliver(CompletionQueue cq) {
        events.add(cq);
        delivered++;
        if (listener != null) listener.run();
    }

    /**
     * Calls {@code r} each time an event arrives, within the simulation event that raised the
     * interrupt: a consumer on the host's side, as the kernel's completion handler is.
     */
    public void onEvent(Runnable r) { listener = r; }

    /** ibv_get_cq_event without blocking: the CQ of the next event, if one arrived. */
    public Optional<CompletionQueue> getCqEvent() {
        checkOpen();
        CompletionQueue cq = events.poll();
        if (cq != null) cq.eventTaken();
        return Optional.ofNullable(cq);
    }

    /** Whether an event waits to be taken. */
    public boolean hasEvent() { return !events.isEmpty(); }

    /** Events delivered so far. */
    public long eventsDelivered() { return delivered; }

    @Override protected String describe() { return "CompletionChannel"; }
    @Override protected void destroy() {}
}
