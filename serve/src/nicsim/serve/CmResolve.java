package nicsim.serve;

import static nicsim.serve.RdmaCm.ip;

import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * RDMA CM's address and route resolution: an identifier's destination resolved to a node (as ARP would, in simulated
 * time), an AF_IB destination by its GID, and the route to it, each told as the event the kernel queues.
 */
final class CmResolve {
    private final RdmaCm cm;

    CmResolve(RdmaCm cm) { this.cm = cm; }

    /**
     * RESOLVE_IP or RESOLVE_ADDR: {@code dst} resolves to a node (an identifier not bound yet binds first, to
     * {@code src} or any address); a multicast group to the node's own port; an address in the subnet that no node
     * has fails ETIMEDOUT after {@code timeoutMs} of simulated time. The result comes as an event.
     */
    Wire.Out resolveAddr(CmId id, CmAbi.Addr src, CmAbi.Addr dst, int timeoutMs) {
        CmAbi.Ib dib = dst.ib();
        // an unbound identifier binds to any address of the destination's family (an AF_IB one with its P_Key)
        if (id.state == CmId.State.IDLE) cm.ports.bind(id, src != CmAbi.Addr.NONE ? src : dib == null
                ? new CmAbi.Addr(0, 0, dst.v6())
                : new CmAbi.Addr(0, 0, false, new CmAbi.Ib(0, 0, dib.pkey(), 0, 0, 0, 0)));
        if (id.state != CmId.State.ADDR_BOUND)
            throw new VerbsException(Errno.EINVAL, "resolve_addr: cm_id " + id.handle + " is " + id.state);
        if (id.ib() != (dib != null)) throw new VerbsException(Errno.EINVAL, "resolve_addr: destination " + dst
                + " is not of the family cm_id " + id.handle + " is bound in (" + id.src + ")");
        if (dib != null ? dib.any() : dst.any())
            throw new VerbsException(Errno.EINVAL, "resolve_addr: destination is any address");
        // 224.0.0.0/4, or an MGID (ff00::/8): a group, reached by the node's own port
        boolean multicastDst = dib != null ? dib.hi() >>> 56 == 0xff : (dst.ip() & 0xF000_0000) == 0xE000_0000;
        int remote = multicastDst ? -1
                : dib != null ? cm.ib.nodeOfGid(dib.hi(), dib.lo()) : cm.nodeOf(dst.ip(), id.channel.node);
        if (dib != null && remote >= 0) dst = new CmAbi.Addr(ip(remote), dst.port(), false, dib);
        if (id.node < 0) id.node = id.channel.node;
        if (id.src.any()) id.src = new CmAbi.Addr(ip(id.node), id.src.port(), id.src.v6(),
                id.ib() ? id.src.ib().withGid(cm.ib.gid(id.node)) : null);
        id.dst = dst;
        id.state = CmId.State.ADDR_QUERY;
        if (multicastDst) { // resolves to the node's own port, as Linux routes 224/4 out of its IPoIB device
            cm.agent(id.node);
            id.state = CmId.State.ADDR_RESOLVED;
            cm.queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ADDR_RESOLVED, 0));
            return new Wire.Out();
        }
        if (remote < 0 && dib == null) {
            // in the subnet, but no node answers ARP: as Linux's addr.c, the query waits its timeout (in simulated
            // time) and fails ETIMEDOUT
            cm.startTimer(id, cm.world.now() + Math.max(1, Integer.toUnsignedLong(timeoutMs)) * 1_000_000_000L, () -> {
                if (id.state != CmId.State.ADDR_QUERY || !cm.ids.containsKey(id.handle)) return;
                id.state = CmId.State.ADDR_BOUND;
                cm.queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ADDR_ERROR, -Errno.ETIMEDOUT));
            });
            return new Wire.Out();
        }
        // an AF_IB destination is its GID, resolved at once as the kernel's cma_resolve_ib_addr takes it, even one
        // no port has (remote -1): the route resolution's path query finds it missing
        id.remoteNode = remote;
        cm.agent(id.node);
        if (remote >= 0) cm.agent(remote);
        id.state = CmId.State.ADDR_RESOLVED;
        cm.queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ADDR_RESOLVED, 0));
        return new Wire.Out();
    }

    /** RESOLVE_ROUTE: the fabric's path to the resolved address, or ROUTE_ERROR for a GID no port has. */
    Wire.Out resolveRoute(CmId id) {
        if (id.state != CmId.State.ADDR_RESOLVED && id.state != CmId.State.ROUTE_RESOLVED)
            throw new VerbsException(Errno.EINVAL, "resolve_route: cm_id " + id.handle + " is " + id.state
                    + "; resolve its address first");
        CmAbi.Ib dib = id.dst.ib();
        if (dib != null && id.remoteNode < 0 && dib.hi() >>> 56 != 0xff) {
            // a GID no port has: the SA answers the PathRecord query with no record (status ERR_NO_RECORDS), which
            // ib_sa passes on as EINVAL and cma_query_handler as ROUTE_ERROR; the address stays resolved
            id.state = CmId.State.ADDR_RESOLVED;
            cm.queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ROUTE_ERROR, -Errno.EINVAL));
            return new Wire.Out();
        }
        id.state = CmId.State.ROUTE_RESOLVED;
        cm.queue(id, null, CmAbi.event(id.uid, id.handle, CmAbi.ROUTE_RESOLVED, 0));
        return new Wire.Out();
    }
}
