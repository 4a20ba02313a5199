/*
 * The event files of a nicsim context, as the kernel's uverbs keeps them, interposed (LD_PRELOAD)
 * over libibverbs' own verbs, which need the kernel:
 *   ibv_create_comp_channel   a completion channel is a socket to the simulator, which writes one
 *                             struct ib_uverbs_comp_event_desc per event to it: a real file the
 *                             program may poll, make non-blocking, or be interrupted reading;
 *   ibv_get_cq_event,         read the channel or the async file (the same reads as libibverbs',
 *   ibv_get_async_event       so O_NONBLOCK gives EAGAIN and a signal EINTR), and turn the handle
 *                             an event names into the object; an event for an object destroyed
 *                             meanwhile is dropped, as the kernel drops a destroyed object's unread
 *                             events, and those given out are counted so that its destroy waits for
 *                             their acknowledgements (ibv_ack_async_event(3)).
 * When the adapter dies the simulator ends both files after what it wrote, as uverbs marks its event files
 * closed on disassociation: a reader blocked there wakes, and the end of the file reads as EIO.
 * A context of another provider goes to libibverbs' own verbs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "nicsim-backend.h"
#include "nicsim-sock.h"

/* Reads one event record from fd: 0, or -1 with errno (EIO at the end of the file: the adapter died). */
static int read_event(int fd, void *rec, size_t size) {
	ssize_t n = real_read(fd, rec, size);
	if (n == (ssize_t)size) return 0;
	if (n >= 0) errno = EIO;
	return -1;
}

/* libibverbs' own definition of name@version (the next one after this library's). */
static void *theirs(const char *name, const char *version) { return dlvsym(RTLD_NEXT, name, version); }

/* ---- completion channels ---- */

__attribute__((visibility("default")))
struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *c) {
	struct ibv_comp_channel *ch;
	struct msg m;
	uint32_t status[2];
	int fd;
	if (!nicsim_owns(c)) {
		struct ibv_comp_channel *(*f)(struct ibv_context *) = theirs("ibv_create_comp_channel", "IBVERBS_1.0");
		if (!f) { errno = EOPNOTSUPP; return NULL; }
		return f(c);
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) { errno = ENOMEM; return NULL; }
	fd = connect_simulator();
	if (fd < 0) { free(ch); errno = EIO; return NULL; }
	struct nicsim_wire_event_file_request q = { .session = to_nctx(c)->session, .pid = (uint32_t)getpid() };
	struct nicsim_wire_channel_number number = { .channel = (uint32_t)fd }; /* CQs name the channel by it */
	m = request(NICSIM_OP_CHANNEL);
	PUT(&m, q);
	PUT(&m, number);
	/* answered once, before any event: then the simulator knows the channel before a CQ names it */
	if (send_only(fd, &m) || io(fd, status, sizeof status, 0) || status[1]) {
		done(&m);
		real_close(fd);
		free(ch);
		errno = EIO;
		return NULL;
	}
	done(&m);
	ch->fd = fd;
	ch->context = c;
	ch->refcnt = 0;
	return ch;
}

__attribute__((visibility("default")))
int ibv_destroy_comp_channel(struct ibv_comp_channel *ch) {
	if (!nicsim_owns(ch->context)) {
		int (*f)(struct ibv_comp_channel *) = theirs("ibv_destroy_comp_channel", "IBVERBS_1.0");
		return f ? f(ch) : EOPNOTSUPP;
	}
	pthread_mutex_lock(&ch->context->mutex);
	if (ch->refcnt) { pthread_mutex_unlock(&ch->context->mutex); return EBUSY; }
	pthread_mutex_unlock(&ch->context->mutex);
	real_close(ch->fd);
	free(ch);
	return 0;
}

__attribute__((visibility("default")))
int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context) {
	struct nicsim_context *ctx;
	uint64_t handle;
	if (!nicsim_owns(ch->context)) {
		int (*f)(struct ibv_comp_channel *, struct ibv_cq **, void **) =
			theirs("ibv_get_cq_event", "IBVERBS_1.1");
		if (!f) { errno = EOPNOTSUPP; return -1; }
		return f(ch, cq, cq_context);
	}
	ctx = to_nctx(ch->context);
	for (;;) {
		struct nicsim_ibv_cq *c;
		if (read_event(ch->fd, &handle, sizeof handle)) return -1;
		pthread_mutex_lock(&ctx->named.lock);
		c = nicsim_named(ctx, (uint32_t)handle);
		if (c) c->comp_returned++;
		if (c) ctx->ops->cq_event_taken(c);
		pthread_mutex_unlock(&ctx->named.lock);
		if (!c) continue; /* its CQ is gone: the event with it */
		*cq = &c->cq;
		*cq_context = c->cq.cq_context;
		return 0;
	}
}

/* ---- the async file ---- */

__attribute__((visibility("default")))
int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event) {
	struct nicsim_context *ctx;
	struct { uint64_t element; uint32_t type, reserved; } ev;
	if (!nicsim_owns(context)) {
		int (*f)(struct ibv_context *, struct ibv_async_event *) = theirs("ibv_get_async_event", "IBVERBS_1.1");
		if (!f) { errno = EOPNOTSUPP; return -1; }
		return f(context, event);
	}
	ctx = to_nctx(context);
	for (;;) {
		void *obj = NULL;
		if (read_event(context->async_fd, &ev, sizeof ev)) return -1;
		event->event_type = (enum ibv_event_type)ev.type;
		pthread_mutex_lock(&ctx->named.lock);
		switch (event->event_type) {
		case IBV_EVENT_CQ_ERR:
			if ((obj = nicsim_named(ctx, (uint32_t)ev.element))) to_ncq(obj)->async_returned++;
			event->element.cq = obj;
			break;
		case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_COMM_EST: case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
		case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
			obj = ctx->ops->event_qp(ctx, (uint32_t)ev.element);
			if (obj) to_nqp(obj)->events_returned++;
			event->element.qp = obj;
			break;
		case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
			obj = ctx->ops->event_srq(ctx, (uint32_t)ev.element);
			if (obj) to_nsrq(obj)->events_returned++;
			event->element.srq = obj;
			break;
		default: /* port and device events name no object */
			obj = context;
			event->element.port_num = (int)ev.element;
			break;
		}
		pthread_mutex_unlock(&ctx->named.lock);
		if (obj) return 0; /* else its object is gone: the event with it */
	}
}
