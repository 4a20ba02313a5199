package nicsim.host;

import java.io.PrintStream;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Simulator;

/**
 * A benchmark-style check of the link model: runs real DMA transfers through {@link PciBus} and
 * reports payload efficiency and throughput against the TLP arithmetic of docs/sources.md#pcie-tlp-arithmetic. The
 * figures are simulated, so they are exact and repeatable; nothing here measures wall time.
 */
public final class PcieEfficiency {
    private PcieEfficiency() {}

    /** One measured transfer. */
    public record Result(String kind, int chunk, long tlps, long payloadBytes, long wireBytes, long picos) {
        public double efficiency() { return (double) payloadBytes / wireBytes; }
        public double gbps() { return payloadBytes * 8.0 / picos * 1000.0; }
    }

    /** A function with one BAR that does nothing but give DMA access. */
    private static final class Dma implements PciFunction {
        final ConfigSpace config = new ConfigSpace(0x1, 0x1, 0, new long[]{1 << 20, 0, 0}, 0, 0, 0);
        PciPort port;
        @Override public ConfigSpace config() { return config; }
        @Override public void mmioWrite(int bar, long offset, byte[] data) { }
        @Override public byte[] mmioRead(int bar, long offset, int length) { return new byte[length]; }
        @Override public void connect(PciPort p) { port = p; }
    }

    private static Dma setup(Simulator sim, Profile p, PciBus[] busOut) {
        PciBus bus = new PciBus(sim, PciBus.Config.from(p), new HostMemory(1L << 32, 4096));
        Dma d = new Dma();
        int fn = bus.attach(d);
        bus.configWrite32(fn, ConfigSpace.COMMAND, ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
        busOut[0] = bus;
        return d;
    }

    /** Streams {@code bytes} of posted DMA writes at max payload {@code mps}; times the last TLP's serialization. */
    public static Result measureWrite(Profile base, int mps, int bytes) {
        Profile p = base.with("pci.max.payload", mps + " B")
                .with("pci.read.completion", Math.min(mps, PciLink.Config.from(base).completionBytes()) + " B");
        Simulator sim = new Simulator();
        PciBus[] bus = new PciBus[1];
        Dma d = setup(sim, p, bus);
        long[] end = new long[1];
        d.port.dmaWrite(1 << 20, new byte[bytes], r -> end[0] = r.completedAt());
        sim.runUntilIdle();
        PciLink l = bus[0].link();
        PciLink.Direction up = PciLink.Direction.UPSTREAM;
        return new Result("write", mps, l.packets(up), l.payloadBytes(up), l.wireBytes(up),
                end[0] - l.latencyPicos());
    }

    /** DMA reads of {@code bytes} answered in completions of {@code completion} bytes. */
    public static Result measureRead(Profile base, int completion, int bytes) {
        Profile p = base.with("pci.read.completion", completion + " B");
        Simulator sim = new Simulator();
        PciBus[] bus = new PciBus[1];
        Dma d = setup(sim, p, bus);
        long[] end = new long[1];
        d.port.dmaRead(1 << 20, bytes, r -> end[0] = r.completedAt());
        sim.runUntilIdle();
        PciLink l = bus[0].link();
        PciLink.Direction down = PciLink.Direction.DOWNSTREAM;
        return new Result("read", completion, l.packets(down), l.payloadBytes(down), l.wireBytes(down), end[0]);
    }

    public static void print(Profile p, PrintStream out) {
        PciLink link = new PciLink(PciLink.Config.from(p));
        out.printf("Host link DMA efficiency, profile %s (%s, raw %.2f Gb/s), 1 MiB transfers%n", p.name(),
                link.isPcie() ? "pcie" : "pci", link.bitsPerSecond() / 1e9);
        out.printf("%-6s %-22s %6s %10s %9s %12s%n", "kind", "chunk", "TLPs", "efficiency", "expected", "Gb/s");
        if (!link.isPcie()) {
            // a parallel bus has one burst overhead per transaction and no completion TLPs
            Result r = measureWrite(p, link.maxPayload(), 1 << 20);
            double ceiling = 100.0 * link.maxPayload() / (link.maxPayload() + link.overheadPosted());
            out.printf("%-6s burst %4d B            %6d %9.1f%% %8.1f%% %12.3f%n", "write", link.maxPayload(), r.tlps(),
                    100 * r.efficiency(), ceiling, r.gbps());
            return;
        }
        for (int mps : new int[]{128, 256, 512}) {
            Result r = measureWrite(p, mps, 1 << 20);
            out.printf("%-6s max payload %4d B      %6d %9.1f%% %8.1f%% %12.2f%n", "write", mps, r.tlps(),
                    100 * r.efficiency(), 100.0 * mps / (mps + link.overheadPosted()), r.gbps());
        }
        for (int c : new int[]{64, 128, 256}) {
            Result r = measureRead(p, c, 1 << 20);
            out.printf("%-6s completions %4d B      %6d %9.1f%% %8.1f%% %12.2f%n", "read", c, r.tlps(),
                    100 * r.efficiency(), 100.0 * c / (c + link.overheadCompletion()), r.gbps());
        }
        printReadLatency(p, out);
    }

    /**
     * Round-trip PCIe read latency measured on Gen3 x8 (docs/sources.md#pcie-latency-and-mmio-cost: a TLP ping-pong of
     * about 850 ns).
     */
    public static final double REFERENCE_ROUND_TRIP_NS = 850;

    /** DMA read latency against size: from the request to the last completion's arrival. */
    public static void printReadLatency(Profile p, PrintStream out) {
        out.printf("%nDMA read latency vs size, profile %s (request issued to last byte in the adapter)%n", p.name());
        out.printf("%8s %12s %14s%n", "bytes", "latency ns", "vs 850 ns");
        int completion = PciLink.Config.from(p).completionBytes();
        for (int bytes : new int[]{8, 64, 256, 512, 4096, 65536}) {
            double ns = measureRead(p, completion, bytes).picos() / 1000.0;
            double off = (ns - REFERENCE_ROUND_TRIP_NS) / REFERENCE_ROUND_TRIP_NS * 100;
            if (bytes <= 64) out.printf("%8d %12.1f %13.1f%%%n", bytes, ns, off);
            else out.printf("%8d %12.1f %14s%n", bytes, ns, "");
        }
        out.println("850 ns: a measured TLP round trip on PCIe Gen3 x8 (docs/sources.md#pcie-latency-and-mmio-cost);"
                + " only reads of one small TLP compare with it.");
    }

    public static void main(String[] args) {
        print(Profiles.load(args.length > 0 ? args[0] : "cx-gen3x16"), System.out);
    }
}
