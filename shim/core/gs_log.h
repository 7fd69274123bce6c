/*
 * Logging to stderr with the `graphshim:` prefix.  Formats into a stack
 * buffer and calls write(2): no stdio, no allocation, safe in hooks.
 */
#ifndef GS_LOG_H
#define GS_LOG_H

#include "gs_common.h"

enum { GS_LOG_OFF = 0, GS_LOG_ERROR = 1, GS_LOG_WARN = 2, GS_LOG_INFO = 3, GS_LOG_DEBUG = 4 };

void gs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Log only the first time this call site runs (per process). */
#define gs_log_once(level, ...)                                               \
	do {                                                                  \
		static int gs__once_;                                         \
		if (!__atomic_exchange_n(&gs__once_, 1, __ATOMIC_RELAXED))   \
			gs_log(level, __VA_ARGS__);                           \
	} while (0)

#endif /* GS_LOG_H */
