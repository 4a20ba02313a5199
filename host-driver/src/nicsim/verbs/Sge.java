package nicsim.verbs;

/** A scatter/gather element (struct ibv_sge). */
public record Sge(long addr, int length, int lkey) {}
