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
    static long nodeGuid(int node) { return nicsim.firmware.Management.nodeGuid(node); }

    static Wire.Out device(Host host) {
        DeviceAttr a = Context.deviceAttr(host.driver());
        long guid = nodeGuid(host.index);
        Wire.Out out = new Wire.Out(WireLayout.QUERY_DEVICE_REPLY).u64("node_guid", guid).u64("sys_image_guid", guid)
                .u64("max_mr_size", a.maxMrSize()).u64("page_size_cap", host.memory.pageSize())
                .u32("vendor_id", a.vendorId()).u32("vendor_part_id", a.vendorPartId()).u32("hw_ver", 0)
                .u32("max_qp", a.maxQp()).u32("max_qp_wr", a.maxQpWr()).u32("max_sge", a.maxSge())
                .u32("max_cq", a.maxCq()).u32("max_cqe", a.maxCqe()).u32("max_mr", a.maxMr()).u32("max_pd", a.maxPd())
                .u32("max_qp_rd_atom", a.maxQpRdAtom()).u32("max_qp_init_rd_atom", a.maxQpInitRdAtom())
                .u32("max_srq", a.maxQp()).u32("max_srq_wr", a.maxQpWr()).u32("max_srq_sge", a.maxSge())
                .u32("max_ah", a.maxQp()).u32("atomic_cap", 1 /* IBV_ATOMIC_HCA */).u32("phys_port_cnt", 1)
                .u32("device_cap_flags", 0).text("fw_ver", a.fwVer());
        tagMatching(out, host);
        OdpCaps odp = a.odpCaps();
        out.u64("odp_general_caps", odp.generalCaps()).u32("odp_rc_caps", odp.rcOdpCaps())
                .u32("odp_uc_caps", odp.ucOdpCaps()).u32("odp_ud_caps", odp.udOdpCaps())
                .u32("odp_xrc_caps", odp.xrcOdpCaps());
        // completion timestamps: the core clock, free-running over 64 bits
        return out.u64("hca_core_clock", host.adapter.coreClockKhz()).u64("completion_timestamp_mask", -1L)
                .u64("max_dm_size", a.maxDmSize()).u32("max_mcast_grp", nicsim.abi.Cmd.MAX_MCAST_GROUPS)
                .u32("max_mcast_qp_attach", nicsim.abi.Cmd.MAX_MCAST_QP_ATTACH);
    }

    /** ibv_tm_caps: the profile's limits, for RC; none where the profile offers none. */
    private static void tagMatching(Wire.Out out, Host host) {
        boolean tm = host.profile.has("tm.max.tags");
        out.u32("tm_max_num_tags", tm ? host.profile.countInt("tm.max.tags") : 0)
                .u32("tm_max_ops", tm ? host.profile.countInt("tm.max.ops") : 0).u32("tm_max_sge", tm ? 1 : 0)
                // TMH, RVH and 32 bytes of the sender's
                .u32("tm_max_rndv_hdr_size", tm ? 64 : 0).u32("tm_flags", tm ? 1 : 0 /* IBV_TM_CAP_RC */);
    }

    static Wire.Out port(Host host, int port) {
        PortAttr p = Context.portAttr(host.driver(), port);
        return new Wire.Out(WireLayout.QUERY_PORT_REPLY).u32("state", p.state().value())
                .u32("max_mtu", p.maxMtu().value()).u32("active_mtu", p.activeMtu().value()).u32("gid_tbl_len", 1)
                .u32("port_cap_flags", 0).u32("max_msg_sz", p.maxMsgSz()).u32("lid", p.lid()).u32("sm_lid", 1)
                .u32("lmc", 0).u32("max_vl_num", 1).u32("sm_sl", 0).u32("active_width", 2 /* 4X */)
                .u32("active_speed", 32 /* EDR */).u32("phys_state", 5 /* LinkUp */)
                .u32("link_layer", 1 /* InfiniBand */).u32("pkey_tbl_len", 1);
    }
}
