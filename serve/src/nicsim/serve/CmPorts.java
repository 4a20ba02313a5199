package nicsim.serve;

import static nicsim.serve.RdmaCm.EPHEMERAL;
import static nicsim.serve.RdmaCm.SUBNET;
import static nicsim.serve.RdmaCm.SUBNET_MASK;
import static nicsim.serve.RdmaCm.dotted;
import static nicsim.serve.RdmaCm.ip;
import static nicsim.serve.RdmaCm.loopback;
import static nicsim.serve.RdmaCm.wildcard;

import nicsim.fabric.Grh;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * RDMA CM's port spaces: binding an identifier to an address and port (a port given, or the first ephemeral one
 * free), as the kernel checks them (EADDRINUSE, REUSEADDR, AFONLY), listening there, and finding the listener a
 * connection request that arrives at a node is for.
 */
final class CmPorts {
    private final RdmaCm cm;

    CmPorts(RdmaCm cm) { this.cm = cm; }

    /** BIND_IP, BIND, or an identifier bound on the way (resolve_addr, listen): to address {@code a} and a port. */
    Wire.Out bind(CmId id, CmAbi.Addr a) {
        if (id.state != CmId.State.IDLE)
            throw new VerbsException(Errno.EINVAL, "bind: cm_id " + id.handle + " is " + id.state + ", not idle");
        id.bindPs = id.ps;
        if (a.ib() != null) a = cm.ib.local(id, a);
        int node = -1;
        // a loopback address binds as any address does (the kernel's cma_any_addr): no device, and a listener
        // there takes requests to every address of the node, so libfabric, given no address, finds the node's
        if (!a.any() && !loopback(a.ip())) {
            int n = nodeOfLocal(a.ip(), id.channel.node);
            if (n != id.channel.node) throw new VerbsException(Errno.EADDRNOTAVAIL, "bind: " + dotted(a.ip())
                    + " is not this node's address (node " + id.channel.node + " is " + dotted(ip(id.channel.node))
                            + ")");
            node = n;
        }
        int port = a.port() != 0 ? a.port() : ephemeral(id.bindPs, node, id.channel.node);
        // an AF_IB identifier is no family's only (the kernel sets afonly for IPv4 and IPv6 binds alone)
        boolean afonly = a.ib() == null && (id.afonlyOption != null ? id.afonlyOption : !a.v6());
        for (CmId o : cm.ids.values())
            if (o != id && o.bound && o.bindPs == id.bindPs && o.src.port() == port
                    && overlaps(o, node, id.channel.node)
                    && !(o.reuseAddr && id.reuseAddr && o.state != CmId.State.LISTEN)
                    && !(afonly && o.afonly && o.src.v6() != a.v6())) // each family's own: 0.0.0.0 and [::] coexist
                throw new VerbsException(Errno.EADDRINUSE, "bind: port " + port + " of " + (node < 0 ? "any address"
                        : dotted(ip(node))) + " is in use (" + o + ")");
        id.node = node;
        // an AF_IB address's service ID names its port space and port (cma_select_ib_ps)
        CmAbi.Ib sib = a.ib() == null ? null
                : a.ib().withSid(CmIb.ps(id.bindPs) | port, CmAbi.IB_PS_MASK | a.ib().sidMask());
        id.src = new CmAbi.Addr(loopback(a.ip()) ? a.ip() : a.any() ? 0 : ip(node), port, a.v6(), sib);
        id.afonly = afonly;
        id.bound = true;
        id.state = CmId.State.ADDR_BOUND;
        return new Wire.Out();
    }

    private int nodeOfLocal(int ip, int self) {
        int n = loopback(ip) ? self : (ip & SUBNET_MASK) == SUBNET ? ip - SUBNET - 1 : -1;
        if (n < 0 || n >= cm.nodes()) throw new VerbsException(Errno.EADDRNOTAVAIL, "bind: no node has address "
                + dotted(ip));
        return n;
    }

    private static boolean overlaps(CmId o, int node, int self) {
        int on = o.node >= 0 ? o.node : o.channel.node, nn = node >= 0 ? node : self;
        return on == nn;
    }

    private int ephemeral(int ps, int node, int self) {
        for (int port = EPHEMERAL; port < 65536; port++) {
            boolean free = true;
            for (CmId o : cm.ids.values())
                if (o.bound && o.bindPs == ps && o.src.port() == port && overlaps(o, node, self)) free = false;
            if (free) return port;
        }
        throw new VerbsException(Errno.EADDRINUSE, "bind: every port is in use");
    }


    /** LISTEN (binding first an identifier not bound yet), with its backlog. */
    Wire.Out listen(CmId id, int backlog) {
        if (id.state == CmId.State.IDLE) bind(id, CmAbi.Addr.NONE);
        if (id.state != CmId.State.ADDR_BOUND && id.state != CmId.State.LISTEN)
            throw new VerbsException(Errno.EINVAL, "listen: cm_id " + id.handle + " is " + id.state);
        for (CmId o : cm.ids.values())
            if (o != id && o.state == CmId.State.LISTEN && o.bindPs == id.bindPs && o.src.port() == id.src.port()
                    && overlaps(o, id.node, id.channel.node) && (wildcard(o.src) || wildcard(id.src)
                            || o.src.ip() == id.src.ip()) && !(o.afonly && id.afonly && o.src.v6() != id.src.v6()))
                throw new VerbsException(Errno.EADDRINUSE, "listen: " + o + " already listens there");
        int b = backlog > 0 && backlog < 1024 ? backlog : 1024;
        id.backlogLeft += b - id.backlog;
        id.backlog = b;
        if (id.state != CmId.State.LISTEN)
            cm.log.printf("nicsim serve: %s listens on %s, port %d (RDMA CM, node %d)%n", id.channel.program,
                    id.ib() ? (id.src.any() ? "any GID" : "GID " + Grh.text(id.src.ib().hi(),
                            id.src.ib().lo())) + " (AF_IB, service ID 0x" + Long.toHexString(id.src.ib().sid()) + ")"
                    : id.src.any() ? "any address" : dotted(id.src.ip()) + (loopback(id.src.ip()) ? " (any address)"
                            : ""), id.src.port(), id.listenNode());
        id.state = CmId.State.LISTEN;
        return new Wire.Out();
    }

    /**
     * The listener that takes a request for {@code ps}/{@code port} to address {@code ip} arriving at {@code node},
     * or null. A request's IP version ({@code ipVersion}, from the RDMA CM header: 4 or 6, 0 for a request with none,
     * an AF_IB identifier's) reaches a listener of its family, or one of the other family that is not its family's
     * only (an IPv6 listener without AFONLY); an AF_IB listener takes every request, as the kernel's
     * cma_match_private_data, and a request without a header reaches an IP listener only on any address, not AFONLY.
     */
    CmId listener(int node, int ps, int port, int ip, int ipVersion) {
        CmId any = null;
        for (CmId o : cm.ids.values()) {
            if (o.state != CmId.State.LISTEN || o.src.port() != port || o.listenNode() != node) continue;
            if (o.bindPs != ps && !(o.bindPs == CmAbi.PS_IB && (ps == CmAbi.PS_TCP || ps == CmAbi.PS_UDP))) continue;
            if (o.ib() || ipVersion == 0) {
                if (o.ib() || wildcard(o.src) && !o.afonly) any = any == null ? o : any;
                continue;
            }
            if (o.afonly && o.src.v6() != (ipVersion == 6)) continue;
            if (!o.src.any() && o.src.ip() == ip) return o;
            if (wildcard(o.src)) any = o;
        }
        return any;
    }
}
