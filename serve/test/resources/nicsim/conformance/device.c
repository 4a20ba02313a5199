/* Device family: ibv_get_device_list, ibv_query_device(_ex), ibv_query_port, ibv_query_gid/pkey (their man pages). */
#include "conf.h"

int main(void) {
	int num = -1;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx;
	struct ibv_device_attr a;
	struct ibv_device_attr_ex x;
	struct ibv_port_attr p;
	union ibv_gid gid;
	uint16_t pkey = 0;
	check(list && num >= 1, "ibv_get_device_list lists the adapter", "num %d", num);
	if (!list || num < 1) return conf_end();
	check(strncmp(ibv_get_device_name(list[0]), "nicsim", 6) == 0, "its name is nicsim<node>", "%s",
	      ibv_get_device_name(list[0]));
	ibv_free_device_list(list);
	ctx = conf_open();

	EXPECT_RC(ibv_query_device(ctx, &a), 0, "ibv_query_device");
	check(a.phys_port_cnt == 1 && a.max_qp > 0 && a.max_cq > 0 && a.max_cqe > 0 && a.max_mr > 0 && a.max_pd > 0,
	      "limits are positive, one port", "ports %d, max_qp %d, max_cqe %d", a.phys_port_cnt, a.max_qp, a.max_cqe);
	check(a.atomic_cap == IBV_ATOMIC_HCA, "atomic_cap is IBV_ATOMIC_HCA", "%d", a.atomic_cap);
	memset(&x, 0xa5, sizeof x);
	EXPECT_RC(ibv_query_device_ex(ctx, NULL, &x), 0, "ibv_query_device_ex");
	check(x.phys_port_cnt_ex == 1, "query_device_ex fills phys_port_cnt_ex", "%u", x.phys_port_cnt_ex);
	check(x.orig_attr.max_cqe == a.max_cqe, "query_device_ex's orig_attr is query_device's", "max_cqe %d vs %d",
	      x.orig_attr.max_cqe, a.max_cqe);
	{
		struct ibv_query_device_ex_input in = { .comp_mask = 1 };
		EXPECT_RC(ibv_query_device_ex(ctx, &in, &x), EINVAL, "query_device_ex with an unknown input comp_mask: EINVAL");
	}

	EXPECT_RC(ibv_query_port(ctx, 1, &p), 0, "ibv_query_port 1");
	check(p.state == IBV_PORT_ACTIVE && p.lid != 0 && p.link_layer == IBV_LINK_LAYER_INFINIBAND,
	      "port 1 is ACTIVE on InfiniBand with a LID", "state %d, lid %u", p.state, p.lid);
	EXPECT_RC(ibv_query_port(ctx, 2, &p), EINVAL, "ibv_query_port 2 (no such port): EINVAL");
	EXPECT_RC(ibv_query_port(ctx, 0, &p), EINVAL, "ibv_query_port 0: EINVAL");
	EXPECT_RC(ibv_query_gid(ctx, 1, 0, &gid), 0, "ibv_query_gid 1/0");
	check(gid.raw[0] == 0xfe && gid.raw[1] == 0x80, "GID 0 is link-local", "%02x%02x", gid.raw[0], gid.raw[1]);
	EXPECT_RC(ibv_query_pkey(ctx, 1, 0, &pkey), 0, "ibv_query_pkey 1/0");
	check(pkey == htobe16(0xffff), "P_Key 0 is the default full-member key", "0x%x", be16toh(pkey));

	/* the advertised limits are the ones a program can reach */
	{
		struct ibv_cq *cq = ibv_create_cq(ctx, a.max_cqe, NULL, NULL, 0);
		check(cq && cq->cqe >= a.max_cqe, "a CQ of max_cqe entries can be created", "errno %d", errno);
		if (cq) EXPECT_RC(ibv_destroy_cq(cq), 0, "and destroyed");
		EXPECT_NULL(ibv_create_cq(ctx, a.max_cqe + 1, NULL, NULL, 0), EINVAL, "max_cqe + 1 entries: EINVAL");
		EXPECT_NULL(ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors), EINVAL,
			    "comp_vector == num_comp_vectors: EINVAL");
		EXPECT_NULL(ibv_create_cq(ctx, 16, NULL, NULL, -1), EINVAL, "comp_vector -1: EINVAL");
	}
	EXPECT_RC(ibv_close_device(ctx), 0, "ibv_close_device");
	return conf_end();
}
