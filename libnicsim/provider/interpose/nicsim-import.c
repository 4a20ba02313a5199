/*
 * Sharing a context between processes, as the kernel shares a uverbs file (ibv_import_device(3),
 * ibv_import_pd(3), ibv_import_mr(3), ibv_import_dm(3)):
 *   ibv_import_device  is interposed (LD_PRELOAD) over libibverbs' own, which would ask the kernel
 *                      through the command file. The file given is a duplicate (dup, SCM_RIGHTS) of
 *                      some context's; the simulator lists the contexts open and the process and
 *                      file number of each, and kcmp(2) says which one the file is. The device is
 *                      then opened as usual, except that the new context joins that context's
 *                      session instead of making one, and owns the file given from then on;
 *   ibv_import_*       name an object of the shared context by its handle: the simulator answers
 *                      ENOENT if there is none, EINVAL if it is of another kind (as uverbs does);
 *   ibv_unimport_*     free this process's record of the object only: the object stays.
 * An imported context's async file stays quiet: the kernel writes a context's events to the first
 * async file it was given, the opener's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nicsim-hw.h"
#include "nicsim/device.h"

__thread const struct nicsim_import *nicsim_importing;

/* The context whose command file cmd_fd is a duplicate of: 0, or ENOENT when none is (or EIO). */
static int find_context(int cmd_fd, struct nicsim_import *found) {
	struct msg m = request(NICSIM_OP_CONTEXTS);
	int fd = connect_simulator(), rc = EIO;
	uint32_t n;
	if (fd < 0) { done(&m); return EIO; }
	rc = nicsim_exchange(fd, &m);
	close(fd);
	if (rc < 0) rc = EIO;
	if (rc) { done(&m); return rc; }
	rc = ENOENT;
	n = get32(&m);
	for (uint32_t i = 0; i < n && !m.failed; i++) {
		struct nicsim_wire_context_entry e; /* its node unread: the session is joined wherever it is */
		GET(&m, e);
		if (rc == ENOENT && !m.failed
		    && syscall(SYS_kcmp, getpid(), (pid_t)e.pid, KCMP_FILE, cmd_fd, (int)e.cmd_fd) == 0) {
			found->session = e.session;
			found->pid = e.pid;
			rc = 0;
		}
	}
	done(&m);
	return rc;
}

/* nicsim's device in list (attach shows a program its node's, named nicsim0 on every node). */
static struct ibv_device *device_of(struct ibv_device **list) {
	for (int i = 0; list[i]; i++)
		if (!strncmp(ibv_get_device_name(list[i]), "nicsim", 6)) return list[i];
	return list[0];
}

__attribute__((visibility("default")))
struct ibv_context *ibv_import_device(int cmd_fd) {
	struct nicsim_import from;
	struct ibv_device **list;
	struct ibv_context *c;
	struct stat st;
	int rc;
	if (fstat(cmd_fd, &st) || !S_ISCHR(st.st_mode)) { errno = EINVAL; return NULL; }
	rc = find_context(cmd_fd, &from);
	if (rc == ENOENT) { /* not a nicsim context's file: perhaps another device's */
		struct ibv_context *(*f)(int) = dlvsym(RTLD_NEXT, "ibv_import_device", "IBVERBS_1.10");
		if (f) return f(cmd_fd);
	}
	if (rc) { errno = rc; return NULL; }
	list = ibv_get_device_list(NULL);
	if (!list || !list[0]) {
		if (list) ibv_free_device_list(list);
		errno = ENODEV;
		return NULL;
	}
	nicsim_importing = &from;
	c = ibv_open_device(device_of(list));
	nicsim_importing = NULL;
	rc = errno;
	ibv_free_device_list(list);
	if (!c) { errno = rc; return NULL; }
	close(c->cmd_fd); /* the context owns the file it was given: ibv_close_device closes it */
	c->cmd_fd = cmd_fd;
	return c;
}

/* Asks whether the shared context has an object of kind op under handle: 0 with the reply in *m, or the errno. */
static int named(struct ibv_context *c, uint32_t op, uint32_t handle, struct msg *m) {
	struct nicsim_wire_handle q = { .handle = handle };
	int rc;
	*m = request(op);
	PUT(m, q);
	rc = call(to_nctx(c), m);
	if (rc) done(m);
	return rc;
}

/* Whether the C driver's user context (this process's, imported) has an object of kind destroy under handle. */
static int hw_named(struct ibv_context *c, uint32_t destroy, uint32_t handle, uint64_t *length) {
	struct nicsim_hw *hw = hw_of(c);
	nicsim_hw_lock(hw);
	int rc = nicsim_user_import(hw->dev, destroy, handle, length);
	pthread_mutex_unlock(&hw->lock);
	return -rc;
}

struct ibv_pd *nicsim_import_pd(struct ibv_context *c, uint32_t handle) {
	struct nicsim_ibv_pd *pd;
	struct msg m;
	uint64_t length;
	int rc = to_nctx(c)->hw ? hw_named(c, NICSIM_CMD_DEALLOC_PD, handle, &length)
				: named(c, NICSIM_OP_IMPORT_PD, handle, &m);
	if (rc) { errno = rc; return NULL; }
	if (!to_nctx(c)->hw) done(&m);
	pd = calloc(1, sizeof(*pd));
	if (!pd) { errno = ENOMEM; return NULL; }
	pd->handle = handle;
	pd->pd.handle = handle;
	pd->pd.context = c;
	atomic_init(&pd->refcount, 1);
	return &pd->pd;
}

void nicsim_unimport_pd(struct ibv_pd *pd) { free(to_npd(pd)); }

/* As ibv_cmd_query_mr leaves an imported MR: its keys and length, no address (the importer knows it, if anyone). */
struct ibv_mr *nicsim_import_mr(struct ibv_pd *pd, uint32_t handle) {
	struct nicsim_ibv_mr *mr;
	struct msg m;
	uint64_t length = 0;
	if (to_nctx(pd->context)->hw) { /* the C driver's MR handle is its key */
		int rc = hw_named(pd->context, NICSIM_CMD_DESTROY_MKEY, handle, &length);
		if (rc || !(mr = calloc(1, sizeof(*mr)))) { errno = rc ? rc : ENOMEM; return NULL; }
		mr->handle = mr->vmr.ibv_mr.handle = mr->vmr.ibv_mr.lkey = mr->vmr.ibv_mr.rkey = handle;
		mr->vmr.ibv_mr.length = length;
		mr->vmr.ibv_mr.context = pd->context;
		mr->vmr.ibv_mr.pd = pd;
		mr->vmr.mr_type = IBV_MR_TYPE_IMPORTED_MR;
		return &mr->vmr.ibv_mr;
	}
	struct nicsim_wire_import_mr_reply r;
	int rc = named(pd->context, NICSIM_OP_IMPORT_MR, handle, &m);
	if (rc) { errno = rc; return NULL; }
	mr = calloc(1, sizeof(*mr));
	if (!mr) { done(&m); errno = ENOMEM; return NULL; }
	GET(&m, r);
	mr->handle = handle;
	mr->vmr.ibv_mr.handle = handle;
	mr->vmr.ibv_mr.lkey = r.lkey;
	mr->vmr.ibv_mr.rkey = r.rkey;
	mr->vmr.ibv_mr.length = r.length;
	mr->vmr.ibv_mr.context = pd->context;
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = NULL;
	mr->vmr.mr_type = IBV_MR_TYPE_IMPORTED_MR;
	done(&m);
	return &mr->vmr.ibv_mr;
}

void nicsim_unimport_mr(struct ibv_mr *mr) { free(to_nmr(mr)); }

struct ibv_dm *nicsim_import_dm(struct ibv_context *c, uint32_t handle) {
	struct ibv_dm *dm;
	struct msg m;
	if (to_nctx(c)->hw) { /* the C driver's device memory handle is its offset */
		uint64_t length;
		int rc = hw_named(c, NICSIM_CMD_DEALLOC_DM, handle, &length);
		if (rc) { errno = rc; return NULL; }
		return nicsim_hw_dm_import(c, handle, length);
	}
	int rc = named(c, NICSIM_OP_IMPORT_DM, handle, &m);
	if (rc) { errno = rc; return NULL; }
	done(&m);
	dm = calloc(1, sizeof(*dm));
	if (!dm) { errno = ENOMEM; return NULL; }
	dm->handle = handle;
	dm->context = c;
	dm->memcpy_to_dm = nicsim_memcpy_to_dm;
	dm->memcpy_from_dm = nicsim_memcpy_from_dm;
	return dm;
}

void nicsim_unimport_dm(struct ibv_dm *dm) {
	if (to_nctx(dm->context)->hw) nicsim_hw_dm_unimport(dm);
	else free(dm);
}
