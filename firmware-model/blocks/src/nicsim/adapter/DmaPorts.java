package nicsim.adapter;

import java.util.Arrays;
import nicsim.sim.Layout;

/**
 * Payloads of the DmaEngine's ports. Data beats are as wide as the adapter's data path
 * ({@code core.datapath.width}): 32, 64 or 256 bits, carried as words of at most 64 bits, bytes
 * little-endian. The beat layouts are built for a width, once, and shared by model and RTL.
 */
public final class DmaPorts {
    private DmaPorts() {}

    /** Host DMA: move {@code length} bytes between host memory and SRAM ({@code toHost}: SRAM to host). */
    public record HostDesc(long toHost, long hostAddr, long sramAddr, long length, long tag) {}

    /** Send or receive DMA: {@code length} bytes of SRAM at {@code sramAddr} (receive: room for at most that). */
    public record LinkDesc(long sramAddr, long length, long tag) {}

    /** A PCI read the host engine asks for. */
    public record PciRead(long addr, long length, long tag) {}

    /**
     * One data beat; {@code flag} is "last" on the link and "error" on PCI read data. The words are
     * not copied (a beat is made every cycle): whoever makes one hands over an array nobody changes.
     */
    public record Beat(long[] data, long flag) {
        @Override public boolean equals(Object o) {
            return o instanceof Beat b && flag == b.flag && Arrays.equals(data, b.data);
        }
        @Override public int hashCode() { return Arrays.hashCode(data) * 31 + (int) flag; }
    }

    /** One beat of a posted PCI write, at its own host address; its words are not copied, as a {@link Beat}'s. */
    public record WriteBeat(long addr, long[] data, long last) {
        @Override public boolean equals(Object o) {
            return o instanceof WriteBeat b && addr == b.addr && last == b.last && Arrays.equals(data, b.data);
        }
        @Override public int hashCode() { return Arrays.hashCode(data) * 31 + Long.hashCode(addr); }
    }

    /** A finished descriptor: bytes moved and how it ended. */
    public record Done(long tag, long status, long length) {
        public enum Status { OK, MISALIGNED, OUT_OF_SRAM, PCI_ERROR, OVERRUN }
        private static final Status[] STATUSES = Status.values(); // values() clones its array at every call
        public Status reason() { return STATUSES[(int) status]; }
    }

    public static final Layout<HostDesc> HOST_DESC = Layout.<HostDesc>builder("HostDesc")
            .field("toHost", 1, HostDesc::toHost).field("hostAddr", 64, HostDesc::hostAddr)
            .field("sramAddr", 32, HostDesc::sramAddr)
            .field("length", 20, HostDesc::length).field("tag", 8, HostDesc::tag)
            .build(v -> new HostDesc(v[0], v[1], v[2], v[3], v[4]));

    public static final Layout<LinkDesc> LINK_DESC = Layout.<LinkDesc>builder("LinkDesc")
            .field("sramAddr", 32, LinkDesc::sramAddr).field("length", 20, LinkDesc::length)
            .field("tag", 8, LinkDesc::tag)
            .build(v -> new LinkDesc(v[0], v[1], v[2]));

    public static final Layout<PciRead> PCI_READ = Layout.<PciRead>builder("PciRead")
            .field("addr", 64, PciRead::addr).field("length", 20, PciRead::length).field("tag", 8, PciRead::tag)
            .build(v -> new PciRead(v[0], v[1], v[2]));

    public static final Layout<Done> DONE = Layout.<Done>builder("Done")
            .field("tag", 8, Done::tag).field("status", 3, Done::status).field("length", 20, Done::length)
            .build(v -> new Done(v[0], v[1], v[2]));

    /** Words of a beat of {@code widthBits}: 64-bit words, or one narrower word. */
    public static int words(int widthBits) { return (widthBits + 63) / 64; }

    public static int wordBits(int widthBits) { return Math.min(64, widthBits); }

    public static Layout<Beat> beat(int widthBits, String flagName) {
        int n = words(widthBits);
        return Layout.<Beat>builder("Beat" + widthBits).words("data", n, wordBits(widthBits), Beat::data)
                .field(flagName, 1, Beat::flag).build(v -> new Beat(Arrays.copyOf(v, n), v[n]));
    }

    public static Layout<WriteBeat> writeBeat(int widthBits) {
        int n = words(widthBits);
        return Layout.<WriteBeat>builder("WriteBeat" + widthBits).field("addr", 64, WriteBeat::addr)
                .words("data", n, wordBits(widthBits), WriteBeat::data)
                .field("last", 1, WriteBeat::last)
                .build(v -> new WriteBeat(v[0], Arrays.copyOfRange(v, 1, 1 + n), v[1 + n]));
    }
}
