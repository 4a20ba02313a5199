/*
 * What AttachTest's programs share: the roles of one test meet through small files in a folder
 * (written whole, then renamed, so a reader never sees half of one), open the first RDMA device,
 * and wait for completions. Each program sets {@code dir} before it meets anyone.
 */
#ifndef NICSIM_TEST_MEET_H
#define NICSIM_TEST_MEET_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static const char *dir;

static inline void die(const char *what) {
	fprintf(stderr, "%s: %s failed\n", program_invocation_short_name, what);
	exit(1);
}

static inline void put_file(const char *name, const char *text) {
	char path[512], tmp[520];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (!(f = fopen(tmp, "w")) || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) die("writing a file");
}

/* Waits for file name and reads its first line. */
static inline void get_file(const char *name, char *text, size_t n) {
	char path[512];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	while (!(f = fopen(path, "r"))) usleep(10000);
	if (!fgets(text, (int)n, f)) die("reading a file");
	fclose(f);
}

static inline struct ibv_context *open_first(void) {
	int num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx;
	if (!list || num < 1 || !(ctx = ibv_open_device(list[0]))) die("open");
	ibv_free_device_list(list);
	return ctx;
}

/* The next completion of cq, polled for. */
static inline struct ibv_wc wait_one(struct ibv_cq *cq) {
	struct ibv_wc wc;
	int n;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {}
	if (n < 0) die("poll_cq");
	return wc;
}

#endif
