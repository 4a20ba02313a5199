/*
 * Sharing a context between processes, as the kernel shares a uverbs file (ibv_import_device(3),
 * ibv_import_pd(3), ibv_import_mr(3), ibv_import_dm(3)):
 *   ibv_import_device  is interposed (LD_PRELOAD) over libibverbs' own, which would ask the kernel
 *                      through the command file. The file given is a duplicate (dup, SCM_RIGHTS) of
 *                      some context's; the simulator lists the contexts open and the process and
 *                      file number of each, and kcmp(2) says which one the file is. The device is
 *                      then opened as usual, except that the new context joins that context's
 *                      session instead of making one, and owns the file given from then on;
 *   ibv_import_*       name an object of the shared context by its handle (each back end's verbs):
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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nicsim-provider.h"

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
