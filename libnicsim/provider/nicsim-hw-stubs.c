/*
 * What the provider on libnicsim does not build yet (NICSIM_DRIVER=c): each verb says so once on
 * stderr and fails with EOPNOTSUPP, rather than reach objects the C driver did not make.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include "nicsim-hw.h"

int nicsim_hw_unbuilt(const char *verb) {
	static __thread const char *told;
	if (told != verb)
		fprintf(stderr, "nicsim: %s is not built in the C driver yet (NICSIM_DRIVER=c)\n", verb);
	told = verb;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
