/* Placeholder until the statistics writer lands (tools branch). */
#include "gs_stats.h"
#include <stdio.h>

gs_stats_t gs_stats;

void gs_stats_max(uint64_t *field, uint64_t v)
{
	uint64_t cur = __atomic_load_n(field, __ATOMIC_RELAXED);
	while (v > cur && !__atomic_compare_exchange_n(field, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

void gs_stats_reset(void)
{
	memset(&gs_stats, 0, sizeof(gs_stats));
}

double gs_stats_coverage(const gs_stats_t *s)
{
	return s->launches ? (double)s->replayed / (double)s->launches : 0.0;
}

void gs_stats_summary(char *buf, size_t len)
{
	snprintf(buf, len, "graphshim: launches %llu, replayed %llu (%.1f%%)",
		 (unsigned long long)gs_stats.launches, (unsigned long long)gs_stats.replayed,
		 100.0 * gs_stats_coverage(&gs_stats));
}

bool gs_stats_write_json(const char *path, bool overwrite)
{
	(void)path;
	(void)overwrite;
	return true;
}

const char *gs_mismatch_reason_name(gs_mismatch_reason_t r)
{
	(void)r;
	return "?";
}

const char *gs_seq_state_name(gs_seq_state_t s)
{
	(void)s;
	return "?";
}
