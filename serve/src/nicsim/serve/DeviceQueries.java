package nicsim.serve;

import nicsim.abi.Cmd;
import nicsim.driver.Host;
import nicsim.firmware.FirmwareConfig;
import nicsim.firmware.Management;
import nicsim.verbs.Context;
import nicsim.verbs.DeviceAttr;
import nicsim.verbs.OdpCaps;
import nicsim.verbs.PortAttr;
import nicsim.verbs.PortState;

/** The replies to ibv_query_device(_ex) and ibv_query_port: the adapter as its profile describes it. */
final class DeviceQueries {
    private DeviceQueries() {}

    /** The node GUID nicsim gives adapter {@code node} (an OUI of none of the real vendors'). */
    static long nodeGuid(int node) { return Management.nodeGuid(node); }

    static Wire.Out device(Host host) {
        DeviceAttr a = Context.deviceAttr(host.driver());
        long guid = nodeGuid(host.index);
        // ibv_tm_caps: the profile's limits, for RC; none where the profile offers none
        FirmwareConfig.Tm tmCaps = host.config.firmware().tm();
        boolean tm = tmCaps != null;
        int tmTags = tm ? tmCaps.maxTags() : 0;
        int tmOps = tm ? tmCaps.maxOps() : 0;
        OdpCaps odp = a.odpCaps();
        return new Wire.Out(new WireLayout.QueryDeviceReply(guid, guid, a.maxMrSize(), host.memory.pageSize(),
                a.vendorId(), a.vendorPartId(), 0, a.maxQp(), a.maxQpWr(), a.maxSge(), a.maxCq(), a.maxCqe(),
                a.maxMr(), a.maxPd(), a.maxQpRdAtom(), a.maxQpInitRdAtom(), a.maxQp(), a.maxQpWr(), a.maxSge(),
                a.maxQp(), 1 /* IBV_ATOMIC_HCA */, 1, 0, a.fwVer(),
                // TMH, RVH and 32 bytes of the sender's
                tmTags, tmOps, tm ? 1 : 0, tm ? 64 : 0, tm ? 1 : 0 /* IBV_TM_CAP_RC */,
                odp.generalCaps(), odp.rcOdpCaps(), odp.ucOdpCaps(), odp.udOdpCaps(), odp.xrcOdpCaps(),
                // completion timestamps: the core clock, free-running over 64 bits
                host.adapter.coreClockKhz(), -1L, a.maxDmSize(),
                Cmd.MAX_MCAST_GROUPS, Cmd.MAX_MCAST_QP_ATTACH));
    }

    /** ibv_query_port's phys_state: LinkUp, or Polling while the link is down (IBA 14.2.5.6, as sysfs says). */
    static final int PHYS_LINK_UP = 5, PHYS_POLLING = 2;

    static Wire.Out port(Host host, int port) {
        PortAttr p = Context.portAttr(host.driver(), port);
        boolean active = p.state() == PortState.ACTIVE;
        return new Wire.Out(new WireLayout.QueryPortReply(p.state().value(), p.maxMtu().value(),
                p.activeMtu().value(), 1, 0, (int) p.maxMsgSz(), p.lid(), 1, 0, 1, 0, 2 /* 4X */, 32 /* EDR */,
                active ? PHYS_LINK_UP : PHYS_POLLING, 1 /* InfiniBand */, 1));
    }
}
