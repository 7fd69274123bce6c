/*
 * Logging to stderr with the `graphshim:` prefix.  Formats into a stack
 * buffer and calls write(2): no stdio, no allocation, safe in hooks.
 */
#ifndef GS_LOG_H
#define GS_LOG_H

#include "gs_common.h"

/* Log levels, least verbose first; X(NAME, "name"), as GRAPHSHIM_LOG takes them. */
#define GS_LOG_LEVELS(X)                                                      \
	X(OFF, "off")                                                         \
	X(ERROR, "error")                                                     \
	X(WARN, "warn")                                                       \
	X(INFO, "info")                                                       \
	X(DEBUG, "debug")

enum {
#define GS_X(n, s) GS_LOG_##n,
	GS_LOG_LEVELS(GS_X)
#undef GS_X
	GS_LOG_NLEVELS
};

/*
 * Messages above this level are dropped: GS_LOG_WARN until the
 * configuration is loaded, then GRAPHSHIM_LOG (gs_config_load sets it).
 */
extern int gs_log_level;

/* The level's name ("off", ...); NULL outside the list. */
const char *gs_log_level_name(int level);

void gs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * One message as it is ("graphshim: LEVEL: msg\n"), with no formatting:
 * async-signal-safe, for what runs in a signal handler (build msg with
 * gs_fmt.h).
 */
void gs_log_str(int level, const char *msg);

/* Whether a call site counting in *told has run fewer than n times (per
 * process): a note logged only for its first n occurrences. */
static inline bool gs_log_first(unsigned *told, unsigned n)
{
	return __atomic_fetch_add(told, 1, __ATOMIC_RELAXED) < n;
}

/* Log only the first time this call site runs (per process). */
#define gs_log_once(level, ...)                                               \
	do {                                                                  \
		static int gs__once_;                                         \
		if (!__atomic_exchange_n(&gs__once_, 1, __ATOMIC_RELAXED))   \
			gs_log(level, __VA_ARGS__);                           \
	} while (0)

#endif /* GS_LOG_H */
