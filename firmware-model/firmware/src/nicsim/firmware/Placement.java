package nicsim.firmware;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import nicsim.abi.Vendor;
import nicsim.abi.WqeFormat.Sge;
import nicsim.adapter.DmaPath;
import nicsim.adapter.MttPorts;
import nicsim.adapter.MttPorts.XlateRsp;
import nicsim.adapter.WqeStage;
import nicsim.sim.Arrival;
import nicsim.firmware.Qp.Piece;
import nicsim.firmware.Qp.Failure;

/**
 * Where a QP's bytes go and come from: scatter/gather lists translated through the MttWalker and
 * moved by DMA, and the rule that a completion follows its data (each incoming payload takes a
 * number, and a completion waits until every payload up to its own has left the adapter).
 */
final class Placement {
    private final Qp q;

    Placement(Qp q) { this.q = q; }


    /** Translates every SGE under its lkey; {@code done} gets the message's pieces in order, or the first failure. */
    void translateAll(List<Sge> sges, int traceIndex, BiConsumer<List<Piece>, Failure> done) {
        if (sges.size() == 1 && sges.get(0).length() != 0) { translateOne(sges.get(0), traceIndex, done); return; }
        List<List<XlateRsp>> got = new ArrayList<>(Collections.nCopies(sges.size(), (List<XlateRsp>) null));
        int[] left = {sges.size()};
        boolean[] over = {false};
        Runnable finish = () -> {
            List<Piece> pieces = new ArrayList<>();
            for (int i = 0; i < sges.size(); i++)
                if (got.get(i) != null)
                    for (XlateRsp c : got.get(i)) pieces.add(new Piece(c.pa(), c.length(), sges.get(i)));
            traceTranslated(traceIndex, pieces);
            done.accept(pieces, null);
        };
        if (sges.isEmpty()) { finish.run(); return; }
        for (int i = 0; i < sges.size(); i++) {
            Sge s = sges.get(i);
            int n = i;
            if (s.length() == 0) { if (--left[0] == 0) finish.run(); continue; }
            long lkey = s.lkey() & 0xFFFFFFFFL, length = s.length() & 0xFFFFFFFFL;
            q.fw.keys.translate(lkey, s.addr(), length, 0, q.pd, q.qpn, q.live(rsp -> {
                if (over[0]) return;
                XlateRsp bad = failed(rsp);
                if (bad != null) {
                    over[0] = true;
                    done.accept(null, Failure.of(bad, s.addr(), s.lkey(), faultPages(bad)));
                    return;
                }
                got.set(n, rsp);
                if (--left[0] == 0) finish.run();
            }));
        }
    }

    /** {@link #translateAll} of a message of one SGE, not empty: as the general case, with less to keep. */
    private void translateOne(Sge s, int traceIndex, BiConsumer<List<Piece>, Failure> done) {
        long lkey = s.lkey() & 0xFFFFFFFFL, length = s.length() & 0xFFFFFFFFL;
        q.fw.keys.translate(lkey, s.addr(), length, 0, q.pd, q.qpn, q.live(rsp -> {
            XlateRsp bad = failed(rsp);
            if (bad != null) {
                done.accept(null, Failure.of(bad, s.addr(), s.lkey(), faultPages(bad)));
                return;
            }
            List<Piece> pieces; // one piece (a range within a page chunk): no list to grow, no iterator
            if (rsp.size() == 1) pieces = List.of(new Piece(rsp.get(0).pa(), rsp.get(0).length(), s));
            else {
                pieces = new ArrayList<>(rsp.size());
                for (int i = 0; i < rsp.size(); i++) pieces.add(new Piece(rsp.get(i).pa(), rsp.get(i).length(), s));
            }
            traceTranslated(traceIndex, pieces);
            done.accept(pieces, null);
        }));
    }

    /** The stage "translated" of send WQE {@code traceIndex} (-1: none) in the timeline, when it is recorded. */
    private void traceTranslated(int traceIndex, List<Piece> pieces) {
        if (traceIndex >= 0 && !pieces.isEmpty() && q.fw.adapter.tracingWqe())
            q.fw.adapter.traceWqe(q.qpn, traceIndex, WqeStage.TRANSLATED, "", pieces.size(), " page chunk(s)");
    }

    /** The MTT index of the page a failed translation found not present, or -1 (another failure). */
    static long faultMtt(XlateRsp bad) { return bad.reason() == MttPorts.Status.PAGE_FAULT ? bad.pa() : -1; }

    /**
     * The pages a page fault's request has left, from the missing one on (the last may need a second fault if
     * unaligned).
     */
    long faultPages(XlateRsp bad) {
        long page = q.fw.hostPage;
        return Math.max(1, (bad.length() + page - 1) / page);
    }

    static XlateRsp failed(List<XlateRsp> rsp) {
        for (int i = 0; i < rsp.size(); i++) // indexed: no iterator a translation
            if (rsp.get(i).status() != MttPorts.Status.OK.ordinal()) return rsp.get(i);
        return null;
    }

    /**
     * Reads the bytes of a scatter/gather list: each SGE translated under its lkey, then read by DMA;
     * {@code traceIndex} (a send WQE's index, or -1) gets a "translated" stage in the timeline.
     */
    void gather(List<Sge> sges, int traceIndex, BiConsumer<byte[], Failure> done) {
        translateAll(sges, traceIndex, (pieces, fail) -> {
            if (fail != null) { done.accept(null, fail); return; }
            readPieces(pieces, (out, bad) -> done.accept(out,
                    bad == null ? null : new Failure(Vendor.DMA_FAILED, bad.sge().addr(), bad.sge().lkey())));
        });
    }

    /**
     * Reads translated pieces by DMA into one buffer, in order; {@code done} gets it, or null and the first piece whose
     * read failed.
     */
    void readPieces(List<Piece> pieces, BiConsumer<byte[], Piece> done) {
        long total = 0;
        for (Piece p : pieces) total += p.length();
        byte[] out = new byte[(int) total];
        readPieces(pieces, (at, src, from, len) -> System.arraycopy(src, from, out, at, len),
                bad -> done.accept(bad == null ? out : null, bad));
    }

    /**
     * Reads translated pieces by DMA, in order, each piece's bytes handed to {@code into} at their offset in the whole
     * as they come (no buffer of the whole is made); {@code done} gets null once all are in, or the first piece whose
     * read failed.
     */
    void readPieces(List<Piece> pieces, DmaPath.Sink into, Consumer<Piece> done) {
        if (pieces.isEmpty()) { done.accept(null); return; }
        int[] left = {pieces.size()};
        boolean[] bad = {false};
        int at = 0;
        for (Piece p : pieces) {
            int base = at;
            at += (int) p.length();
            q.fw.adapter.dma().read(p.pa(), (int) p.length(), new DmaPath.Sink() { // the piece's bytes, in the whole
                @Override public void put(int off, byte[] src, int from, int len) {
                    if (!bad[0]) into.put(base + off, src, from, len);
                }

                @Override public byte[] arrayFor(int off, int len) { return into.arrayFor(base + off, len); }

                @Override public int offsetIn(int off) { return into.offsetIn(base + off); }
            }, ok -> {
                if (bad[0]) return;
                if (!ok) { bad[0] = true; done.accept(p); return; }
                q.count(FirmwareStat.DMA_READ_BYTES, p.length());
                if (--left[0] == 0) done.accept(null);
            });
        }
    } // what waits for payloads up to a number

    /** Numbers an incoming payload that will be written to host memory. */
    long payloadArrived() {
        q.unissued.add(++q.writeSeq);
        return q.writeSeq;
    }

    /** Payload {@code seq}'s PCI writes have all left (or it was refused). */
    void payloadIssued(long seq) {
        q.unissued.remove(seq);
        while (!q.afterIssued.isEmpty() && (q.unissued.isEmpty() || q.afterIssued.firstKey() < q.unissued.first()))
            for (Runnable r : q.afterIssued.pollFirstEntry().getValue()) r.run();
    }

    /**
     * Runs {@code r} after what every payload that arrived before now runs once issued (their
     * completions), at or after {@code at} picoseconds: a completion with no payload of its own
     * (a CQE that carries its data, a filler) keeps its place among the others.
     */
    void inTurn(long at, Runnable r) {
        long seq = payloadArrived();
        whenIssued(seq, r);
        long now = q.fw.sim.now();
        if (at > now) q.fw.sim.schedule(at, () -> payloadIssued(seq));
        else payloadIssued(seq);
    }

    /** Runs {@code r} once every payload numbered up to {@code upTo} has left the adapter. */
    void whenIssued(long upTo, Runnable r) {
        if (q.unissued.isEmpty() || q.unissued.first() > upTo) r.run();
        else q.afterIssued.computeIfAbsent(upTo, k -> new ArrayList<>()).add(r);
    }

    /**
     * Writes payload {@code seq} ({@link #payloadArrived}), {@code data}, at offset {@code off} of a translated range,
     * its bytes coming in as {@code arrival} says (null: all in); it is issued ({@link #payloadIssued}) once its
     * posted PCI writes have all left the adapter. ACKs wait longer, until they landed ({@link Responder#writeLanded}).
     */
    void writePayload(List<XlateRsp> chunks, long off, byte[] data, Arrival arrival, long seq) {
        writeChunks(chunks, off, data, 0, data.length, arrival, new Writes(q, null, seq));
    }

    /**
     * As above, of {@code data[from, from + length)}, read as the writes go: it must not change until they landed
     * (a packet's payload does not: its array is given back only once the responder's ACK says they did);
     * {@code written} runs once its writes have all left.
     */
    void writeChunks(List<XlateRsp> chunks, long off, byte[] data, int from, int length, Arrival arrival,
                     Runnable written) {
        writeChunks(chunks, off, data, from, length, arrival, new Writes(q, written, 0));
    }

    private void writeChunks(List<XlateRsp> chunks, long off, byte[] data, int from, int length, Arrival arrival,
                             Writes w) {
        long pos = 0;
        int done = 0;
        for (int i = 0; i < chunks.size(); i++) { // indexed: no iterator a packet
            XlateRsp c = chunks.get(i);
            long end = pos + c.length();
            if (end > off + done && done < length) {
                long start = off + done - pos;
                int n = (int) Math.min(c.length() - start, length - done);
                w.pending++;
                q.responder.writeIssued();
                q.fw.adapter.dma().write(c.pa() + start, data, from + done, n,
                        arrival == null ? null : arrival.from(done), w, w);
                q.count(FirmwareStat.DMA_WRITE_BYTES, n);
                done += n;
            }
            pos = end;
            if (done >= length) break;
        }
        w.run();
    }

    /**
     * The posted writes of one {@link #writeChunks}, as continuations of the QP's life then ({@link Qp#live}), in one
     * object a call: each write that left counts down, the last (with the call's own count) runs {@code written}, or
     * issues payload {@code seq} where that is null; each write that landed tells the responder.
     */
    private static final class Writes implements Runnable, Consumer<Boolean> {
        private final Qp q;
        private final int generation;
        private final Runnable written;
        private final long seq;
        int pending = 1; // the writes not yet left, and the call's own count until it has issued them all

        Writes(Qp q, Runnable written, long seq) {
            this.q = q;
            this.generation = q.generation;
            this.written = written;
            this.seq = seq;
        }

        @Override public void run() {
            if (generation != q.generation || --pending != 0) return;
            if (written != null) written.run();
            else q.placement.payloadIssued(seq);
        }

        @Override public void accept(Boolean ok) { if (generation == q.generation) q.responder.writeLanded(); }
    }

    /**
     * Writes {@code data} at message offset {@code off} into a scatter list, each touched SGE
     * translated under its lkey. {@code placed} hears once every part is translated and its writes
     * are on their way, so the next packet may be taken; a failure is told only once every payload
     * that arrived before it has left the adapter, so its error completion follows theirs.
     * {@code issued} runs after a success, once its PCI writes and those of every payload that
     * arrived before it have left the adapter (a completion may follow).
     */
    void scatter(List<Sge> sges, long off, byte[] data, Arrival arrival, int access, Consumer<Failure> placed,
            Runnable issued) {
        scatter(sges, q.pd, off, data, arrival, access, placed, issued);
    }

    /** As above, for SGEs whose lkeys are of {@code pd} (an XRC SRQ's, not the QP's). */
    void scatter(List<Sge> sges, long pd, long off, byte[] data, Arrival arrival, int access, Consumer<Failure> placed,
            Runnable issued) {
        long seq = payloadArrived();
        // each waits under its own number before that number is cleared, so what waits for earlier numbers runs first
        scatterPayload(sges, pd, off, data, arrival, access, fail -> {
            if (fail == null) { placed.accept(null); return; }
            whenIssued(seq, () -> placed.accept(fail));
            payloadIssued(seq);
        }, () -> {
            whenIssued(seq, issued);
            payloadIssued(seq);
        });
    }

    void scatterPayload(List<Sge> sges, long pd, long off, byte[] data, Arrival arrival, int access,
            Consumer<Failure> placed, Runnable issued) {
        if (data.length == 0) { placed.accept(null); issued.run(); return; }
        List<long[]> parts = new ArrayList<>(); // {sge index, offset within sge, length, offset within data}
        long pos = 0;
        int taken = 0;
        for (int i = 0; i < sges.size() && taken < data.length; i++) {
            long len = sges.get(i).length() & 0xFFFFFFFFL;
            if (pos + len > off + taken) {
                long within = off + taken - pos;
                int n = (int) Math.min(len - within, data.length - taken);
                parts.add(new long[]{i, within, n, taken});
                taken += n;
            }
            pos += len;
        }
        if (taken < data.length) { placed.accept(new Failure(Vendor.RECV_TOO_SMALL, 0, 0)); return; }
        int[] untranslated = {parts.size()}, unissued = {parts.size() + 1}; // issued waits for placed too
        Runnable oneIssued = () -> { if (--unissued[0] == 0) issued.run(); };
        boolean[] failedOnce = {false};
        for (long[] part : parts) {
            Sge s = sges.get((int) part[0]);
            q.fw.keys.translate(s.lkey() & 0xFFFFFFFFL, s.addr() + part[1], part[2], access, pd, q.qpn, q.live(rsp -> {
                if (failedOnce[0]) return;
                XlateRsp bad = failed(rsp);
                if (bad != null) {
                    failedOnce[0] = true;
                    placed.accept(Failure.of(bad, s.addr() + part[1], s.lkey(), faultPages(bad)));
                    return;
                }
                Arrival from = arrival == null ? null : arrival.from((int) part[3]);
                writeChunks(rsp, 0, data, (int) part[3], (int) part[2], from, oneIssued);
                if (--untranslated[0] == 0) { placed.accept(null); oneIssued.run(); }
            }));
        }
    }
}
