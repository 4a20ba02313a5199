package nicsim.serve;

import java.nio.ByteBuffer;
import nicsim.driver.World;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * AF_IB addressing for the RDMA CM (struct sockaddr_ib: a port's GID and a service ID): the nodes' GIDs, and what
 * an AF_IB bind takes, as the kernel's RDMA CM does. A node's GID is its port's, fe80:: and its port GUID.
 */
final class CmIb {
    private final World world;

    CmIb(World world) { this.world = world; }

    /**
     * A size the program gave with a sockaddr ({@code field}) must be its family's, as the kernel's rdma_addr_size
     * checks it (BIND, RESOLVE_ADDR; a source may be absent: size 0 when {@code optional}).
     */
    static void sized(byte[] body, int at, int size, boolean optional, String field) {
        if (optional && size == 0) return;
        if (size == 0 || size != CmAbi.addrSize(body, at))
            throw new VerbsException(Errno.EINVAL, field + ": size " + size + " is not its family's ("
                    + CmAbi.addrSize(body, at) + " bytes for family " + CmAbi.family(body, at) + ")");
    }

    /**
     * An AF_IB bind address as this node takes it: the node whose port has its GID (any GID: any address), and the
     * port space its service ID names, as the kernel's cma_select_ib_ps: an RDMA_PS_IB identifier's may be IB's, TCP's
     * or UDP's, another's only its own (EPROTONOSUPPORT).
     */
    CmAbi.Addr local(CmId id, CmAbi.Addr a) {
        CmAbi.Ib ib = a.ib();
        long mask = ib.sidMask() & CmAbi.IB_PS_MASK, sid = ib.sid() & mask;
        int ps = 0;
        if (id.ps == CmAbi.PS_IB && sid == (CmAbi.IB_PS_IB & mask)) ps = CmAbi.PS_IB;
        else if ((id.ps == CmAbi.PS_IB || id.ps == CmAbi.PS_TCP) && sid == (CmAbi.IB_PS_TCP & mask)) ps = CmAbi.PS_TCP;
        else if ((id.ps == CmAbi.PS_IB || id.ps == CmAbi.PS_UDP) && sid == (CmAbi.IB_PS_UDP & mask)) ps = CmAbi.PS_UDP;
        if (ps == 0) throw new VerbsException(Errno.EPROTONOSUPPORT, "bind: service ID 0x" + Long.toHexString(ib.sid())
                + " (mask 0x" + Long.toHexString(ib.sidMask()) + ") is in no port space cm_id " + id.handle
                + " of port space 0x" + Integer.toHexString(id.ps) + " may bind in");
        id.bindPs = ps;
        if (ib.any()) return a;
        int n = nodeOfGid(ib.hi(), ib.lo());
        if (n < 0) throw new VerbsException(Errno.ENODEV, "bind: no port has GID " + a);
        if (n != id.channel.node) throw new VerbsException(Errno.EADDRNOTAVAIL, "bind: GID " + a
                + " is node " + n + "'s port's, not this node's (node " + id.channel.node + ")");
        return new CmAbi.Addr(RdmaCm.ip(n), a.port(), false, ib);
    }

    /** RDMA_IB_IP_PS_* of port space {@code ps}. */
    static long ps(int ps) { return (long) ps << 16; }

    /** Node {@code n}'s port's GID: fe80:: and its port GUID, as its port's GID table holds it. */
    byte[] gid(int n) { return SubnetManager.gid(world.host(n).firmware.lid()); }

    /** The node whose port has GID {@code hi}:{@code lo}, or -1. */
    int nodeOfGid(long hi, long lo) {
        for (int n = 0; n < world.hosts().size(); n++) {
            ByteBuffer g = ByteBuffer.wrap(gid(n));
            if (g.getLong(0) == hi && g.getLong(8) == lo) return n;
        }
        return -1;
    }
}
