package nicsim.workloads;

import static nicsim.workloads.Perftest.GRH;
import static nicsim.workloads.Perftest.LINE;
import static nicsim.workloads.Perftest.header;
import static nicsim.workloads.Perftest.sizes;
import static nicsim.workloads.Perftest.udFits;
import static nicsim.workloads.Workloads.await;
import static nicsim.workloads.Workloads.progress;
import static nicsim.workloads.Workloads.settle;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import nicsim.abi.HostOrder;
import nicsim.driver.World;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.AhAttr;
import nicsim.verbs.Connect;
import nicsim.verbs.HostBuffer;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.QpType;
import nicsim.verbs.QueuePair;
import nicsim.verbs.RecvWr;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * perftest's bandwidth tests, {@code write_bw}, {@code send_bw}, {@code read_bw} and {@code atomic_bw}: node 0 keeps
 * {@code tx_depth} work requests in flight to node 1, over RC or (SEND) UD, and reports the average and peak rate.
 */
final class PerftestBw {
    private PerftestBw() {}

    static Result run(World w, Options o, PrintStream out, WrOpcode verb) {
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
        Ep.connect(c, s, o);
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
}
