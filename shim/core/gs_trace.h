/*
 * The trace dump: Chrome trace-event JSON (the array form), which Perfetto
 * and chrome://tracing open.  Events are formatted into a buffer and written
 * whole with write(2), so a crash leaves a file that ends at an event (the
 * array form allows the closing bracket to be missing).  The number of
 * events is capped (GRAPHSHIM_TRACE_MAX); the cap and the count dropped are
 * written as metadata at the end.
 *
 * Every function is a no-op unless gs_trace_on is true.
 */
#ifndef GS_TRACE_H
#define GS_TRACE_H

#include "gs_rec.h"
#include "gs_stats.h"

extern bool gs_trace_on;

/* Open path (%p expands to the pid); true on failure. */
bool gs_trace_open(const char *path, long long max_events, bool overwrite);
/* Write what is buffered and the closing metadata; close the file. */
void gs_trace_close(void);

/* state: "eager", "held", "replayed", "released", "boundary". */
void gs_trace_launch(const char *api, uintptr_t stream, const gs_rec_t *r, const char *state);
void gs_trace_flush(uintptr_t stream, gs_flush_reason_t why, const char *api, uint32_t nheld);
/* how: "boundary" or "period". */
void gs_trace_learned(uintptr_t stream, uint64_t id, uint32_t length, const char *how);
void gs_trace_built(uintptr_t stream, uint64_t id, uint32_t length, uint64_t ns, int status);
void gs_trace_replay(uintptr_t stream, uint64_t id, uint32_t length, uint32_t patches, uint32_t chunks);
/* field: "function", "grid", "block", "shmem", "kind", "arg N", ...; expected/got may be NULL. */
void gs_trace_mismatch(uintptr_t stream, uint64_t id, uint32_t pos, gs_mismatch_reason_t why,
		       const char *field, const char *expected, const char *got);
void gs_trace_retired(uintptr_t stream, uint64_t id, uint64_t mismatches);
/* The gate's decision for a sequence, with the medians it compared. */
void gs_trace_gate(uintptr_t stream, uint64_t id, uint32_t length, uint64_t eager_ns,
		   uint64_t replay_ns, bool eager);
void gs_trace_fallback(const char *what, int status);

#endif /* GS_TRACE_H */
