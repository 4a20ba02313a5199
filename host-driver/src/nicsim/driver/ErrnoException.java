package nicsim.driver;

/**
 * A call that failed with a Linux errno ({@link #errno()}), as the kernel's driver fails: a command the
 * firmware refused, an adapter that did not answer, a counter request the kernel would refuse. The message is
 * the errno's name and {@link #detail()} ("EINVAL: ..."). The verbs library's VerbsException is one; what the
 * driver throws, the verbs library passes on as one.
 */
public class ErrnoException extends RuntimeException {
    private final int errno;
    private final String detail;

    public ErrnoException(int errno, String detail) {
        super(LinuxErrno.name(errno) + ": " + detail);
        this.errno = errno;
        this.detail = detail;
    }

    /** The Linux value. */
    public int errno() { return errno; }

    /** The message without the errno's name: what failed, naming the field and value. */
    public String detail() { return detail; }
}
