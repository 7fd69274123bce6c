/* The flush reasons' names, generated from GS_FLUSH_REASONS. */
#include "gs_flush.h"

static const char *const gs_flush_names[] = {
#define GS_X(n, s) #n,
	GS_FLUSH_REASONS(GS_X)
#undef GS_X
};

const char *gs_flush_reason_name(gs_flush_reason_t r)
{
	return (unsigned)r < GS_FLUSH_NREASONS ? gs_flush_names[r] : "?";
}
