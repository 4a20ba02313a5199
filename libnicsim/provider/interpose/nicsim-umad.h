/* libibumad's file (nicsim-umad.c), for the C library's calls nicsim-rdmacm.c interposes first. */
#ifndef NICSIM_UMAD_H
#define NICSIM_UMAD_H

#include <sys/stat.h>
#include <sys/types.h>

/* Whether path is the umad file nicsim stands in for (only under attach). */
int nicsim_umad_path(const char *path);
/* Opens it: the file's descriptor, or -1 with errno. */
int nicsim_umad_open(int flags);
/* fstat of a umad file: 0; -2 when fd is not one. */
int nicsim_umad_fstat(int fd, struct stat *st);
/* write of a umad file: as write(2); -2 when fd is not one. */
ssize_t nicsim_umad_write(int fd, const void *buf, size_t n);

#endif
