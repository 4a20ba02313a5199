package nicsim.sim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

class StreamTest {
    record Word(long value) {}
    static final Layout<Word> WORD = Layout.<Word>builder("Word").field("value", 16, Word::value)
            .build(v -> new Word(v[0]));

    /** A master that offers 0, 1, 2, ... ; {@code misbehave} lets a test break the contract on purpose. */
    static final class Source implements Clocked {
        final Stream<Word> out;
        final int count;
        final Random rnd;
        long next;
        IntPredicate dropValidAt = c -> false;
        IntPredicate changePayloadAt = c -> false;
        Source(Stream<Word> out, int count, long seed) {
            this.out = out;
            this.count = count;
            this.rnd = new Random(seed);
        }
        @Override public void drive() {
            int c = (int) out.domain().cycle();
            if (next >= count || dropValidAt.test(c)) { out.idle(); return; }
            out.push(new Word(changePayloadAt.test(c) ? next + 1000 : next));
        }
        @Override public void update() { if (out.fire()) next++; }
        @Override public boolean active() { return next < count; }
    }

    /** A slave with random back-pressure, recording what it received and when. */
    static final class Sink implements Clocked {
        final Stream<Word> in;
        final Random rnd;
        final List<Long> got = new ArrayList<>();
        final List<Long> cycles = new ArrayList<>();
        final int readyPercent;
        Sink(Stream<Word> in, long seed, int readyPercent) {
            this.in = in;
            this.rnd = new Random(seed);
            this.readyPercent = readyPercent;
        }
        @Override public void drive() { in.ready(rnd.nextInt(100) < readyPercent); }
        @Override public void update() {
            if (in.fire()) {
                got.add(in.payload().value());
                cycles.add(in.domain().cycle());
            }
        }
        @Override public boolean active() { return false; }
    }

    @Test
    void fifoDeliversEverythingInOrderUnderRandomBackPressure() {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("core", 4_000);
        StreamFifo<Word> fifo = new StreamFifo<>("fifo", d, 4, WORD);
        Source src = new Source(fifo.push(), 500, 1);
        Sink sink = new Sink(fifo.pop(), 2, 40);
        d.add(src);
        d.add(sink);
        sim.runUntilIdle(1_000_000_000L);
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < 500; i++) expected.add(i);
        assertEquals(expected, sink.got);
        assertEquals(500, fifo.push().fires());
        assertEquals(4, fifo.peakOccupancy());          // a 40%-ready sink backs the FIFO up to full
        assertTrue(fifo.fullCycles() > 0);
        assertTrue(fifo.meanOccupancy() > 1.0, "mean " + fifo.meanOccupancy());
        assertTrue(fifo.push().stalls() > 0);
        assertTrue(sim.contractViolations().isEmpty());
    }

    @Test
    void fifoHasOneCycleLatencyLikeSpinalStreamFifo() {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("core", 4_000);
        StreamFifo<Word> fifo = new StreamFifo<>("fifo", d, 2, WORD);
        Source src = new Source(fifo.push(), 1, 1);
        Sink sink = new Sink(fifo.pop(), 2, 100);
        d.add(src);
        d.add(sink);
        sim.runUntilIdle(1_000_000L);
        assertEquals(List.of(1L), sink.cycles); // pushed on edge 0, popped on edge 1
    }

    @Test
    void droppingValidBeforeFireIsReportedWithStreamAndCycle() {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("core", 4_000);
        Stream<Word> s = new Stream<>("io_req", d, WORD);
        Source src = new Source(s, 3, 1);
        src.dropValidAt = c -> c == 2;
        Sink sink = new Sink(s, 1, 0); // never ready: valid must hold
        d.add(src);
        d.add(sink);
        StreamContractViolation v = assertThrows(StreamContractViolation.class, () -> sim.runUntilIdle(1_000_000L));
        assertEquals(StreamContractViolation.Rule.VALID_DROPPED, v.rule());
        assertEquals("io_req", v.stream());
        assertEquals(2, v.cycle());
        assertTrue(v.getMessage().contains("io_req") && v.getMessage().contains("cycle 2"), v.getMessage());
    }

    @Test
    void changingPayloadWhileStalledIsReported() {
        Simulator sim = new Simulator();
        sim.throwOnContractViolation(false);
        ClockDomain d = sim.clockDomain("core", 4_000);
        Stream<Word> s = new Stream<>("io_req", d, WORD);
        Source src = new Source(s, 3, 1);
        src.changePayloadAt = c -> c == 3;
        Sink sink = new Sink(s, 1, 0);
        d.add(src);
        d.add(sink);
        sim.runFor(40_000);
        // cycle 3 changes the payload; cycle 4 changes it back: both are violations of the hold rule
        assertEquals(2, sim.contractViolations().size());
        assertEquals(StreamContractViolation.Rule.PAYLOAD_CHANGED, sim.contractViolations().get(0).rule());
        assertEquals(3, sim.contractViolations().get(0).cycle());
        assertEquals(2, sim.counters().get("kernel.contract_violations"));
    }

    @Test
    void drivingInTheUpdatePhaseIsReported() {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("core", 4_000);
        Stream<Word> s = new Stream<>("io_out", d, WORD);
        d.add(new Clocked() {
            @Override public void drive() { }
            @Override public void update() { s.push(new Word(1)); }
        });
        StreamContractViolation v = assertThrows(StreamContractViolation.class, () -> sim.runFor(10_000));
        assertEquals(StreamContractViolation.Rule.DRIVEN_IN_UPDATE_PHASE, v.rule());
    }

    @Test
    void connectedStreamsAreTheSameWiresWithNoCycleBetween() {
        Simulator sim = new Simulator();
        ClockDomain d = sim.clockDomain("core", 4_000);
        Stream<Word> out = new Stream<>("io_out", d, WORD), in = new Stream<>("io_in", d, WORD);
        out.connect(in);
        Source src = new Source(out, 50, 1);
        Sink sink = new Sink(in, 3, 50);
        d.add(sink);  // evaluation order must not matter: the sink is added first on purpose
        d.add(src);
        sim.runUntilIdle(1_000_000_000L);
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < 50; i++) expected.add(i);
        assertEquals(expected, sink.got);
        assertEquals(50, out.fires());
        assertEquals(0, in.fires(), "the contract is checked and counted once, on the source side");
        assertThrows(IllegalArgumentException.class, () -> out.connect(new Stream<>("x", d, WORD)));
        Stream<Word> elsewhere = new Stream<>("y", sim.clockDomain("other", 1_000), WORD);
        assertThrows(IllegalArgumentException.class, () -> elsewhere.connect(new Stream<>("z", d, WORD)));
    }

    @Test
    void layoutChecksWidthsAndRoundTrips() {
        record Msg(long qpn, long pi) {}
        Layout<Msg> l = Layout.<Msg>builder("Msg").field("qpn", 24, Msg::qpn).field("pi", 16, Msg::pi)
                .build(v -> new Msg(v[0], v[1]));
        assertEquals(40, l.width());
        Msg m = new Msg(0xABCDEF, 0x1234);
        assertEquals(m, l.unpack(l.pack(m)));
        assertEquals(0x1234ABCDEFL, l.pack(m).longValueExact());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> l.values(new Msg(1 << 24, 0)));
        assertTrue(e.getMessage().contains("Msg.qpn"), e.getMessage());
    }
}
