/* Placeholder until the trace writer lands (tools branch). */
#include "gs_trace.h"

bool gs_trace_on;

bool gs_trace_open(const char *path, long long max_events, bool overwrite)
{
	(void)path;
	(void)max_events;
	(void)overwrite;
	return true;
}
void gs_trace_close(void) {}
void gs_trace_launch(const char *api, uintptr_t stream, const gs_rec_t *r, const char *state) {}
void gs_trace_flush(uintptr_t stream, gs_flush_reason_t why, const char *api, uint32_t nheld) {}
void gs_trace_learned(uintptr_t stream, uint64_t id, uint32_t length, const char *how) {}
void gs_trace_built(uintptr_t stream, uint64_t id, uint32_t length, uint64_t ns, int status) {}
void gs_trace_replay(uintptr_t stream, uint64_t id, uint32_t length, uint32_t patches, uint32_t chunks) {}
void gs_trace_mismatch(uintptr_t stream, uint64_t id, uint32_t pos, gs_mismatch_reason_t why,
		       const char *field, const char *expected, const char *got) {}
void gs_trace_retired(uintptr_t stream, uint64_t id, uint64_t mismatches) {}
void gs_trace_fallback(const char *what, int status) {}
