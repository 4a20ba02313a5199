package nicsim.adapter;

import nicsim.host.PciLink;
import nicsim.profile.Profile;
import nicsim.profile.Require;

/**
 * Everything an {@link Adapter} takes from the profile, read and checked once, before any block exists: the core
 * clock, BAR0's size, the PCI link it trains to, the doorbell polling interval of an adapter without hardware
 * doorbells ({@code doorbell.poll.interval}, 0: none), the BlueFlame buffer's lines ({@code wqe.bf.buffer.entries}),
 * and each block's own {@code Config}. (Its own file: Adapter's is long enough without it.)
 */
public record AdapterConfig(long corePeriodPs, long bar0Bytes, PciLink.Config pci, long pollIntervalPs,
        int bfBufferEntries, DoorbellDecoder.Config doorbell, WqeFetcher.Config fetcher, CqeWriter.Config cqeWriter,
        MttWalker.Config mtt, DmaPath.Config dma, OnChipMemory.Config dm) {
    public AdapterConfig {
        Require.atLeast("core.clock", corePeriodPs, 1, "ps");
        Require.powerOfTwo("pci.bar0.size", bar0Bytes, 4096, 1L << 40, "B");
        Require.atLeast("doorbell.poll.interval", pollIntervalPs, 0, "ps");
        Require.range("wqe.bf.buffer.entries", bfBufferEntries, 0, 1 << 16, "");
    }

    public static AdapterConfig from(Profile p) {
        PciLink.Config pci = PciLink.Config.from(p);
        return new AdapterConfig(p.periodPicos("core.clock"), p.bytes("pci.bar0.size"), pci,
                p.has("doorbell.poll.interval") ? p.picos("doorbell.poll.interval") : 0,
                p.has("wqe.bf.buffer.entries") ? p.countInt("wqe.bf.buffer.entries") : 0,
                DoorbellDecoder.Config.from(p), WqeFetcher.Config.from(p), CqeWriter.Config.from(p),
                MttWalker.Config.from(p), DmaPath.Config.from(p, pci), OnChipMemory.Config.from(p));
    }
}
