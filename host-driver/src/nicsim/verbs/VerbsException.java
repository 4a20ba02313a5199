package nicsim.verbs;

/**
 * A verbs call the spec rejects: {@link #errno()} is the Linux value libibverbs would return, and
 * the message names the offending field and value. For postSend/postRecv, {@link #badWrIndex()}
 * is the first request not posted (those before it were); -1 for other calls.
 */
public class VerbsException extends RuntimeException {
    private final int errno;
    private final int badWrIndex;

    public VerbsException(int errno, String message) { this(errno, message, -1); }

    public VerbsException(int errno, String message, int badWrIndex) {
        super(Errno.name(errno) + ": " + message);
        this.errno = errno;
        this.badWrIndex = badWrIndex;
    }

    public int errno() { return errno; }

    public int badWrIndex() { return badWrIndex; }
}
