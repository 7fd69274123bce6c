/*
 * Test-only engine stubs (see gs_tools_stub.h).  gs_flush_reason_name
 * follows GS_FLUSH_REASONS exactly as the engine's does.
 */
#include "gs_tools_stub.h"

const gs_seq_info_t *gs_stub_seqs;
size_t gs_stub_nseqs;

size_t gs_engine_seq_info(gs_seq_info_t *out, size_t max)
{
	for (size_t i = 0; i < gs_stub_nseqs && i < max; i++)
		out[i] = gs_stub_seqs[i];
	return gs_stub_nseqs;
}

const char *gs_flush_reason_name(gs_flush_reason_t r)
{
	static const char *const names[] = {
#define GS_X(n, s) #n,
		GS_FLUSH_REASONS(GS_X)
#undef GS_X
	};
	if ((unsigned)r >= GS_FLUSH_NREASONS)
		return "INVALID";
	return names[r];
}
