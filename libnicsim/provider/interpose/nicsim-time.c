/*
 * nicsim's clock library: with ./nicsim attach --sim-time, a program's gettimeofday() and
 * clock_gettime() read the simulation's time instead of the host's, so the figures it prints from
 * its own clock (ibv_*_pingpong's bandwidth and microseconds per iteration) are simulated ones,
 * and the same on every run. Preloaded beside the provider; it has no symbol versions, so it stands
 * in for libc's functions whatever version a program asked for. A reading before the program opens its nicsim
 * device is the simulation's time too (the provider asks serve on a connection for the clock alone), so a span
 * that begins before and ends after is simulated; for clocks other than the wall and monotonic ones, and if
 * serve cannot be reached, the host's clock answers.
 *
 * The simulated wall clock reads 2000-01-01T00:00:00Z plus the simulated time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#define NICSIM_EPOCH_S 946684800LL

typedef int64_t (*now_fn)(void);
typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *restrict, void *restrict);

/* The simulated time in ns, or -1 (the provider is not loaded, or serve cannot answer). */
static int64_t sim_ns(void) {
	static now_fn now;
	if (!now) now = (now_fn)dlsym(RTLD_DEFAULT, "nicsim_sim_now_ns");
	return now ? now() : -1;
}

static int simulated(clockid_t id) {
	return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_REALTIME_COARSE
	       || id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	static clock_gettime_fn host;
	int64_t ns = simulated(id) ? sim_ns() : -1;
	if (ns >= 0) {
		if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) ns += NICSIM_EPOCH_S * 1000000000LL;
		ts->tv_sec = (time_t)(ns / 1000000000LL);
		ts->tv_nsec = (long)(ns % 1000000000LL);
		return 0;
	}
	if (!host) host = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	return host(id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
	static gettimeofday_fn host;
	int64_t ns = sim_ns();
	if (ns >= 0) {
		ns += NICSIM_EPOCH_S * 1000000000LL;
		tv->tv_sec = (time_t)(ns / 1000000000LL);
		tv->tv_usec = (long)(ns % 1000000000LL / 1000);
		return 0;
	}
	if (!host) host = (gettimeofday_fn)dlsym(RTLD_NEXT, "gettimeofday");
	return host(tv, tz);
}
