package nicsim.serve;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.serve.CmLayout.AsyncEventDesc;
import nicsim.serve.CmLayout.CompEventDesc;
import nicsim.verbs.AsyncEvent;
import nicsim.verbs.CompletionChannel;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Context;
import nicsim.serve.Transport.Connection;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * An attached program's event files, as the kernel's uverbs writes them: its async file (one
 * struct ib_uverbs_async_event_desc per event: u64 the object, u32 the event type, u32 0) and
 * each completion channel (one struct ib_uverbs_comp_event_desc per event: u64 the CQ). Each is a
 * socket of the program's own, so libibverbs reads it unchanged and the program may poll it,
 * make it non-blocking or be interrupted in it; objects are named by their handles, which the
 * provider turns into its own pointers.
 * An event for an object the program destroyed meanwhile is dropped. When the adapter dies ({@link #end})
 * every file ends, as uverbs closes them on disassociation: a reader gets what was written, then EIO.
 */
final class EventFiles {
    private final Context ctx;
    private Connection async;
    /** The program's completion channels, by the number it knows each by (its file descriptor). */
    private final Map<Integer, CompletionChannel> channels = new HashMap<>();
    private final Map<Integer, Connection> channelFiles = new HashMap<>();
    /** The program's objects: an event names one by its handle while it has one. */
    private final Handles handles;
    private long written;
    /** The adapter died: every file is ended, and one opened later too. */
    private boolean ended;
    /**
     * Events that came while the program's memory was held ({@link #hold}), each with its file: written once it
     * settled, so a program woken by one finds the CQE's data, not only the CQE, in its memory.
     */
    private List<Held> held;

    /** An event written while held, and the file it goes to. */
    private record Held(Connection file, ByteBuffer bytes) {}

    EventFiles(Context ctx, Handles handles) {
        this.ctx = ctx;
        this.handles = handles;
    }

    /** Events written so far: a program asleep on one of its files may wake once this moves. */
    long written() { return written; }

    void asyncTo(Connection file) {
        async = file;
        if (ended && file != null) file.endWrites();
    }

    /** The program made completion channel {@code number}, whose socket is {@code file}: its events go there. */
    void channelTo(int number, Connection file) {
        channelFiles.put(number, file);
        if (ended) file.endWrites(); // on a dead adapter: ibv_create_comp_channel reads the end, and fails EIO
        if (ctx != null) channels.computeIfAbsent(number, n -> ctx.createCompChannel()); // none for a C driver's yet
    }

    /** The channel the program numbers {@code number}, or EINVAL naming it (null for a C driver's context). */
    CompletionChannel channel(int number) {
        CompletionChannel ch = channels.get(number);
        if (ch == null && ctx == null && channelFiles.containsKey(number)) return null;
        if (ch == null)
            throw new VerbsException(Errno.EINVAL, "completion channel " + number + " is not this program's");
        return ch;
    }

    /**
     * A CQ the program's C driver made (named by its number, {@code cqn}) signalled completion channel
     * {@code number}: the event goes to the channel's socket, as the kernel writes its file.
     */
    void cqEvent(int number, long cqn) {
        Connection file = channelFiles.get(number);
        if (file != null) write(file, compDesc(cqn));
    }

    /**
     * An async event of the adapter's for an object the program's C driver made (named by its number)
     * or for the port: written to the async file, as the kernel writes it.
     */
    void asyncEvent(long number, int type) {
        if (async != null) write(async, asyncDesc(number, type));
    }

    /** The program closed channel {@code number}'s socket. */
    void channelClosed(int number) {
        channelFiles.remove(number);
        CompletionChannel ch = channels.remove(number);
        if (ch != null) ch.close();
    }

    /** Writes every event that came: completion events to their channels' sockets, async events to the async file. */
    void deliver() {
        for (Map.Entry<Integer, CompletionChannel> e : channels.entrySet()) {
            Connection file = channelFiles.get(e.getKey());
            for (var cq = e.getValue().getCqEvent(); cq.isPresent(); cq = e.getValue().getCqEvent()) {
                Integer handle = handles.cq(cq.get(), -1);
                if (file == null || handle == null) continue;
                write(file, compDesc(handle));
            }
        }
        if (async == null || ctx == null) return;
        for (var e = ctx.pollAsyncEvent(); e.isPresent(); e = ctx.pollAsyncEvent()) {
            AsyncEvent a = e.get();
            Integer element = a.qpNum() >= 0 ? handles.qp(a.qpNum()) : a.srqHandle() >= 0 ? handles.srq(a.srqHandle())
                    : a.cqHandle() >= 0 ? handles.cq(null, a.cqHandle()) : Integer.valueOf(a.portNum());
            if (element == null) continue; // an object the program has destroyed meanwhile
            write(async, asyncDesc(element, a.type().value()));
        }
    }

    /** Whether an event waits to be written (a look that changes nothing). */
    boolean pending() {
        for (CompletionChannel ch : channels.values()) if (ch.hasEvent()) return true;
        return async != null && ctx != null && ctx.hasAsyncEvent();
    }

    /**
     * The adapter died: each file ends after what was written to it, as uverbs marks a completion file
     * closed and wakes its readers when the device is disassociated. A thread blocked in
     * ibv_get_cq_event or ibv_get_async_event then reads the end, which the provider returns as EIO.
     */
    void end() {
        release();
        ended = true;
        for (Connection c : channelFiles.values()) c.endWrites();
        if (async != null) async.endWrites();
    }

    /** struct ib_uverbs_comp_event_desc: CQ {@code cq}'s completion event. */
    private static ByteBuffer compDesc(long cq) {
        ByteBuffer b = CmAbi.le(new byte[CompEventDesc.S.size]);
        CompEventDesc.CQ_HANDLE.put64(b, cq);
        return b;
    }

    /** struct ib_uverbs_async_event_desc: event {@code type} of {@code element} (an object's number, or the port). */
    private static ByteBuffer asyncDesc(long element, int type) {
        ByteBuffer b = CmAbi.le(new byte[AsyncEventDesc.S.size]);
        AsyncEventDesc.ELEMENT.put64(b, element);
        AsyncEventDesc.EVENT_TYPE.put32(b, type);
        return b;
    }

    private void write(Connection file, ByteBuffer b) {
        if (held != null) held.add(new Held(file, b));
        else file.send(b);
        written++;
    }

    /**
     * While simulated time moves the program's memory is held (ProcMemory#hold) and written back in address
     * order when it settles: an event written meanwhile would wake the program before that, to find a CQE
     * written back and its receive buffer not yet (QEMU's migration read a header of the message before). So
     * events wait in order until {@link #release}, which comes once every memory settled.
     */
    void hold() { if (held == null) held = new ArrayList<>(); }

    /** Writes the events that came while held, in order. */
    void release() {
        List<Held> out = held;
        held = null;
        if (out != null) for (Held e : out) e.file().send(e.bytes());
    }

}
