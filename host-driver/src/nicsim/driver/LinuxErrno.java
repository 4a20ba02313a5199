package nicsim.driver;

/**
 * The Linux errno values the driver fails with, as the kernel's driver returns them: the driver's own
 * table, below the verbs library, whose {@code Errno} (the public name, docs/verbs.md) takes these values
 * by extending it.
 */
public class LinuxErrno {
    /** Only the public name ({@code nicsim.verbs.Errno}) extends it; it has no instances. */
    protected LinuxErrno() {}

    public static final int EPERM = 1, ENOENT = 2, EIO = 5, EBADF = 9, EAGAIN = 11, ENOMEM = 12, EFAULT = 14,
            EBUSY = 16, EEXIST = 17, EACCES = 13, ENODEV = 19, EINVAL = 22, ENOSPC = 28, ENOSYS = 38, EPROTO = 71,
            EPROTONOSUPPORT = 93, EOPNOTSUPP = 95, ETIMEDOUT = 110, EAFNOSUPPORT = 97, EADDRINUSE = 98,
            EADDRNOTAVAIL = 99, ENETUNREACH = 101, ECONNREFUSED = 111, EHOSTUNREACH = 113;

    /** The symbolic name of {@code errno} ("EINVAL"), or its number. */
    public static String name(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM"; case ENOENT -> "ENOENT"; case EIO -> "EIO"; case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN"; case ENOMEM -> "ENOMEM"; case EACCES -> "EACCES"; case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY"; case EEXIST -> "EEXIST"; case ENODEV -> "ENODEV"; case EINVAL -> "EINVAL";
            case ENOSPC -> "ENOSPC"; case ENOSYS -> "ENOSYS"; case EPROTO -> "EPROTO";
            case EPROTONOSUPPORT -> "EPROTONOSUPPORT"; case EOPNOTSUPP -> "EOPNOTSUPP";
            case ETIMEDOUT -> "ETIMEDOUT";
            case EAFNOSUPPORT -> "EAFNOSUPPORT"; case EADDRINUSE -> "EADDRINUSE"; case EADDRNOTAVAIL -> "EADDRNOTAVAIL";
            case ENETUNREACH -> "ENETUNREACH"; case ECONNREFUSED -> "ECONNREFUSED"; case EHOSTUNREACH -> "EHOSTUNREACH";
            default -> "errno " + errno;
        };
    }
}
