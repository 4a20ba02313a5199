package nicsim.abi;

/**
 * An MTT (page-list) entry as the adapter and the host's driver share it: a page's bus address, whose
 * low bits (clear in any page address) carry marks. An on-demand region's entry is NOT_PRESENT until
 * the host's translation handler brings the page in and writes the entry back without the mark.
 * An implicit on-demand region's entry is IMPLICIT and NOT_PRESENT: it then names the page by its
 * virtual address (bits {@link #IMPLICIT_PAGE_SHIFT} on) and the region by its mkey index (bits 2
 * to 19) for the handler; IMPLICIT alone says the handler found nothing mapped there, and an access
 * to the page fails.
 */
public final class MttEntry {
    private MttEntry() {}

    /** An entry's bytes: the page's bus address with its marks, big-endian. */
    public static final int BYTES = 8;
    /** The mark of a page not present. */
    public static final long NOT_PRESENT = 1;
    /** The mark of an implicit region's page (see the class comment). */
    public static final long IMPLICIT = 2;
    /** An implicit region's pages are 2 MB: their entries then have room for the mkey index beside the address. */
    public static final int IMPLICIT_PAGE_SHIFT = 21;
    /** The bytes an implicit region covers from address 0: the user address space of x86-64 and aarch64 (47 bits). */
    public static final long IMPLICIT_LENGTH = 1L << 47;

    private static final int MKEY_SHIFT = 2;
    private static final long MKEY_MASK = 0x3ffff;

    /**
     * The entry of an implicit region's page not brought in yet: page {@code va} of the region of mkey
     * {@code mkeyIndex}.
     */
    public static long implicitAbsent(long va, long mkeyIndex) {
        return va | mkeyIndex << MKEY_SHIFT | IMPLICIT | NOT_PRESENT;
    }

    /** The virtual address of the page an implicit region's entry names. */
    public static long implicitPage(long entry) { return entry & -(1L << IMPLICIT_PAGE_SHIFT); }

    /** The mkey index of the region an implicit region's entry names. */
    public static long implicitMkeyIndex(long entry) { return entry >>> MKEY_SHIFT & MKEY_MASK; }
}
