package nicsim.workloads;

import static nicsim.workloads.Perftest.GRH;
import static nicsim.workloads.Perftest.udFits;
import static nicsim.workloads.Workloads.await;
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

/** rdma-core's {@code rc_pingpong} and {@code ud_pingpong}: SENDs bounced between node 0 and node 1. */
final class Pingpong {
    private Pingpong() {}

    static Result run(World w, Options o, PrintStream out, QpType type) {
        String name = type == QpType.RC ? "rc_pingpong" : "ud_pingpong";
        long size = o.size() > 0 ? o.size() : type == QpType.RC ? 4096 : 2048;
        int iters = o.iters() > 0 ? o.iters() : 1000;
        if (type == QpType.UD) udFits(name, WrOpcode.SEND, size, o.mtu());
        int rxDepth = 500;
        int grh = type == QpType.UD ? GRH : 0;
        Ep c = new Ep(w, 0, type, 1, size + grh, 1, rxDepth, 0, o.scatterToCqe());
        Ep s = new Ep(w, 1, type, 1, size + grh, 1, rxDepth, 0, o.scatterToCqe());
        Ep.connect(c, s, o);
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
