package nicsim.cosim.cli;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import nicsim.abi.Cqe64;
import nicsim.adapter.Adapter;
import nicsim.adapter.WqeStage;
import nicsim.adapter.stim.SendQueueHost;
import nicsim.profile.Profile;
import nicsim.sim.Trace;
import nicsim.wave.VcdWriter;

/**
 * The command line's default demo: the adapter's send path as built so far. A host probes the
 * adapter over PCI, posts send WQEs into a ring in its memory and rings doorbells; the adapter
 * decodes them (DoorbellDecoder), fetches the WQEs over PCI (WqeFetcher), checks them and hands
 * them to the firmware's inbox, where each is compared byte for byte with what was posted. Then
 * the completion path: the host arms its CQ and posts signaled NOPs; the firmware completes them,
 * the CqeWriter DMA-writes the CQEs into the host's CQ ring and raises MSI-X; the host polls them
 * by owner bit.
 */
final class PlatformDemo {
    static final long QP = 0x15, RING = 0x80_0000, CQ = 0x9, CQ_RING = 0x90_0000;
    static final int UAR = 2, LOG_SIZE = 6, CQ_LOG_SIZE = 6, VECTOR = 5, NOPS = 16;

    /** What a run showed: counts, per-stage mean latencies in picoseconds, counters, errors. */
    record Result(int posted, int verified, long[] stageMeanPicos, long cycles, int completions, int interrupts,
                  Map<String, Long> counters, List<String> errors) {
        static final String[] STAGES = {"doorbell MMIO -> decoded", "decoded -> ring read issued",
                "read issued -> WQE delivered", "delivered -> CQE in host memory"};
    }

    static Result run(Profile profile, int wqes, Path wave, Path timeline) throws IOException {
        SendQueueHost h = new SendQueueHost(profile, QP, UAR, RING, LOG_SIZE, 1, CQ, CQ_RING, CQ_LOG_SIZE, VECTOR);
        h.sim.trace().enable("wqe");
        VcdWriter vcd = wave == null ? null : VcdWriter.open(wave, "1ps");
        if (vcd != null) {
            h.adapter.decoder().trace(vcd, "TOP.DoorbellDecoder");
            h.adapter.fetcher().trace(vcd, "TOP.WqeFetcher");
        }
        // at most 32 of the ring's 64 WQEBBs per round
        for (int left = wqes; left > 0; left -= 16) h.round(Math.min(16, left));
        // the completion path: arm, post signaled NOPs, poll their CQEs
        h.armCq(false);
        for (int i = 0; i < NOPS; i++) h.postNop(true);
        h.ringDoorbell();
        h.run();
        List<Cqe64.View> cqes = h.pollCq();
        if (vcd != null) { vcd.advanceTo(h.sim.now()); vcd.close(); }

        List<String> errors = new ArrayList<>();
        if (cqes.size() != NOPS) errors.add(NOPS + " signaled NOPs, " + cqes.size() + " CQEs polled");
        if (h.interrupts().size() != 1) errors.add("expected one interrupt for one arm, got " + h.interrupts());
        h.adapter.errors().forEach(e -> errors.add(e.toString()));
        List<byte[]> posted = h.posted();
        List<Adapter.Wqe> got = h.wqes();
        int verified = 0;
        for (int i = 0; i < Math.min(posted.size(), got.size()); i++) {
            if (Arrays.equals(posted.get(i), got.get(i).bytes())) verified++;
            else errors.add("WQE " + i + " differs from what was posted");
        }
        if (got.size() != posted.size()) errors.add(posted.size() + " WQEs posted, " + got.size() + " delivered");

        // per-stage latency from the timeline; the doorbell's MMIO time starts the first WQE of each round
        long[] sum = new long[4];
        int[] n = new int[4];
        List<Long> rings = h.doorbellTimes();
        int round = 0;
        for (Adapter.Wqe w : got) {
            List<Trace.Entry> es = h.sim.trace().entries(String.format("qp0x%x/wqe%d", QP, w.index()));
            if (es.size() < 3) continue;
            if (round < rings.size() && w == got.get(Math.min(got.size() - 1, 16 * round))) {
                sum[0] += es.get(0).timePicos() - rings.get(round++);
                n[0]++;
            }
            sum[1] += es.get(1).timePicos() - es.get(0).timePicos();
            n[1]++;
            sum[2] += es.get(2).timePicos() - es.get(1).timePicos();
            n[2]++;
            for (Trace.Entry e : es) // completed WQEs (the NOPs): their CQE in host memory
                if (e.stage().equals(WqeStage.CQE_WRITTEN.label())) {
                    sum[3] += e.timePicos() - es.get(2).timePicos();
                    n[3]++;
                }
        }
        long[] mean = new long[4];
        for (int k = 0; k < 4; k++) mean[k] = n[k] == 0 ? 0 : sum[k] / n[k];
        if (timeline != null) {
            Path parent = timeline.toAbsolutePath().getParent();
            if (parent != null) Files.createDirectories(parent);
            try (Writer w = Files.newBufferedWriter(timeline)) { h.sim.trace().writeChromeJson(w); }
        }
        return new Result(posted.size(), verified, mean, h.adapter.core().cycle(), cqes.size(), h.interrupts().size(),
                h.sim.counters().snapshot(), errors);
    }
}
