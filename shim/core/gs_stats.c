/*
 * Process-wide counters, the one-line summary and the statistics JSON file.
 *
 * The JSON file is written at exit, inside the application's process, so
 * this file uses no stdio FILE and keeps allocation to one array of
 * per-sequence figures: text is formatted with snprintf into a stack buffer
 * and handed to write(2), which is retried on partial writes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gs_out.h"
#include "gs_stats.h"

gs_stats_t gs_stats;

static const char *const gs_mismatch_names[] = {GS_MISMATCH_REASONS(GS_NAME_ID)};
static const char *const gs_seq_state_names[] = {GS_SEQ_STATES(GS_NAME_STR)};

const char *gs_mismatch_reason_name(gs_mismatch_reason_t r)
{
	return gs_name_at(gs_mismatch_names, GS_MISMATCH_NREASONS, (unsigned)r, "INVALID");
}

const char *gs_seq_state_name(gs_seq_state_t s)
{
	return gs_name_at(gs_seq_state_names, GS_SEQ_NSTATES, (unsigned)s, "invalid");
}

void gs_stats_max(uint64_t *field, uint64_t v)
{
	uint64_t cur = __atomic_load_n(field, __ATOMIC_RELAXED);
	/* A failed exchange reloads cur; stop once it is already large enough. */
	while (cur < v && !__atomic_compare_exchange_n(field, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

void gs_stats_reset(void)
{
	/* Counter by counter, so that concurrent increments stay well-defined. */
	uint64_t *w = (uint64_t *)&gs_stats;
	for (size_t i = 0; i < sizeof(gs_stats) / sizeof(uint64_t); i++)
		__atomic_store_n(&w[i], 0, __ATOMIC_RELAXED);
}

#define GS_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

double gs_stats_coverage(const gs_stats_t *s)
{
	uint64_t launches = GS_LOAD(s->launches);
	uint64_t replayed = GS_LOAD(s->replayed);
	if (launches == 0)
		return 0.0;
	if (replayed >= launches)
		return 1.0;
	return (double)replayed / (double)launches;
}

/*
 * The replayed count at every (i + 1) << shift launches, i < n; when full,
 * every other note is dropped and the spacing doubles, so a run of any
 * length keeps at most GS_STEADY_NOTES.
 */
#define GS_STEADY_NOTES 512
static struct {
	pthread_mutex_t mu;
	unsigned shift;
	uint32_t n;
	uint64_t replayed[GS_STEADY_NOTES];
} gs_steady = { PTHREAD_MUTEX_INITIALIZER, 10, 0, { 0 } };

void gs_stats_launched(uint64_t n)
{
	uint64_t before = GS_STAT_ADD(launches, n), after = before + n;
	unsigned sh = __atomic_load_n(&gs_steady.shift, __ATOMIC_RELAXED);
	/* A note missed while another thread writes is made by the next. */
	if (GS_LIKELY(before >> sh == after >> sh) || pthread_mutex_trylock(&gs_steady.mu))
		return;
	uint64_t rep = GS_LOAD(gs_stats.replayed);
	while ((uint64_t)(gs_steady.n + 1) << gs_steady.shift <= after) {
		if (gs_steady.n == GS_STEADY_NOTES) {
			for (uint32_t i = 0; i < GS_STEADY_NOTES / 2; i++)
				gs_steady.replayed[i] = gs_steady.replayed[2 * i + 1];
			gs_steady.n = GS_STEADY_NOTES / 2;
			__atomic_store_n(&gs_steady.shift, gs_steady.shift + 1, __ATOMIC_RELAXED);
			continue;
		}
		gs_steady.replayed[gs_steady.n++] = rep;
	}
	pthread_mutex_unlock(&gs_steady.mu);
}

double gs_stats_coverage_steady(void)
{
	uint64_t launches = GS_LOAD(gs_stats.launches), replayed = GS_LOAD(gs_stats.replayed);
	/* Never waits: a fork may have left the lock taken. */
	if (pthread_mutex_trylock(&gs_steady.mu))
		return gs_stats_coverage(&gs_stats);
	unsigned sh = gs_steady.shift;
	uint64_t k = ((launches / 2 + (1ull << sh) - 1) >> sh); /* first note at or past half */
	bool have = k >= 1 && k <= gs_steady.n && (k << sh) < launches;
	uint64_t from = have ? gs_steady.replayed[k - 1] : 0, at = have ? k << sh : 0;
	pthread_mutex_unlock(&gs_steady.mu);
	if (!have)
		return gs_stats_coverage(&gs_stats);
	if (replayed <= from)
		return 0.0;
	double c = (double)(replayed - from) / (double)(launches - at);
	return c > 1.0 ? 1.0 : c;
}

void gs_stats_summary(char *buf, size_t len)
{
	if (!buf || !len)
		return;
	snprintf(buf, len,
		 "graphshim: launches %llu, replayed %llu (%.1f%%), sequences %llu, graphs %llu, "
		 "patches %llu, mismatches %llu, retired %llu, fallbacks %llu, build %.1f ms",
		 (unsigned long long)GS_LOAD(gs_stats.launches),
		 (unsigned long long)GS_LOAD(gs_stats.replayed), 100.0 * gs_stats_coverage(&gs_stats),
		 (unsigned long long)GS_LOAD(gs_stats.sequences),
		 (unsigned long long)GS_LOAD(gs_stats.graphs),
		 (unsigned long long)GS_LOAD(gs_stats.patches),
		 (unsigned long long)GS_LOAD(gs_stats.mismatches),
		 (unsigned long long)GS_LOAD(gs_stats.retirements),
		 (unsigned long long)GS_LOAD(gs_stats.fallbacks),
		 (double)GS_LOAD(gs_stats.build_ns) / 1e6);
}

/* A small buffered writer over one descriptor; the first error sticks. */
typedef struct gs_stats_jw {
	int fd;
	bool err;
	size_t len;
	char buf[8192];
} gs_stats_jw_t;

static void gs_stats_jw_flush(gs_stats_jw_t *w)
{
	if (!w->err && w->len && gs_out_write_all(w->fd, w->buf, w->len))
		w->err = true;
	w->len = 0;
}

static void gs_stats_jw_printf(gs_stats_jw_t *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void gs_stats_jw_printf(gs_stats_jw_t *w, const char *fmt, ...)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(w->buf + w->len, sizeof(w->buf) - w->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			w->err = true;
			return;
		}
		if (w->len + (size_t)n < sizeof(w->buf)) {
			w->len += (size_t)n;
			return;
		}
		/* It did not fit: write what is buffered and format again. */
		gs_stats_jw_flush(w);
	}
	/* A single piece larger than the buffer: never produced here. */
	w->err = true;
}

static void gs_stats_write_seqs(gs_stats_jw_t *w, const gs_seq_info_t *info, size_t n,
				bool truncated)
{
	gs_stats_jw_printf(w, "  \"sequences_truncated\": %s,\n  \"sequences\": [",
			   truncated ? "true" : "false");
	for (size_t i = 0; i < n; i++) {
		const gs_seq_info_t *s = &info[i];
		gs_stats_jw_printf(w,
			     "%s\n    {\"id\": \"0x%016llx\", \"stream\": \"0x%llx\", \"length\": %u, "
			     "\"state\": \"%s\", \"periodic\": %s, \"seen\": %llu, \"replays\": %llu, "
			     "\"patches\": %llu, \"mismatches\": %llu, \"retirements\": %llu, "
			     "\"build_ms\": %.3f, \"gate\": \"%s\", \"eager_us\": %.1f, "
			     "\"replay_us\": %.1f, \"gate_trials\": %u, \"eager_passes\": %llu, "
			     "\"gone\": %s}",
			     i ? "," : "", (unsigned long long)s->id, (unsigned long long)s->stream,
			     (unsigned)s->length, gs_seq_state_name((gs_seq_state_t)s->state),
			     s->periodic ? "true" : "false", (unsigned long long)s->seen,
			     (unsigned long long)s->replays, (unsigned long long)s->patches,
			     (unsigned long long)s->mismatches, (unsigned long long)s->retirements,
			     (double)s->build_ns / 1e6, s->gate ? s->gate : "off",
			     (double)s->eager_ns / 1e3, (double)s->replay_ns / 1e3,
			     (unsigned)s->gate_trials, (unsigned long long)s->eager_passes,
			     s->gone ? "true" : "false");
	}
	gs_stats_jw_printf(w, "%s]\n", n ? "\n  " : "");
}

bool gs_stats_write_json(const char *path, bool overwrite, const gs_seq_info_t *seqs, size_t nseqs,
			 bool truncated)
{
	char expanded[1024];
	gs_stats_jw_t *w = malloc(sizeof(*w));
	if (!w)
		return true;
	w->fd = gs_out_open(path, overwrite, expanded, sizeof(expanded));
	if (w->fd < 0) {
		free(w);
		return true;
	}
	w->err = false;
	w->len = 0;

	gs_stats_jw_printf(w, "{\n  \"graphshim\": \"%s\",\n  \"pid\": %ld,\n  \"counters\": {",
		     PACKAGE_VERSION, (long)getpid());
	const char *sep = "";
#define GS_X(f, s)                                                                            \
	gs_stats_jw_printf(w, "%s\n    \"" #f "\": %llu", sep, (unsigned long long)GS_LOAD(gs_stats.f)); \
	sep = ",";
	GS_COUNTERS(GS_X)
#undef GS_X
	gs_stats_jw_printf(w, "\n  },\n  \"coverage\": %.6f,\n  \"coverage_steady\": %.6f,\n"
			   "  \"build_ms\": %.3f,\n", gs_stats_coverage(&gs_stats),
			   gs_stats_coverage_steady(), (double)GS_LOAD(gs_stats.build_ns) / 1e6);

	gs_stats_jw_printf(w, "  \"mismatches_by_reason\": {");
	for (int i = 0; i < GS_MISMATCH_NREASONS; i++)
		gs_stats_jw_printf(w, "%s\"%s\": %llu", i ? ", " : "",
			     gs_mismatch_reason_name((gs_mismatch_reason_t)i),
			     (unsigned long long)GS_LOAD(gs_stats.mismatch_by[i]));
	gs_stats_jw_printf(w, "},\n  \"flushes_by_reason\": {");
	for (int i = 0; i < GS_FLUSH_NREASONS; i++)
		gs_stats_jw_printf(w, "%s\"%s\": %llu", i ? ", " : "",
			     gs_flush_reason_name((gs_flush_reason_t)i),
			     (unsigned long long)GS_LOAD(gs_stats.flush_by[i]));
	gs_stats_jw_printf(w, "},\n");

	gs_stats_write_seqs(w, seqs, nseqs, truncated);
	gs_stats_jw_printf(w, "}\n");
	gs_stats_jw_flush(w);

	bool err = w->err;
	if (close(w->fd) && errno != EINTR)
		err = true;
	free(w);
	return err;
}
