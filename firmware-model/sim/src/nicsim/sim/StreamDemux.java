package nicsim.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * Routes each element of one stream to one of several outputs, chosen by {@code select}. Elements
 * wait in a two-entry input queue (ready = "fewer than two", a registered ready, so one element a
 * cycle flows through); the head is offered on its output and leaves when that output fires.
 * One cycle of latency, like a registered demux in RTL.
 */
public final class StreamDemux<T> implements Clocked {
    private final Stream<T> input;
    private final List<Stream<T>> outputs = new ArrayList<>();
    private final ToIntFunction<T> select;
    private final ArrayDeque<T> queue = new ArrayDeque<>();

    public StreamDemux(String name, ClockDomain domain, Layout<T> layout, int outputs, ToIntFunction<T> select) {
        if (outputs < 2)
            throw new IllegalArgumentException("demux " + name + ": " + outputs + " outputs, need at least 2");
        this.input = new Stream<>(name + "_input", domain, layout);
        for (int i = 0; i < outputs; i++) this.outputs.add(new Stream<>(name + "_out" + i, domain, layout));
        this.select = select;
        domain.add(this);
    }

    public Stream<T> input() { return input; }
    public Stream<T> output(int i) { return outputs.get(i); }

    @Override public void drive() {
        input.ready(queue.size() < 2);
        T head = queue.peekFirst();
        int to = head == null ? -1 : route(head);
        for (int i = 0; i < outputs.size(); i++) if (i == to) outputs.get(i).push(head); else outputs.get(i).idle();
    }

    @Override public void update() {
        T head = queue.peekFirst();
        if (head != null && outputs.get(route(head)).fire()) queue.pollFirst();
        if (input.fire()) queue.addLast(input.payload());
    }

    private int route(T t) {
        int i = select.applyAsInt(t);
        if (i < 0 || i >= outputs.size())
            throw new IllegalStateException("demux " + input.name() + ": select chose output " + i + " of "
                    + outputs.size() + " for " + t);
        return i;
    }

    /**
     * The element it holds, if it holds that one alone and it goes to output {@code i}; else null. A look-ahead for
     * a coaster: it changes nothing.
     */
    public T soleFor(int i) {
        T head = queue.peekFirst();
        return queue.size() == 1 && route(head) == i ? head : null;
    }

    /**
     * Runs an edge on which its head leaves on its output and nothing comes in, as {@link #update} would: a coaster
     * runs it without the wires. Returns the head.
     */
    public T coastPass() {
        T head = queue.pollFirst();
        if (head == null) throw new IllegalStateException("demux " + input.name() + ": coasting a pass with none held");
        return head;
    }

    /** Its inputs' valid make it active, and it changes nothing while inactive: its domain may leave it out then. */
    @Override public boolean mayRest() { return true; }

    @Override public boolean active() { return !queue.isEmpty() || input.valid(); }
}
