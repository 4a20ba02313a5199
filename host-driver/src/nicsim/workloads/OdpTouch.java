package nicsim.workloads;

import java.util.Arrays;
import nicsim.driver.World;
import nicsim.verbs.AccessFlags;
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
import nicsim.verbs.QueuePair;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;

/**
 * What on-demand paging costs (docs/sources.md#on-demand-paging): one RDMA WRITE of {@code size}
 * bytes from node 0 into node 1, timed from post to completion: into a pinned MR, the first time
 * (the adapter's translation cache cold) and again (warm); into an on-demand MR the adapter has
 * never touched (each page faults: RNR NAK, the host brings the pages in, the requester comes back
 * after its RNR timer); and into the same on-demand MR again (warm: every page present). Each write
 * is checked byte for byte.
 */
public final class OdpTouch {
    private OdpTouch() {}

    /** Write latencies in picoseconds, and the pages the first touch brought in. */
    public record Outcome(long size, long pinnedColdPs, long pinnedWarmPs, long firstTouchPs, long warmPs,
                          long pagesFaulted, long rnrNaks) {}

    /** Runs the three writes of {@code size} bytes on a two-node {@code w}. */
    public static Outcome run(World w, int size) {
        Context ca = new Device(w.host(0)).open(), cb = new Device(w.host(1)).open();
        ProtectionDomain apd = ca.allocPd(), bpd = cb.allocPd();
        CompletionQueue cq = ca.createCq(16), bcq = cb.createCq(16);
        QueuePair a = apd.createQp(new QpInitAttr().sendCq(cq).recvCq(cq).maxSendWr(4));
        QueuePair b = bpd.createQp(new QpInitAttr().sendCq(bcq).recvCq(bcq).maxRecvWr(4));
        Connect.up(a, Connect.ALL_REMOTE, Connect.Dest.of(cb, b, 3), Mtu.MTU_4096, 1);
        Connect.up(b, Connect.ALL_REMOTE, Connect.Dest.of(ca, a, 1), Mtu.MTU_4096, 3);
        HostBuffer src = new ProcessMemory(w.host(0)).alloc(size);
        HostBuffer pinnedBuf = new ProcessMemory(w.host(1)).alloc(size);
        HostBuffer odpBuf = new ProcessMemory(w.host(1)).alloc(size);
        MemoryRegion smr = apd.regMr(src, AccessFlags.LOCAL_WRITE);
        MemoryRegion pinned = bpd.regMr(pinnedBuf, Connect.ALL_REMOTE);
        MemoryRegion odp = bpd.regMr(odpBuf, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
        long pinnedCold = write(w, a, cq, src, smr, pinnedBuf, pinned, 1);
        long pinnedWarm = write(w, a, cq, src, smr, pinnedBuf, pinned, 4);
        long before = w.host(1).driver().pageFaults(), naks = w.sim.counters().get("Firmware.odp_rnr_sent");
        long firstPs = write(w, a, cq, src, smr, odpBuf, odp, 2);
        long faulted = w.host(1).driver().pageFaults() - before;
        naks = w.sim.counters().get("Firmware.odp_rnr_sent") - naks;
        long warmPs = write(w, a, cq, src, smr, odpBuf, odp, 3);
        return new Outcome(size, pinnedCold, pinnedWarm, firstPs, warmPs, faulted, naks);
    }

    private static long write(World w, QueuePair a, CompletionQueue cq, HostBuffer src, MemoryRegion smr,
                              HostBuffer dst, MemoryRegion dmr, int seed) {
        byte[] data = new byte[(int) src.length()];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (seed * 31 + i * 7);
        src.write(0, data);
        long t0 = w.now();
        a.postSend(new SendWr().wrId(seed).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .remoteAddr(dst.addr()).rkey(dmr.rkey()).sgList(new Sge(src.addr(), data.length, smr.lkey())));
        WorkCompletion[] got = {null};
        w.runUntil(() -> {
            for (WorkCompletion wc : cq.poll(1)) got[0] = wc;
            return got[0] != null;
        }, 10_000_000_000_000L);
        if (got[0] == null || got[0].status() != WcStatus.SUCCESS)
            throw new IllegalStateException("OdpTouch write " + seed + ": " + got[0]);
        if (!Arrays.equals(data, dst.read(0, data.length)))
            throw new IllegalStateException("OdpTouch write " + seed + ": bytes differ at the target");
        return w.now() - t0;
    }
}
