/*
 * XRC domains serve keeps for a session, whatever its back end: one of a file is the node's (one per
 * inode, as the kernel keeps them), which the hw back end's contexts share with the java back end's;
 * one of the context's alone is the java back end's (the hw back end makes its own by ALLOC_XRCD).
 * Below both back ends' files: each calls here, this calls neither.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "nicsim-backend.h"

/* The session's XRC domain: a file's (the node's, one per inode, as the kernel keeps them) or, file NULL, its own. */
struct ibv_xrcd *nicsim_serve_open_xrcd(struct ibv_context *c, const struct stat *file, int oflags) {
	struct msg m = request(NICSIM_OP_OPEN_XRCD);
	struct nicsim_wire_open_xrcd_request q = {
		.file = file != NULL, .dev = file ? (uint64_t)file->st_dev : 0,
		.ino = file ? (uint64_t)file->st_ino : 0, .oflags = (uint32_t)oflags,
	};
	struct nicsim_wire_open_xrcd_reply r;
	struct nicsim_ibv_xrcd *x;
	int rc;
	PUT(&m, q);
	x = calloc(1, sizeof(*x));
	if (!x) { done(&m); errno = ENOMEM; return NULL; }
	rc = call(to_nctx(c), &m);
	if (rc) { done(&m); free(x); errno = rc; return NULL; }
	GET(&m, r);
	x->vxrcd.handle = r.handle;
	x->xrcdn = r.xrcdn;
	x->vxrcd.xrcd.context = c;
	done(&m);
	return &x->vxrcd.xrcd;
}

int nicsim_serve_close_xrcd(struct nicsim_ibv_xrcd *x) {
	int rc = simple(x->vxrcd.xrcd.context, NICSIM_OP_CLOSE_XRCD, x->vxrcd.handle);
	if (!rc) free(x);
	return rc;
}
