package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import nicsim.abi.Cqe64;
import nicsim.abi.WqeLayout;
import nicsim.adapter.MttPorts.KlmEntry;
import nicsim.adapter.MttPorts.MkeyContext;
import nicsim.adapter.MttPorts.XlateReq;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.WqePorts.SqConfig;
import nicsim.adapter.WqePorts.WqeError;
import nicsim.adapter.stim.SendQueueHost;
import nicsim.host.HostMemory;
import nicsim.host.PciBus;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Simulator;
import nicsim.sim.Trace;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The core clock coasts over the edges its blocks run alone (the adapter's coaster): the DoorbellDecoder's decode,
 * the doorbell route's hand-over to the WqeFetcher, its pick of a read, the MttWalker's check and walk steps. A coast
 * one edge too long or too short shows here: the same seeded stimulus, run with every edge through the wires and run
 * coasting, must give the same answers at the same times, the same edge count, counters and end.
 */
class CoreCoastTest {
    static final Profile PROFILE = Profiles.load("cx-gen3x16");

    /** What a run shows: each answer with its time, the core clock's edges (coasted ones among them), the end. */
    record Run(List<String> answers, long edges, long coasted, String counters, long end) {}

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3})
    void translationsCoastToTheSameAnswersAtTheSameCycles(long seed) {
        Run oneByOne = new Translations(seed, false, false).run();
        Run coasting = new Translations(seed, true, false).run();
        assertEquals(0, oneByOne.coasted());
        assertTrue(coasting.coasted() > oneByOne.answers().size(),
                "the walker's check and walk coast: " + coasting.coasted() + " edges");
        assertTrue(oneByOne.answers().size() > Translations.REQUESTS, "answers: " + oneByOne.answers().size());
        assertEquals(oneByOne.answers(), coasting.answers());
        assertEquals(oneByOne.edges(), coasting.edges(), "core clock edges");
        assertEquals(oneByOne.counters(), coasting.counters());
        assertEquals(oneByOne.end(), coasting.end());
    }

    /**
     * Translations the walker answers whole (64 bytes in one of two pages, whose MTT entries are cached once the
     * first two have filled them), each sent some cycles after the last answer: each coasts from its take to the
     * hand-over of its answer, with no edge through the wires, and the firmware hears each answer when it would have.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2})
    void aWholeAnswerIsHandedOverOnTheCoastsLastEdge(long seed) {
        Run oneByOne = new Translations(seed, false, true).run();
        Run coasting = new Translations(seed, true, true).run();
        assertEquals(Translations.REQUESTS, oneByOne.answers().size());
        assertEquals(oneByOne.answers(), coasting.answers());
        assertEquals(oneByOne.edges(), coasting.edges(), "core clock edges");
        assertEquals(oneByOne.counters(), coasting.counters());
        long wired = coasting.edges() - coasting.coasted();
        assertTrue(wired < 40, wired + " edges through the wires for " + Translations.REQUESTS + " answers");
    }

    /**
     * Every profile: lanai43's control program polls for doorbells and its fetcher reads each WQE over PCI, which no
     * coast skips, so little of it coasts; the others' BlueFlame-rung WQEs coast from decode to their first WQEBB.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"lanai43", "lanai72", "cx-gen3x16", "cx6-gen4x16"})
    void doorbellsAndFetchesCoastToTheSameWqesAndCompletionsAtTheSameCycles(String profile) {
        Run oneByOne = sendPath(profile, false);
        Run coasting = sendPath(profile, true);
        assertEquals(0, oneByOne.coasted());
        assertTrue(coasting.coasted() > 10, "decodes, picks and reads from BlueFlame coast: " + coasting.coasted());
        assertTrue(oneByOne.answers().size() > 60, oneByOne.answers().toString());
        assertEquals(oneByOne.answers(), coasting.answers());
        assertEquals(oneByOne.edges(), coasting.edges(), "core clock edges");
        assertEquals(oneByOne.counters(), coasting.counters());
        assertEquals(oneByOne.end(), coasting.end());
    }

    /**
     * Seeded rounds on one send queue with a CQ, each started once the last is done or while it may still run: NOPs by
     * BlueFlame, signaled and unsignaled NOPs rung by doorbell, now and then a doorbell from a page that does not own
     * the queue; the CQ polled and armed after each. What shows: each WQE fetched with its cycle and its timeline,
     * each CQE polled, each interrupt and refused doorbell, with their times. Coasted edges are counted from after the
     * set-up (which coasts in both).
     */
    static Run sendPath(String profile, boolean coasting) {
        int uar = 3;
        SendQueueHost h = new SendQueueHost(Profiles.load(profile), 0x21, uar, 0x80_0000, 6, 7, 0x9, 0x90_0000, 4, 5);
        List<String> seen = new ArrayList<>();
        h.interruptHook = () -> seen.add(h.sim.now() + " ps: interrupt");
        h.sim.coasting(coasting);
        h.sim.trace().enable("wqe"); // each WQE's timeline: when its doorbell was decoded, its read issued, ...
        long setUp = h.adapter.core().edgesCoasted();
        Random rnd = new Random(11);
        for (int round = 0; round < 60; round++) {
            switch (rnd.nextInt(6)) {
                case 0, 1, 2 -> h.postBlueFlame(WqeLayout.OP_NOP, 0);
                case 3 -> {
                    h.postNop(true);
                    h.ringDoorbell(uar + 1);
                    h.ringDoorbell();
                }
                default -> {
                    for (int i = rnd.nextInt(3); i >= 0; i--) h.postNop(rnd.nextBoolean());
                    h.ringDoorbell();
                }
            }
            if (rnd.nextBoolean()) h.run(); else h.sim.runFor(h.adapter.core().cyclesToPicos(rnd.nextInt(60)));
            for (Cqe64.View v : h.pollCq()) seen.add(h.sim.now() + " ps: " + v);
            h.armCq(false);
        }
        h.run();
        for (Cqe64.View v : h.pollCq()) seen.add(h.sim.now() + " ps: " + v);
        for (Adapter.Wqe w : h.wqes()) {
            seen.add("WQE " + w.index() + " at cycle " + w.cycle());
            for (Trace.Entry e : h.sim.trace().entries(String.format("qp0x%x/wqe%d", w.qpn(), w.index())))
                seen.add(e.timePicos() + " ps: WQE " + w.index() + " " + e.stage());
        }
        for (Problems.Problem p : h.adapter.problems().kept()) seen.add(p.timePicos() + " ps: " + p.report());
        return new Run(seen, h.adapter.core().edgesRun(), h.adapter.core().edgesCoasted() - setUp,
                h.sim.counters().snapshot().toString(), h.sim.now());
    }

    /**
     * Seeded translations through the adapter as the firmware asks them: MRs of several page sizes whose MTT entries
     * share cache slots, an indirect key over three of them, requests that fail a check now and then, MTT fills
     * answered after a random latency (a few fail or find the page not present), the next request sent at once from
     * the answer or some cycles after it, or two at a time.
     */
    static final class Translations implements EmbeddedProcessor {
        static final int REQUESTS = 300;
        private static final long PD = 0x51, QPN = 0x33;
        private final Simulator sim = new Simulator();
        private final Random rnd;
        private final Adapter adapter;
        private final List<MkeyContext> mrs = new ArrayList<>();
        private final Map<Long, Long> mtt = new HashMap<>();
        private final List<String> answers = new ArrayList<>();
        private int sent, waiting;
        // every request 64 bytes in one of the first MR's first two pages, sent some cycles after the last answer
        private final boolean whole;

        Translations(long seed, boolean coasting, boolean whole) {
            this.whole = whole;
            rnd = new Random(seed);
            sim.coasting(coasting);
            PciBus bus = new PciBus(sim, PciBus.Config.from(PROFILE),
                    new HostMemory(1L << 30, HostMemory.Config.from(PROFILE).pageBytes()));
            adapter = new Adapter(sim, AdapterConfig.from(PROFILE), "core", a -> this);
            bus.attach(adapter);
        }

        Run run() {
            long mttBase = 0x40;
            int[] shifts = {12, 13, 16, 21};
            for (int i = 1; i <= 6; i++) {
                int shift = shifts[rnd.nextInt(shifts.length)];
                long page = 1L << shift, start = 0x7f00_0000_0000L + ((long) i << 32) + rnd.nextInt(1 << 12);
                long pages = 2 + rnd.nextInt(6), offset = start & (page - 1), length = pages * page - offset;
                for (long p = 0; p < pages; p++)
                    mtt.put(mttBase + p, 0x1_0000_0000L + (long) rnd.nextInt(1 << 16) * page);
                MkeyContext c = new MkeyContext(i, MttPorts.STATE_VALID, rnd.nextInt(256), PD, 0, 0, start, length,
                        0x1f, shift, offset, mttBase);
                mrs.add(c);
                adapter.mkeyWrite(c);
                mttBase += 200 + rnd.nextInt(200); // cache slots of one MR's pages meet another's
            }
            long total = 0;
            for (int j = 0; j < 3; j++) {
                MkeyContext m = mrs.get(j);
                long len = 1 + rnd.nextInt(9000);
                adapter.klmWrite(new KlmEntry(j, m.index() << 8 | m.key(), m.start() + rnd.nextInt(4096), len, 0));
                total += len;
            }
            MkeyContext list = MkeyContext.indirect(7, MttPorts.STATE_VALID, 0x77, PD, total, 0x1f, 0, 3, 1);
            mrs.add(list);
            adapter.mkeyWrite(list);
            sim.runUntilIdle();
            send();
            sim.runUntilIdle();
            assertTrue(adapter.errors().isEmpty(), adapter.errors().toString());
            assertEquals(REQUESTS, sent);
            return new Run(answers, adapter.core().edgesRun(), adapter.core().edgesCoasted(),
                    sim.counters().snapshot().toString(), sim.now());
        }

        private void send() {
            if (sent == REQUESTS) return;
            if (whole) {
                MkeyContext c = mrs.get(0);
                long page = 1L << c.pageShift(), va = c.start() - c.pageOffset() + page * rnd.nextInt(2);
                va = Math.max(va, c.start()) + rnd.nextInt(16) * 64L;
                waiting++;
                adapter.translate(new XlateReq(c.index() << 8 | c.key(), va, 64, 0x3, PD, QPN, sent++));
                return;
            }
            MkeyContext c = mrs.get(rnd.nextInt(mrs.size()));
            boolean zeroBased = (c.access() & MttPorts.ZERO_BASED) != 0;
            long off = (long) (rnd.nextDouble() * c.length());
            long len = rnd.nextInt(8) == 0 ? 0 : Math.min(c.length() - off, 1 + rnd.nextInt(3 << 12));
            long mkey = c.index() << 8 | c.key(), pd = PD;
            switch (rnd.nextInt(12)) {
                case 0 -> mkey ^= 1;             // wrong key byte
                case 1 -> pd ^= 2;               // another PD
                case 2 -> len = c.length() - off + 1; // past the end
                default -> { }
            }
            waiting++;
            adapter.translate(new XlateReq(mkey, (zeroBased ? 0 : c.start()) + off, len, 0x3, pd, QPN, sent++));
        }

        /** When the last request sent is answered: the next at once from the answer, some cycles later, or two. */
        private void next() {
            if (--waiting > 0) return;
            if (whole) {
                sim.scheduleIn(adapter.core().cyclesToPicos(5 + rnd.nextInt(30)), this::send);
                return;
            }
            switch (rnd.nextInt(4)) {
                case 0 -> send();
                case 1 -> { send(); send(); }
                default -> sim.scheduleIn(adapter.core().cyclesToPicos(1 + rnd.nextInt(30)), this::send);
            }
        }

        @Override public void onXlate(XlateRsp r) {
            answers.add(sim.now() + " ps: " + r);
            if (r.last() != 0) next();
        }

        @Override public void onMttFill(long index, Consumer<long[]> done) {
            Long pa = mtt.get(index);
            int draw = whole ? 2 : rnd.nextInt(40);
            long[] rsp = pa == null || draw == 0 ? new long[]{0, MttPorts.FILL_FAILED}
                    : draw == 1 ? new long[]{0, MttPorts.FILL_NOT_PRESENT} : new long[]{pa, MttPorts.FILL_OK};
            sim.scheduleIn(1000L * (1 + rnd.nextInt(300)), () -> done.accept(rsp));
        }

        @Override public void mmioWrite(long offset, byte[] data) {}
        @Override public byte[] mmioRead(long offset, int length) { return new byte[length]; }
        @Override public boolean mayLoad(SqConfig c) { return true; }
        @Override public void onSqLoaded(long qpn) {}
        @Override public void onDoorbell(long qpn, int producer) {}
        @Override public void onSqMiss(long qpn, int producer) {}
        @Override public void onWqe(long qpn, int index, byte[] bytes) {}
        @Override public void onWqeError(WqeError e) {}
        @Override public void onCqError(long cqn, CqePorts.CqError.Code code) {}
    }
}
