package nicsim.serve;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.abi.BigEndian;
import nicsim.fabric.Grh;
import nicsim.fabric.Mad;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * RDMA CM multicast (rdma_join_multicast, rdma_leave_multicast: ucma's JOIN_IP_MCAST, JOIN_MCAST and
 * LEAVE_MCAST). A join maps the address to an MGID as Linux's cma_set_mgid does over IPoIB's broadcast
 * address (IPv4 ip_ib_mc_map, IPv6 ipv6_ib_mc_map, an SA-assigned MGID as it is, RDMA_PS_UDP's signature
 * 0x01 in byte 3), then asks the SA on the fabric to join the node's port to it: an MCMemberRecord Set from
 * the node's CM agent to the SM's QP1, with cma_join_ib_multicast's component mask, in simulated time. The
 * SA's answer becomes RDMA_CM_EVENT_MULTICAST_JOIN (the group's QPN 0xFFFFFF, Q_Key and an address handle
 * of its MLID and MGID, which librdmacm attaches the identifier's QP to) or MULTICAST_ERROR. A leave, or the
 * identifier's destruction, sends the SA a Delete; the SA drops the group with its last member.
 */
final class CmMulticast {
    static final int MULTICAST_JOIN = 12, MULTICAST_ERROR = 13;
    /** librdmacm's join_flags: a full member, or a send-only full member (JoinState bit 0 or bit 3). */
    static final int FULLMEMBER = 0, SENDONLY_FULLMEMBER = 1;

    /** One join: the kernel's struct ucma_multicast (its handle, the uid librdmacm gave) and the SA's group. */
    static final class Join {
        final int handle;
        final CmId id;
        final long uid, tid;
        final long hi, lo;
        final int joinState;
        int reported;
        boolean joined;

        Join(int handle, CmId id, long uid, long tid, long hi, long lo, int joinState) {
            this.handle = handle;
            this.id = id;
            this.uid = uid;
            this.tid = tid;
            this.hi = hi;
            this.lo = lo;
            this.joinState = joinState;
        }
    }

    private final RdmaCm cm;
    private final Map<Integer, Join> joins = new LinkedHashMap<>();
    private int nextHandle = 1;
    private long nextTid = 0x6d63_0000_0000_0001L; // "mc": the agent's SA transactions
    long joinsSent, leavesSent;

    CmMulticast(RdmaCm cm) { this.cm = cm; }

    /** JOIN_IP_MCAST (struct rdma_ucm_join_ip_mcast, {@link CmLayout.JoinIpMcast}). */
    Wire.Out joinIp(CmId id, ByteBuffer b, byte[] body) {
        return join(id, CmLayout.JoinIpMcast.UID.u64(b), body, CmLayout.JoinIpMcast.ADDR.offset(), FULLMEMBER);
    }

    /** JOIN_MCAST (struct rdma_ucm_join_mcast, {@link CmLayout.JoinMcast}). */
    Wire.Out join(CmId id, ByteBuffer b, byte[] body) {
        int flags = CmLayout.JoinMcast.JOIN_FLAGS.u16(b);
        if (flags != FULLMEMBER && flags != SENDONLY_FULLMEMBER)
            throw new VerbsException(Errno.EINVAL, "join_mcast: join_flags " + flags
                    + " is neither RDMA_MC_JOIN_FLAG_FULLMEMBER (0) nor SENDONLY_FULLMEMBER (1)");
        return join(id, CmLayout.JoinMcast.UID.u64(b), body, CmLayout.JoinMcast.ADDR.offset(), flags);
    }

    private Wire.Out join(CmId id, long uid, byte[] body, int at, int flags) {
        if (id.state != CmId.State.ADDR_BOUND && id.state != CmId.State.ADDR_RESOLVED
                && id.state != CmId.State.ROUTE_RESOLVED)
            throw new VerbsException(Errno.EINVAL, "join_multicast: cm_id " + id.handle + " is " + id.state
                    + "; bind or resolve its address first");
        if (!id.ud()) throw new VerbsException(Errno.EINVAL, "join_multicast: cm_id " + id.handle
                + " is not of a UD port space (RDMA_PS_UDP, RDMA_PS_IPOIB, or RDMA_PS_IB with UD)");
        long[] mgid = mgid(body, at, id.ps);
        if (id.node < 0) id.node = id.channel.node;
        Join j = new Join(nextHandle++, id, uid, nextTid++, mgid[0], mgid[1], flags == FULLMEMBER ? 1 : 8);
        joins.put(j.handle, j);
        sa(j, Mad.SET);
        joinsSent++;
        return new Wire.Out().u32(j.handle);
    }

    /** LEAVE_MCAST (struct rdma_ucm_destroy_id, {@link CmLayout.DestroyId}: the join's id): the events given for it. */
    Wire.Out leave(RdmaCm.Channel ch, int handle) {
        Join j = joins.get(handle);
        if (j == null || j.id.channel != ch)
            throw new VerbsException(Errno.ENOENT, "leave_mcast: no join " + Integer.toUnsignedString(handle)
                    + " in this rdma_cm file");
        drop(j);
        return new Wire.Out().u32(j.reported);
    }

    /** Identifier {@code id} is destroyed: it leaves every group it joined. */
    void destroyed(CmId id) {
        for (Join j : List.copyOf(joins.values())) if (j.id == id) drop(j);
    }

    private void drop(Join j) {
        joins.remove(j.handle);
        j.id.channel.queue.removeIf(p -> p.id() == j.id && mine(p.resp(), j));
        if (j.joined) {
            sa(j, McGroups.DELETE);
            leavesSent++;
        }
    }

    private static boolean mine(byte[] resp, Join j) {
        ByteBuffer e = CmAbi.le(resp);
        int ev = CmLayout.EventResp.EVENT.u32(e);
        return (ev == MULTICAST_JOIN || ev == MULTICAST_ERROR) && CmLayout.EventResp.ID.u32(e) == j.handle;
    }

    /** An event handed to the program: a join's counts toward what LEAVE_MCAST reports. */
    void handedOut(byte[] resp) {
        ByteBuffer e = CmAbi.le(resp);
        int ev = CmLayout.EventResp.EVENT.u32(e);
        if (ev != MULTICAST_JOIN && ev != MULTICAST_ERROR) return;
        Join j = joins.get(CmLayout.EventResp.ID.u32(e));
        if (j != null) j.reported++;
    }

    /** Sends the SA an MCMemberRecord Set (join) or Delete (leave) for {@code j} from its node's agent. */
    private void sa(Join j, int method) {
        int node = j.id.node;
        CmAgent a = cm.agent(node);
        byte[] m = Mad.request(Mad.CLASS_SUBN_ADM, SubnetManager.SA_VERSION, method, j.tid, McGroups.ATTR, 0);
        long mask = 1L << McGroups.MGID | 1L << McGroups.PORT_GID | 1L << McGroups.PKEY | 1L << McGroups.JOIN_STATE;
        if (method == Mad.SET)
            mask |= 1L << McGroups.QKEY | 1L << McGroups.SL | 1L << McGroups.FLOW | 1L << McGroups.TCLASS;
        if (method == Mad.SET && j.id.ps == CmAbi.PS_IPOIB)
            mask |= 1L << McGroups.RATE | 1L << McGroups.RATE_SEL | 1L << McGroups.MTU_SEL | 1L << McGroups.MTU
                    | 1L << McGroups.HOP;
        BigEndian.put64(m, SubnetManager.SA_COMP_MASK, mask);
        int d = SubnetManager.SA_DATA;
        BigEndian.put64(m, d + McGroups.R_MGID, j.hi);
        BigEndian.put64(m, d + McGroups.R_MGID + 8, j.lo);
        System.arraycopy(a.gid, 0, m, d + McGroups.R_PORT_GID, 16);
        BigEndian.put32(m, d + McGroups.R_QKEY, CmPaths.udQkey(j.id, 0));
        Mad.put16(m, d + McGroups.R_PKEY, 0xffff);
        m[d + McGroups.R_SCOPE_JOIN] = (byte) j.joinState;
        if (RdmaCm.DEBUG) cm.log.printf("CM node %d: SA %s of %s%n", node, method == Mad.SET ? "join" : "leave",
                Grh.text(j.hi, j.lo));
        a.send(cm.world.host(SubnetManager.SM_NODE).firmware.lid(), 1, m);
    }

    /** An SA answer that came to node {@code node}'s agent: a join's becomes its event. */
    void received(int node, CmAgent.Received r) {
        byte[] m = r.mad();
        if (Mad.method(m) != Mad.GET_RESP) return; // a leave's answer: nothing to tell
        long tid = BigEndian.get64(m, 8);
        Join j = null;
        for (Join x : joins.values()) if (x.tid == tid && x.id.node == node) j = x;
        if (j == null || j.joined) return; // left meanwhile
        int d = SubnetManager.SA_DATA;
        if (Mad.status(m) != 0) {
            joins.remove(j.handle);
            cm.queue(j.id, null, CmAbi.event(j.uid, j.handle, MULTICAST_ERROR, -Errno.EINVAL));
            cm.log.printf("nicsim serve: the SA refused node %d's join of %s: status 0x%04x%n", node,
                    Grh.text(j.hi, j.lo), Mad.status(m));
            return;
        }
        j.joined = true;
        ByteBuffer e = CmAbi.event(j.uid, j.handle, MULTICAST_JOIN, 0);
        int qkey = (int) BigEndian.get32(m, d + McGroups.R_QKEY), mlid = Mad.get16(m, d + McGroups.R_MLID);
        int ud = CmLayout.EventResp.PARAM.offset(), ah = ud + CmLayout.UdParam.AH_ATTR.offset();
        CmLayout.UdParam.QP_NUM.put32(e, ud, 0xFFFFFF);
        CmLayout.UdParam.QKEY.put32(e, ud, qkey);
        CmLayout.AhAttr.DGID.putBytes(e, ah, Arrays.copyOfRange(m, d + McGroups.R_MGID,
                d + McGroups.R_MGID + 16), 16);
        long slFlowHop = BigEndian.get32(m, d + McGroups.R_SL_FLOW_HOP);
        CmLayout.AhAttr.FLOW_LABEL.put32(e, ah, (int) (slFlowHop >>> 8 & 0xFFFFF));
        CmLayout.AhAttr.HOP_LIMIT.put8(e, ah, (int) slFlowHop & 0xFF);
        CmLayout.AhAttr.TRAFFIC_CLASS.put8(e, ah, m[d + McGroups.R_TCLASS]);
        CmAbi.ahAttr(e, ah, mlid);
        CmLayout.AhAttr.SL.put8(e, ah, (int) (slFlowHop >>> 28));
        CmLayout.AhAttr.IS_GLOBAL.put8(e, ah, 1);
        cm.queue(j.id, null, e);
    }

    /** The joins open now (for serve's summary and the tests). */
    int open() { return joins.size(); }

    /**
     * The MGID of the multicast address in the sockaddr at {@code at} of {@code body}, as the kernel's
     * cma_set_mgid maps it on an IPoIB device of the default partition (broadcast ff12:401b:ffff::ffff:ffff:
     * link-local scope 2, P_Key 0xffff).
     */
    static long[] mgid(byte[] body, int at, int ps) {
        int family = CmAbi.family(body, at);
        int signature = ps == CmAbi.PS_UDP ? 0x01 : -1;
        if (family == CmAbi.AF_INET) {
            long ip = CmLayout.SockaddrIn.ADDR.u32(CmAbi.le(body), at) & 0xFFFF_FFFFL;
            if (ip == 0) return new long[]{0, 0}; // any address: the SA chooses
            if ((ip & 0xF000_0000L) != 0xE000_0000L)
                throw new VerbsException(Errno.EINVAL, "join_multicast: " + RdmaCm.dotted((int) ip)
                        + " is not an IPv4 multicast address (224.0.0.0/4)");
            long hi = 0xff12_401b_ffff_0000L;
            if (signature >= 0) hi = hi & ~0xFFFF_0000_0000L | 0x4001_0000_0000L;
            return new long[]{hi, ip & 0x0FFF_FFFFL};
        }
        if (family == CmAbi.AF_INET6) {
            int a = CmLayout.SockaddrIn6.ADDR.at(at);
            long hi = BigEndian.get64(body, a), lo = BigEndian.get64(body, a + 8); // the address's two halves
            if (hi == 0 && lo == 0) return new long[]{0, 0};
            if ((hi >>> 32 & 0xFFF0_FFFFL) == 0xFF10_A01BL) return new long[]{hi, lo}; // an SA-assigned MGID
            if (hi >>> 56 != 0xFF)
                throw new VerbsException(Errno.EINVAL, "join_multicast: " + Grh.text(hi, lo)
                        + " is not an IPv6 multicast address (ff00::/8)");
            // ipv6_ib_mc_map: ff1<scope>:601b:<P_Key>, then the address's last 10 bytes
            long mhi = 0xff12_601b_ffff_0000L | (hi & 0xFFFF);
            if (signature >= 0) mhi = mhi & ~0xFFFF_0000_0000L | 0x6001_0000_0000L;
            return new long[]{mhi, lo};
        }
        if (family == CmAbi.AF_IB) { // an MGID as it is (mckey -M), as the kernel's cma_set_mgid takes sib_addr
            ByteBuffer l = CmAbi.le(body);
            long hi = CmLayout.SockaddrIb.SUBNET_PREFIX.u64(l, at), lo = CmLayout.SockaddrIb.INTERFACE_ID.u64(l, at);
            if (hi >>> 56 != 0xFF && (hi != 0 || lo != 0))
                throw new VerbsException(Errno.EINVAL, "join_multicast: " + Grh.text(hi, lo)
                        + " is not a multicast GID (ff00::/8)");
            return new long[]{hi, lo};
        }
        throw new VerbsException(Errno.EAFNOSUPPORT, "join_multicast: address family " + family
                + "; nicsim's RDMA CM takes AF_INET, AF_INET6 and AF_IB");
    }

    List<String> describe() {
        List<String> out = new ArrayList<>();
        for (Join j : joins.values()) out.add(Grh.text(j.hi, j.lo) + (j.joined ? "" : " (joining)"));
        return out;
    }
}
