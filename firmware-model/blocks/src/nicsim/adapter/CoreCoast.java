package nicsim.adapter;

import nicsim.sim.ClockDomain;
import nicsim.sim.StreamDemux;

/**
 * The core clock coasts over the edges its blocks run alone, inside themselves: the DoorbellDecoder's decode of the
 * write it holds, the doorbell route's hand-over of a send doorbell to a quiet WqeFetcher, the fetcher's pick of
 * the next ring read, the MttWalker's checks and walk steps; and over the two edges after a pick when the
 * BlueFlame buffer holds the read whole: the reader takes it and serves it from there, and hands the first WQEBB
 * back. Only while nothing waits here for the blocks (but one doorbell write or one translation, which the quiet
 * decoder or walker takes on the coast's first edge, even the edge a stopped clock is woken for) and every other
 * block on the clock is idle: no input from outside them is valid on those edges, so the busy blocks change only
 * among themselves, each as on its own. The edge that shows what they made runs through the wires, but for the
 * walker's whole answer to a translation it took in the coast: that edge hands it to the firmware without them.
 */
final class CoreCoast implements ClockDomain.Coaster {
    private final ClockDomain core;
    private final DoorbellDecoder decoder;
    private final WqeFetcher fetcher;
    private final CqeWriter cqeWriter;
    private final MttWalker mtt;
    private final StreamDemux<DoorbellMsg> route;
    private final PciDmaReader reader;
    private final BlockQueues queues;
    private final BlueFlameBuffer blueFlame;
    private final WqeTimeline timeline;
    private final EmbeddedProcessor firmware;
    /** 0: doorbells are decoded by hardware as they arrive; else the period the control program polls for them at. */
    private final long pollInterval;

    CoreCoast(Adapter a, StreamDemux<DoorbellMsg> route, PciDmaReader reader, BlockQueues queues,
            BlueFlameBuffer blueFlame, WqeTimeline timeline, EmbeddedProcessor firmware) {
        this.core = a.core();
        this.decoder = a.decoder();
        this.fetcher = a.fetcher();
        this.cqeWriter = a.cqeWriter();
        this.mtt = a.mtt();
        this.route = route;
        this.reader = reader;
        this.queues = queues;
        this.blueFlame = blueFlame;
        this.timeline = timeline;
        this.firmware = firmware;
        this.pollInterval = a.parameters().pollIntervalPs();
    }

    // which blocks step in the coast the last look-ahead found (the rest are idle on its edges), whether the
    // decoder takes a write on its first edge (the decode is then on the second), whether the walker takes a
    // translation there (its check then follows), whether the route hands the fetcher a doorbell on its first
    // edge (the pick is then on the second), and whether the fetcher's pick goes on to the read served from
    // BlueFlame
    private boolean decoding, taking, xlating, routing, picking, walking, serving;
    // the walker alone takes a translation and holds its whole answer at the coast's end: the edge after hands it
    // to the firmware, at its own time, with no wires (coastsEdgeAfter); found: the coast's edges before that one
    private boolean answering;
    private long found;

    @Override public long coastable() {
        answering = false;
        if (cqeWriter.active() || reader.active()) return 0;
        long d = decoder.quietEdges(), f = fetcher.quietEdges(), w = mtt.quietEdges();
        // a doorbell write alone here for the quiet decoder, which takes it, then decodes it; or a translation
        // alone here for the idle walker, which takes it, then checks it and walks
        taking = d == MttWalker.IDLE_EDGES && queues.alone(queues.mmioIn);
        xlating = w == MttWalker.IDLE_EDGES && queues.alone(queues.xlateIn);
        if (xlating) w = mtt.quietEdgesTaking(queues.xlateIn.peekFirst());
        if (xlating ? w == 0 : !queues.xlateIn.isEmpty() || queues.active() && !taking) return 0;
        if (taking) d = 2;
        DoorbellMsg held = null;
        if (route.active()) {
            // a send doorbell alone in the route, which the quiet fetcher takes (nothing comes in behind it)
            held = route.soleFor(0);
            if (held == null || d == 0 || !fetcher.takesQuietly(held)) return 0;
        }
        routing = held != null;
        WqePorts.DmaReadReq read = routing ? fetcher.readAfter(held) : f == 1 ? fetcher.nextRead() : null;
        serving = read != null && reader.idle() && blueFlame.heldWhole(read);
        if (routing) f = serving ? 4 : 2;
        else if (serving) f = 3;
        long n = Math.min(d, Math.min(f, w));
        if (n == MttWalker.IDLE_EDGES) return 0;
        decoding = d != MttWalker.IDLE_EDGES;
        picking = f != MttWalker.IDLE_EDGES;
        walking = w != MttWalker.IDLE_EDGES;
        answering = xlating && !decoding && !picking && !routing && n == w
                && mtt.answersWholeTaking(queues.xlateIn.peekFirst());
        found = n;
        return n;
    }

    /** The edge after a translation's coast hands the walker's answer over: it needs no wires. */
    @Override public boolean coastsEdgeAfter() { return answering; }

    /** A doorbell write or a translation wakes the stopped clock: its block takes it in a coast. */
    @Override public boolean coastsFromStop() { return true; }

    /**
     * Found at the wake itself: every input comes through a queue here before {@link BlockQueues#queued} wakes the
     * clock, or from the reader before it does. Not when doorbells are polled: a BlueFlame write keeps its lines at
     * once and wakes the clock only at the poll, and a fetch looked ahead for meanwhile may find them.
     */
    @Override public boolean coastsAtWake() { return pollInterval == 0; }

    @Override public void coast(long first, long n) {
        boolean handOver = answering && n > found; // the edge after the coast is run too
        if (handOver) n = found;
        if (taking) {
            decoder.coastMmio(queues.taken(queues.mmioIn));
            core.stirred(decoder);
        }
        if (decoding && (!taking || n > 1)) decoder.coast();
        if (xlating) {
            mtt.coastTake(queues.taken(queues.xlateIn));
            core.stirred(mtt);
        }
        int pick = routing ? 1 : 0; // the edge of the coast the fetcher picks on
        if (routing) {
            fetcher.coastRing(route.coastPass());
            core.stirred(fetcher);
        }
        if (picking && n > pick) fetcher.coast();
        if (walking) mtt.coast(xlating ? n - 1 : n);
        if (handOver) firmware.onXlate(mtt.coastAnswerTaken()); // as the edge's update would hand it over
        if (!serving || n < pick + 2) return;
        WqePorts.DmaReadReq r = fetcher.coastReadTaken();
        timeline.fetchIssued(r, core.picosOfCycle(first + pick + 1));
        reader.coastTake(r);
        if (n > pick + 2) fetcher.coastBeat(reader.coastBeatTaken());
    }
}
