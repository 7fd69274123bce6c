/*
 * stderr logging for code that runs inside other people's programs: one
 * stack buffer, one write(2), no stdio and no allocation.
 */
#include "gs_log.h"
#include "gs_fmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int gs_log_level = GS_LOG_WARN;

static const char *const gs_log_names[] = {GS_LOG_LEVELS(GS_NAME_STR)};

const char *gs_log_level_name(int level)
{
	return gs_name_at(gs_log_names, GS_LOG_NLEVELS, (unsigned)level, NULL);
}

void gs_log(int level, const char *fmt, ...)
{
	if (level > gs_log_level || level <= GS_LOG_OFF)
		return;
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "graphshim: %s: ", gs_log_names[level]);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	int saved = errno; /* never disturb the application's errno */
	ssize_t w = write(STDERR_FILENO, buf, len);
	(void)w;
	errno = saved;
}

void gs_log_str(int level, const char *msg)
{
	if (level > __atomic_load_n(&gs_log_level, __ATOMIC_RELAXED) || level <= GS_LOG_OFF)
		return;
	char buf[2560];
	gs_fmt_t f;
	gs_fmt_init(&f, buf, sizeof(buf) - 1);
	gs_fmt_str(&f, "graphshim: ");
	gs_fmt_str(&f, gs_log_names[level]);
	gs_fmt_str(&f, ": ");
	gs_fmt_str(&f, msg);
	buf[f.len++] = '\n';
	int saved = errno;
	ssize_t w = write(STDERR_FILENO, buf, f.len);
	(void)w;
	errno = saved;
}
