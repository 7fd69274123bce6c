/* Output files: the rules of gs_out.h. */
#include "gs_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/*
 * Expand %p to the pid and %% to a percent sign into out; any other
 * sequence is kept as it is.  True when the result does not fit.
 */
static bool gs_out_expand(const char *path, char *out, size_t len)
{
	size_t o = 0;
	for (const char *p = path; *p; p++) {
		char tmp[24];
		const char *add = tmp;
		size_t n;
		if (p[0] == '%' && p[1] == 'p') {
			n = (size_t)snprintf(tmp, sizeof(tmp), "%ld", (long)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			tmp[0] = '%';
			n = 1;
			p++;
		} else {
			add = p;
			n = 1;
		}
		if (o + n >= len)
			return true;
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = '\0';
	return false;
}

int gs_out_open(const char *path, bool overwrite, char *expanded, size_t len)
{
	if (!path || !*path || gs_out_expand(path, expanded, len)) {
		errno = path && *path ? ENAMETOOLONG : EINVAL;
		return -1;
	}
	int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
	flags |= overwrite ? O_TRUNC : O_EXCL;
	int fd;
	do
		fd = open(expanded, flags, 0644);
	while (fd < 0 && errno == EINTR);
	return fd;
}

bool gs_out_write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return true;
		}
		if (w == 0)
			return true;
		buf += w;
		n -= (size_t)w;
	}
	return false;
}
