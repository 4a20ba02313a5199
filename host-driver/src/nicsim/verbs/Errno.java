package nicsim.verbs;

import nicsim.driver.LinuxErrno;

/**
 * The Linux errno values verbs calls fail with ({@code Errno.EINVAL}, {@code Errno.name(22)}): the public name
 * of the driver's table, whose constants and {@code name} it takes by extending it.
 */
public final class Errno extends LinuxErrno {
    private Errno() {}
}
