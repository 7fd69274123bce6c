/*
 * The engine: per-stream state, the launch path (learn, hold, match,
 * replay), flushes, and the process lifecycle.
 *
 * Locking: a global mutex guards the stream table; each stream has its own
 * mutex guarding everything in it.  A thread holds at most one stream lock
 * at a time and never takes the table lock while holding a stream lock, so
 * there is no lock-order cycle.  Backend ops are called with the stream
 * lock held; they call the vendor directly and never come back in.
 */
#include "gs_engine_int.h"
#include "gs_log.h"
#include "gs_trace.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <utlist.h>

static pthread_mutex_t gs_table_lock = PTHREAD_MUTEX_INITIALIZER;
static gs_stream_t *gs_streams;       /* uthash by key */
/* On a line of its own (gs_lane.h). */
gs_hot_t gs_hot __attribute__((aligned(64)));
/*
 * Stream states are never freed while the engine runs: a thread may hold a
 * pointer from its cache.  A destroyed stream's state is emptied and kept
 * here for the next stream created.
 */
static gs_stream_t *gs_stream_pool;

_Thread_local gs_lane_cache_t gs_lane_cache GS_TLS_IE;

/* A token unique to the calling thread (the address of its cache). */
static inline const void *gs_thread_token(void)
{
	return &gs_lane_cache;
}

bool gs_engine_active(void)
{
	return __atomic_load_n(&gs_hot.active, __ATOMIC_ACQUIRE);
}

/* ---- streams ----------------------------------------------------------- */

/* A new segment begins at the stream's next position. */
static void gs_segment_begin(gs_stream_t *s)
{
	s->seg_start = s->pos;
	s->seg_hash = 0;
	s->seg_bad = false;
	s->seg_matched = false;
	s->period_on = false;
	gs_period_reset(&s->period);
}

static void gs_stream_free(gs_stream_t *s, bool release_graphs)
{
	gs_seq_free_all(s, release_graphs);
	if (s->ring) {
		for (uint32_t i = 0; i < s->cap; i++)
			free(s->ring[i]);
		free(s->ring);
	}
	free(s->diffs);
	free(s->cold_ids);
	gs_period_free(&s->period);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static gs_stream_t *gs_stream_new(gs_skey_t key, unsigned flags)
{
	gs_stream_t *s = gs_stream_pool;
	if (s) {
		/* Positions keep counting, so nothing stale can match. */
		gs_stream_pool = s->hh.next;
		pthread_mutex_lock(&s->lock);
		s->key = key;
		s->lane.flags = flags;
		gs_segment_begin(s);
		s->ncands = 0;
		s->done = NULL;
		s->nheld = 0;
		s->last_id = 0;
		__atomic_store_n(&s->lane.cold, false, __ATOMIC_RELAXED);
		s->fresh = 0;
		pthread_mutex_unlock(&s->lock);
		return s;
	}
	/* On a line of its own: the cold lane's fields are its first line. */
	if (posix_memalign((void **)&s, 64, sizeof(*s)))
		return NULL;
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->lane.flags = flags;
	s->cap = gs_ring_max() < GS_RING_MIN ? gs_ring_max() : GS_RING_MIN;
	s->seg_hash = 0;
	pthread_mutex_init(&s->lock, NULL);
	s->ring = calloc(s->cap, sizeof(*s->ring));
	s->diffs = calloc(gs_ring_max(), sizeof(*s->diffs));
	if (!s->ring || !s->diffs) {
		gs_stream_free(s, false);
		return NULL;
	}
	return s;
}

/*
 * Double the history (up to max_seq + 1), keeping every record at its
 * position.  When memory is short it stays as it is: a segment longer than
 * it is then not learnable, as when it reaches max_seq.
 */
static void gs_ring_grow(gs_stream_t *s)
{
	uint32_t max = gs_ring_max(), ncap = s->cap * 2 < max ? s->cap * 2 : max;
	gs_rec_t **n = calloc(ncap, sizeof(*n));
	if (!n)
		return;
	uint64_t lo = s->pos > s->cap ? s->pos - s->cap : 0;
	for (uint64_t i = lo; i < s->pos; i++)
		n[i % ncap] = s->ring[i % s->cap];
	free(s->ring);
	s->ring = n;
	s->cap = ncap;
}

/* Find or create the state of a stream; NULL when memory is short. */
static gs_stream_t *gs_stream_get(uintptr_t handle, void *ctx, unsigned flags)
{
	unsigned gen = __atomic_load_n(&gs_hot.generation, __ATOMIC_ACQUIRE);
	if (gs_lane_cache.lane && gs_lane_cache.key.handle == handle &&
	    gs_lane_cache.key.ctx == ctx && gs_lane_cache.gen == gen)
		return gs_stream_of(gs_lane_cache.lane);
	gs_skey_t key;
	memset(&key, 0, sizeof(key));
	key.handle = handle;
	key.ctx = ctx;
	gs_stream_t *s;
	pthread_mutex_lock(&gs_table_lock);
	HASH_FIND(hh, gs_streams, &key, sizeof(key), s);
	if (!s && (s = gs_stream_new(key, flags)) != NULL) {
		GS_HASH_TRY();
		HASH_ADD(hh, gs_streams, key, sizeof(key), s);
		if (gs_hash_oom) { /* no table: this stream passes through */
			s->hh.next = gs_stream_pool;
			gs_stream_pool = s;
			s = NULL;
		}
	}
	gen = __atomic_load_n(&gs_hot.generation, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&gs_table_lock);
	gs_lane_cache.key = key;
	gs_lane_cache.gen = gen;
	gs_lane_cache.lane = s ? &s->lane : NULL;
	return s;
}

/* ---- submission of held work -------------------------------------------- */

static void gs_note_held(gs_stream_t *s, uint32_t nheld)
{
	uint32_t before = s->nheld;
	__atomic_store_n(&s->nheld, nheld, __ATOMIC_RELEASE);
	if (!before && nheld)
		__atomic_fetch_add(&gs_hot.held_streams, 1, __ATOMIC_RELAXED);
	else if (before && !nheld)
		__atomic_fetch_sub(&gs_hot.held_streams, 1, __ATOMIC_RELAXED);
}

static void gs_match_clear(gs_stream_t *s)
{
	gs_gate_abandon(s);
	s->pass_seq = NULL;
	s->ncands = 0;
	s->done = NULL;
	s->chunk = 0;
	s->submitted = 0;
	s->pass_clean = true;
	gs_note_held(s, 0);
}

/* Submit held records [from, to) eagerly, in order; `gated`: by the gate's choice. */
static void gs_submit_held(gs_stream_t *s, uint32_t from, uint32_t to, bool gated)
{
	for (uint32_t i = from; i < to; i++) {
		gs_rec_t *r = gs_ring_at(s, s->held_start + i);
		int rc = gs_backend->submit(r, s->key.handle);
		if (gated)
			GS_STAT_INC(gated);
		else
			GS_STAT_INC(released);
		if (gs_trace_on)
			gs_trace_launch(gated ? (s->api ? s->api : "gated") : "release", s->key.handle, r,
					gated ? "eager" : "released");
		if (rc) {
			/* The launch already returned success to the application, as a
			 * launch whose failure shows up asynchronously would. */
			GS_STAT_INC(fallbacks);
			gs_log_once(GS_LOG_WARN, "a held launch failed when submitted (status %d)", rc);
		}
	}
}

static void gs_release(gs_stream_t *s, uint32_t from, uint32_t to)
{
	gs_submit_held(s, from, to, false);
}

/*
 * A pass the gate sends eagerly: what is held of q goes now, as it came.
 * Returns true when the pass is complete (q's last record went).
 */
static bool gs_eager_pass(gs_stream_t *s, gs_seq_t *q)
{
	uint32_t end = s->nheld < q->n ? s->nheld : q->n;
	gs_submit_held(s, s->submitted, end, true);
	s->submitted = end;
	if (q != s->done)
		s->done = NULL; /* its records are gone: it can no longer replay */
	if (end < q->n)
		return false;
	q->eager_passes++;
	q->mismatch_run = 0;
	gs_seq_touch(s, q);
	gs_gate_complete(s, q, true);
	return true;
}

static void gs_mismatch(gs_stream_t *s, gs_seq_t *q, gs_mismatch_reason_t why, uint32_t pos,
			const gs_rec_t *got)
{
	GS_STAT_INC(mismatches);
	GS_STAT_INC(mismatch_by[why]);
	q->mismatches++;
	q->mismatch_run++;
	if (gs_trace_on) {
		const gs_rec_t *want = pos < q->n && q->recs ? q->recs[pos] : NULL;
		const char *field = "length";
		char e[64] = "", g[64] = "";
		if (want && got) {
			field = gs_rec_diff_field(want, got);
			if (!strcmp(field, "args")) {
				int a = gs_rec_first_diff(want, got);
				snprintf(e, sizeof(e), "arg %d", a);
				field = e;
			}
			snprintf(g, sizeof(g), "%016llx", (unsigned long long)got->hash);
		}
		gs_trace_mismatch(s->key.handle, q->id, pos, why, field, NULL, got ? g : NULL);
	}
	if (q->mismatch_run >= (uint64_t)gs_config.mismatch_limit)
		gs_seq_retire(s, q);
}

/* Patching is worth it while a graph launch plus the patches cost less than
 * submitting every record eagerly (costs in units of one eager launch). */
static bool gs_patch_worth(uint32_t n, uint32_t ndiff)
{
	return gs_config.graph_cost + ndiff * gs_config.patch_cost < (double)n;
}

/*
 * The backend failed while replaying records [b, e) of q: they go eagerly,
 * in order, and q retires (its graph may no longer match what it holds).
 * Each kind of failure is logged once.  Returns true (the match ends).
 */
static bool gs_replay_failed(gs_stream_t *s, gs_seq_t *q, uint32_t b, uint32_t e,
			     gs_mismatch_reason_t why, uint32_t pos, const gs_rec_t *r, int rc)
{
	static int logged[GS_MISMATCH_NREASONS];
	const char *what = why == GS_MISMATCH_PATCH_FAILED ? "graph_patch" : "graph_launch";
	GS_STAT_INC(fallbacks);
	gs_trace_fallback(what, rc);
	if (!__atomic_exchange_n(&logged[why], 1, __ATOMIC_RELAXED))
		gs_log(GS_LOG_WARN, "%s failed (status %d); that sequence goes eager", what, rc);
	gs_release(s, b, e);
	gs_mismatch(s, q, why, pos, r);
	gs_seq_retire(s, q);
	return true;
}

/*
 * Submit chunk j of q over the held records it covers: revalidate every
 * byte, patch what drifted, launch the chunk's graph.  Drift past the cost
 * rule releases the chunk's records eagerly.  A backend failure releases
 * them too and retires q; then the function returns true and the caller
 * ends the match.  The program's results never depend on the graph.
 */
static bool gs_replay_chunk(gs_stream_t *s, gs_seq_t *q, uint32_t j)
{
	uint32_t b = gs_chunk_begin(q, j), e = q->chunk_end[j], ndiff = 0;
	if (j >= __atomic_load_n(&q->ready, __ATOMIC_ACQUIRE)) {
		/* Still being built: this chunk goes eagerly, the pass goes on. */
		s->submitted = e;
		gs_release(s, b, e);
		return false;
	}
	for (uint32_t i = b; i < e; i++)
		if (gs_rec_first_diff(q->recs[i], gs_ring_at(s, s->held_start + i)) >= 0)
			s->diffs[ndiff++] = i;
	s->submitted = e;
	if (ndiff && !gs_patch_worth(e - b, ndiff)) {
		s->pass_clean = false;
		gs_mismatch(s, q, GS_MISMATCH_DRIFT, s->diffs[0], gs_ring_at(s, s->held_start + s->diffs[0]));
		gs_release(s, b, e);
		return q->state != GS_SEQ_ARMED;
	}
	for (uint32_t k = 0; k < ndiff; k++) {
		uint32_t i = s->diffs[k];
		const gs_rec_t *r = gs_ring_at(s, s->held_start + i);
		int rc = gs_backend->graph_patch(q->graphs[j], i - b, r);
		if (rc)
			return gs_replay_failed(s, q, b, e, GS_MISMATCH_PATCH_FAILED, i, r, rc);
		/* The baked record follows the graph: same shape, new bytes. */
		memcpy(q->recs[i]->args, r->args, r->nbytes);
		q->recs[i]->hash = r->hash;
	}
	int rc = gs_backend->graph_launch(q->graphs[j], s->key.handle);
	if (rc)
		return gs_replay_failed(s, q, b, e, GS_MISMATCH_LAUNCH_FAILED, b, NULL, rc);
	GS_STAT_INC(replays);
	GS_STAT_ADD(replayed, e - b);
	if (ndiff) {
		GS_STAT_ADD(patches, ndiff);
		GS_STAT_INC(patched_replays);
		q->patches += ndiff;
	}
	if (gs_trace_on)
		gs_trace_replay(s->key.handle, q->id, e - b, ndiff, j);
	return false;
}

/* Submit every complete chunk of q not yet submitted; true on failure. */
static bool gs_replay_ready(gs_stream_t *s, gs_seq_t *q)
{
	while (s->chunk < q->nchunks && q->chunk_end[s->chunk] <= s->nheld)
		if (gs_replay_chunk(s, q, s->chunk++))
			return true;
	if (s->chunk == q->nchunks) {
		q->replays++;
		if (s->pass_clean)
			q->mismatch_run = 0;
		gs_seq_touch(s, q);
		gs_gate_complete(s, q, false);
	}
	return false;
}

/*
 * End the current match.  A complete candidate is replayed; held records
 * not yet submitted go eagerly, in order.  `why` is the mismatch charged
 * when the sequence being matched did not complete.
 */
static void gs_match_end(gs_stream_t *s, gs_mismatch_reason_t why, const gs_rec_t *got, bool charge)
{
	uint32_t nheld = s->nheld;
	if (s->done) {
		if (gs_gate_eager(s, s->done))
			gs_eager_pass(s, s->done);
		else
			gs_replay_ready(s, s->done);
	} else if (charge && s->ncands && gs_seq_matchable(s->cands[0])) {
		gs_mismatch(s, s->cands[0], why, nheld, got);
	}
	gs_release(s, s->submitted, nheld);
	gs_match_clear(s);
}

/* ---- the launch path ----------------------------------------------------- */

static bool gs_try_start(gs_stream_t *s, gs_rec_t *r, uint64_t at);

/* Hold r as the next record of the current match, or end the match. */
static bool gs_match_next(gs_stream_t *s, gs_rec_t *r, uint64_t at)
{
	uint32_t k = s->nheld, keep = 0;
	for (uint32_t i = 0; i < s->ncands; i++) {
		gs_seq_t *q = s->cands[i];
		if (gs_seq_matchable(q) && q->n > k && gs_rec_same_shape(q->recs[k], r))
			s->cands[keep++] = q;
	}
	if (!keep) {
		gs_match_end(s, GS_MISMATCH_STRUCTURE, r, true);
		return gs_try_start(s, r, at);
	}
	s->ncands = keep;
	s->seg_matched = true;
	gs_note_held(s, k + 1);
	GS_STAT_INC(held);
	if (gs_trace_on)
		gs_trace_launch(s->api ? s->api : "held", s->key.handle, r, "held");
	bool longer = false;
	for (uint32_t i = 0; i < keep; i++) {
		if (s->cands[i]->n == k + 1)
			s->done = s->cands[i];
		else
			longer = true;
	}
	/*
	 * With one candidate left (or one complete and none longer), its
	 * complete chunks go now; once the longer one commits a chunk, a
	 * shorter complete candidate can no longer be replayed on its own.
	 */
	gs_seq_t *q = !longer ? s->done : (keep == 1 ? s->cands[0] : NULL);
	if (!q)
		return true;
	if (gs_gate_eager(s, q)) {
		if (gs_eager_pass(s, q))
			gs_match_clear(s);
		return true;
	}
	uint32_t before = s->chunk;
	if (gs_replay_ready(s, q)) {
		gs_release(s, s->submitted, s->nheld);
		gs_match_clear(s);
		return true;
	}
	if (s->chunk > before && q != s->done)
		s->done = NULL;
	if (s->chunk == q->nchunks)
		gs_match_clear(s);
	return true;
}

/*
 * The armed sequences that may begin with r (at most GS_MAX_CANDS, into
 * out); `anchored`: r begins a segment, where any may, not only periodic ones.
 */
static uint32_t gs_starts(const gs_stream_t *s, const gs_rec_t *r, bool anchored,
			  gs_seq_t **out)
{
	if (!(s->first_bloom & (1ULL << (r->shape & 63))))
		return 0;
	uint32_t n = 0;
	for (gs_seq_t *q = s->lru; q && n < GS_MAX_CANDS; q = q->next)
		if (gs_seq_matchable(q) && q->first_shape == r->shape && (q->periodic || anchored) &&
		    gs_rec_same_shape(q->recs[0], r))
			out[n++] = q;
	return n;
}

/* Begin matching at r if an armed sequence may start there. */
static bool gs_try_start(gs_stream_t *s, gs_rec_t *r, uint64_t at)
{
	uint32_t n = gs_starts(s, r, at == s->seg_start, s->cands);
	if (!n)
		return false;
	gs_match_clear(s);
	s->ncands = n;
	s->held_start = at;
	gs_gate_begin(s, s->cands[0]);
	return gs_match_next(s, r, at);
}

static void gs_period_feed(gs_stream_t *s, const gs_rec_t *r, uint64_t at);

/* Learning on every record: the segment hash and period detection. */
static void gs_learn_record(gs_stream_t *s, const gs_rec_t *r, uint64_t at)
{
	s->seg_hash = gs_hash_step(s->seg_hash, r->shape);
	uint64_t len = at - s->seg_start + 1;
	if (len * 2 >= s->cap && s->cap < gs_ring_max())
		gs_ring_grow(s);
	if (len >= s->cap)
		s->seg_bad = true; /* older records of the segment are overwritten */
	if (!gs_config.period)
		return;
	if (!s->period_on) {
		uint64_t after = (uint64_t)gs_config.period_after;
		if (after > gs_ring_max() - 1)
			after = gs_ring_max() - 1;
		if (len < after)
			return;
		/* A long segment: detection starts, fed what the history holds of it. */
		if (!s->period.cap && gs_period_init(&s->period, gs_ring_max()))
			return;
		s->period_on = true;
		gs_period_reset(&s->period);
		uint64_t keep = s->cap - 1; /* the records the history still holds */
		uint64_t b = at + 1 >= keep && at + 1 - keep > s->seg_start ? at + 1 - keep : s->seg_start;
		for (uint64_t i = b; i < at; i++) {
			const gs_rec_t *o = gs_ring_at(s, i);
			if (o)
				gs_period_feed(s, o, i);
			else
				gs_period_reset(&s->period); /* taken: start after it */
		}
	}
	gs_period_feed(s, r, at);
}

/* Push one record into period detection; arm what it finds. */
static void gs_period_feed(gs_stream_t *s, const gs_rec_t *r, uint64_t at)
{
	uint32_t len = gs_period_push(&s->period, r->hash, (uint32_t)gs_config.min_seq,
				      (uint32_t)gs_config.learn_reps);
	if (!len || len > (uint32_t)gs_config.max_seq)
		return;
	uint64_t from = at + 1 - len;
	uint64_t id = gs_seq_id(s, from, len);
	if (!id)
		return;
	gs_seq_t *q = gs_seq_find(s, id);
	if (q && q->state != GS_SEQ_LEARNING) {
		q->periodic = true;
		return;
	}
	if (!q && !(q = gs_seq_add(s, id, len, gs_ring_at(s, from)->shape)))
		return;
	q->periodic = true;
	q->seen += (uint64_t)gs_config.learn_reps;
	GS_STAT_INC(periods);
	gs_trace_learned(s->key.handle, id, len, "period");
	uint64_t span = at + 1 - s->seg_start;
	/* Records held by a match in progress must stay; otherwise take them,
	 * and the segment they came from can no longer be learned. */
	bool steal = s->ncands == 0;
	gs_seq_arm(s, q, from, span ? (gs_clock_ns() - s->seg_t0) / span : 0, steal);
	if (steal)
		s->seg_bad = true;
}

/* ---- cold streams (see gs_stream_t and docs/how-it-works.md) ------------- */

_Static_assert(offsetof(gs_stream_t, lane) == 0 && sizeof(gs_lane_t) <= 64,
	       "a stream state's lane is its first cache line");

void gs_lane_wait(gs_lane_t *l)
{
	do {
		while (__atomic_load_n(&l->spin, __ATOMIC_RELAXED))
			sched_yield();
	} while (__atomic_exchange_n(&l->spin, 1, __ATOMIC_ACQUIRE));
}

/* The cold segment's lock: held for a few instructions (the lane) or for
 * the end of a segment, never across a call that may block or take a lock. */
static inline void gs_cold_lock(gs_stream_t *s)
{
	gs_lane_lock(&s->lane);
}

static inline void gs_cold_unlock(gs_stream_t *s)
{
	gs_lane_unlock(&s->lane);
}

/* A new cold segment begins; cold lock held. */
static void gs_cold_segment_begin(gs_stream_t *s)
{
	s->lane.hash = 0;
	s->lane.len = 0;
	s->lane.fast = 0;
}

/* Stream lock held. */
static void gs_cold_enter(gs_stream_t *s)
{
	if (!s->cold_ids && !(s->cold_ids = calloc(GS_COLD_IDS, sizeof(*s->cold_ids))))
		return; /* no memory for it: the stream stays warm */
	gs_cold_lock(s);
	__atomic_store_n(&s->lane.cold, true, __ATOMIC_RELAXED);
	gs_cold_segment_begin(s);
	gs_cold_unlock(s);
	s->last_id = 0; /* nothing recorded to speculate from */
	GS_STAT_INC(cold_streams);
	gs_log(GS_LOG_DEBUG, "stream %#lx goes cold: %u segments in a row did not repeat",
	       (unsigned long)s->key.handle, s->fresh);
}

/*
 * Keep records again; the next launch begins a segment (pos did not move).
 * Both locks held.
 */
static void gs_cold_wake(gs_stream_t *s)
{
	__atomic_store_n(&s->lane.cold, false, __ATOMIC_RELAXED);
	s->fresh = 0;
	gs_segment_begin(s);
	GS_STAT_INC(cold_woken);
}

/* The end of a cold segment: count its launches, and wake if it repeated.  Both locks held. */
static void gs_cold_end(gs_stream_t *s)
{
	/* The lane counts nothing itself (no atomics on it). */
	GS_STAT_ADD(launches, s->lane.fast);
	GS_STAT_ADD(passed, s->lane.fast);
	GS_STAT_ADD(cold_passed, s->lane.len);
	if (s->lane.len >= (uint64_t)gs_config.min_seq) {
		uint64_t id = gs_hash_step(s->lane.hash, s->lane.len);
		uint64_t *slot = &s->cold_ids[id & (GS_COLD_IDS - 1)];
		if (*slot == id) {
			*slot = 0;
			gs_cold_wake(s);
		} else {
			*slot = id;
		}
	}
	gs_cold_segment_begin(s);
}

/* One more launch in a cold segment.  Both locks held. */
static void gs_cold_step(gs_stream_t *s, uint64_t key)
{
	s->lane.hash = gs_hash_step(s->lane.hash, key);
	/* A segment this long needs period detection, which needs records. */
	if (++s->lane.len >= (uint64_t)gs_config.period_after && gs_config.period) {
		gs_cold_end(s);
		if (__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED))
			gs_cold_wake(s);
	}
}

/* The end of a segment: learn it, then start the next one. */
static void gs_segment_end(gs_stream_t *s)
{
	if (__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED)) {
		gs_cold_lock(s);
		gs_cold_end(s);
		gs_cold_unlock(s);
		return;
	}
	uint64_t len = s->pos - s->seg_start;
	bool repeated = s->seg_matched;
	if (len >= (uint64_t)gs_config.min_seq && !s->seg_bad) {
		uint64_t id = gs_hash_step(s->seg_hash, len);
		gs_seq_t *q = gs_seq_find(s, id);
		if (q) {
			repeated = true;
		} else {
			q = gs_seq_add(s, id, (uint32_t)len, gs_ring_at(s, s->seg_start)->shape);
			if (q)
				gs_trace_learned(s->key.handle, id, (uint32_t)len, "boundary");
		}
		if (q) {
			q->seen++;
			gs_seq_touch(s, q);
			if (q->spec && q->seen >= (uint64_t)gs_config.learn_reps)
				q->spec = false; /* the guess repeated: match it */
			if (gs_config.speculate && gs_config.async_build && gs_config.learn_reps > 1 &&
			    q->state == GS_SEQ_LEARNING && q->seen + 1 == (uint64_t)gs_config.learn_reps) {
				s->last_id = q->id;
				s->last_start = s->seg_start;
				s->last_host_ns = (gs_clock_ns() - s->seg_t0) / len;
			}
			if (q->state == GS_SEQ_LEARNING && q->seen >= (uint64_t)gs_config.learn_reps)
				gs_seq_arm(s, q, s->seg_start, (gs_clock_ns() - s->seg_t0) / len, true);
			else if (q->state == GS_SEQ_RETIRED && q->cooldown_left > 0 &&
				 q->retired_at <= s->seg_start && --q->cooldown_left == 0) {
				/* Sightings after the segment that retired it count. */
				q->state = GS_SEQ_LEARNING;
				q->seen = 1;
				q->mismatch_run = 0;
				GS_STAT_INC(relearned);
			}
		}
	}
	gs_segment_begin(s);
	/*
	 * Empty segments (a flush with nothing since the last) say nothing, nor
	 * do segments another thread's call cut short (its syncs flush every
	 * stream, at places that have nothing to do with this stream's steps).
	 */
	if (repeated)
		s->fresh = 0;
	else if (len && s->seg_thread == gs_thread_token() && gs_config.cold_after &&
		 ++s->fresh >= (uint64_t)gs_config.cold_after && !gs_trace_on && !s->ncands)
		gs_cold_enter(s);
}

/*
 * Submit what the stream holds and end its segment; lock held.  `own` says
 * the flush comes from an operation on this stream: a match it cuts is then
 * a mismatch of the sequence.  A flush from elsewhere (every stream's, the
 * legacy stream's peers) interrupts the match without charging it, so
 * another thread's syncs cannot retire this stream's sequences.
 */
static void gs_flush_locked(gs_stream_t *s, gs_flush_reason_t why, const char *api, bool own)
{
	if (s->nheld || s->ncands) {
		GS_STAT_INC(flushes);
		GS_STAT_INC(flush_by[why]);
		gs_trace_flush(s->key.handle, why, api, s->nheld);
		gs_match_end(s, GS_MISMATCH_CUT, NULL, own);
	}
	gs_segment_end(s);
}

static void gs_flush_one(gs_stream_t *s, gs_flush_reason_t why, const char *api, bool own)
{
	pthread_mutex_lock(&s->lock);
	if (__atomic_load_n(&s->built, __ATOMIC_ACQUIRE))
		gs_seq_publish(s);
	gs_flush_locked(s, why, api, own);
	pthread_mutex_unlock(&s->lock);
}

/*
 * The legacy default stream waits for all blocking streams of its context,
 * and blocking streams wait for it.  Before work on one side is submitted
 * (or held behind work that will be), held work on the other side must go.
 * The table lock is held across the flushes: the only lock order in the
 * engine is table, then stream.
 */
static void gs_flush_legacy_peers(gs_stream_t *self, void *ctx, unsigned flags, const char *api)
{
	if (!(flags & (GS_STREAM_LEGACY | GS_STREAM_BLOCKING)) ||
	    !__atomic_load_n(&gs_hot.held_streams, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&gs_table_lock);
	for (gs_stream_t *s = gs_streams; s; s = s->hh.next) {
		if (s == self || s->key.ctx != ctx || !__atomic_load_n(&s->nheld, __ATOMIC_ACQUIRE))
			continue;
		bool tied = (flags & GS_STREAM_LEGACY) ? (s->lane.flags & GS_STREAM_BLOCKING) != 0
						       : (s->lane.flags & GS_STREAM_LEGACY) != 0;
		if (tied)
			gs_flush_one(s, GS_FLUSH_LEGACY, api, false);
	}
	pthread_mutex_unlock(&gs_table_lock);
}

static int gs_pass(gs_stream_t *s, gs_rec_t *r, const char *api)
{
	int rc = gs_backend->submit(r, s ? s->key.handle : 0);
	GS_STAT_INC(passed);
	if (gs_trace_on)
		gs_trace_launch(api, s ? s->key.handle : 0, r, "eager");
	return rc;
}

int gs_engine_launch(uintptr_t handle, void *ctx, unsigned sflags, gs_rec_t *rec, const char *api)
{
	GS_STAT_INC(launches);
	gs_stream_t *s = NULL;
	if (!gs_engine_active() || __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) ||
	    (sflags & GS_STREAM_PASSTHRU) || !(s = gs_stream_get(handle, ctx, sflags))) {
		gs_flush_legacy_peers(NULL, ctx, sflags, api);
		int rc = gs_backend ? gs_backend->submit(rec, handle) : -1;
		GS_STAT_INC(passed);
		return rc;
	}
	gs_flush_legacy_peers(s, ctx, s->lane.flags, api);

	pthread_mutex_lock(&s->lock);
	if (__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED)) {
		gs_seq_t *cands[GS_MAX_CANDS];
		gs_cold_lock(s);
		bool first = !s->lane.len;
		gs_cold_unlock(s);
		/* A segment that begins like an armed sequence wakes the stream. */
		bool wake = first && gs_starts(s, rec, true, cands);
		gs_cold_lock(s);
		if (wake)
			gs_cold_wake(s);
		else
			gs_cold_step(s, rec->shape);
		gs_cold_unlock(s);
		if (!wake) {
			int rc = gs_pass(s, rec, api);
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
	}
	uint64_t at = s->pos;
	gs_rec_t **slot = &s->ring[at % s->cap];
	if (gs_rec_copy(slot, rec)) {
		/* No memory for the history: submit everything and pass through. */
		gs_flush_locked(s, GS_FLUSH_OTHER, api, false);
		pthread_mutex_unlock(&s->lock);
		return gs_pass(NULL, rec, api);
	}
	gs_rec_t *r = *slot;
	if (at == s->seg_start) {
		s->seg_t0 = gs_clock_ns(); /* one clock read a segment, for the chunk plan */
		if (s->last_id)
			gs_seq_speculate(s, r);
	}
	if (__atomic_load_n(&s->built, __ATOMIC_ACQUIRE))
		gs_seq_publish(s);
	r->orig = rec->orig; /* valid until this call returns */
	s->api = api;
	s->seg_thread = gs_thread_token();
	s->pos++;
	int rc = 0;
	bool held = s->ncands ? gs_match_next(s, r, at) : gs_try_start(s, r, at);
	if (!held) {
		rc = gs_pass(s, r, api);
		if (rc)
			s->seg_bad = true; /* a failed launch is no sequence element */
	}
	r->orig = NULL;
	s->api = NULL;
	gs_learn_record(s, r, at);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

bool gs_engine_cold(uintptr_t handle, void *ctx, unsigned sflags, uint64_t key)
{
	gs_stream_t *s;
	if ((sflags & GS_STREAM_PASSTHRU) || !gs_engine_active() ||
	    __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) ||
	    !(s = gs_stream_get(handle, ctx, sflags)) || !__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED))
		return false;
	gs_flush_legacy_peers(s, ctx, s->lane.flags, "launch");
	return gs_lane_count(&s->lane, key);
}

void gs_engine_flush_stream(uintptr_t handle, void *ctx, unsigned sflags, gs_flush_reason_t why,
			    const char *api)
{
	if (!gs_engine_active())
		return;
	gs_stream_t *s = gs_stream_get(handle, ctx, sflags);
	gs_flush_legacy_peers(s, ctx, s ? s->lane.flags : sflags, api);
	if (s)
		gs_flush_one(s, why, api, true);
}

void gs_engine_flush_all(gs_flush_reason_t why, const char *api)
{
	if (!gs_engine_active())
		return;
	pthread_mutex_lock(&gs_table_lock);
	for (gs_stream_t *s = gs_streams; s; s = s->hh.next)
		gs_flush_one(s, why, api, false);
	pthread_mutex_unlock(&gs_table_lock);
}

/*
 * Submit a stream's held work, drop its sequences and free its records,
 * and keep the emptied state for reuse (stream states are never freed while
 * the engine runs).  The caller removed it from the table (lock held).
 */
static void gs_stream_retire(gs_stream_t *s, gs_flush_reason_t why, const char *api)
{
	pthread_mutex_lock(&s->lock);
	gs_flush_locked(s, why, api, false);
	gs_seq_free_all(s, true);
	s->nseqs = 0;
	s->nodes = 0;
	for (uint32_t i = 0; i < s->cap; i++) {
		free(s->ring[i]);
		s->ring[i] = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	s->hh.next = gs_stream_pool;
	gs_stream_pool = s;
}

void gs_engine_forget_funcs(const char *api)
{
	if (!gs_engine_active())
		return;
	pthread_mutex_lock(&gs_table_lock);
	gs_stream_t *s, *tmp;
	HASH_ITER(hh, gs_streams, s, tmp) {
		HASH_DELETE(hh, gs_streams, s);
		gs_stream_retire(s, GS_FLUSH_MODULE, api);
	}
	__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&gs_table_lock);
	/*
	 * Every sequence is cancelled now, but the builder may be building
	 * one with this module's functions or in this context: the call that
	 * unloads them reaches the driver only once it is done.
	 */
	gs_build_wait();
}

void gs_engine_stream_destroy(uintptr_t handle, void *ctx, const char *api)
{
	if (!gs_engine_active())
		return;
	gs_skey_t key;
	memset(&key, 0, sizeof(key));
	key.handle = handle;
	key.ctx = ctx;
	gs_stream_t *s;
	pthread_mutex_lock(&gs_table_lock);
	HASH_FIND(hh, gs_streams, &key, sizeof(key), s);
	if (s) {
		HASH_DELETE(hh, gs_streams, s);
		__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
		gs_stream_retire(s, GS_FLUSH_STREAM, api);
	}
	pthread_mutex_unlock(&gs_table_lock);
}

void gs_engine_capture_begin(const char *api)
{
	if (!gs_engine_active())
		return;
	gs_build_pause(); /* before the flush, which may queue a build */
	gs_engine_flush_all(GS_FLUSH_CAPTURE, api);
	__atomic_fetch_add(&gs_hot.capturing, 1, __ATOMIC_ACQ_REL);
}

bool gs_engine_capturing(void)
{
	return __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) != 0;
}

void gs_engine_capture_end(const char *api)
{
	(void)api;
	if (!gs_engine_active())
		return;
	int n = __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE);
	while (n > 0 && !__atomic_compare_exchange_n(&gs_hot.capturing, &n, n - 1, false,
						     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	if (n > 0)
		gs_build_resume();
}

size_t gs_engine_seq_info(gs_seq_info_t *out, size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&gs_table_lock);
	for (gs_stream_t *s = gs_streams; s; s = s->hh.next) {
		pthread_mutex_lock(&s->lock);
		for (gs_seq_t *q = s->lru; q; q = q->next, n++)
			if (n < max)
				gs_seq_info_fill(s, q, &out[n]);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&gs_table_lock);
	return n + gs_seq_gone_info(n < max ? out + n : NULL, n < max ? max - n : 0);
}

/* ---- lifecycle ------------------------------------------------------------ */

/* Per-sequence figures gathered without allocation when there are few. */
#define GS_SEQ_INLINE 64

/* The statistics file, with every sequence's figures; true on failure. */
static bool gs_engine_write_stats(const char *path, bool overwrite)
{
	gs_seq_info_t inl[GS_SEQ_INLINE];
	gs_seq_info_t *info = inl;
	size_t cap = GS_SEQ_INLINE;
	size_t total = gs_engine_seq_info(inl, cap);
	if (total > cap) {
		/* Sequences may be added meanwhile: leave room and take what fits. */
		size_t want = total + total / 4 + 16;
		gs_seq_info_t *big = malloc(want * sizeof(*big));
		if (big) {
			info = big;
			cap = want;
			total = gs_engine_seq_info(big, cap);
		}
	}
	size_t n = total < cap ? total : cap;
	bool err = gs_stats_write_json(path, overwrite, info, n, total > n);
	if (info != inl)
		free(info);
	return err;
}

static void gs_engine_atexit(void)
{
	gs_engine_fini();
}

static void gs_fork_prepare(void)
{
	gs_engine_flush_all(GS_FLUSH_EXIT, "fork");
	gs_build_wait(); /* no build may be half done in the child's copy */
	pthread_mutex_lock(&gs_table_lock);
}

static void gs_fork_parent(void)
{
	pthread_mutex_unlock(&gs_table_lock);
}

/*
 * The child starts clean: a GPU context does not survive fork, so the
 * child's copy of the streams and graphs is dropped without a vendor call,
 * and the engine stays off there.
 */
static void gs_fork_child(void)
{
	pthread_mutex_init(&gs_table_lock, NULL);
	gs_streams = NULL;
	gs_stream_pool = NULL;
	__atomic_store_n(&gs_hot.active, false, __ATOMIC_RELEASE);
	__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
	gs_hot.held_streams = 0;
	gs_trace_on = false;
	gs_build_forget();
}

static pthread_mutex_t gs_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool gs_inited;

bool gs_engine_init(const gs_ops_t *ops)
{
	pthread_mutex_lock(&gs_init_lock);
	if (gs_inited) {
		/* One backend owns the engine; a second one (a process that loads
		 * both vendors' libraries) passes its calls straight through. */
		bool mine = gs_backend == ops && gs_engine_active();
		pthread_mutex_unlock(&gs_init_lock);
		if (!mine)
			gs_log_once(GS_LOG_INFO, "the %s backend passes through: the engine belongs to %s",
				    ops->name, gs_backend ? gs_backend->name : "none");
		return !mine;
	}
	gs_inited = true;
	gs_config_load();
	gs_seq_gone_reset();
	gs_backend = ops;
	if (gs_config.enable) {
		if (gs_config.trace_path[0] && !gs_config_secure() &&
		    gs_trace_open(gs_config.trace_path, gs_config.trace_max, gs_config.overwrite))
			gs_log(GS_LOG_WARN, "cannot write the trace to %s; tracing is off",
			       gs_config.trace_path);
		static bool registered;
		if (!registered) {
			registered = true;
			atexit(gs_engine_atexit);
			pthread_atfork(gs_fork_prepare, gs_fork_parent, gs_fork_child);
		}
		if (gs_config.async_build)
			gs_build_start();
		gs_hot.cold_limit = gs_config.period ? (uint64_t)gs_config.period_after : UINT64_MAX;
		__atomic_store_n(&gs_hot.active, true, __ATOMIC_RELEASE);
		gs_log(GS_LOG_INFO, "active with the %s backend", ops->name);
	}
	pthread_mutex_unlock(&gs_init_lock);
	return !gs_config.enable;
}

void gs_engine_fini(void)
{
	pthread_mutex_lock(&gs_init_lock);
	if (!gs_engine_active()) {
		pthread_mutex_unlock(&gs_init_lock);
		return;
	}
	gs_engine_flush_all(GS_FLUSH_EXIT, "exit");
	gs_build_stop(); /* graphs being built are published or freed first */
	__atomic_store_n(&gs_hot.active, false, __ATOMIC_RELEASE);
	if (gs_config.summary) {
		char line[512];
		gs_stats_summary(line, sizeof(line) - 1);
		size_t len = strlen(line);
		line[len++] = '\n';
		ssize_t w = write(STDERR_FILENO, line, len);
		(void)w;
	}
	if (gs_config.stats_path[0] && !gs_config_secure() &&
	    gs_engine_write_stats(gs_config.stats_path, gs_config.overwrite))
		gs_log(GS_LOG_WARN, "cannot write statistics to %s", gs_config.stats_path);
	gs_trace_close();
	pthread_mutex_lock(&gs_table_lock);
	gs_stream_t *s, *tmp;
	HASH_ITER(hh, gs_streams, s, tmp) {
		HASH_DELETE(hh, gs_streams, s);
		gs_stream_free(s, true);
	}
	while ((s = gs_stream_pool) != NULL) {
		gs_stream_pool = s->hh.next;
		gs_stream_free(s, true);
	}
	__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&gs_table_lock);
	gs_inited = false; /* a test may start the engine again */
	pthread_mutex_unlock(&gs_init_lock);
}
