/*
 * The device of a context under serve (either back end): its attributes and port as the
 * simulator's QUERY_DEVICE and QUERY_PORT give them, its core clock, and the simulation's time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <endian.h>

#include "nicsim-provider.h"

/* Whether a caller's struct of attr_size bytes reaches past field f of struct ibv_device_attr_ex. */
#define HAS_EX_FIELD(attr_size, f) \
	((attr_size) >= offsetof(struct ibv_device_attr_ex, f) + sizeof(((struct ibv_device_attr_ex *)0)->f))

static void device_attr(struct ibv_device_attr *a, const struct nicsim_wire_query_device_reply *r) {
	a->node_guid = htobe64(r->node_guid); /* a GUID is kept in network order */
	a->sys_image_guid = htobe64(r->sys_image_guid);
	a->max_mr_size = r->max_mr_size;
	a->page_size_cap = r->page_size_cap;
	a->vendor_id = r->vendor_id;
	a->vendor_part_id = r->vendor_part_id;
	a->hw_ver = r->hw_ver;
	a->max_qp = (int)r->max_qp;
	a->max_qp_wr = (int)r->max_qp_wr;
	a->max_sge = (int)r->max_sge;
	a->max_cq = (int)r->max_cq;
	a->max_cqe = (int)r->max_cqe;
	a->max_mr = (int)r->max_mr;
	a->max_pd = (int)r->max_pd;
	a->max_qp_rd_atom = (int)r->max_qp_rd_atom;
	a->max_qp_init_rd_atom = (int)r->max_qp_init_rd_atom;
	a->max_res_rd_atom = a->max_qp * a->max_qp_rd_atom;
	a->max_srq = (int)r->max_srq;
	a->max_srq_wr = (int)r->max_srq_wr;
	a->max_srq_sge = (int)r->max_srq_sge;
	a->max_ah = (int)r->max_ah;
	a->max_mcast_grp = (int)r->max_mcast_grp;
	a->max_mcast_qp_attach = (int)r->max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = a->max_mcast_grp * a->max_mcast_qp_attach;
	a->atomic_cap = (enum ibv_atomic_cap)r->atomic_cap;
	a->phys_port_cnt = (uint8_t)r->phys_port_cnt;
	a->device_cap_flags = r->device_cap_flags;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 16;
	memcpy(a->fw_ver, r->fw_ver, sizeof(a->fw_ver) < sizeof(r->fw_ver) ? sizeof(a->fw_ver) : sizeof(r->fw_ver));
	a->fw_ver[sizeof(a->fw_ver) - 1] = 0;
}

/* The extended attributes, as far as the caller's struct of attr_size bytes reaches. */
static void device_attr_ex(struct ibv_device_attr_ex *x, size_t attr_size,
			   const struct nicsim_wire_query_device_reply *r) {
	if (HAS_EX_FIELD(attr_size, phys_port_cnt_ex)) x->phys_port_cnt_ex = r->phys_port_cnt;
	if (HAS_EX_FIELD(attr_size, tm_caps)) {
		x->tm_caps.max_num_tags = r->tm_max_num_tags;
		x->tm_caps.max_ops = r->tm_max_ops;
		x->tm_caps.max_sge = r->tm_max_sge;
		x->tm_caps.max_rndv_hdr_size = r->tm_max_rndv_hdr_size;
		x->tm_caps.flags = r->tm_flags;
	}
	if (HAS_EX_FIELD(attr_size, odp_caps)) {
		x->odp_caps.general_caps = r->odp_general_caps;
		x->odp_caps.per_transport_caps.rc_odp_caps = r->odp_rc_caps;
		x->odp_caps.per_transport_caps.uc_odp_caps = r->odp_uc_caps;
		x->odp_caps.per_transport_caps.ud_odp_caps = r->odp_ud_caps;
	}
	if (HAS_EX_FIELD(attr_size, xrc_odp_caps)) x->xrc_odp_caps = r->odp_xrc_caps;
	if (HAS_EX_FIELD(attr_size, hca_core_clock)) {
		x->hca_core_clock = r->hca_core_clock;
		x->completion_timestamp_mask = r->completion_timestamp_mask;
	}
	if (HAS_EX_FIELD(attr_size, max_dm_size)) x->max_dm_size = r->max_dm_size;
}

int nicsim_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size) {
	struct msg m = request(NICSIM_OP_QUERY_DEVICE);
	struct nicsim_wire_query_device_reply r;
	int rc;
	(void)input;
	if (attr_size < sizeof(attr->orig_attr)) { done(&m); return EINVAL; }
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); return rc; }
	GET(&m, r);
	rc = m.failed ? EIO : 0;
	done(&m);
	if (rc) return rc;
	memset(attr, 0, attr_size);
	device_attr(&attr->orig_attr, &r);
	device_attr_ex(attr, attr_size, &r);
	return 0;
}

uint64_t nicsim_clock_khz(struct ibv_context *c) {
	struct nicsim_context *ctx = to_nctx(c);
	if (!ctx->clock_khz) {
		struct ibv_device_attr_ex a;
		/* the context's own query: serve's, or the kernel driver's (which reports no clock: 0) */
		if (!ibv_query_device_ex(c, NULL, &a)) ctx->clock_khz = a.hca_core_clock;
	}
	return ctx->clock_khz;
}

/* ibv_query_rt_values_ex: the adapter's free-running clock now, in core cycles (tv_nsec, as mlx5 gives it). */
int nicsim_query_rt_values(struct ibv_context *c, struct ibv_values_ex *values) {
	uint64_t khz = nicsim_clock_khz(c);
	int64_t ps;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK) return EINVAL;
	if (!khz) return EIO;
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) return 0;
	ps = nicsim_sim_now_ps_of(to_nctx(c));
	if (ps < 0) return EIO;
	values->raw_clock.tv_sec = 0;
	/* cycles of the core clock, whose period in ps is 10^9 / kHz */
	values->raw_clock.tv_nsec = (long)((uint64_t)ps / (1000000000ull / khz));
	return 0;
}

int nicsim_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a) {
	struct msg m = request(NICSIM_OP_QUERY_PORT);
	struct nicsim_wire_query_port_request q = { .port = port };
	struct nicsim_wire_query_port_reply r;
	int rc;
	PUT(&m, q);
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); return rc; }
	GET(&m, r);
	rc = m.failed ? EIO : 0;
	done(&m);
	if (rc) return rc;
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)r.state;
	a->max_mtu = (enum ibv_mtu)r.max_mtu;
	a->active_mtu = (enum ibv_mtu)r.active_mtu;
	a->gid_tbl_len = (int)r.gid_tbl_len;
	a->port_cap_flags = r.port_cap_flags;
	a->max_msg_sz = r.max_msg_sz;
	a->lid = (uint16_t)r.lid;
	a->sm_lid = (uint16_t)r.sm_lid;
	a->lmc = (uint8_t)r.lmc;
	a->max_vl_num = (uint8_t)r.max_vl_num;
	a->sm_sl = (uint8_t)r.sm_sl;
	a->active_width = (uint8_t)r.active_width;
	a->active_speed = (uint8_t)r.active_speed;
	a->phys_state = (uint8_t)r.phys_state;
	a->link_layer = (uint8_t)r.link_layer;
	a->pkey_tbl_len = (uint16_t)r.pkey_tbl_len;
	return 0;
}

int64_t nicsim_sim_now_ps_of(struct nicsim_context *ctx) {
	struct msg m = request(NICSIM_OP_TIME);
	struct nicsim_wire_time r;
	if (call(ctx, &m)) { done(&m); return -1; }
	GET(&m, r);
	done(&m);
	return (int64_t)r.ps;
}
