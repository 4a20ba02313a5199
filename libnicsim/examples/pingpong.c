/*
 * pingpong: SEND ping-pong between the adapters of two nodes, driven from one process through
 * libnicsim's queues (no libibverbs), timed in simulated time as ib_send_lat times it: messages of up
 * to 44 bytes go inline in the WQE, as ib_send_lat sends small ones.
 *
 *   ./nicsim serve --nodes 2 &   then   ./nicsim attach -- pingpong [iterations] [bytes]
 *
 * Each message carries its iteration number, checked on arrival. Exits 0 when all arrived intact.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim/device.h"
#include "nicsim/queues.h"

struct side {
	struct nicsim_dev *dev;
	uint32_t uar, pd;
	uint8_t *buf;
	uint64_t buf_iova;
	struct nicsim_mr mr;
	struct nicsim_cq cq;
	struct nicsim_qp qp;
};

#define RECVS_AHEAD 16

static uint64_t now_ps;

static void check(const char *what, int rc) {
	if (rc < 0) {
		fprintf(stderr, "pingpong: %s: %s (syndrome %u, %s)\n", what, strerror(-rc), nicsim_last_syndrome(),
			nicsim_syndrome_name(nicsim_last_syndrome()));
		exit(1);
	}
}

static void up(struct side *s, int node) {
	check("open", nicsim_open(&s->dev, node));
	check("probe", nicsim_probe(s->dev));
	check("ALLOC_UAR", nicsim_alloc_uar(s->dev, &s->uar));
	check("ALLOC_PD", nicsim_alloc_pd(s->dev, &s->pd));
	s->buf = nicsim_dma_alloc(s->dev, 8192, &s->buf_iova);
	if (!s->buf)
		check("DMA memory", -errno);
	check("CREATE_MKEY", nicsim_mr_create(s->dev, s->pd, s->buf, s->buf_iova, 8192, NICSIM_ACCESS_LOCAL_WRITE,
					      &s->mr));
	check("CREATE_CQ", nicsim_cq_create(s->dev, s->uar, 6, 1, &s->cq));
	check("CREATE_QP", nicsim_qp_create(s->dev, NICSIM_QPT_RC, s->pd, &s->cq, &s->cq, s->uar, 6, 6, &s->qp));
}

/* The next completion of side `s`, waiting on its device (time moves only while we wait). */
static struct nicsim_wc next(struct side *s) {
	struct nicsim_wc wc;
	uint32_t vectors[8];
	while (nicsim_cq_poll(&s->cq, &wc, 1) == 0)
		check("wait", nicsim_wait(s->dev, 1000000000ull, vectors, 8, &now_ps));
	if (wc.opcode == NICSIM_CQE_REQ_ERR || wc.opcode == NICSIM_CQE_RESP_ERR) {
		fprintf(stderr, "pingpong: error completion on QP %u: syndrome 0x%x\n", wc.qpn, wc.syndrome);
		exit(1);
	}
	return wc;
}

int main(int argc, char **argv) {
	int iters = argc > 1 ? atoi(argv[1]) : 1000;
	uint32_t size = argc > 2 ? (uint32_t)atoi(argv[2]) : 8;
	if (iters < 2 || size < 4 || size > 4096) {
		fprintf(stderr, "usage: pingpong [iterations >= 2] [bytes 4..4096]\n");
		return 2;
	}
	struct side s[2];
	up(&s[0], 0);
	up(&s[1], 1);
	check("connect", nicsim_qp_connect(&s[0].qp, s[1].qp.qpn, nicsim_caps(s[1].dev)->lid));
	check("connect", nicsim_qp_connect(&s[1].qp, s[0].qp.qpn, nicsim_caps(s[0].dev)->lid));
	for (int i = 0; i < 2; i++) /* receives ahead, so the adapter has them at hand, as ib_send_lat's rx depth */
		for (int r = 0; r < RECVS_AHEAD; r++)
			check("post_recv", nicsim_post_recv(&s[i].qp, &s[i].mr, s[i].buf + 4096, 4096));
	check("wait", nicsim_wait(s[0].dev, 0, NULL, 0, &now_ps));
	uint64_t start = now_ps;
	int sends[2] = {0, 0};
	for (int i = 0; i < iters; i++) {
		struct side *from = &s[i & 1], *to = &s[(i & 1) ^ 1];
		memcpy(from->buf, &i, sizeof(i));
		memset(from->buf + sizeof(i), 'a' + i % 26, size - sizeof(i));
		int flags = NICSIM_SEND_SIGNALED | (size <= 44 ? NICSIM_SEND_INLINE : 0); /* small ones inline */
		check("post_send", nicsim_post_send(&from->qp, NICSIM_WQE_OP_SEND, &from->mr, from->buf, size, 0, 0, flags));
		sends[i & 1]++;
		struct nicsim_wc wc;
		do { /* the receive, skipping the send completions of `to`'s own earlier pings */
			wc = next(to);
		} while (wc.opcode == NICSIM_CQE_REQ && sends[(i & 1) ^ 1]--);
		int got;
		memcpy(&got, to->buf + 4096, sizeof(got));
		if (wc.opcode != NICSIM_CQE_RESP_SEND || wc.byte_len != size || got != i ||
		    to->buf[4096 + size - 1] != 'a' + i % 26) {
			fprintf(stderr, "pingpong: message %d arrived as %d (%u bytes, CQE opcode %u)\n", i, got, wc.byte_len,
				wc.opcode);
			return 1;
		}
		check("post_recv", nicsim_post_recv(&to->qp, &to->mr, to->buf + 4096, 4096));
	}
	double one_way = (double)(now_ps - start) / iters / 1e6;
	printf("%d messages of %u bytes, each checked: intact\n", iters, size);
	printf("one way, mean: %.3f us simulated (ib_send_lat's t_avg)\n", one_way);
	for (int i = 0; i < 2; i++) {
		while (sends[i]-- > 0) /* the last send completions */
			next(&s[i]);
		check("DESTROY_QP", nicsim_qp_destroy(&s[i].qp));
		check("DESTROY_CQ", nicsim_cq_destroy(&s[i].cq));
		check("DESTROY_MKEY", nicsim_destroy(s[i].dev, NICSIM_CMD_DESTROY_MKEY, s[i].mr.key));
		check("DEALLOC_PD", nicsim_destroy(s[i].dev, NICSIM_CMD_DEALLOC_PD, s[i].pd));
		check("DEALLOC_UAR", nicsim_destroy(s[i].dev, NICSIM_CMD_DEALLOC_UAR, s[i].uar));
		check("TEARDOWN_HCA", nicsim_teardown(s[i].dev));
		nicsim_close(s[i].dev);
	}
	return 0;
}
