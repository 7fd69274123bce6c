/*
 * Sequences (gs_seq.h): the per-stream cache, hashed by id (uthash) and
 * kept on an LRU list, bounded in count (GRAPHSHIM_MAX_SEQS) and in the
 * nodes of armed or building sequences (GRAPHSHIM_MAX_NODES); a
 * sequence's bookkeeping (sightings, passes, mismatches, retirement,
 * cool-down); and the figures of sequences, kept after they are dropped.
 */
#include "gs_backend.h"
#include "gs_seq.h"
#include "gs_submit.h"
#include "gs_stream.h"
#include "gs_trace.h"
#include "gs_variant.h"

#include <stdlib.h>
#include <utlist.h>

uint64_t gs_seq_id(const gs_stream_t *s, uint64_t from, uint32_t n)
{
	uint64_t h = 0;
	for (uint32_t i = 0; i < n; i++) {
		const gs_rec_t *r = gs_stream_at(s, from + i);
		if (!r)
			return 0; /* taken by an earlier arming: no sequence here */
		h = gs_hash_step(h, r->shape);
	}
	return gs_hash_step(h, n);
}

gs_seq_t *gs_seq_find(gs_stream_t *s, uint64_t id)
{
	gs_seq_t *q;
	HASH_FIND(hh, s->cache.seqs, &id, sizeof(id), q);
	return q;
}

void gs_seq_touch(gs_stream_t *s, gs_seq_t *q)
{
	if (s->cache.lru == q)
		return;
	DL_DELETE2(s->cache.lru, q, prev, next);
	DL_PREPEND2(s->cache.lru, q, prev, next);
}

void gs_seq_release_graphs(gs_seq_t *q)
{
	gs_submit_drain(); /* no pending job may name its graphs or records */
	q->sub_fail = 0;
	gs_variant_release(q, true);
	if (q->graphs) {
		for (uint32_t j = 0; j < q->nchunks; j++)
			if (q->graphs[j])
				gs_backend->graph_destroy(q->graphs[j]);
		free(q->graphs);
		q->graphs = NULL;
	}
	free(q->chunk_end);
	q->chunk_end = NULL;
	q->nchunks = 0;
	q->ready = 0;
}

void gs_seq_release(gs_seq_t *q)
{
	gs_gate_release(q);
	gs_seq_release_graphs(q);
	if (q->recs) {
		for (uint32_t i = 0; i < q->n; i++)
			free(q->recs[i]);
		free(q->recs);
		q->recs = NULL;
	}
}

void gs_seq_count(gs_stream_t *s, gs_seq_t *q)
{
	s->cache.nodes += q->n;
	q->counted = true;
}

void gs_seq_uncount(gs_stream_t *s, gs_seq_t *q)
{
	if (q->counted) {
		s->cache.nodes -= q->n + q->vnodes;
		q->vnodes = 0;
		q->counted = false;
	}
}

void gs_seq_free(gs_seq_t *q)
{
	gs_seq_release(q);
	free(q);
}

void gs_seq_info_fill(const gs_stream_t *s, const gs_seq_t *q, gs_seq_info_t *i)
{
	i->id = q->id;
	i->stream = s->key.handle;
	i->length = q->n;
	i->state = q->state;
	i->periodic = q->periodic;
	i->seen = q->seen;
	i->replays = q->replays;
	i->patches = q->patches;
	i->mismatches = q->mismatches;
	i->retirements = q->retirements;
	i->refused = q->nrefused;
	i->build_ns = q->build_ns;
	i->gate = gs_gate_state_name(q);
	i->eager_ns = q->gate.eager_ns;
	i->replay_ns = q->gate.replay_ns;
	i->eager_host_ns = q->gate.eager_host_ns;
	i->replay_host_ns = q->gate.replay_host_ns;
	i->eager_less_ns = q->gate.eager_less_ns;
	i->gate_trials = q->gate.trials;
	i->first = q->gate.first;
	i->eager_passes = q->eager_passes;
	i->rebuilds = q->rebuilds;
	i->drift_args = i->drift_shape = 0;
	for (uint32_t k = 0; q->recs && k < q->n; k++) {
		i->drift_args += !!(q->recs[k]->drift & GS_DRIFT_ARGS);
		i->drift_shape += !!(q->recs[k]->drift & GS_DRIFT_GEOMETRY);
	}
	i->gone = false;
}

/*
 * The figures of sequences dropped with their stream or module (most
 * programs destroy both before exit, when the statistics are written), for
 * those that were ever replayed or timed; the first GS_SEQ_GONE_MAX kept.
 */
#define GS_SEQ_GONE_MAX 256
static pthread_mutex_t gs_seq_gone_lock = PTHREAD_MUTEX_INITIALIZER;
static gs_seq_info_t gs_seq_gone[GS_SEQ_GONE_MAX];
static size_t gs_seq_ngone;

static void gs_seq_keep_gone(const gs_stream_t *s, const gs_seq_t *q)
{
	if (!q->replays && !q->gate.trials && !q->eager_passes)
		return;
	pthread_mutex_lock(&gs_seq_gone_lock);
	if (gs_seq_ngone < GS_SEQ_GONE_MAX) {
		gs_seq_info_t *i = &gs_seq_gone[gs_seq_ngone++];
		gs_seq_info_fill(s, q, i); /* before the drop: its state is still its own */
		i->gone = true;
	}
	pthread_mutex_unlock(&gs_seq_gone_lock);
}

size_t gs_seq_gone_info(gs_seq_info_t *out, size_t max)
{
	pthread_mutex_lock(&gs_seq_gone_lock);
	size_t n = gs_seq_ngone;
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = gs_seq_gone[i];
	pthread_mutex_unlock(&gs_seq_gone_lock);
	return n;
}

size_t gs_seq_gone_info_try(gs_seq_info_t *out, size_t max)
{
	if (pthread_mutex_trylock(&gs_seq_gone_lock))
		return SIZE_MAX;
	size_t n = gs_seq_ngone;
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = gs_seq_gone[i];
	pthread_mutex_unlock(&gs_seq_gone_lock);
	return n;
}

void gs_seq_gone_reset(void)
{
	pthread_mutex_lock(&gs_seq_gone_lock);
	gs_seq_ngone = 0;
	pthread_mutex_unlock(&gs_seq_gone_lock);
}

static void gs_seq_drop(gs_stream_t *s, gs_seq_t *q, bool release)
{
	if (release)
		gs_seq_keep_gone(s, q);
	HASH_DELETE(hh, s->cache.seqs, q);
	DL_DELETE2(s->cache.lru, q, prev, next);
	gs_gate_forget(s, q);
	s->cache.n--;
	gs_seq_uncount(s, q);
	if (q->state == GS_SEQ_BUILDING) {
		int expect = GS_HANDOFF_BUILDING;
		if (__atomic_compare_exchange_n(&q->handoff, &expect, GS_HANDOFF_CANCELLED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return; /* the builder frees it when it is done */
		__atomic_sub_fetch(&s->cache.built, 1, __ATOMIC_ACQ_REL); /* built, never published */
	}
	if (release) {
		gs_seq_free(q);
	} else {
		gs_variant_release(q, false);
		free(q);
	}
}

void gs_seq_bloom_set(gs_stream_t *s, const gs_bloom_t *b)
{
	s->cache.first_bloom = *b;
	__atomic_store_n(&s->lane.bare, gs_bloom_empty(b), __ATOMIC_RELAXED);
}

void gs_seq_bloom_add(gs_stream_t *s, uint64_t first_shape)
{
	gs_bloom_add(&s->cache.first_bloom, first_shape);
	__atomic_store_n(&s->lane.bare, false, __ATOMIC_RELAXED);
}

static void gs_seq_rebuild_bloom(gs_stream_t *s)
{
	gs_bloom_t b = {{0}};
	for (gs_seq_t *q = s->cache.lru; q; q = q->next)
		if (q->state == GS_SEQ_ARMED || q->state == GS_SEQ_BUILDING)
			gs_bloom_add(&b, q->first_shape);
	gs_seq_bloom_set(s, &b);
}

/*
 * Evict least recently used sequences until `want` returns false.  The
 * sequences in the current match, `keep`, and those being built stay.
 */
static bool gs_seq_evict(gs_stream_t *s, bool (*want)(const gs_stream_t *, const void *),
			 const void *arg, const gs_seq_t *keep)
{
	gs_seq_t *q = s->cache.lru ? s->cache.lru->prev : NULL; /* the tail: least recent */
	while (q && want(s, arg)) {
		gs_seq_t *older = (q == s->cache.lru) ? NULL : q->prev;
		if (q != keep && q->state != GS_SEQ_BUILDING && !gs_match_has(&s->match, q)) {
			bool armed = q->state == GS_SEQ_ARMED;
			gs_thrift_dropped(s, q);
			gs_seq_drop(s, q, true);
			GS_STAT_INC(evictions);
			s->cache.evicted_at = s->pos + 1;
			if (armed)
				gs_seq_rebuild_bloom(s);
		}
		q = older;
	}
	return want(s, arg);
}

static bool gs_seq_too_many(const gs_stream_t *s, const void *arg)
{
	(void)arg;
	return s->cache.n >= (uint64_t)gs_config.max_seqs;
}

static bool gs_seq_too_big(const gs_stream_t *s, const void *arg)
{
	return s->cache.nodes + *(const uint32_t *)arg > (uint64_t)gs_config.max_nodes;
}

bool gs_seq_make_room(gs_stream_t *s, uint32_t n, const gs_seq_t *keep)
{
	return gs_seq_evict(s, gs_seq_too_big, &n, keep);
}

#define GS_SEQ_CHURN 1024
bool gs_seq_churning(const gs_stream_t *s)
{
	return s->cache.evicted_at && s->pos + 1 - s->cache.evicted_at < GS_SEQ_CHURN;
}

gs_seq_t *gs_seq_add(gs_stream_t *s, uint64_t id, uint32_t n, uint64_t first_shape)
{
	if (gs_seq_evict(s, gs_seq_too_many, NULL, NULL))
		return NULL;
	gs_seq_t *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->id = id;
	q->n = n;
	q->first_shape = first_shape;
	q->state = GS_SEQ_LEARNING;
	q->owner = s;
	q->gate.running = -1;
	GS_HASH_TRY();
	HASH_ADD(hh, s->cache.seqs, id, sizeof(q->id), q);
	if (gs_hash_oom) {
		free(q);
		return NULL;
	}
	DL_PREPEND2(s->cache.lru, q, prev, next);
	s->cache.n++;
	GS_STAT_INC(sequences);
	return q;
}

void gs_seq_sighted(gs_stream_t *s, gs_seq_t *q)
{
	q->seen++;
	gs_seq_touch(s, q);
	if (q->spec && q->seen >= (uint64_t)gs_config.learn_reps)
		q->spec = false; /* the guess repeated: match it */
}

bool gs_seq_cooled(gs_seq_t *q, uint64_t from)
{
	if (q->state != GS_SEQ_RETIRED || q->cooldown_left <= 0 || q->retired_at > from ||
	    --q->cooldown_left != 0)
		return false;
	q->state = GS_SEQ_LEARNING;
	q->seen = 1;
	q->mismatch_run = 0;
	GS_STAT_INC(relearned);
	return true;
}

void gs_seq_periodic(gs_seq_t *q, uint64_t seen)
{
	q->periodic = true;
	q->seen += seen;
}

/*
 * A replayed pass that waited for the idle watchdog (the program stopped
 * calling mid-step while launches were held) cost the program that wait,
 * 1-2 ms, which the gate does not see: it drops an interrupted pass's
 * timing (gs_gate_abandon).  A wait at one place is cut away within a few
 * passes (gs_arm_waited); where such waits go on pass after pass anyway
 * (the place moves, or the sequence has all its cuts), GRAPHSHIM_IDLE_EAGER
 * replayed passes in a row of them send the sequence eagerly until its
 * next re-check (GRAPHSHIM_GATE_RECHECK passes; gs_gate.c's choice of a
 * pass's kind): launches held wait with the program, eager ones run.
 */
static void gs_seq_idled(gs_stream_t *s, gs_seq_t *q)
{
	if (!s->match.idled) {
		q->idle_run = 0;
		return;
	}
	if (!gs_config.idle_eager || gs_config.gate != GS_GATE_AUTO ||
	    ++q->idle_run < (uint64_t)gs_config.idle_eager)
		return;
	q->idle_run = 0;
	q->idle_eager = gs_config.gate_recheck ? (uint64_t)gs_config.gate_recheck : UINT64_MAX;
	GS_STAT_INC(idle_eager);
	gs_trace_idle_eager(s->key.handle, q->id, q->n, gs_config.idle_eager);
}

void gs_seq_passed(gs_stream_t *s, gs_seq_t *q, bool eager, bool clean)
{
	if (eager) {
		q->eager_passes++;
	} else {
		q->replays++;
		gs_thrift_replayed(s, q);
		gs_seq_idled(s, q);
	}
	gs_trace_pass(s->key.handle, q->id, q->n, eager);
	gs_cold_passed(s, q, eager);
	if (clean)
		q->mismatch_run = 0;
	gs_seq_touch(s, q);
}

static void gs_seq_charge(gs_stream_t *s, gs_seq_t *q, bool by_siblings)
{
	q->mismatch_run++;
	if (q->mismatch_run >= (uint64_t)gs_config.mismatch_limit) {
		gs_seq_retire(s, q);
		q->by_siblings = by_siblings;
	}
}

void gs_seq_mismatch(gs_stream_t *s, gs_seq_t *q)
{
	q->mismatches++;
	gs_seq_charge(s, q, false);
}

void gs_seq_owe(gs_stream_t *s, gs_seq_t *q)
{
	q->mismatches++;
	if (s->seg.owed)
		gs_seq_settle(s, false, 0);
	s->seg.owed = q->id;
}

/*
 * Whether a sibling is a step of its own (gs_seq_settle): learning, armed,
 * its graphs being built (armed at this very sighting, on the builder
 * thread), or retired only by its own siblings.  Neither of the last two
 * counted once, and a family of steps that begin alike (a detector's
 * post-processing between its syncs, eight of them in a fixed order every
 * request: torchvision's Faster R-CNN, `detect`) retired one another in
 * turn: each that came back from its cool-down was charged by the others,
 * retired, and 0.76 of the steady state replayed, never the whole family.
 * One that drifted past the cost rule or failed, or that will not learn
 * again, would end q's matches again and again, and spares nothing.
 */
static bool gs_seq_live(const gs_seq_t *sib)
{
	switch (sib->state) {
	case GS_SEQ_LEARNING:
	case GS_SEQ_BUILDING:
	case GS_SEQ_ARMED:
		return true;
	case GS_SEQ_RETIRED:
		return sib->by_siblings && sib->cooldown_left > 0; /* and will learn again */
	default:
		return false;
	}
}

/*
 * Frameworks issue steps that share a beginning: the first decoding step
 * and the next ones, a solver's step with and without its read-back.
 * While one of them is armed and the other is not (learning, or retired),
 * every sighting of the other ends a match of the armed one in a
 * STRUCTURE mismatch or a CUT, and charged at once, a few such sightings
 * in a row retired a sequence that replays cleanly whenever its own step
 * comes (hf-t5 and ode-rk4 lost both their steps so).  A segment that
 * turns out to be a repeat of its own, or too short to be a step (a
 * compare and its read-back after each of a solver's steps), says
 * nothing against q.
 */
#define GS_SEQ_SPARE 4
void gs_seq_settle(gs_stream_t *s, bool sibling, uint64_t seg_id)
{
	uint64_t id = s->seg.owed;
	s->seg.owed = 0;
	gs_seq_t *q = id ? gs_seq_find(s, id) : NULL;
	if (!q)
		return;
	/*
	 * A segment too short to be a sequence (seg_id 0) holds little and is
	 * always spared, and so is a sibling seen before that is learning or
	 * armed: a step of its own, a candidate of the next match it begins,
	 * so its mismatch does not come again.  Steps that branch come as
	 * many siblings beginning alike (JAX's NUTS under XLA: 87 segments
	 * between syncs, all beginning with a loop's carried copies); charged
	 * while each learned in turn, they retired one another (tiny --stages
	 * 24 on the simulator: 0.001 replayed; 0.99 so).  In the first
	 * GS_COLD_IDS segments after a cold stream woke a step first seen now
	 * counts as seen before: the cold lane saw it, perhaps, and remembers
	 * that many (a first pass through 48 branches made the stream cold
	 * after 16; those seen only while cold, new to the learner, retired
	 * the armed ones after it woke: 0.02 replayed; 0.99 so).  Neither on
	 * a stream that evicted a sequence lately (gs_seq_churning): its steps
	 * do not fit its cache, and what repeats there repeats by chance
	 * (r_stress's cold worker learned 1,180 sequences in a run under
	 * ThreadSanitizer, evicting 961, woke at once from cold and never went
	 * cold again).  A step seen for the first time, or one that does not
	 * replay (retired, failed: it ends q's matches again and again), spares
	 * only a sequence that completes GS_SEQ_SPARE times as many passes as
	 * it mismatches: a step, not a fragment of a stream that never repeats
	 * (r_stress's cold worker, cut by another thread's syncs into pieces
	 * some of which repeat by chance: all spared, they kept its stream warm
	 * in 3 runs of 16 under ThreadSanitizer; with the ratio, 0 of 32 then).
	 * Short segments sparing by a ratio too retired ode-rk4's steps again
	 * on the H100 (the compare-and-read-back bursts come eight at a time
	 * after sixteen passes): steady coverage 0.05.
	 */
	gs_seq_t *sib = seg_id ? gs_seq_find(s, seg_id) : NULL;
	bool live = sib && (sib->seen > 1 || s->cold.woken) && !gs_seq_churning(s) && gs_seq_live(sib);
	if (sibling && gs_config.forgive &&
	    (!seg_id || live || q->replays + q->eager_passes >= GS_SEQ_SPARE * q->mismatches)) {
		GS_STAT_INC(forgiven);
		gs_trace_forgiven(s->key.handle, id, seg_id);
	} else
		gs_seq_charge(s, q, sibling);
}

void gs_seq_rebake(gs_rec_t **baked, uint32_t k, const gs_rec_t *r)
{
	/* Same shape, new operands: the same size, so the copy allocates
	 * nothing.  What the core counts on a baked record stays: the waits
	 * after it (a place cut there stays cut when the step is planned
	 * again), its refusal, its drift; its stand-in is gone. */
	gs_rec_t keep = *baked[k];
	gs_rec_copy(&baked[k], r);
	gs_rec_t *b = baked[k];
	b->held_ev = keep.held_ev;
	b->refused = keep.refused;
	b->waits = keep.waits;
	b->idled = keep.idled;
	b->drift = keep.drift;
	b->stale = 0;
}

void gs_seq_patched(gs_seq_t *q, uint32_t n)
{
	q->patches += n;
}

/*
 * Sightings before the n-th retirement of a sequence lets it learn again:
 * GRAPHSHIM_COOLDOWN, doubled at each retirement after the first; after
 * GS_SEQ_RELEARNS retirements, never (0), and a stream whose sequences all
 * ended so may go cold.  A step that changed for a while (a new prompt's
 * kernels, a solver's start) comes back; one that drifts past the cost
 * rule on every pass costs a few eager passes each time, fewer and fewer.
 */
#define GS_SEQ_RELEARNS 6
static long long gs_seq_cooldown(uint64_t n)
{
	long long c = gs_config.cooldown;
	if (c <= 0 || n >= GS_SEQ_RELEARNS)
		return 0;
	for (uint64_t i = 1; i < n && c < 1000000000LL; i++)
		c *= 2;
	return c;
}

void gs_seq_retire(gs_stream_t *s, gs_seq_t *q)
{
	if (q->state != GS_SEQ_ARMED)
		return;
	gs_gate_forget(s, q);
	gs_thrift_dropped(s, q);
	gs_seq_uncount(s, q);
	gs_seq_release(q);
	q->state = GS_SEQ_RETIRED;
	q->retirements++;
	q->cooldown_left = gs_seq_cooldown(q->retirements);
	q->retired_at = s->pos;
	GS_STAT_INC(retirements);
	gs_trace_retired(s->key.handle, q->id, q->mismatches);
	gs_seq_rebuild_bloom(s);
}

void gs_seq_free_all(gs_stream_t *s, bool release_graphs)
{
	gs_seq_t *q, *tmp;
	HASH_ITER(hh, s->cache.seqs, q, tmp)
		gs_seq_drop(s, q, release_graphs);
	gs_seq_bloom_set(s, &(gs_bloom_t){{0}});
}
