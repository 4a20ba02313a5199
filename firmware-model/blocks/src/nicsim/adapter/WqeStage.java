package nicsim.adapter;

import java.util.Locale;

/**
 * The stages of a send WQE's timeline (block "wqe"), declared here once: each stage's name in the trace (its
 * constant's, in lower case: "doorbell_decoded"), its code ({@link #ordinal}) and the block that does the work ending
 * in it, whose track the stage goes on. The first {@link #SHOWN} are the per-stage table's, in its order; the others
 * only the trace shows. Callers pass the constant, so recording a stage looks nothing up by name.
 */
public enum WqeStage {
    DOORBELL_DECODED("DoorbellDecoder"), FETCH_ISSUED("WqeFetcher"), DELIVERED("WqeFetcher"),
    TRANSLATED("MttWalker"), ON_WIRE("DmaEngine send"), PAYLOAD_READ("DmaEngine host"), ACKED("Link"),
    CQE_WRITTEN("CqeWriter"),
    PAGE_FAULT("MttWalker"), PAGES_IN("Firmware"),
    /** The peer's receive of the message, ending its time on the link. */
    RECEIVED("Link"),
    CQE_STAMPED("CqeWriter");

    /** How many stages, from the first, the per-stage table shows: their codes are its columns. */
    public static final int SHOWN = 8;

    private final String label;
    private final String block;

    WqeStage(String block) {
        this.label = name().toLowerCase(Locale.ROOT);
        this.block = block;
    }

    /** The stage's name in the trace and the table: "doorbell_decoded". */
    public String label() { return label; }

    /** The block whose track the stage goes on: "MttWalker". */
    public String block() { return block; }

    /** The stage's column in the per-stage table, or -1 (a stage the table does not show). */
    public int column() { return ordinal() < SHOWN ? ordinal() : -1; }
}
