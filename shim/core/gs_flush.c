/* The flush reasons' names, generated from GS_FLUSH_REASONS. */
#include "gs_common.h"
#include "gs_flush.h"

static const char *const gs_flush_names[] = {GS_FLUSH_REASONS(GS_NAME_ID)};

const char *gs_flush_reason_name(gs_flush_reason_t r)
{
	return gs_name_at(gs_flush_names, GS_FLUSH_NREASONS, (unsigned)r, "?");
}
