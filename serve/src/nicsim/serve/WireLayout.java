package nicsim.serve;

import java.util.List;
import java.util.Locale;

/**
 * The fixed parts of the messages, field by field, written once: the simulator reads and writes
 * them through these lists ({@link Wire.In#expect}, {@link Wire.Out#Out(WireLayout)}), which check
 * every field's name and width in order, and the provider's C structs are generated from them
 * ({@link #cStructs}). Neither side can move, add or drop a field without the other.
 */
enum WireLayout {
    QUERY_DEVICE_REPLY(u64("node_guid"), u64("sys_image_guid"), u64("max_mr_size"), u64("page_size_cap"),
            u32("vendor_id"), u32("vendor_part_id"), u32("hw_ver"), u32("max_qp"), u32("max_qp_wr"), u32("max_sge"),
            u32("max_cq"), u32("max_cqe"), u32("max_mr"), u32("max_pd"), u32("max_qp_rd_atom"),
            u32("max_qp_init_rd_atom"), u32("max_srq"), u32("max_srq_wr"), u32("max_srq_sge"), u32("max_ah"),
            u32("atomic_cap"), u32("phys_port_cnt"), u32("device_cap_flags"), text("fw_ver"),
            u32("tm_max_num_tags"), u32("tm_max_ops"), u32("tm_max_sge"), u32("tm_max_rndv_hdr_size"),
            u32("tm_flags"), u64("odp_general_caps"), u32("odp_rc_caps"), u32("odp_uc_caps"), u32("odp_ud_caps"),
            u32("odp_xrc_caps"), u64("hca_core_clock"), u64("completion_timestamp_mask"), u64("max_dm_size"),
            u32("max_mcast_grp"), u32("max_mcast_qp_attach")),
    QUERY_PORT_REPLY(u32("state"), u32("max_mtu"), u32("active_mtu"), u32("gid_tbl_len"), u32("port_cap_flags"),
            u32("max_msg_sz"), u32("lid"), u32("sm_lid"), u32("lmc"), u32("max_vl_num"), u32("sm_sl"),
            u32("active_width"), u32("active_speed"), u32("phys_state"), u32("link_layer"), u32("pkey_tbl_len")),
    CREATE_QP_REQUEST(u32("pd"), u32("xrcd"), u32("qp_type"), u32("send_cq"), u32("recv_cq"), u32("srq"),
            u32("max_send_wr"), u32("max_recv_wr"), u32("max_send_sge"), u32("max_recv_sge"), u32("max_inline_data"),
            u32("sq_sig_all"), u32("dc_type"), u64("dct_access_key")),
    /** create_qp's reply: the QP's handle and number, then what it got ({@link #QP_CAPS}). */
    CREATE_QP_REPLY(u32("handle"), u32("qp_num")),
    /** What a QP got of the capacities asked for (struct ibv_qp_cap): create_qp's reply and query_qp's carry it. */
    QP_CAPS(u32("max_send_wr"), u32("max_recv_wr"), u32("max_send_sge"), u32("max_recv_sge"),
            u32("max_inline_data")),
    /** struct ibv_qp_attr's fields that modify_qp takes and query_qp gives, in both directions. */
    QP_ATTR(u32("qp_state"), u32("cur_qp_state"), u32("path_mtu"), u32("qkey"), u32("rq_psn"), u32("sq_psn"),
            u32("dest_qp_num"), u32("qp_access_flags"), u32("pkey_index"), u32("port_num"), u32("max_rd_atomic"),
            u32("max_dest_rd_atomic"), u32("min_rnr_timer"), u32("timeout"), u32("retry_cnt"), u32("rnr_retry"),
            u32("sq_draining"), u32("ah_dlid"), u32("ah_sl"), u32("ah_src_path_bits"), u32("ah_static_rate"),
            u32("ah_is_global"), u32("ah_port_num")),
    /** What query_qp gives last, after the attributes and the {@link #QP_CAPS}: the rest of its init attributes. */
    QP_INIT_ATTR(u32("sq_sig_all")),
    CREATE_SRQ_REQUEST(u32("pd"), u32("max_wr"), u32("max_sge"), u32("srq_limit"), u32("srq_type"), u32("xrcd"),
            u32("cq"), u32("tm_max_num_tags"), u32("tm_max_ops")),
    CREATE_SRQ_REPLY(u32("handle"), u32("max_wr"), u32("max_sge"), u32("srq_num")),
    /** A send work request's fixed part: its header and its destination (UD address, XRC SRQ, DC target). */
    SEND_WR(u64("wr_id"), u32("opcode"), u32("send_flags"), u32("imm_data"), u64("remote_addr"), u32("rkey"),
            u64("compare_add"), u64("swap"), u32("ah"), u32("remote_qpn"), u32("remote_qkey"), u32("invalidate_rkey"),
            u32("remote_srqn"), u32("dc_ah"), u32("dc_remote_dctn"), u64("dc_remote_dc_key")),
    /** One scatter/gather entry (struct ibv_sge). */
    SGE(u64("addr"), u32("length"), u32("lkey")),
    /** A send work request's layout UMR (mkey NONE: none), its entries following. */
    UMR(u32("mkey"), u32("access"), u32("repeat"), u32("entries")),
    /** One entry of a layout UMR. */
    UMR_ENTRY(u64("addr"), u32("length"), u32("lkey"), u32("skip")),
    /** A send work request's window bind (mw NONE: none). */
    WINDOW_BIND(u32("mw"), u32("rkey"), u32("mr"), u64("addr"), u64("length"), u32("access")),
    /** One completion of a poll_cq reply (struct ibv_wc, with the tag-matching and timestamp extras). */
    WORK_COMPLETION(u64("wr_id"), u32("status"), u32("opcode"), u32("vendor_err"), u32("byte_len"), u32("imm_data"),
            u32("qp_num"), u32("src_qp"), u32("wc_flags"), u32("pkey_index"), u32("slid"), u32("sl"),
            u32("dlid_path_bits"), u64("tm_tag"), u32("tm_priv"), u64("timestamp"));

    /** A field's width on the wire. */
    enum Kind {
        U32(4, "uint32_t %s"), U64(8, "uint64_t %s"), TEXT(TEXT_BYTES, "char %s[" + TEXT_BYTES + "]");

        final int bytes;
        final String cDeclaration;

        Kind(int bytes, String cDeclaration) {
            this.bytes = bytes;
            this.cDeclaration = cDeclaration;
        }
    }

    /** The bytes of a TEXT field: a NUL-padded string, as struct ibv_device_attr's fw_ver. */
    static final int TEXT_BYTES = 64;

    record Field(String name, Kind kind) {}

    final List<Field> fields;

    WireLayout(Field... fields) { this.fields = List.of(fields); }

    private static Field u32(String name) { return new Field(name, Kind.U32); }

    private static Field u64(String name) { return new Field(name, Kind.U64); }

    private static Field text(String name) { return new Field(name, Kind.TEXT); }

    /** Its size on the wire. */
    int bytes() { return fields.stream().mapToInt(f -> f.kind().bytes).sum(); }

    /** The C struct's name: struct nicsim_wire_query_device_reply, say. */
    String cName() { return "nicsim_wire_" + name().toLowerCase(Locale.ROOT); }

    /** Every layout as a packed C struct, with its size asserted. */
    static String cStructs() {
        StringBuilder b = new StringBuilder();
        for (WireLayout l : values()) {
            b.append("struct ").append(l.cName()).append(" {\n");
            for (Field f : l.fields)
                b.append('\t').append(String.format(f.kind().cDeclaration, f.name())).append(";\n");
            b.append("} __attribute__((packed));\n_Static_assert(sizeof(struct ").append(l.cName()).append(") == ")
                    .append(l.bytes()).append(", \"").append(l.cName()).append("\");\n");
        }
        return b.toString();
    }
}
