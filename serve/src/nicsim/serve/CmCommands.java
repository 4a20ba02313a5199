package nicsim.serve;

import static nicsim.serve.RdmaCm.DEBUG;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.serve.RdmaCm.Channel;
import nicsim.serve.RdmaCm.Pending;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * The rdma_cm file's commands (ucma, ABI version 4): each write(2) librdmacm makes, its input checked for the size
 * the kernel takes, decoded and handed to the part of {@link RdmaCm} that does it (identifiers and events here,
 * binds and listeners to {@link CmPorts}, resolution to {@link CmResolve}, the connection's exchange to
 * {@link CmExchange}, multicast to {@link CmMulticast}); answered with what the kernel would copy out.
 */
final class CmCommands {
    private final RdmaCm cm;

    CmCommands(RdmaCm cm) { this.cm = cm; }

    /**
     * CM_CMD of file {@code ch}: one write(2) of librdmacm: the command, the size it reads back, its input, then
     * extras.
     */
    Wire.Out run(Channel ch, Wire.In in) {
        WireLayout.CmCommand q = in.read(WireLayout.CmCommand.class);
        int cmd = q.command();
        byte[] body = in.bytes(in.items(q.in(), 1, "in"), "input");
        cm.commands++;
        ch.program.requested(false);
        ByteBuffer b = CmAbi.le(Arrays.copyOf(body, Math.max(body.length, 512)));
        int need = inputSize(cmd);
        if (DEBUG) cm.log.println("CM channel " + ch.number + " " + CmAbi.command(cmd));
        if (body.length < need)
            throw new VerbsException(Errno.EINVAL, CmAbi.command(cmd) + ": " + body.length + " bytes in, it takes "
                    + need);
        return switch (cmd) {
            case CmAbi.CREATE_ID, CmAbi.DESTROY_ID, CmAbi.BIND_IP, CmAbi.BIND, CmAbi.RESOLVE_IP, CmAbi.RESOLVE_ADDR,
                 CmAbi.RESOLVE_ROUTE, CmAbi.LISTEN -> identifier(ch, cmd, b, body);
            case CmAbi.QUERY_ROUTE -> new Wire.Out().bytes(CmPaths.route(cm, id(ch, CmLayout.Query.ID.u32(b))));
            case CmAbi.QUERY -> new Wire.Out().bytes(CmPaths.query(cm, id(ch, CmLayout.Query.ID.u32(b)),
                    CmLayout.Query.OPTION.u32(b), q.out()));
            case CmAbi.CONNECT -> cm.exchange.connect(id(ch, CmLayout.Connect.ID.u32(b)), b,
                    CmLayout.Connect.CONN_PARAM.offset());
            case CmAbi.ACCEPT -> cm.exchange.accept(id(ch, CmLayout.Accept.ID.u32(b)), CmLayout.Accept.UID.u64(b), b,
                    CmLayout.Accept.CONN_PARAM.offset());
            case CmAbi.REJECT -> reject(ch, b, body);
            case CmAbi.DISCONNECT -> cm.exchange.disconnect(id(ch, CmLayout.Disconnect.ID.u32(b)));
            case CmAbi.INIT_QP_ATTR -> new Wire.Out().bytes(CmPaths.initQpAttr(cm,
                    id(ch, CmLayout.InitQpAttr.ID.u32(b)), CmLayout.InitQpAttr.QP_STATE.u32(b)));
            case CmAbi.GET_EVENT -> getEvent(ch);
            case CmAbi.SET_OPTION -> setOption(id(ch, CmLayout.SetOption.ID.u32(b)), CmLayout.SetOption.LEVEL.u32(b),
                    CmLayout.SetOption.OPTNAME.u32(b), in);
            case CmAbi.NOTIFY -> cm.exchange.notify(id(ch, CmLayout.Notify.ID.u32(b)));
            case CmAbi.MIGRATE_ID -> migrate(CmLayout.MigrateId.ID.u32(b),
                    cm.channel(in.read(WireLayout.ChannelNumber.class).channel()), ch);
            case CmAbi.GET_OPTION -> throw new VerbsException(Errno.ENOSYS, "GET_OPTION: the kernel has none either");
            case CmAbi.JOIN_IP_MCAST -> cm.multicast.joinIp(id(ch, CmLayout.JoinIpMcast.ID.u32(b)), b, body);
            case CmAbi.JOIN_MCAST -> cm.multicast.join(id(ch, CmLayout.JoinMcast.ID.u32(b)), b, body);
            case CmAbi.LEAVE_MCAST -> cm.multicast.leave(ch, CmLayout.DestroyId.ID.u32(b));
            default -> throw new VerbsException(Errno.EINVAL, "rdma_cm command " + cmd + " does not exist");
        };
    }

    /** REJECT: its private data (at most what the struct holds) and reason. */
    private Wire.Out reject(Channel ch, ByteBuffer b, byte[] body) {
        int at = CmLayout.Reject.PRIVATE_DATA.offset();
        int len = Math.min(CmLayout.Reject.PRIVATE_DATA_LEN.u8(b), CmLayout.Reject.PRIVATE_DATA.bytes());
        return cm.exchange.reject(id(ch, CmLayout.Reject.ID.u32(b)), Arrays.copyOfRange(body, at, at + len),
                CmLayout.Reject.REASON.u8(b));
    }

    /** The commands that make, address and listen with an identifier. */
    private Wire.Out identifier(Channel ch, int cmd, ByteBuffer b, byte[] body) {
        return switch (cmd) {
            case CmAbi.CREATE_ID -> createId(ch, CmLayout.CreateId.UID.u64(b), CmLayout.CreateId.PS.u16(b),
                    CmLayout.CreateId.QP_TYPE.u8(b));
            case CmAbi.DESTROY_ID -> new Wire.Out().u32(cm.destroy(id(ch, CmLayout.DestroyId.ID.u32(b))));
            case CmAbi.BIND_IP -> cm.ports.bind(id(ch, CmLayout.BindIp.ID.u32(b)),
                    CmAbi.addr(body, CmLayout.BindIp.ADDR.offset(), "bind address"));
            case CmAbi.BIND -> {
                CmIb.sized(body, CmLayout.Bind.ADDR.offset(), CmLayout.Bind.ADDR_SIZE.u16(b), false, "bind: addr");
                yield cm.ports.bind(id(ch, CmLayout.Bind.ID.u32(b)), CmAbi.addr(body, CmLayout.Bind.ADDR.offset(),
                        "bind address"));
            }
            case CmAbi.RESOLVE_IP -> cm.resolve.resolveAddr(id(ch, CmLayout.ResolveIp.ID.u32(b)),
                    addrOrNone(body, CmLayout.ResolveIp.SRC_ADDR.offset()),
                    CmAbi.addr(body, CmLayout.ResolveIp.DST_ADDR.offset(), "destination"),
                    CmLayout.ResolveIp.TIMEOUT_MS.u32(b));
            case CmAbi.RESOLVE_ADDR -> resolveAddr2(ch, b, body);
            case CmAbi.RESOLVE_ROUTE -> cm.resolve.resolveRoute(id(ch, CmLayout.ResolveRoute.ID.u32(b)));
            case CmAbi.LISTEN -> cm.ports.listen(id(ch, CmLayout.Listen.ID.u32(b)), CmLayout.Listen.BACKLOG.u32(b));
            default -> throw new IllegalStateException("command " + cmd);
        };
    }

    /** RESOLVE_ADDR: RESOLVE_IP's successor, its addresses of any family with their sizes. */
    private Wire.Out resolveAddr2(Channel ch, ByteBuffer b, byte[] body) {
        int src = CmLayout.ResolveAddr.SRC_ADDR.offset(), dst = CmLayout.ResolveAddr.DST_ADDR.offset();
        int srcSize = CmLayout.ResolveAddr.SRC_SIZE.u16(b);
        CmIb.sized(body, src, srcSize, true, "resolve_addr: src_addr");
        CmIb.sized(body, dst, CmLayout.ResolveAddr.DST_SIZE.u16(b), false, "resolve_addr: dst_addr");
        return cm.resolve.resolveAddr(id(ch, CmLayout.ResolveAddr.ID.u32(b)), srcSize == 0 ? CmAbi.Addr.NONE
                : addrOrNone(body, src), CmAbi.addr(body, dst, "destination"), CmLayout.ResolveAddr.TIMEOUT_MS.u32(b));
    }

    /** The bytes of input command {@code cmd} takes (struct rdma_ucm_*), as the kernel checks them. */
    private static int inputSize(int cmd) {
        return switch (cmd) {
            case CmAbi.CREATE_ID -> CmLayout.CreateId.S.size;
            case CmAbi.DESTROY_ID -> CmLayout.DestroyId.S.size;
            case CmAbi.QUERY_ROUTE, CmAbi.QUERY -> CmLayout.Query.S.size;
            case CmAbi.INIT_QP_ATTR -> CmLayout.InitQpAttr.S.size;
            case CmAbi.MIGRATE_ID -> CmLayout.MigrateId.S.size;
            case CmAbi.BIND_IP -> CmLayout.BindIp.S.size;
            case CmAbi.RESOLVE_IP -> CmLayout.ResolveIp.S.size;
            case CmAbi.RESOLVE_ROUTE -> CmLayout.ResolveRoute.S.size;
            case CmAbi.LISTEN -> CmLayout.Listen.S.size;
            case CmAbi.NOTIFY -> CmLayout.Notify.S.size;
            case CmAbi.CONNECT -> CmLayout.Connect.RESERVED.end(); // older librdmacm sends no ECE
            case CmAbi.ACCEPT -> CmLayout.Accept.RESERVED.end();
            case CmAbi.REJECT -> CmLayout.Reject.S.size;
            case CmAbi.DISCONNECT -> CmLayout.Disconnect.S.size;
            case CmAbi.GET_EVENT -> CmLayout.GetEvent.S.size;
            case CmAbi.SET_OPTION -> CmLayout.SetOption.S.size;
            case CmAbi.BIND -> CmLayout.Bind.S.size;
            case CmAbi.RESOLVE_ADDR -> CmLayout.ResolveAddr.S.size;
            case CmAbi.JOIN_IP_MCAST -> CmLayout.JoinIpMcast.S.size;
            case CmAbi.JOIN_MCAST -> CmLayout.JoinMcast.S.size;
            case CmAbi.LEAVE_MCAST -> CmLayout.DestroyId.S.size; // the kernel's leave takes a destroy_id
            default -> 0;
        };
    }

    private static CmAbi.Addr addrOrNone(byte[] body, int off) {
        return CmAbi.family(body, off) == 0 ? CmAbi.Addr.NONE : CmAbi.addr(body, off, "source");
    }

    /** Identifier {@code handle} of this file, or EINVAL (ENOENT, as the kernel, for one that is not there). */
    private CmId id(Channel ch, int handle) {
        CmId id = cm.ids.get(handle);
        if (id == null) throw new VerbsException(Errno.ENOENT, "cm_id " + Integer.toUnsignedString(handle)
                + " does not exist");
        if (id.channel != ch) throw new VerbsException(Errno.EINVAL, "cm_id " + handle
                + " belongs to another rdma_cm file");
        return id;
    }

    private Wire.Out createId(Channel ch, long uid, int ps, int qpType) {
        int type = switch (ps) {
            case CmAbi.PS_TCP -> CmAbi.QPT_RC;
            case CmAbi.PS_UDP, CmAbi.PS_IPOIB -> CmAbi.QPT_UD;
            case CmAbi.PS_IB -> {
                // the IB port space takes the program's QP type, as the kernel's ucma_get_qp_type: XRC too
                if (qpType != CmAbi.QPT_RC && qpType != CmAbi.QPT_UC && qpType != CmAbi.QPT_UD
                        && qpType != CmAbi.QPT_XRC_INI && qpType != CmAbi.QPT_XRC_TGT)
                    throw new VerbsException(Errno.EINVAL, "create_id: qp_type " + qpType
                            + " is not RC, UC, UD, XRC_SEND (9) or XRC_RECV (10)");
                yield qpType;
            }
            default -> throw new VerbsException(Errno.EINVAL, "create_id: port space 0x" + Integer.toHexString(ps)
                    + " is none of RDMA_PS_TCP, _UDP, _IB, _IPOIB");
        };
        CmId id = cm.newId(ch, uid, ps, type);
        return new Wire.Out().u32(id.handle);
    }

    private Wire.Out getEvent(Channel ch) {
        Pending p = ch.queue.poll();
        if (p == null) throw new VerbsException(Errno.EAGAIN, "no event");
        p.id().reported++;
        cm.multicast.handedOut(p.resp());
        if (p.child() != null) p.id().backlogLeft++; // a request handed out frees its place in the backlog
        return new Wire.Out().bytes(p.resp());
    }

    private Wire.Out setOption(CmId id, int level, int name, Wire.In in) {
        byte[] v = in.bytes(in.items(in.read(WireLayout.OptionLength.class).optlen(), 1, "optlen"), "optval");
        int value = v.length >= 4 ? CmAbi.le(v).getInt(0) : v.length > 0 ? v[0] & 0xff : 0;
        if (level == 0 && name == 1) id.reuseAddr = value != 0; // RDMA_OPTION_ID_REUSEADDR
        else if (level == 0 && name == 3) id.ackTimeout = v.length > 0 ? v[0] & 0x1f : -1; // ACK_TIMEOUT
        else if (level == 0 && name == 2) { // AFONLY: before the bind only, as the kernel's rdma_set_afonly
            if (id.state != CmId.State.IDLE) throw new VerbsException(Errno.EINVAL, "set_option: AFONLY on cm_id "
                    + id.handle + ", which is " + id.state + ": it must be set before the bind");
            id.afonlyOption = value != 0;
        } else if (!(level == 0 && name == 0)) // TOS is taken and changes nothing here
            throw new VerbsException(level == 1 ? Errno.EINVAL : Errno.ENOSYS, "set_option: level " + level + " option "
                    + name + (level == 1 ? ": path records come from the fabric" : " does not exist"));
        return new Wire.Out();
    }

    /** MIGRATE_ID, written to the file {@code to}: identifier {@code handle} of file {@code from} moves there. */
    private Wire.Out migrate(int handle, Channel from, Channel to) {
        if (from == null || from.program != to.program)
            throw new VerbsException(Errno.EBADF, "migrate_id: the file given is not an rdma_cm file of this process");
        CmId id = id(from, handle);
        int reported = id.reported;
        List<Pending> moving = new ArrayList<>();
        for (var it = from.queue.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (p.id() == id) {
                it.remove();
                moving.add(p);
            }
        }
        id.channel = to;
        for (Pending p : moving) cm.queue(id, p.child(), ByteBuffer.wrap(p.resp()));
        id.reported = 0;
        return new Wire.Out().u32(reported);
    }
}
