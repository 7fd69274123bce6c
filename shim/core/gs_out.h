/*
 * Output files (the statistics and the trace), opened and written by one
 * set of rules: %p in the path expands to the pid (%% to a percent sign),
 * a file is never opened through a symlink nor over an existing file unless
 * overwrite is set, and writes are retried until every byte is out.  Both
 * writers run inside the application's process, so nothing here uses
 * stdio or allocates.
 */
#ifndef GS_OUT_H
#define GS_OUT_H

#include "gs_common.h"

/*
 * Open path for writing; `expanded` (len bytes) receives the path with %p
 * expanded.  Returns the descriptor, or -1 with errno set.
 */
int gs_out_open(const char *path, bool overwrite, char *expanded, size_t len);

/* Write n bytes, retrying partial and interrupted writes; true on failure. */
bool gs_out_write_all(int fd, const char *buf, size_t n);

#endif /* GS_OUT_H */
