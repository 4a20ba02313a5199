package nicsim.workloads;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.World;
import nicsim.verbs.AddressHandle;
import nicsim.verbs.AhAttr;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Connect;
import nicsim.verbs.Context;
import nicsim.verbs.DcType;
import nicsim.verbs.Device;
import nicsim.verbs.HostBuffer;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.Mtu;
import nicsim.verbs.ProcessMemory;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QpType;
import nicsim.verbs.QueuePair;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.SharedReceiveQueue;
import nicsim.verbs.SrqInitAttr;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * A DC initiator pool in front of many targets (DCI pooling, docs/sources.md#dc-transport): node 0
 * writes to the DC targets of nodes 1..n in turn, keeping {@code window} writes in flight. Each
 * write goes on the DCI already connected to its target if there is one, else on the least recently
 * used DCI of the pool, which then reconnects. With too few DCIs for the targets, nearly every write
 * needs a connect of its own (docs/sources.md#dc-transport); the study measures the latency that costs. Every
 * write is checked byte for byte at its target.
 */
public final class DcPool {
    private DcPool() {}

    /** What a run measured: write latency (post to completion) and the DC connects the pool made. */
    public record Outcome(int targets, int dcis, int messages, double latAvgUs, double latP99Us, long connects,
                          long simPicos, List<String> errors) {
        /** Connect packets per write. */
        public double connectsPerWrite() { return connects / (double) messages; }
    }

    static final long KEY = 0x0dc0_ffee_0dc0_ffeeL;
    static final int SLOTS = 64;

    /**
     * {@code messages} writes of {@code size} bytes ({@code window} at most in flight, below 64) from a pool of
     * {@code dcis} DCIs to the targets of nodes 1..n of {@code w}.
     */
    public static Outcome run(World w, int dcis, int window, int messages, int size) {
        int targets = w.hosts().size() - 1;
        if (targets < 1 || dcis < 1 || window < 1 || window >= SLOTS)
            throw new IllegalArgumentException("DcPool needs a target node, a DCI and a window of 1.." + (SLOTS - 1)
                    + " (targets " + targets + ", dcis " + dcis + ", window " + window + ")");
        Context ctx = new Device(w.host(0)).open();
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue cq = ctx.createCq(Math.max(64, window * 2));
        HostBuffer src = new ProcessMemory(w.host(0)).alloc((long) size * SLOTS);
        MemoryRegion smr = pd.regMr(src, Connect.ALL_REMOTE);
        List<QueuePair> pool = new ArrayList<>();
        for (int d = 0; d < dcis; d++) {
            QueuePair q = pd.createQp(new QpInitAttr().qpType(QpType.DRIVER).dcType(DcType.DCI).sendCq(cq)
                    .maxSendWr(window).maxSendSge(1));
            Connect.dc(q, 0, Mtu.MTU_4096, 100 * (d + 1));
            pool.add(q);
        }
        HostBuffer[] dst = new HostBuffer[targets];
        int[] rkey = new int[targets], dctn = new int[targets];
        AddressHandle[] ah = new AddressHandle[targets];
        for (int t = 0; t < targets; t++) {
            Context c = new Device(w.host(1 + t)).open();
            ProtectionDomain p = c.allocPd();
            CompletionQueue tcq = c.createCq(16);
            SharedReceiveQueue srq = p.createSrq(new SrqInitAttr().maxWr(1).maxSge(1));
            QueuePair dct = p.createQp(new QpInitAttr().qpType(QpType.DRIVER).dcType(DcType.DCT).dctAccessKey(KEY)
                    .srq(srq).recvCq(tcq));
            Connect.dc(dct, Connect.ALL_REMOTE, Mtu.MTU_4096, 0);
            dst[t] = new ProcessMemory(w.host(1 + t)).alloc((long) size * SLOTS);
            rkey[t] = p.regMr(dst[t], Connect.ALL_REMOTE).rkey();
            dctn[t] = dct.qpNum();
            ah[t] = pd.createAh(new AhAttr().dlid(c.queryPort(1).lid()));
        }
        int[] boundTo = new int[dcis];
        long[] lastUse = new long[dcis];
        Arrays.fill(boundTo, -1);
        long[] postedAt = new long[messages];
        double[] lat = new double[messages];
        List<String> errors = new ArrayList<>();
        long connects0 = w.sim.counters().scope("node0").get("Firmware.dc_connects");
        long start = w.now();
        int[] posted = {0}, done = {0};
        Runnable postNext = () -> {
            int i = posted[0]++, t = i % targets, slot = (i / targets) % SLOTS;
            int d = -1;
            for (int k = 0; k < dcis; k++) if (boundTo[k] == t) d = k;
            if (d < 0) { // the least recently used DCI takes this target
                d = 0;
                for (int k = 1; k < dcis; k++) if (lastUse[k] < lastUse[d]) d = k;
                boundTo[d] = t;
            }
            lastUse[d] = i + 1L;
            long from = (long) (i % SLOTS) * size; // each write in flight has its own source
            src.write(from, pattern(i, size));
            postedAt[i] = w.now();
            pool.get(d).postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .dcAddr(ah[t], dctn[t], KEY).remoteAddr(dst[t].addr() + (long) slot * size).rkey(rkey[t])
                    .sgList(new Sge(src.addr() + from, size, smr.lkey())));
        };
        while (posted[0] < Math.min(window, messages)) postNext.run();
        w.runUntil(() -> {
            for (WorkCompletion wc : cq.poll(window)) {
                int i = (int) wc.wrId(), t = i % targets, slot = (i / targets) % SLOTS;
                lat[i] = (w.now() - postedAt[i]) / 1e6;
                if (wc.status() != WcStatus.SUCCESS) errors.add("write " + i + ": " + wc);
                else if (!Arrays.equals(pattern(i, size), dst[t].read((long) slot * size, size)))
                    errors.add("write " + i + ": wrong bytes at target " + t);
                done[0]++;
                if (posted[0] < messages) postNext.run();
            }
            return done[0] >= messages || !errors.isEmpty();
        }, 10_000_000_000_000L);
        if (done[0] < messages && errors.isEmpty())
            errors.add("only " + done[0] + " of " + messages + " writes completed");
        double[] sorted = lat.clone();
        Arrays.sort(sorted);
        double avg = Arrays.stream(lat).average().orElse(0);
        double p99 = sorted[(int) Math.min(messages - 1, messages * 0.99)];
        long connects = w.sim.counters().scope("node0").get("Firmware.dc_connects") - connects0;
        return new Outcome(targets, dcis, messages, avg, p99, connects, w.now() - start, errors);
    }

    static byte[] pattern(int i, int len) {
        byte[] b = new byte[len];
        for (int k = 0; k < len; k++) b[k] = (byte) (i * 17 + k * 5 + 1);
        return b;
    }
}
