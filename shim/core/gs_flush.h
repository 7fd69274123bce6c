/*
 * Why held work was submitted: the reasons a backend gives with a flush
 * (gs_engine_flush_stream, gs_engine_flush_all), counted in the statistics
 * and named in the trace.  X(name, "text"); the list is the reference
 * (docs/troubleshooting.md follows it).
 */
#ifndef GS_FLUSH_H
#define GS_FLUSH_H

#define GS_FLUSH_REASONS(X)                                                   \
	X(SYNC, "stream or device synchronize")                               \
	X(EVENT, "event record, wait, query or synchronize")                  \
	X(COPY, "synchronous or pageable copy or memset")                     \
	X(FREE, "free or allocation that synchronizes")                       \
	X(QUERY, "stream query")                                              \
	X(HOSTFN, "host function or callback")                                \
	X(MODULE, "module load or unload")                                    \
	X(CAPTURE, "the application's own stream capture")                    \
	X(CONTEXT, "context or device state change")                          \
	X(LEGACY, "legacy default stream ordering")                           \
	X(ATTR, "launch the core cannot graph")                               \
	X(STREAM, "stream created, destroyed or reconfigured")                \
	X(UNKNOWN, "unclassified entry point")                                \
	X(EXIT, "process exit or fork")                                       \
	X(OTHER, "other stream-ordered operation")                            \
	X(IDLE, "held launches submitted after the program made no call for GRAPHSHIM_IDLE_US")

typedef enum gs_flush_reason {
#define GS_X(n, s) GS_FLUSH_##n,
	GS_FLUSH_REASONS(GS_X)
#undef GS_X
	GS_FLUSH_NREASONS
} gs_flush_reason_t;

/* The reason's name in the list ("SYNC", ...); "?" for a value outside it. */
const char *gs_flush_reason_name(gs_flush_reason_t r);

#endif /* GS_FLUSH_H */
