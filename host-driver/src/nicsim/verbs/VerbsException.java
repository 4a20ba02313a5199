package nicsim.verbs;

import nicsim.driver.ErrnoException;

/**
 * A verbs call the spec rejects: {@link #errno()} is the Linux value libibverbs would return, and
 * the message names the offending field and value. For postSend/postRecv, {@link #badWrIndex()}
 * is the first request not posted (those before it were); -1 for other calls.
 */
public class VerbsException extends ErrnoException {
    private final int badWrIndex;

    public VerbsException(int errno, String message) { this(errno, message, -1); }

    public VerbsException(int errno, String message, int badWrIndex) {
        super(errno, message);
        this.badWrIndex = badWrIndex;
    }

    /** The driver's failure {@code e} as the verbs call's: the same errno and message. */
    static VerbsException of(ErrnoException e) {
        if (e instanceof VerbsException v) return v;
        VerbsException v = new VerbsException(e.errno(), e.detail());
        v.initCause(e);
        return v;
    }

    public int badWrIndex() { return badWrIndex; }
}
