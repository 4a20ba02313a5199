package nicsim.serve;

import java.util.ArrayList;
import java.util.List;
import nicsim.adapter.Problems;
import nicsim.adapter.Problems.Problem;
import nicsim.driver.Host;

/**
 * The sanitizer's view of a PCI face driver: what the device found wrong since it was last asked, each with its
 * simulated time (the driver's refused posted writes, the adapter's reports, commands refused, requests that hit
 * nothing on the bus), and how many in all. Runs on the simulator's thread only.
 */
final class PciViolations {
    private final PciDevice device;
    /** The adapter's problems, the bus's unsupported requests and refused commands already told; its refused writes. */
    private long problemsTold;
    private int unsupportedTold, refusalsTold;
    private final List<String> refusedWrites = new ArrayList<>();
    /** Violations told so far (a run of one report counted once each). */
    long count;

    /** Counting from now: what the adapter reported before {@code device}'s driver opened it is not its. */
    PciViolations(PciDevice device) {
        this.device = device;
        Host host = device.host;
        this.problemsTold = host.adapter.errorCount();
        this.unsupportedTold = host.bus.unsupportedRequests().size();
        this.refusalsTold = host.firmware.refusedCommands().size();
    }

    /** The function was reset onto a fresh host: its adapter and bus count from zero. */
    void reset() { problemsTold = refusalsTold = unsupportedTold = 0; }

    /** A posted write of the driver's that reached nothing (no answer can say so): told as a violation. */
    void refusedWrite(String why) {
        refusedWrites.add(String.format("at %.3f us: MMIO write refused: %s", us(device.host.sim.now()), why));
    }

    private static double us(long picos) { return picos / 1e6; }

    /**
     * What the device found wrong since last asked, each with its simulated time: the driver's refused
     * writes, the adapter's reports (a doorbell for no queue, a malformed WQE or command, a CQE it
     * could not write...; the same report over and over is one line with its count), and requests that
     * hit nothing on the bus.
     */
    List<String> newViolations() {
        Host host = device.host;
        List<String> out = new ArrayList<>(refusedWrites);
        refusedWrites.clear();
        long repeats = 0;
        List<Problem> kept = host.adapter.problems().since(problemsTold);
        for (int i = 0; i < kept.size(); ) { // a run of one report (a CQ's dropped completions, say) is one line
            Problem p = kept.get(i);
            if (p.number() > problemsTold) { // the adapter kept only the first and the last of a flood
                out.add(String.format("%,d problems more, not kept (an adapter keeps the first and last %d reports)",
                        p.number() - problemsTold, Problems.KEPT));
                repeats += p.number() - problemsTold - 1;
            }
            String what = p.report().toString();
            int last = i;
            while (last + 1 < kept.size() && kept.get(last + 1).number() == kept.get(last).number() + 1
                    && kept.get(last + 1).report().toString().equals(what)) last++;
            String line = String.format("at %.3f us: %s", us(p.timePicos()), what);
            if (last > i) line += String.format(" (%d times in a row, the last at %.3f us)", last - i + 1,
                    us(kept.get(last).timePicos()));
            out.add(line);
            repeats += last - i;
            problemsTold = kept.get(last).number() + 1;
            i = last + 1;
        }
        if (device.user != null) {
            out.addAll(device.user.takeRefusals()); // its own commands only: the kernel's and others' are theirs
        } else {
            var refused = host.firmware.refusedCommands();
            for (; refusalsTold < refused.size(); refusalsTold++) out.add(refused.get(refusalsTold));
        }
        var ur = host.bus.unsupportedRequests();
        for (; unsupportedTold < ur.size(); unsupportedTold++) {
            var u = ur.get(unsupportedTold);
            out.add(String.format("at %.3f us: %s of %d bytes at 0x%x: %s", us(u.timePicos()), u.kind(), u.length(),
                    u.address(), u.kind().startsWith("DMA") ? "not memory the driver mapped (an IOMMU fault)"
                            : "nothing answers there (an unsupported request)"));
        }
        count += out.size() + repeats;
        return out;
    }
}
