package nicsim.serve;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import nicsim.driver.ErrnoException;
import nicsim.driver.Host;
import nicsim.verbs.Context;
import nicsim.verbs.Device;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;
import nicsim.verbs.Xrcd;

/**
 * The XRC domains the programs on one node share by opening the same file, as the kernel shares
 * one per inode (ibv_open_xrcd with a file descriptor): the first open with O_CREAT makes it, the
 * others join it, and it goes when the last program holding it closes it. Such a domain belongs to
 * the node, not to the program that made it, so it outlives that program while others hold it.
 */
final class XrcDomains {
    /** open(2)'s O_CREAT and O_EXCL on Linux. */
    static final int O_CREAT = 0100, O_EXCL = 0200;

    private final Host host;
    private Context owner;
    private final Map<List<Long>, Shared> byFile = new HashMap<>();

    /** A domain of a file, and how many opens hold it. */
    static final class Shared {
        final List<Long> file;
        final Xrcd xrcd;
        int opens;

        Shared(List<Long> file, Xrcd xrcd) { this.file = file; this.xrcd = xrcd; }
    }

    XrcDomains(Host host) { this.host = host; }

    /**
     * The domain of file {@code (dev, ino)}: joined, or made when O_CREAT says so (as the kernel: EINVAL otherwise, or
     * with O_EXCL if it exists).
     */
    Shared open(long dev, long ino, int oflags) {
        List<Long> file = List.of(dev, ino);
        Shared s = byFile.get(file);
        if (s != null && (oflags & O_EXCL) != 0)
            throw new VerbsException(Errno.EINVAL, "open_xrcd: the file's XRC domain exists and oflags has O_EXCL");
        if (s == null) {
            if ((oflags & O_CREAT) == 0)
                throw new VerbsException(Errno.EINVAL,
                        "open_xrcd: the file has no XRC domain yet and oflags lacks O_CREAT");
            if (owner == null) owner = new Device(host).open();
            s = new Shared(file, owner.openXrcd());
            byFile.put(file, s);
        }
        s.opens++;
        return s;
    }

    /**
     * One program's close of {@code s}: the last close frees the domain, unless something still uses it (EBUSY, and it
     * stays held).
     */
    void close(Shared s) {
        if (s.opens == 1) s.xrcd.close(); // throws EBUSY while an XRC SRQ or target QP still uses it
        release(s);
    }

    /**
     * A hold given up without asking (the program left): the domain goes with the last hold if nothing uses it any
     * more.
     */
    void release(Shared s) {
        if (--s.opens > 0) return;
        byFile.remove(s.file);
        try {
            if (!s.xrcd.isClosed()) s.xrcd.close();
        } catch (ErrnoException e) {
            // still used by a program that closed its own hold early: the domain lingers until the node's context goes
        }
    }
}
