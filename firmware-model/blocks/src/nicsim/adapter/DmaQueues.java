package nicsim.adapter;

import nicsim.adapter.DmaPorts.Beat;
import nicsim.adapter.DmaPorts.WriteBeat;

/** The queues of a {@link DmaCore}: registers of two entries. */
final class DmaQueues {
    private DmaQueues() {}

    /** A first-in first-out register of two entries, the depth of every queue in the engine. */
    static final class Fifo2<T> {
        private T a, b;
        private int n;

        Fifo2() {}
        void copyFrom(Fifo2<T> o) { a = o.a; b = o.b; n = o.n; }

        int size() { return n; }
        boolean isEmpty() { return n == 0; }
        T peek() { return a; }

        void add(T v) {
            if (n == 2) throw new IllegalStateException("DmaEngine queue overflow");
            if (n == 0) a = v; else b = v;
            n++;
        }

        T poll() {
            T v = a;
            a = b;
            b = null;
            if (n > 0) n--;
            return v;
        }
    }

    /**
     * {@link Fifo2} of beats going out, held as their address (0 on the link), words and flag: a beat is made
     * an object only when a wire carries it, once however many edges it waits there, and a beat that
     * leaves on an edge run without the wires (coasting) is never made one.
     */
    static final class OutFifo2 {
        private long[] a, b;
        private long addrA, addrB, fa, fb;
        private int n;
        private Beat beatA; // the head as a link wire carries it, once made
        private WriteBeat writeA; // the head as a PCI write wire carries it, once made

        void copyFrom(OutFifo2 o) {
            a = o.a; b = o.b; addrA = o.addrA; addrB = o.addrB; fa = o.fa; fb = o.fb; n = o.n;
            beatA = o.beatA; writeA = o.writeA;
        }

        int size() { return n; }
        boolean isEmpty() { return n == 0; }
        /** The head's address, words and flag (0, null, 0 when empty). */
        long peekAddr() { return addrA; }
        long[] peekWords() { return a; }
        long peekFlag() { return fa; }

        void add(long addr, long[] words, long flag) {
            if (n == 2) throw new IllegalStateException("DmaEngine queue overflow");
            if (n == 0) { a = words; addrA = addr; fa = flag; } else { b = words; addrB = addr; fb = flag; }
            n++;
        }

        /** Takes the head; its words (null when empty). */
        long[] poll() {
            long[] v = a;
            a = b; addrA = addrB; fa = fb;
            b = null; addrB = 0; fb = 0;
            beatA = null;
            writeA = null;
            if (n > 0) n--;
            return v;
        }

        /** The head as a link beat (null when empty). */
        Beat peekBeat() {
            if (n == 0) return null;
            if (beatA == null) beatA = new Beat(a, fa);
            return beatA;
        }

        /** The head as a PCI write beat (null when empty). */
        WriteBeat peekWriteBeat() {
            if (n == 0) return null;
            if (writeA == null) writeA = new WriteBeat(addrA, a, fa);
            return writeA;
        }
    }

    /**
     * {@link Fifo2} of beats coming in, held as their words and flags: a beat taken in off a ring is
     * never made an object.
     */
    static final class BeatFifo2 {
        private long[] a, b;
        private long fa, fb;
        private int n;

        void copyFrom(BeatFifo2 o) { a = o.a; b = o.b; fa = o.fa; fb = o.fb; n = o.n; }

        int size() { return n; }
        boolean isEmpty() { return n == 0; }
        /** The head's flag (0 when empty). */
        long peekFlag() { return fa; }

        void add(long[] words, long flag) {
            if (n == 2) throw new IllegalStateException("DmaEngine queue overflow");
            if (n == 0) { a = words; fa = flag; } else { b = words; fb = flag; }
            n++;
        }

        /** Takes the head; its words (null when empty). */
        long[] poll() {
            long[] v = a;
            a = b;
            fa = fb;
            b = null;
            fb = 0;
            if (n > 0) n--;
            return v;
        }
    }
}
