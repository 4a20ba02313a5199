package nicsim.verbs;

/**
 * One entry of an interleaved layout (struct mlx5dv_mr_interleaved): {@code bytesCount} bytes at
 * {@code addr} under {@code lkey}, then {@code bytesSkip} bytes skipped before the entry's bytes
 * of the next repetition. mlx5 carries count and count + skip in 16 bits each.
 */
public record MrInterleaved(long addr, int bytesCount, int bytesSkip, int lkey) {}
