/*
 * Process-wide counters, the one-line summary and the statistics JSON file.
 *
 * The JSON file is written at exit, or from a signal handler when the
 * process is being terminated (gs_sig.h), inside the application's
 * process: so its text is made with gs_fmt (no stdio, no locale, no
 * allocation) into a static buffer and handed to write(2) through the
 * output-file rules of gs_out.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "gs_config.h"
#include "gs_fmt.h"
#include "gs_log.h"
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
	gs_atomic_max(field, v);
}

/*
 * The replayed count at every (i + 1) << shift launches, i < n; when full,
 * every other note is dropped and the spacing doubles, so a run of any
 * length keeps at most GS_STEADY_NOTES.
 */
#define GS_STEADY_NOTES 512
#define GS_STEADY_SHIFT 10 /* the first notes: every 1024 launches */
static struct {
	pthread_mutex_t mu;
	unsigned shift;
	uint32_t n;
	uint64_t replayed[GS_STEADY_NOTES];
} gs_steady = { PTHREAD_MUTEX_INITIALIZER, GS_STEADY_SHIFT, 0, { 0 } };

void gs_stats_reset(void)
{
	/* Counter by counter, so that concurrent increments stay well-defined. */
	uint64_t *w = (uint64_t *)&gs_stats;
	for (size_t i = 0; i < sizeof(gs_stats) / sizeof(uint64_t); i++)
		__atomic_store_n(&w[i], 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&gs_steady.mu);
	gs_steady.n = 0;
	__atomic_store_n(&gs_steady.shift, GS_STEADY_SHIFT, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&gs_steady.mu);
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
	static const struct {
		const char *label;
		size_t off;
	} tail[] = {
		{", sequences ", offsetof(gs_stats_t, sequences)},
		{", graphs ", offsetof(gs_stats_t, graphs)},
		{", patches ", offsetof(gs_stats_t, patches)},
		{", mismatches ", offsetof(gs_stats_t, mismatches)},
		{", retired ", offsetof(gs_stats_t, retirements)},
		{", fallbacks ", offsetof(gs_stats_t, fallbacks)},
	};
	gs_fmt_t f;
	gs_fmt_init(&f, buf, len);
	gs_fmt_str(&f, "graphshim: launches ");
	gs_fmt_u64(&f, GS_LOAD(gs_stats.launches));
	gs_fmt_str(&f, ", replayed ");
	gs_fmt_u64(&f, GS_LOAD(gs_stats.replayed));
	gs_fmt_str(&f, " (");
	gs_fmt_fixed(&f, 100.0 * gs_stats_coverage(&gs_stats), 1);
	gs_fmt_str(&f, "%)");
	for (size_t i = 0; i < GS_ARRAY_SIZE(tail); i++) {
		gs_fmt_str(&f, tail[i].label);
		gs_fmt_u64(&f, GS_LOAD(*(uint64_t *)((char *)&gs_stats + tail[i].off)));
	}
	gs_fmt_str(&f, ", build ");
	gs_fmt_fixed(&f, (double)GS_LOAD(gs_stats.build_ns) / 1e6, 1);
	gs_fmt_str(&f, " ms");
}

/* ---- the JSON file -------------------------------------------------------- */

/*
 * One writer at a time (the engine writes the file once, at exit or in a
 * signal handler, never both: gs_sig.h), so its buffer is static: nothing
 * is allocated, which a signal handler could not do.
 */
static char gs_stats_buf[16384];

static bool gs_stats_out(gs_fmt_t *f)
{
	return gs_out_write_all(*(int *)f->arg, f->buf, f->len);
}

static void gs_stats_bool(gs_fmt_t *f, bool b)
{
	gs_fmt_str(f, b ? "true" : "false");
}

/* ", \"key\": " (sep: the text before the key) */
static void gs_stats_key(gs_fmt_t *f, const char *sep, const char *key)
{
	gs_fmt_str(f, sep);
	gs_fmt_char(f, '"');
	gs_fmt_str(f, key);
	gs_fmt_str(f, "\": ");
}

/* ", \"key\": v" */
static void gs_stats_u64(gs_fmt_t *f, const char *key, uint64_t v)
{
	gs_stats_key(f, ", ", key);
	gs_fmt_u64(f, v);
}

static void gs_stats_id(gs_fmt_t *f, uint64_t id)
{
	gs_fmt_str(f, "\"0x");
	gs_fmt_hex(f, id, 16);
	gs_fmt_char(f, '"');
}

static void gs_stats_handle(gs_fmt_t *f, uint64_t h)
{
	gs_fmt_str(f, "\"0x");
	gs_fmt_hex(f, h, 1);
	gs_fmt_char(f, '"');
}

/* "{\"id\": ..., \"stream\": ..., \"length\": n": what names a sequence. */
static void gs_stats_seq_head(gs_fmt_t *f, const gs_seq_info_t *s)
{
	gs_fmt_str(f, "{\"id\": ");
	gs_stats_id(f, s->id);
	gs_stats_key(f, ", ", "stream");
	gs_stats_handle(f, s->stream);
	gs_stats_u64(f, "length", s->length);
}

/* ", \"eager_us\": ..., \"replay_us\": ..., \"eager_host_us\": ..., \"replay_host_us\": ...":
 * the medians behind a gate decision, in microseconds. */
static void gs_stats_medians(gs_fmt_t *f, uint64_t eager_ns, uint64_t replay_ns,
			     uint32_t eager_host_ns, uint32_t replay_host_ns)
{
	gs_stats_key(f, ", ", "eager_us");
	gs_fmt_fixed(f, (double)eager_ns / 1e3, 1);
	gs_stats_key(f, ", ", "replay_us");
	gs_fmt_fixed(f, (double)replay_ns / 1e3, 1);
	gs_stats_key(f, ", ", "eager_host_us");
	gs_fmt_fixed(f, (double)eager_host_ns / 1e3, 1);
	gs_stats_key(f, ", ", "replay_host_us");
	gs_fmt_fixed(f, (double)replay_host_ns / 1e3, 1);
}

static void gs_stats_seq(gs_fmt_t *f, const gs_seq_info_t *s)
{
	gs_stats_seq_head(f, s);
	gs_stats_key(f, ", ", "state");
	gs_fmt_json(f, gs_seq_state_name((gs_seq_state_t)s->state));
	gs_stats_key(f, ", ", "periodic");
	gs_stats_bool(f, s->periodic);
	gs_stats_u64(f, "seen", s->seen);
	gs_stats_u64(f, "replays", s->replays);
	gs_stats_u64(f, "patches", s->patches);
	gs_stats_u64(f, "mismatches", s->mismatches);
	gs_stats_u64(f, "retirements", s->retirements);
	gs_stats_u64(f, "refused", s->refused);
	gs_stats_key(f, ", ", "build_ms");
	gs_fmt_fixed(f, (double)s->build_ns / 1e6, 3);
	gs_stats_key(f, ", ", "gate");
	gs_fmt_json(f, s->gate ? s->gate : "off");
	gs_stats_medians(f, s->eager_ns, s->replay_ns, s->eager_host_ns, s->replay_host_ns);
	if (s->eager_less_ns) {
		/* GRAPHSHIM_SELFTIME: the eager passes less graphshim's own time. */
		gs_stats_key(f, ", ", "eager_host_less_own_us");
		gs_fmt_fixed(f, (double)s->eager_less_ns / 1e3, 1);
	}
	gs_stats_u64(f, "gate_trials", s->gate_trials);
	if (s->gate_trials > 1) {
		/* The first decision, which a later trial's figures replaced. */
		gs_stats_key(f, ", ", "first_trial");
		gs_fmt_str(f, "{\"choice\": ");
		gs_fmt_json(f, s->first.eager ? "eager" : "replay");
		gs_stats_medians(f, s->first.eager_ns, s->first.replay_ns, s->first.eager_host_ns,
				 s->first.replay_host_ns);
		gs_fmt_char(f, '}');
	}
	gs_stats_u64(f, "eager_passes", s->eager_passes);
	if (s->rebuilds || s->drift_args || s->drift_shape) {
		/* Which of its nodes drift (device patches: GRAPHSHIM_DEVICE_PATCH). */
		gs_stats_u64(f, "rebuilds", s->rebuilds);
		gs_stats_u64(f, "drift_args", s->drift_args);
		gs_stats_u64(f, "drift_shape", s->drift_shape);
	}
	gs_stats_key(f, ", ", "gone");
	gs_stats_bool(f, s->gone);
	gs_fmt_char(f, '}');
}

/*
 * The main sequence: the one that took the most launches (sightings x
 * length).  Its sightings are the steps a comparison can count when the
 * program said nothing about them (gs_stats.h).
 */
static const gs_seq_info_t *gs_stats_main(const gs_seq_info_t *seqs, size_t n)
{
	const gs_seq_info_t *best = NULL;
	for (size_t i = 0; i < n; i++) {
		const gs_seq_info_t *s = &seqs[i];
		if (!s->seen || s->length < 2)
			continue;
		if (!best || (double)s->seen * s->length > (double)best->seen * best->length)
			best = s;
	}
	return best;
}

static const char *gs_stats_mismatch_name(int i)
{
	return gs_mismatch_reason_name((gs_mismatch_reason_t)i);
}

static const char *gs_stats_flush_name(int i)
{
	return gs_flush_reason_name((gs_flush_reason_t)i);
}

/* ",\n  \"key\": {\"NAME\": count, ...}": a counter per reason. */
static void gs_stats_reasons(gs_fmt_t *f, const char *key, const uint64_t *counts, int n,
			     const char *(*name)(int))
{
	gs_stats_key(f, ",\n  ", key);
	gs_fmt_char(f, '{');
	for (int i = 0; i < n; i++) {
		gs_stats_key(f, i ? ", " : "", name(i));
		gs_fmt_u64(f, GS_LOAD(counts[i]));
	}
	gs_fmt_char(f, '}');
}

static void gs_stats_body(gs_fmt_t *f, const gs_stats_file_t *x)
{
	gs_fmt_str(f, "{\n  \"graphshim\": ");
	gs_fmt_json(f, PACKAGE_VERSION);
	gs_stats_key(f, ",\n  ", "pid");
	gs_fmt_i64(f, (int64_t)getpid());
	gs_stats_key(f, ",\n  ", "ppid");
	gs_fmt_i64(f, (int64_t)getppid());
	gs_stats_key(f, ",\n  ", "run");
	gs_fmt_json(f, gs_out_run_id());
	gs_stats_key(f, ",\n  ", "ended_by");
	gs_fmt_json(f, x->ended_by ? x->ended_by : "exit");
	if (gs_config.steps > 0) {
		gs_stats_key(f, ",\n  ", "steps");
		gs_fmt_i64(f, gs_config.steps);
	}
	gs_stats_key(f, ",\n  ", "counters");
	gs_fmt_char(f, '{');
	const char *sep = "\n    ";
#define GS_X(c, s)                                                            \
	gs_stats_key(f, sep, #c);                                             \
	gs_fmt_u64(f, GS_LOAD(gs_stats.c));                                   \
	sep = ",\n    ";
	GS_COUNTERS(GS_X)
#undef GS_X
	gs_fmt_str(f, "\n  }");
	gs_stats_key(f, ",\n  ", "coverage");
	gs_fmt_fixed(f, gs_stats_coverage(&gs_stats), 6);
	gs_stats_key(f, ",\n  ", "coverage_steady");
	gs_fmt_fixed(f, gs_stats_coverage_steady(), 6);
	gs_stats_key(f, ",\n  ", "build_ms");
	gs_fmt_fixed(f, (double)GS_LOAD(gs_stats.build_ns) / 1e6, 3);
	gs_stats_reasons(f, "mismatches_by_reason", gs_stats.mismatch_by, GS_MISMATCH_NREASONS,
			 gs_stats_mismatch_name);
	gs_stats_reasons(f, "flushes_by_reason", gs_stats.flush_by, GS_FLUSH_NREASONS,
			 gs_stats_flush_name);
	gs_stats_key(f, ",\n  ", "config");
	gs_config_write_json(f);
	const gs_seq_info_t *m = gs_stats_main(x->seqs, x->nseqs);
	gs_stats_key(f, ",\n  ", "main_sequence");
	if (m) {
		gs_stats_seq_head(f, m);
		gs_stats_u64(f, "seen", m->seen);
		gs_stats_u64(f, "replays", m->replays);
		gs_stats_u64(f, "eager_passes", m->eager_passes);
		gs_stats_key(f, ", ", "gate");
		gs_fmt_json(f, m->gate ? m->gate : "off");
		gs_fmt_char(f, '}');
	} else {
		gs_fmt_str(f, "null");
	}
	gs_stats_key(f, ",\n  ", "sequences_truncated");
	gs_stats_bool(f, x->truncated);
	gs_stats_key(f, ",\n  ", "sequences");
	gs_fmt_char(f, '[');
	for (size_t i = 0; i < x->nseqs; i++) {
		gs_fmt_str(f, i ? ",\n    " : "\n    ");
		gs_stats_seq(f, &x->seqs[i]);
	}
	gs_fmt_str(f, x->nseqs ? "\n  ]" : "]");
	/* Last, so that a later process of the run can add itself in place (gs_out.h). */
	gs_stats_key(f, ",\n  ", "process_files");
	gs_fmt_str(f, "[]\n}\n");
}

bool gs_stats_write_json(const char *path, bool overwrite, gs_stats_file_t *x)
{
	int e = gs_out_begin(&x->out, path, overwrite, GS_OUT_STATS, "statistics");
	if (e) {
		errno = e;
		return true;
	}
	gs_fmt_t f;
	gs_fmt_init(&f, gs_stats_buf, sizeof(gs_stats_buf));
	f.flush = gs_stats_out;
	f.arg = &x->out.fd;
	gs_stats_body(&f, x);
	if (gs_fmt_flush(&f)) {
		e = errno ? errno : EIO;
		/* Say why: a full disk, a quota, an I/O error. */
		char buf[GS_OUT_NAME_MAX + 128];
		gs_fmt_t m;
		gs_fmt_init(&m, buf, sizeof(buf));
		gs_fmt_str(&m, "cannot write the statistics to ");
		gs_fmt_str(&m, x->out.path);
		gs_fmt_str(&m, ": ");
		gs_fmt_str(&m, gs_fmt_strerror(e));
		gs_log_str(GS_LOG_ERROR, buf);
		gs_out_abort(&x->out);
		errno = e;
		return true;
	}
	e = gs_out_commit(&x->out);
	if (e) {
		errno = e;
		return true;
	}
	return false;
}
