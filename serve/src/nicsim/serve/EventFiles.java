package nicsim.serve;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import nicsim.verbs.AsyncEvent;
import nicsim.verbs.CompletionChannel;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Context;

/**
 * An attached program's event files, as the kernel's uverbs writes them: its async file (one
 * struct ib_uverbs_async_event_desc per event: u64 the object, u32 the event type, u32 0) and
 * each completion channel (one struct ib_uverbs_comp_event_desc per event: u64 the CQ). Each is a
 * socket of the program's own, so libibverbs reads it unchanged and the program may poll it,
 * make it non-blocking or be interrupted in it; objects are named by the program's own pointers.
 * An event for an object the program destroyed meanwhile is dropped.
 */
final class EventFiles {
    private final Context ctx;
    private Consumer<ByteBuffer> async;
    /** The program's completion channels, by the number it knows each by (its file descriptor). */
    private final Map<Integer, CompletionChannel> channels = new HashMap<>();
    private final Map<Integer, Consumer<ByteBuffer>> channelFiles = new HashMap<>();
    private final Map<CompletionQueue, Long> cqCookies = new HashMap<>();
    /** The program's pointers to its QPs and SRQs, by number. */
    private final Map<Integer, Long> qpCookies = new HashMap<>(), srqCookies = new HashMap<>();
    private long written;

    EventFiles(Context ctx) { this.ctx = ctx; }

    /** Events written so far: a program asleep on one of its files may wake once this moves. */
    long written() { return written; }

    void asyncTo(Consumer<ByteBuffer> file) { async = file; }

    /** The program made completion channel {@code number}, whose socket is {@code file}: its events go there. */
    void channelTo(int number, Consumer<ByteBuffer> file) {
        channelFiles.put(number, file);
        channels.computeIfAbsent(number, n -> ctx.createCompChannel());
    }

    /** The channel the program numbers {@code number}, or EINVAL naming it. */
    CompletionChannel channel(int number) {
        CompletionChannel ch = channels.get(number);
        if (ch == null) throw new nicsim.verbs.VerbsException(nicsim.verbs.Errno.EINVAL, "completion channel " + number + " is not this program's");
        return ch;
    }

    /** The program closed channel {@code number}'s socket. */
    void channelClosed(int number) {
        channelFiles.remove(number);
        CompletionChannel ch = channels.remove(number);
        if (ch != null) ch.close();
    }

    void cqMade(CompletionQueue cq, long cookie) { cqCookies.put(cq, cookie); }
    void cqGone(CompletionQueue cq) { cqCookies.remove(cq); }
    void qpMade(int qpn, long cookie) { qpCookies.put(qpn, cookie); }
    void qpGone(int qpn) { qpCookies.remove(qpn); }
    void srqMade(int srqn, long cookie) { srqCookies.put(srqn, cookie); }
    void srqGone(int srqn) { srqCookies.remove(srqn); }

    /** Writes every event that came: completion events to their channels' sockets, async events to the async file. */
    void deliver() {
        for (Map.Entry<Integer, CompletionChannel> e : channels.entrySet()) {
            Consumer<ByteBuffer> file = channelFiles.get(e.getKey());
            for (var cq = e.getValue().getCqEvent(); cq.isPresent(); cq = e.getValue().getCqEvent()) {
                Long cookie = cqCookies.get(cq.get());
                if (file == null || cookie == null) continue;
                write(file, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(cookie).flip());
            }
        }
        if (async == null) return;
        for (var e = ctx.pollAsyncEvent(); e.isPresent(); e = ctx.pollAsyncEvent()) {
            AsyncEvent a = e.get();
            Long element = a.qpNum() >= 0 ? qpCookies.get(a.qpNum()) : a.srqHandle() >= 0 ? srqCookies.get(a.srqHandle())
                    : a.cqHandle() >= 0 ? cookieOfCq(a.cqHandle()) : Long.valueOf(a.portNum());
            if (element == null) continue; // an object the program has destroyed meanwhile
            write(async, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(element).putInt(a.type().value()).putInt(0).flip());
        }
    }

    /** Whether an event waits to be written (a look that changes nothing). */
    boolean pending() {
        for (CompletionChannel ch : channels.values()) if (ch.hasEvent()) return true;
        return async != null && ctx.hasAsyncEvent();
    }

    private void write(Consumer<ByteBuffer> file, ByteBuffer b) {
        file.accept(b);
        written++;
    }

    private Long cookieOfCq(int cqn) {
        for (Map.Entry<CompletionQueue, Long> c : cqCookies.entrySet()) if (c.getKey().handle() == cqn) return c.getValue();
        return null;
    }
}
