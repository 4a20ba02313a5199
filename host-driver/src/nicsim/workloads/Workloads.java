package nicsim.workloads;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.DoubleConsumer;
import nicsim.abi.HostOrder;
import nicsim.driver.World;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.AhAttr;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Connect;
import nicsim.verbs.Context;
import nicsim.verbs.Device;
import nicsim.verbs.HostBuffer;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.Mtu;
import nicsim.verbs.ProcessMemory;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QpType;
import nicsim.verbs.QueuePair;
import nicsim.verbs.RecvWr;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcOpcode;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * The example programs, written the way their C originals are so a driver developer recognises
 * them: rdma-core's {@code rc_pingpong} and {@code ud_pingpong}, and perftest-style
 * {@code write_bw}, {@code write_lat}, {@code send_bw}, {@code send_lat}, {@code read_bw},
 * {@code read_lat}, {@code atomic_bw} between node 0 (client) and node 1 (server). Every run checks
 * the bytes that crossed the fabric against what was sent, and every completion's status.
 * Times are simulated: the same run always prints the same figures.
 */
public final class Workloads {
    private Workloads() {}

    public static final List<String> NAMES = List.of("rc_pingpong", "ud_pingpong", "write_bw", "write_lat", "send_bw",
            "send_lat", "read_bw", "read_lat", "atomic_bw", "pairs_write_bw");

    private static DoubleConsumer progress = f -> {};

    /** How long any one wait may take in simulated time before the workload is declared stuck. */
    static final long STUCK = 10_000_000_000_000L; // 10 s

    public static Result run(String name, World world, Options o, PrintStream out) {
        return run(name, world, o, out, f -> {});
    }

    /**
     * As above; {@code progress} hears the fraction of the run done (for a progress bar), and -1 before the workload
     * prints.
     */
    public static Result run(String name, World world, Options o, PrintStream out, DoubleConsumer progress) {
        Workloads.progress = progress;
        return switch (name) {
            case "rc_pingpong" -> pingpong(world, o, out, QpType.RC);
            case "ud_pingpong" -> pingpong(world, o, out, QpType.UD);
            case "write_bw" -> bw(world, o, out, WrOpcode.RDMA_WRITE);
            case "send_bw" -> bw(world, o, out, WrOpcode.SEND);
            case "read_bw" -> bw(world, o, out, WrOpcode.RDMA_READ);
            case "atomic_bw" -> bw(world, o, out, WrOpcode.ATOMIC_FETCH_AND_ADD);
            case "pairs_write_bw" -> pairs(world, o, out);
            case "write_lat" -> lat(world, o, out, WrOpcode.RDMA_WRITE);
            case "send_lat" -> lat(world, o, out, WrOpcode.SEND);
            case "read_lat" -> lat(world, o, out, WrOpcode.RDMA_READ);
            default -> throw new IllegalArgumentException(
                    "workload '" + name + "' unknown; accepted: " + String.join(", ", NAMES));
        };
    }

    /** One side of a test: context, PD, CQ, QPs, a buffer registered for every access. */
    static final class Ep {
        final World world;
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final List<QueuePair> qps = new ArrayList<>();
        final HostBuffer buf;
        final MemoryRegion mr;
        final int lid;
        final int node;

        Ep(World world, int node, QpType type, int nqps, long bufBytes, int txDepth, int rxDepth, int inline,
                boolean scatterToCqe) {
            this.world = world;
            this.node = node;
            ctx = new Device(world.host(node)).open();
            pd = ctx.allocPd();
            cq = ctx.createCq(Math.min(1 << 16, Math.max(16, (txDepth + rxDepth) * nqps)));
            // with many QPs the test's depth is shared among them (perftest -q keeps tx_depth per QP; memory would not)
            int perQp = nqps == 1 ? txDepth : Math.max(4, Math.min(txDepth, 4096 / nqps));
            for (int i = 0; i < nqps; i++)
                qps.add(pd.createQp(new QpInitAttr().qpType(type).sendCq(cq).recvCq(cq)
                        .maxSendWr(perQp).maxRecvWr(rxDepth).maxSendSge(1).maxRecvSge(1)
                        .maxInlineData(Math.max(0, inline)).scatterToCqe(scatterToCqe)));
            buf = new ProcessMemory(world.host(node)).alloc(bufBytes);
            mr = pd.regMr(buf, Connect.ALL_REMOTE);
            lid = ctx.queryPort(1).lid();
        }

        QueuePair qp() { return qps.get(0); }
    }

    static void connect(Ep a, Ep b, Options o) {
        for (int i = 0; i < a.qps.size(); i++) {
            QueuePair qa = a.qps.get(i), qb = b.qps.get(i);
            if (qa.qpType() == QpType.UD) {
                for (QueuePair q : List.of(qa, qb)) {
                    Connect.toInit(q, 0);
                    Connect.toRtr(q, null, o.mtu());
                    Connect.toRts(q, 0);
                }
            } else {
                Connect.up(qa, Connect.ALL_REMOTE, Connect.Dest.of(b.ctx, qb, 0x2000 + i), o.mtu(), 0x1000 + i);
                Connect.up(qb, Connect.ALL_REMOTE, Connect.Dest.of(a.ctx, qa, 0x1000 + i), o.mtu(), 0x2000 + i);
            }
        }
    }

    /**
     * Lets the setup work (posting receives, the host CPU's queued costs) finish before the clock starts, as the C
     * programs do.
     */
    static void settle(World w) {
        w.runUntilIdle(STUCK);
    }

    static void await(World w, BooleanSupplier cond, String what) {
        named(what, () -> w.runUntilMemoryHolds(cond, STUCK));
    }

    /**
     * As {@link #await(World, BooleanSupplier, String)} for a condition that reads only the memory of {@code eps}'
     * hosts.
     */
    static void await(World w, List<Ep> eps, BooleanSupplier cond, String what) {
        int[] nodes = eps.stream().mapToInt(e -> e.node).distinct().toArray();
        named(what, () -> w.runUntilMemoryHolds(nodes, cond, STUCK));
    }

    /** Runs a wait, saying what it waited for if it got stuck. */
    private static void named(String what, Runnable wait) {
        try {
            wait.run();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("stuck waiting for " + what + ": " + e.getMessage());
        }
    }

    /** Polls until a completion arrives; an error completion is reported. */
    static WorkCompletion next(World w, CompletionQueue cq, List<String> errors, String what) {
        List<WorkCompletion> got = new ArrayList<>();
        await(w, () -> { got.addAll(cq.poll(1)); return !got.isEmpty(); }, what);
        WorkCompletion wc = got.get(0);
        if (wc.status() != WcStatus.SUCCESS) errors.add(what + ": " + wc);
        return wc;
    }

    static long[] sizes(Options o, long dflt) {
        if (!o.allSizes()) return new long[]{o.size() > 0 ? o.size() : dflt};
        long[] s = new long[23];
        for (int i = 0; i < 23; i++) s[i] = 2L << i; // perftest -a: 2 B .. 8 MiB
        return s;
    }

    // ------------------------------------------------------------------ perftest bandwidth

    static Result bw(World w, Options o, PrintStream out, WrOpcode verb) {
        String name = switch (verb) {
            case RDMA_WRITE -> "write_bw";
            case SEND -> "send_bw";
            case RDMA_READ -> "read_bw";
            default -> "atomic_bw";
        };
        boolean atomic = verb == WrOpcode.ATOMIC_FETCH_AND_ADD;
        long[] sizes = atomic ? new long[]{8} : sizes(o, 65536);
        int iters = o.iters() > 0 ? o.iters() : verb == WrOpcode.RDMA_WRITE ? 5000 : 1000;
        int tx = o.txDepth(), slots = 16;
        long maxSize = Arrays.stream(sizes).max().getAsLong();
        boolean ud = o.ud();
        if (ud) udFits(name, verb, maxSize, o.mtu());
        int grh = ud ? GRH : 0; // a UD receive starts with the GRH's room
        long bufBytes = Math.max(4096, (maxSize + grh) * slots);
        QpType type = ud ? QpType.UD : QpType.RC;
        Ep c = new Ep(w, 0, type, o.qps(), bufBytes, tx, verb == WrOpcode.SEND ? o.rxDepth() : 1, 0, o.scatterToCqe());
        Ep s = new Ep(w, 1, type, o.qps(), bufBytes, tx, verb == WrOpcode.SEND ? o.rxDepth() : 1, 0, o.scatterToCqe());
        connect(c, s, o);
        AddressHandle toS = ud ? c.pd.createAh(new AhAttr().dlid(s.lid)) : null;
        // --mrs: more MRs over the same buffers, used in turn (each a distinct key and MTT range)
        List<MemoryRegion> cmrs = new ArrayList<>(List.of(c.mr)), smrs = new ArrayList<>(List.of(s.mr));
        for (int k = 1; k < o.mrs(); k++) {
            cmrs.add(c.pd.regMr(c.buf, Connect.ALL_REMOTE));
            smrs.add(s.pd.regMr(s.buf, Connect.ALL_REMOTE));
        }
        List<String> errors = new ArrayList<>();
        List<Result.Row> rows = new ArrayList<>();
        header(out, name, o, false);
        SeededBytes rnd = new SeededBytes(w.seed);
        for (long size : sizes) {
            // fresh data in every slot of the source buffer
            boolean read = verb == WrOpcode.RDMA_READ;
            HostBuffer src = read ? s.buf : c.buf, dst = read ? c.buf : s.buf;
            byte[] data = new byte[(int) Math.min(bufBytes, size * slots)];
            rnd.nextBytes(data);
            src.write(0, data);
            if (atomic) { data = new byte[8]; src.write(0, new byte[8]); s.buf.write(0, new byte[8]); }
            int nslots = (int) Math.max(1, Math.min(slots, bufBytes / (size + grh)));
            long stride = size + grh; // the receiver's slots: a GRH's room before each UD message
            // send_bw: the server keeps rx_depth receives posted on each QP. Message m goes out on QP m % nq and
            // lands in slot m % nslots, so the receives are posted in message order, each on its message's QP
            int nq = c.qps.size();
            // recvOut: posted, not yet completed, per QP
            int[] recvPosted = {0}, received = {0}, recvOut = new int[nq];
            Runnable refill = () -> {
                if (verb != WrOpcode.SEND) return;
                while (recvPosted[0] < iters && recvOut[recvPosted[0] % nq] < o.rxDepth()) {
                    int m = recvPosted[0];
                    long slot = (long) (m % nslots) * stride;
                    Sge sge = new Sge(s.buf.addr() + slot, (int) stride, s.mr.lkey());
                    s.qps.get(m % nq).postRecv(new RecvWr().wrId(m).sgList(sge));
                    recvOut[m % nq]++;
                    recvPosted[0]++;
                }
            };
            Consumer<WorkCompletion> receivedOne = r -> {
                received[0]++;
                recvOut[(int) (r.wrId() % nq)]--;
            };
            refill.run();
            settle(w);
            long t0 = w.now();
            // {time, completed}: the peak is the best window of a fifth of the run
            List<long[]> samples = new ArrayList<>();
            long[] postedAt = new long[iters];
            samples.add(new long[]{t0, 0});
            int posted = 0, completed = 0, lastCompleted = 0;
            // each QP signals every cqMod of its own WRs (and its last), so a completion retires that QP's WRs since
            // its previous one
            int perQpWr = Math.max(1, c.qps.get(0).maxSendWr());
            // a QP must signal within its share of the window, or the window fills with WRs nobody will complete
            int qpShare = Math.min(Math.max(1, perQpWr / 2), Math.max(1, tx / nq / 2));
            int cqMod = Math.max(1, Math.min(Math.min(o.cqMod(), tx), qpShare));
            int[] lastSignaled = new int[nq];
            for (int k = 0; k < nq; k++) lastSignaled[k] = k - nq;
            // one work request, refilled each post as perftest refills its own: postSend copies it into the WQE
            SendWr wr = new SendWr();
            SendWr[] one = {wr};
            while (completed < iters && errors.isEmpty()) {
                // over UD a message with no receive posted is dropped: the sender stays within the receives
                while (posted < iters && posted - completed < tx && (!ud || posted - received[0] < o.rxDepth())) {
                    long slot = (long) (posted % nslots) * size;
                    QueuePair q = c.qps.get(posted % nq);
                    int own = posted / nq, lastOwn = (iters - 1 - posted % nq) / nq;
                    boolean signaled = own % cqMod == cqMod - 1 || own == lastOwn;
                    wr.wrId(posted).opcode(verb).sendFlags(signaled ? SendFlags.SIGNALED : 0);
                    int lkey = cmrs.get(posted % cmrs.size()).lkey(), rkey = smrs.get(posted % smrs.size()).rkey();
                    if (atomic) wr.sgList(new Sge(c.buf.addr() + 8 + 8L * (posted % 8), 8, lkey)).compareAdd(1)
                            .remoteAddr(s.buf.addr()).rkey(rkey);
                    else if (verb == WrOpcode.RDMA_READ) wr.sgList(new Sge(c.buf.addr() + slot, (int) size, lkey))
                            .remoteAddr(s.buf.addr() + slot).rkey(rkey);
                    else wr.sgList(new Sge(c.buf.addr() + slot, (int) size, lkey))
                            .remoteAddr(s.buf.addr() + slot).rkey(rkey);
                    if (ud) wr.ah(toS).remoteQpn(s.qps.get(posted % nq).qpNum()).remoteQkey(Connect.QKEY);
                    postedAt[posted] = w.now();
                    q.postSend(one);
                    posted++;
                }
                List<WorkCompletion> got = new ArrayList<>();
                int receivedBefore = received[0];
                await(w, verb == WrOpcode.SEND ? List.of(c, s) : List.of(c), () -> {
                    got.addAll(c.cq.poll(64));
                    if (verb == WrOpcode.SEND) {
                        for (WorkCompletion r : s.cq.poll(64)) {
                            if (r.status() != WcStatus.SUCCESS) errors.add("receive: " + r);
                            receivedOne.accept(r);
                        }
                        refill.run();
                    }
                    return !got.isEmpty() || !errors.isEmpty() || ud && received[0] != receivedBefore;
                }, name + " completions");
                for (WorkCompletion wc : got) {
                    if (wc.status() != WcStatus.SUCCESS) { errors.add(wc.toString()); break; }
                    int id = (int) wc.wrId(), k = id % nq;
                    completed += (id - lastSignaled[k]) / nq;
                    lastSignaled[k] = id;
                }
                progress.accept(((double) (rows.size()) + (double) completed / iters) / sizes.length);
                if (completed != lastCompleted) {
                    samples.add(new long[]{w.now(), completed});
                    lastCompleted = completed;
                }
            }
            if (!errors.isEmpty()) break; // reported; the receives behind a failed send never come
            if (verb == WrOpcode.SEND)
                await(w, () -> {
                    s.cq.poll(64).forEach(receivedOne);
                    return received[0] >= iters;
                }, "the last receives");
            long t = w.now() - t0;
            // integrity: the destination holds the source's bytes
            if (atomic) {
                long v = HostOrder.get64(s.buf.read(0, 8), 0); // a word in the host's byte order
                if (v != iters) errors.add("atomic counter is " + v + " after " + iters + " fetch-and-adds of 1");
            } else {
                int touched = (int) Math.min(nslots, iters);
                // slot k of the source, after its GRH's room over UD
                for (int k = 0; k < touched && errors.isEmpty(); k++) {
                    int from = (int) (k * size), to = (int) ((k + 1) * size);
                    byte[] got = dst.read(k * stride + grh, (int) size);
                    int at = Arrays.mismatch(data, from, to, got, 0, got.length);
                    if (at >= 0)
                        errors.add(String.format("%d B: destination differs from source at byte %d", size, from + at));
                }
            }
            double bw = size * 8.0 * iters / (t / 1e12) / 1e9;
            double peak = bw;
            // a window's WRs count from when the first of them was posted (as perftest times from tposted):
            // none of their bytes can have moved before that, so the peak cannot pass the link
            for (int j = 1, i = 0; j < samples.size(); j++) {
                while (i + 1 < j && samples.get(j)[0] - samples.get(i + 1)[0] >= t / 5) i++;
                long[] first = samples.get(i);
                long from = first[1] < iters ? Math.min(first[0], postedAt[(int) first[1]]) : first[0];
                long dt = samples.get(j)[0] - from;
                if (samples.get(j)[0] - samples.get(i)[0] >= t / 5 && dt > 0)
                    peak = Math.max(peak, size * 8.0 * (samples.get(j)[1] - samples.get(i)[1]) / (dt / 1e12) / 1e9);
            }
            Result.Row row = new Result.Row(size, iters, bw, Math.max(bw, peak), iters / (t / 1e12) / 1e6,
                    0, 0, 0, 0, 0, t);
            rows.add(row);
            progress.accept(-1);
            out.printf(" %-10d %-10d       %-14.2f     %-14.2f       %.6f%n",
                    size, iters, row.bwPeakGbps(), bw, row.msgRateMpps());
            if (!errors.isEmpty()) break;
        }
        out.println(LINE);
        return new Result(name, rows, errors);
    }

    static final String LINE = "-".repeat(87);

    /** Bytes a UD receive buffer keeps before the message: room for the 40-byte GRH (ibv_post_recv(3)). */
    static final int GRH = 40;

    /** Refuses, naming why, a UD run perftest has not ({@code verb} not SEND) or a message past one packet. */
    static void udFits(String name, WrOpcode verb, long size, Mtu mtu) {
        if (verb != WrOpcode.SEND) throw new IllegalArgumentException(name + " over UD: perftest has no such test");
        if (size > mtu.bytes())
            throw new IllegalArgumentException("size " + size + " is larger than the path MTU " + mtu.bytes()
                    + " (a UD message is one packet)");
    }

    static void header(PrintStream out, String name, Options o, boolean lat) {
        out.println(LINE);
        out.printf("                    %s (nicsim, simulated time)%n",
                name.replace('_', ' ').toUpperCase().replace(" ", " ").trim());
        out.printf(" Number of qps   : %d\t\tTransport type : IB%n", o.qps());
        out.printf(" Connection type : %s%n", o.ud() ? "UD" : "RC");
        out.printf(" TX depth        : %d%n", lat ? 1 : o.txDepth());
        out.printf(" Mtu             : %d[B]%n", o.mtu().bytes());
        out.println(LINE);
        if (lat)
            out.println(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
                    + "    99% percentile[usec]");
        else out.println(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]");
    }

    // ------------------------------------------------------------------ every node at once

    /**
     * write_bw on every pair of nodes at once (node 2k writes to node 2k+1) across the one switch:
     * for scaling with nodes. Each client is a program of its own host, which looks at its CQ when its
     * memory was written (so hosts may run apart, on threads of their own). Reports the aggregate
     * bandwidth from the first post to the last completion; each pair's bytes are checked.
     */
    static Result pairs(World w, Options o, PrintStream out) {
        int n = w.hosts().size() / 2;
        if (n < 1) throw new IllegalArgumentException("pairs_write_bw needs at least 2 nodes");
        long size = o.size() > 0 ? o.size() : 65536;
        int iters = o.iters() > 0 ? o.iters() : 1000, tx = o.txDepth(), slots = 8;
        // across processes a rank sets up only the pairs it runs a host of (a host's setup runs on its own
        // simulator, so it is the same whichever others are set up): null for the others
        List<Ep[]> pairs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (!w.isLocal(2 * k) && !w.isLocal(2 * k + 1)) { pairs.add(null); continue; }
            Ep c = new Ep(w, 2 * k, QpType.RC, 1, size * slots, tx, 1, 0, o.scatterToCqe());
            Ep s = new Ep(w, 2 * k + 1, QpType.RC, 1, size * slots, tx, 1, 0, o.scatterToCqe());
            connect(c, s, o);
            pairs.add(new Ep[]{c, s});
        }
        SeededBytes rnd = new SeededBytes(w.seed);
        List<byte[]> data = new ArrayList<>();
        for (Ep[] pr : pairs) {
            byte[] d = new byte[(int) (size * slots)];
            rnd.nextBytes(d); // every pair's, so each pair's bytes are the same on every rank
            if (pr != null) pr[0].buf.write(0, d);
            data.add(d);
        }
        settle(w);
        // on a microsecond boundary, so that the clocks' phase at the first post is the same however the setup went
        // (in one simulator each host's setup waits for the others'; apart they overlap)
        long t0 = Math.addExact(w.now(), 999_999) / 1_000_000 * 1_000_000;
        w.sync();
        w.runFor(t0 - w.now());
        int cqMod = Math.max(1, Math.min(o.cqMod(), tx / 2));
        List<PairClient> clients = new ArrayList<>();
        AtomicInteger finished = new AtomicInteger(); // writers finished: each counts itself as it looks
        for (Ep[] pr : pairs)
            if (pr != null) clients.add(new PairClient(w, pr[0], pr[1], size, iters, tx, slots, cqMod, finished));
        // across processes each runs the writers of its own hosts, and looks at their servers' bytes only
        List<PairClient> mine = clients.stream().filter(c -> w.isLocal(c.node())).toList();
        for (PairClient c : mine) c.look(); // the first posts, at t0 on every host
        named("pairs_write_bw completions", () -> w.runUntil(() -> {
            int done = finished.get();
            progress.accept((double) done / Math.max(1, mine.size()));
            return done == mine.size();
        }, STUCK));
        List<String> errors = new ArrayList<>();
        long end = t0;
        for (PairClient c : mine) {
            errors.addAll(c.errors);
            end = Math.max(end, c.lastAt);
        }
        errors = gather(w, errors);
        if (w.peers() != null) end = w.peers().max(end);
        long t = end - t0;
        // fewer iterations than slots leave the last slots unwritten
        int written = (int) (Math.min(iters, slots) * size);
        List<String> differ = new ArrayList<>();
        for (int k = 0; k < n; k++)
            if (w.isLocal(2 * k + 1)
                    && !Arrays.equals(data.get(k), 0, written, pairs.get(k)[1].buf.read(0, written), 0, written))
                differ.add("pair " + k + ": destination differs from source");
        errors.addAll(gather(w, differ));
        double bw = size * 8.0 * iters * n / (t / 1e12) / 1e9;
        progress.accept(-1);
        out.printf("%d pairs x %d writes of %d B: aggregate %.2f Gb/s (%.2f per pair) in %.1f us simulated%n",
                n, iters, size, bw, bw / n, t / 1e6);
        Result.Row row = new Result.Row(size, iters, bw, bw, iters * n / (t / 1e12) / 1e6, 0, 0, 0, 0, 0, t);
        return new Result("pairs_write_bw", List.of(row), errors);
    }

    /** Across processes every rank's {@code mine}, in rank order (ranks hold blocks of nodes); collective. */
    static List<String> gather(World w, List<String> mine) {
        return w.peers() == null ? mine : w.peers().gather(mine);
    }

    // ------------------------------------------------------------------ perftest latency

    static Result lat(World w, Options o, PrintStream out, WrOpcode verb) {
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
        connect(c, s, o);
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

    // ------------------------------------------------------------------ rdma-core pingpong

    static Result pingpong(World w, Options o, PrintStream out, QpType type) {
        String name = type == QpType.RC ? "rc_pingpong" : "ud_pingpong";
        long size = o.size() > 0 ? o.size() : type == QpType.RC ? 4096 : 2048;
        int iters = o.iters() > 0 ? o.iters() : 1000;
        if (type == QpType.UD) udFits(name, WrOpcode.SEND, size, o.mtu());
        int rxDepth = 500;
        int grh = type == QpType.UD ? GRH : 0;
        Ep c = new Ep(w, 0, type, 1, size + grh, 1, rxDepth, 0, o.scatterToCqe());
        Ep s = new Ep(w, 1, type, 1, size + grh, 1, rxDepth, 0, o.scatterToCqe());
        connect(c, s, o);
        List<String> errors = new ArrayList<>();
        AddressHandle toS = type == QpType.UD ? c.pd.createAh(new AhAttr().dlid(s.lid)) : null;
        AddressHandle toC = type == QpType.UD ? s.pd.createAh(new AhAttr().dlid(c.lid)) : null;
        for (Ep e : List.of(c, s))
            for (int i = 0; i < rxDepth; i++)
                e.qp().postRecv(new RecvWr().wrId(i).sgList(new Sge(e.buf.addr(), (int) (size + grh), e.mr.lkey())));
        out.printf("  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%n", c.lid, c.qp().qpNum(), 0x1000);
        out.printf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x%n", s.lid, s.qp().qpNum(), 0x2000);
        SeededBytes rnd = new SeededBytes(w.seed);
        settle(w);
        long t0 = w.now();
        for (int i = 0; i < iters && errors.isEmpty(); i++) {
            if ((i & 63) == 0) progress.accept((double) i / iters);
            for (Ep[] dir : new Ep[][]{{c, s}, {s, c}}) {
                Ep from = dir[0], to = dir[1];
                byte[] msg = new byte[(int) size];
                rnd.nextBytes(msg);
                from.buf.write(grh, msg);
                SendWr wr = new SendWr().wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                        .sgList(new Sge(from.buf.addr() + grh, (int) size, from.mr.lkey()));
                if (type == QpType.UD) wr.ah(from == c ? toS : toC).remoteQpn(to.qp().qpNum()).remoteQkey(Connect.QKEY);
                from.qp().postSend(wr);
                // the receiver takes the message, checks it, and re-posts the receive; the sender retires its send
                int need = 2;
                while (need > 0 && errors.isEmpty()) {
                    List<WorkCompletion> got = new ArrayList<>();
                    try {
                        await(w, () -> {
                            got.addAll(to.cq.poll(2));
                            got.addAll(from == to ? List.of() : from.cq.poll(2));
                            return !got.isEmpty();
                        }, name + " iteration " + i);
                    } catch (IllegalStateException e) {
                        long lost = w.sim.counters().get("Fabric.dropped") + w.sim.counters().get("Fabric.corrupted");
                        if (type != QpType.UD || lost == 0) throw e;
                        // as rdma-core's ud_pingpong, which would wait forever
                        errors.add("iteration " + i + ": the datagram never came; --faults lost " + lost
                                + " packet(s) and UD does not retransmit");
                        break;
                    }
                    for (WorkCompletion wc : got) {
                        need--;
                        if (wc.status() != WcStatus.SUCCESS) { errors.add(wc.toString()); continue; }
                        if (wc.opcode() == WcOpcode.RECV) {
                            if (wc.byteLen() != size + grh)
                                errors.add("iteration " + i + ": received " + wc.byteLen() + " bytes, sent "
                                        + (size + grh));
                            if (!Arrays.equals(msg, to.buf.read(grh, (int) size)))
                                errors.add("iteration " + i + ": received bytes differ");
                            to.qp().postRecv(new RecvWr().wrId(wc.wrId())
                                    .sgList(new Sge(to.buf.addr(), (int) (size + grh), to.mr.lkey())));
                        }
                    }
                }
            }
        }
        long t = w.now() - t0;
        double sec = t / 1e12;
        long bytes = size * iters * 2;
        progress.accept(-1);
        out.printf("%d bytes in %.6f seconds = %.2f Mbit/sec%n", bytes, sec, bytes * 8 / sec / 1e6);
        out.printf("%d iters in %.6f seconds = %.2f usec/iter%n", iters, sec, sec * 1e6 / iters);
        double halfRoundTripUs = sec * 1e6 / iters / 2;
        Result.Row row = new Result.Row(size, iters, bytes * 8 / sec / 1e9, 0, 0, 0,
                halfRoundTripUs, 0, halfRoundTripUs, 0, t);
        return new Result(name, List.of(row), errors);
    }
}
