package nicsim.serve;

import nicsim.driver.Host;
import nicsim.verbs.Context;
import nicsim.verbs.DeviceAttr;
import nicsim.verbs.OdpCaps;
import nicsim.verbs.PortAttr;

/** The replies to ibv_query_device(_ex) and ibv_query_port: the adapter as its profile describes it. */
final class DeviceQueries {
    private DeviceQueries() {}

    /** The node GUID nicsim gives adapter {@code node} (an OUI of none of the real vendors'). */
    static long nodeGuid(int node) { return 0x0002_1de5_0000_0000L | (node + 1); }

    static Wire.Out device(Context ctx, Host host) {
        DeviceAttr a = ctx.queryDevice();
        long guid = nodeGuid(host.index);
        Wire.Out out = new Wire.Out().u64(guid).u64(guid).u64(a.maxMrSize()).u64(host.memory.pageSize())
                .u32(a.vendorId()).u32(a.vendorPartId()).u32(0).u32(a.maxQp()).u32(a.maxQpWr()).u32(a.maxSge())
                .u32(a.maxCq()).u32(a.maxCqe()).u32(a.maxMr()).u32(a.maxPd()).u32(a.maxQpRdAtom())
                .u32(a.maxQpInitRdAtom()).u32(a.maxQp()).u32(a.maxQpWr()).u32(a.maxSge()).u32(a.maxQp())
                .u32(1 /* IBV_ATOMIC_HCA */).u32(1).u32(0).string(a.fwVer());
        tagMatching(out, host);
        OdpCaps odp = a.odpCaps();
        out.u64(odp.generalCaps()).u32(odp.rcOdpCaps()).u32(odp.ucOdpCaps()).u32(odp.udOdpCaps()).u32(odp.xrcOdpCaps());
        // completion timestamps: the core clock, free-running over 64 bits
        return out.u64(host.adapter.coreClockKhz()).u64(-1L).u64(a.maxDmSize());
    }

    /** ibv_tm_caps: the profile's limits, for RC; none where the profile offers none. */
    private static void tagMatching(Wire.Out out, Host host) {
        boolean tm = host.profile.has("tm.max.tags");
        out.u32(tm ? host.profile.countInt("tm.max.tags") : 0).u32(tm ? host.profile.countInt("tm.max.ops") : 0)
                .u32(tm ? 1 : 0 /* max_sge */)
                .u32(tm ? 64 : 0 /* max_rndv_hdr_size: TMH, RVH and 32 bytes of the sender's */)
                .u32(tm ? 1 : 0 /* IBV_TM_CAP_RC */);
    }

    static Wire.Out port(Context ctx, int port) {
        PortAttr p = ctx.queryPort(port);
        return new Wire.Out().u32(p.state().value()).u32(p.maxMtu().value()).u32(p.activeMtu().value())
                .u32(1 /* gids */).u32(0 /* port_cap_flags */).u32(p.maxMsgSz()).u32(p.lid()).u32(1)
                .u32(0).u32(1).u32(0).u32(2 /* 4X */).u32(32 /* EDR */).u32(5 /* LinkUp */).u32(1 /* InfiniBand */)
                        .u32(1);
    }
}
