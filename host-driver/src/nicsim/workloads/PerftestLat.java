package nicsim.workloads;

import static nicsim.workloads.Perftest.GRH;
import static nicsim.workloads.Perftest.LINE;
import static nicsim.workloads.Perftest.header;
import static nicsim.workloads.Perftest.sizes;
import static nicsim.workloads.Perftest.udFits;
import static nicsim.workloads.Workloads.await;
import static nicsim.workloads.Workloads.next;
import static nicsim.workloads.Workloads.progress;
import static nicsim.workloads.Workloads.settle;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.World;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.AhAttr;
import nicsim.verbs.Connect;
import nicsim.verbs.QpType;
import nicsim.verbs.RecvWr;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcOpcode;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * perftest's latency tests, {@code write_lat}, {@code send_lat} and {@code read_lat}: ping-pong (READ: one-sided)
 * between node 0 and node 1, one message at a time, reporting the latencies' minimum, median, maximum and tail.
 */
final class PerftestLat {
    private PerftestLat() {}

    static Result run(World w, Options o, PrintStream out, WrOpcode verb) {
        String name = switch (verb) {
            case RDMA_WRITE -> "write_lat";
            case SEND -> "send_lat";
            default -> "read_lat";
        };
        long[] sizes = sizes(o, 2);
        int iters = o.iters() > 0 ? o.iters() : 1000;
        long maxSize = Arrays.stream(sizes).max().getAsLong();
        if (o.ud()) udFits(name, verb, maxSize, o.mtu());
        // perftest's inline defaults: 220 B for WRITE, 236 B for SEND over RC, 188 B over UD
        int inline = o.inline() >= 0 ? o.inline()
                : verb == WrOpcode.RDMA_WRITE ? 220 : verb != WrOpcode.SEND ? 0 : o.ud() ? 188 : 236;
        int maxInline = (int) Math.min(inline, 512);
        // perftest: DEF_RX_SEND receives for SEND tests (docs/sources.md#perftest-defaults)
        int rx = verb == WrOpcode.SEND ? o.rxDepth() : 1;
        QpType type = o.ud() ? QpType.UD : QpType.RC;
        int grh = o.ud() ? GRH : 0; // a UD receive buffer starts with the GRH's room
        long bufBytes = Math.max(4096, maxSize * 2 + grh);
        Ep c = new Ep(w, 0, type, 1, bufBytes, 16, rx, maxInline, o.scatterToCqe());
        Ep s = new Ep(w, 1, type, 1, bufBytes, 16, rx, maxInline, o.scatterToCqe());
        Ep.connect(c, s, o);
        AddressHandle toS = o.ud() ? c.pd.createAh(new AhAttr().dlid(s.lid)) : null;
        AddressHandle toC = o.ud() ? s.pd.createAh(new AhAttr().dlid(c.lid)) : null;
        long landing = maxSize + grh; // where a message's first byte lands in the receiver's buffer
        List<String> errors = new ArrayList<>();
        List<Result.Row> rows = new ArrayList<>();
        header(out, name, o, true);
        for (long size : sizes) {
            long[] lat = new long[iters];
            int flags = size <= maxInline && verb != WrOpcode.RDMA_READ ? SendFlags.INLINE : 0;
            byte[] pattern = new byte[(int) size]; // the server's bytes, so the data check compares more than zeros
            for (int k = 0; k < pattern.length; k++) pattern[k] = (byte) (k * 31 + size);
            s.buf.write(0, pattern);
            if (verb == WrOpcode.SEND && rows.isEmpty())
                for (int k = 0; k < rx; k++) {
                    c.qp().postRecv(new RecvWr().wrId(k)
                            .sgList(new Sge(c.buf.addr() + maxSize, (int) maxSize + grh, c.mr.lkey())));
                    s.qp().postRecv(new RecvWr().wrId(k)
                            .sgList(new Sge(s.buf.addr() + maxSize, (int) maxSize + grh, s.mr.lkey())));
                }
            settle(w);
            long start = w.now();
            for (int i = 0; i < iters && errors.isEmpty(); i++) {
                byte tag = (byte) (i % 250 + 1);
                long t0 = w.now();
                if (verb == WrOpcode.RDMA_READ) {
                    s.buf.write(size - 1, new byte[]{tag});
                    c.qp().postSend(new SendWr().wrId(i).opcode(verb).sendFlags(SendFlags.SIGNALED)
                            .sgList(new Sge(c.buf.addr(), (int) size, c.mr.lkey()))
                            .remoteAddr(s.buf.addr()).rkey(s.mr.rkey()));
                    next(w, c.cq, errors, "read " + i);
                    if (c.buf.read(size - 1, 1)[0] != tag) errors.add("read " + i + ": last byte did not arrive");
                    lat[i] = w.now() - t0;
                    continue;
                }
                // ping: client to server; pong: server back to client (perftest's ping-pong, half the round trip
                // reported)
                for (Ep[] dir : new Ep[][]{{c, s}, {s, c}}) {
                    Ep from = dir[0], to = dir[1];
                    from.buf.write(size - 1, new byte[]{tag});
                    SendWr wr = new SendWr().wrId(i).opcode(verb).sendFlags(SendFlags.SIGNALED | flags)
                            .sgList(new Sge(from.buf.addr(), (int) size, from.mr.lkey()))
                            .remoteAddr(to.buf.addr() + maxSize).rkey(to.mr.rkey());
                    if (o.ud()) wr.ah(from == c ? toS : toC).remoteQpn(to.qp().qpNum()).remoteQkey(Connect.QKEY);
                    from.qp().postSend(wr);
                    if (verb == WrOpcode.SEND) {
                        // the receiver's own earlier SENDs may complete first (later still when an ACK was lost)
                        WorkCompletion r;
                        do {
                            r = next(w, to.cq, errors, "receive " + i);
                        } while (errors.isEmpty() && r.opcode() != WcOpcode.RECV);
                        to.qp().postRecv(new RecvWr().wrId(i + 1)
                                .sgList(new Sge(to.buf.addr() + maxSize, (int) maxSize + grh, to.mr.lkey())));
                    } else {
                        await(w, () -> to.buf.read(maxSize + size - 1, 1)[0] == tag, "write " + i + " to land");
                    }
                    if (to.buf.read(landing + size - 1, 1)[0] != tag)
                        errors.add(name + " " + i + ": last byte did not arrive");
                    // retire the sender's completion (never blocks the ping-pong)
                    for (WorkCompletion wc : from.cq.poll(4))
                        if (wc.status() != WcStatus.SUCCESS) errors.add(wc.toString());
                }
                lat[i] = (w.now() - t0) / 2;
                if ((i & 63) == 0) progress.accept(((double) rows.size() + (double) i / iters) / sizes.length);
            }
            // the last message: a READ of the server's bytes into the client's first, or the server's pong, which
            // lands past the client's first maxSize bytes (and a UD receive's GRH)
            byte[] got = c.buf.read(verb == WrOpcode.RDMA_READ ? 0 : landing, (int) size);
            byte[] want = s.buf.read(0, (int) size);
            if (errors.isEmpty() && !Arrays.equals(got, want))
                errors.add(name + ": data differs");
            long[] sorted = lat.clone();
            Arrays.sort(sorted);
            double us = 1e6;
            double avg = Arrays.stream(lat).average().orElse(0) / us;
            double p99 = sorted[(int) Math.min(iters - 1, Math.ceil(iters * 0.99) - 1)] / us;
            Result.Row row = new Result.Row(size, iters, 0, 0, 0, sorted[0] / us, sorted[iters / 2] / us,
                    sorted[iters - 1] / us, avg, p99, w.now() - start);
            rows.add(row);
            progress.accept(-1);
            out.printf(" %-6d %-10d     %-10.2f     %-10.2f   %-10.2f        %-10.2f     %-10.2f%n", size, iters,
                    row.latMinUs(), row.latMaxUs(), row.latTypicalUs(), row.latAvgUs(), row.latP99Us());
            if (!errors.isEmpty()) break;
        }
        out.println(LINE);
        return new Result(name, rows, errors);
    }
}
