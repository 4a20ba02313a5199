package nicsim.host;

/** An access outside simulated host memory. */
public final class MemoryAccessException extends RuntimeException {
    public MemoryAccessException(String message) { super(message); }
}
