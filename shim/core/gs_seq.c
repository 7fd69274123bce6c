/*
 * The per-stream sequence cache: sequences hashed by id (uthash) and kept
 * on an LRU list, bounded in count (GRAPHSHIM_MAX_SEQS) and in the nodes of
 * armed or building sequences (GRAPHSHIM_MAX_NODES); cutting a sequence
 * into chunks and building a graph per chunk; retiring a sequence to eager.
 */
#include "gs_engine_int.h"
#include "gs_log.h"
#include "gs_trace.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <utlist.h>

uint64_t gs_seq_id(const gs_stream_t *s, uint64_t from, uint32_t n)
{
	uint64_t h = 0;
	for (uint32_t i = 0; i < n; i++) {
		const gs_rec_t *r = gs_ring_at(s, from + i);
		if (!r)
			return 0; /* taken by an earlier arming: no sequence here */
		h = gs_hash_step(h, r->shape);
	}
	return gs_hash_step(h, n);
}

gs_seq_t *gs_seq_find(gs_stream_t *s, uint64_t id)
{
	gs_seq_t *q;
	HASH_FIND(hh, s->seqs, &id, sizeof(id), q);
	return q;
}

void gs_seq_touch(gs_stream_t *s, gs_seq_t *q)
{
	if (s->lru == q)
		return;
	DL_DELETE2(s->lru, q, prev, next);
	DL_PREPEND2(s->lru, q, prev, next);
}

static bool gs_seq_is_cand(const gs_stream_t *s, const gs_seq_t *q)
{
	for (uint32_t i = 0; i < s->ncands; i++)
		if (s->cands[i] == q)
			return true;
	return s->done == q;
}

/* Destroy q's graphs and baked records; touches nothing of its stream. */
static void gs_seq_release(gs_seq_t *q)
{
	gs_gate_release(q);
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
	if (q->recs) {
		for (uint32_t i = 0; i < q->n; i++)
			free(q->recs[i]);
		free(q->recs);
		q->recs = NULL;
	}
}

static void gs_seq_uncount(gs_stream_t *s, gs_seq_t *q)
{
	if (q->counted) {
		s->nodes -= q->n;
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
	i->build_ns = q->build_ns;
	i->gate = gs_gate_state_name(q);
	i->eager_ns = q->gate.eager_ns;
	i->replay_ns = q->gate.replay_ns;
	i->gate_trials = q->gate.trials;
	i->eager_passes = q->eager_passes;
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
	HASH_DELETE(hh, s->seqs, q);
	DL_DELETE2(s->lru, q, prev, next);
	gs_gate_forget(s, q);
	s->nseqs--;
	gs_seq_uncount(s, q);
	if (q->state == GS_SEQ_BUILDING) {
		int expect = GS_HANDOFF_BUILDING;
		if (__atomic_compare_exchange_n(&q->handoff, &expect, GS_HANDOFF_CANCELLED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return; /* the builder frees it when it is done */
		__atomic_sub_fetch(&s->built, 1, __ATOMIC_ACQ_REL); /* built, never published */
	}
	if (release)
		gs_seq_free(q);
	else
		free(q);
}

/*
 * Evict least recently used sequences until `want` returns false.  The
 * sequences in the current match, `keep`, and those being built stay.
 */
static bool gs_seq_evict(gs_stream_t *s, bool (*want)(const gs_stream_t *, const void *),
			 const void *arg, const gs_seq_t *keep)
{
	gs_seq_t *q = s->lru ? s->lru->prev : NULL; /* the tail: least recent */
	while (q && want(s, arg)) {
		gs_seq_t *older = (q == s->lru) ? NULL : q->prev;
		if (q != keep && q->state != GS_SEQ_BUILDING && !gs_seq_is_cand(s, q)) {
			bool armed = q->state == GS_SEQ_ARMED;
			gs_seq_drop(s, q, true);
			GS_STAT_INC(evictions);
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
	return s->nseqs >= (uint64_t)gs_config.max_seqs;
}

static bool gs_seq_too_big(const gs_stream_t *s, const void *arg)
{
	return s->nodes + *(const uint32_t *)arg > (uint64_t)gs_config.max_nodes;
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
	HASH_ADD(hh, s->seqs, id, sizeof(q->id), q);
	if (gs_hash_oom) {
		free(q);
		return NULL;
	}
	DL_PREPEND2(s->lru, q, prev, next);
	s->nseqs++;
	GS_STAT_INC(sequences);
	return q;
}

void gs_seq_rebuild_bloom(gs_stream_t *s)
{
	uint64_t b = 0;
	for (gs_seq_t *q = s->lru; q; q = q->next)
		if (q->state == GS_SEQ_ARMED || q->state == GS_SEQ_BUILDING)
			b |= 1ULL << (q->first_shape & 63);
	s->first_bloom = b;
}

/*
 * Cut q into chunks, one graph each.  From the front: GRAPHSHIM_CHUNK_FIRST
 * launches, doubling up to GRAPHSHIM_CHUNK_MAX, so the GPU starts early.
 * When the host took longer than GRAPHSHIM_HOST_BOUND_US per launch while
 * the sequence was learned (an interpreter between launches), the GPU keeps
 * up with the host and only the last chunk's work is left after the last
 * launch; so chunks also shrink towards the end, halving down to
 * GRAPHSHIM_CHUNK_LAST.  A piece shorter than half its planned size joins
 * its neighbour towards the middle.
 */
static bool gs_seq_plan(gs_seq_t *q)
{
	uint32_t max = (uint32_t)gs_config.chunk_max;
	bool tail = q->host_ns > (uint64_t)(gs_config.host_bound_us * 1000.0);
	uint32_t nf = 0, nb = 0, cap = 2;
	uint32_t *front = malloc(cap * sizeof(*front)), *back = malloc(cap * sizeof(*back));
	uint32_t f = (uint32_t)gs_config.chunk_first, b = (uint32_t)gs_config.chunk_last;
	uint32_t rem = q->n;
	bool ok = front && back;
	while (ok && rem) {
		if (nf == cap || nb == cap) {
			cap *= 2;
			uint32_t *nfp = realloc(front, cap * sizeof(*front));
			if (nfp)
				front = nfp;
			uint32_t *nbp = realloc(back, cap * sizeof(*back));
			if (nbp)
				back = nbp;
			if (!nfp || !nbp) {
				ok = false;
				break;
			}
		}
		uint32_t take = f < rem ? f : rem;
		if (nf && take < f / 2 && take < front[nf - 1] / 2)
			front[nf - 1] += take; /* a short middle piece joins the front */
		else
			front[nf++] = take;
		rem -= take;
		f = f * 2 < max ? f * 2 : max;
		if (!tail || !rem)
			continue;
		take = b < rem ? b : rem;
		if (take < b / 2)
			front[nf - 1] += take;
		else
			back[nb++] = take;
		rem -= take;
		b = b * 2 < max ? b * 2 : max;
	}
	uint32_t *end = ok ? calloc(nf + nb, sizeof(*end)) : NULL;
	if (end) {
		uint32_t at = 0, k = 0;
		for (uint32_t i = 0; i < nf; i++)
			end[k++] = at += front[i];
		for (uint32_t i = nb; i-- > 0;)
			end[k++] = at += back[i];
		q->nchunks = k;
		q->chunk_end = end;
		q->graphs = calloc(k, sizeof(*q->graphs));
	}
	free(front);
	free(back);
	return !end || !q->graphs;
}

/*
 * Give q its own records of ring[from .. from+n).  With `steal` the ring's
 * record allocations themselves move to q and the ring slots are left empty
 * (refilled by the next launches), so arming costs a pointer per record
 * instead of a copy: a 1000-launch sequence was 130-380 us to copy.  The
 * caller steals only records nothing else will read: a segment that is
 * ending, or one it marks unlearnable.
 */
static bool gs_seq_bake(gs_stream_t *s, gs_seq_t *q, uint64_t from, bool steal)
{
	q->recs = calloc(q->n, sizeof(*q->recs));
	if (!q->recs)
		return true;
	for (uint32_t i = 0; i < q->n; i++) {
		gs_rec_t **slot = &s->ring[(from + i) % s->cap];
		if (!*slot)
			return true; /* taken already (a speculative build) */
		if (steal) {
			q->recs[i] = *slot;
			*slot = NULL;
		} else if (gs_rec_copy(&q->recs[i], *slot)) {
			return true; /* gs_seq_release frees what was copied */
		}
		q->recs[i]->orig = NULL;
	}
	return false;
}

int gs_seq_build(gs_seq_t *q)
{
	int rc = 0;
	for (uint32_t j = 0; j < q->nchunks && !rc; j++) {
		uint32_t b = gs_chunk_begin(q, j);
		rc = gs_backend->graph_build((const gs_rec_t *const *)q->recs + b,
						q->chunk_end[j] - b, &q->graphs[j]);
		if (!rc) /* the stream may replay it from now on */
			__atomic_store_n(&q->ready, j + 1, __ATOMIC_RELEASE);
	}
	return rc;
}

void gs_seq_built(gs_stream_t *s, gs_seq_t *q, int rc, uint64_t ns)
{
	GS_STAT_ADD(build_ns, ns);
	gs_stats_max(&gs_stats.build_max_ns, ns);
	q->build_ns += ns;
	gs_trace_built(s->key.handle, q->id, q->n, ns, rc);
	if (rc) {
		GS_STAT_INC(fallbacks);
		gs_log_once(GS_LOG_WARN, "building a graph of %u nodes failed (status %d); that sequence stays eager",
			    q->n, rc);
		q->state = GS_SEQ_FAILED;
		gs_seq_uncount(s, q);
		gs_seq_release(q);
		return;
	}
	GS_STAT_INC(graphs);
	q->state = GS_SEQ_ARMED;
	q->mismatch_run = 0;
	gs_gate_armed(q); /* its first_bloom bit was set when it was armed */
}

static bool gs_seq_arm_now(gs_stream_t *s, gs_seq_t *q, uint64_t from, uint64_t host_ns,
			   bool steal);

/* The calling thread's involuntary context switches so far (0 if unknown). */
static long gs_seq_nivcsw(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

/*
 * Arming is the one place a launch call waits for learning, so its time is
 * kept (arm_max_ns), and whether the scheduler took the thread's CPU during
 * it (arm_preempted): a slow arm the thread spent switched out was the
 * CPU's, not graphshim's work (GRAPHSHIM_BUILD_SCHED).  A sequence arms
 * once, so the two system calls are not on any per-launch path.
 */
bool gs_seq_arm(gs_stream_t *s, gs_seq_t *q, uint64_t from, uint64_t host_ns, bool steal)
{
	long sw = gs_seq_nivcsw();
	uint64_t t0 = gs_clock_ns();
	bool failed = gs_seq_arm_now(s, q, from, host_ns, steal);
	gs_stats_max(&gs_stats.arm_max_ns, gs_clock_ns() - t0);
	if (gs_seq_nivcsw() != sw)
		GS_STAT_INC(arm_preempted);
	return failed;
}

static bool gs_seq_arm_now(gs_stream_t *s, gs_seq_t *q, uint64_t from, uint64_t host_ns,
			   bool steal)
{
	uint32_t n = q->n;
	q->host_ns = host_ns;
	if (gs_seq_evict(s, gs_seq_too_big, &n, q))
		return true; /* cannot fit even alone: stays learning */
	if (gs_seq_bake(s, q, from, steal) || gs_seq_plan(q)) {
		gs_seq_release(q);
		return true;
	}
	s->nodes += n;
	q->counted = true;
	q->state = GS_SEQ_BUILDING;
	q->ready = 0;
	s->first_bloom |= 1ULL << (q->first_shape & 63);
	q->handoff = GS_HANDOFF_BUILDING;
	if (gs_config.async_build && !gs_build_submit(q))
		return false;
	q->handoff = GS_HANDOFF_NONE;
	uint64_t t0 = gs_clock_ns();
	int rc = gs_seq_build(q);
	gs_seq_built(s, q, rc, gs_clock_ns() - t0);
	return rc != 0;
}

/*
 * Replay by the third sighting of a step.  Learning arms a sequence at the
 * end of its GRAPHSHIM_LEARN_REPS-th sighting, but its graphs take longer to
 * build than a step of small kernels takes to issue (1.2-2.7 ms against
 * 0.9 ms for 256 launches on an H100), so the next sighting ran eagerly
 * while they were built.  When a segment that was one sighting short of
 * learning is followed by one that begins with the same record shape, its
 * records (still in the ring, taken as they are) go to the builder now; the
 * sequence is not matched (`spec`) until the segment ending confirms the
 * repeat, and then replays the chunks built so far.  A guess that does not
 * repeat costs one build on the builder thread.
 */
void gs_seq_speculate(gs_stream_t *s, const gs_rec_t *r)
{
	uint64_t id = s->last_id;
	s->last_id = 0;
	gs_seq_t *q = gs_seq_find(s, id);
	if (!q || q->state != GS_SEQ_LEARNING || q->first_shape != r->shape ||
	    s->pos - s->last_start > s->cap)
		return; /* another sequence, or its records are overwritten */
	q->spec = true;
	if (gs_seq_arm(s, q, s->last_start, s->last_host_ns, true)) {
		q->spec = false;
		return;
	}
	GS_STAT_INC(speculated);
	gs_trace_learned(s->key.handle, q->id, q->n, "speculative");
}

void gs_seq_publish(gs_stream_t *s)
{
	for (gs_seq_t *q = s->lru; q && __atomic_load_n(&s->built, __ATOMIC_ACQUIRE); q = q->next) {
		/* A sequence in the match in progress waits: a failed build
		 * releases graphs the match may still launch. */
		if (q->state != GS_SEQ_BUILDING ||
		    __atomic_load_n(&q->handoff, __ATOMIC_ACQUIRE) != GS_HANDOFF_BUILT ||
		    gs_seq_is_cand(s, q))
			continue;
		q->handoff = GS_HANDOFF_NONE;
		__atomic_sub_fetch(&s->built, 1, __ATOMIC_ACQ_REL);
		gs_seq_built(s, q, q->build_rc, q->build_dt);
	}
}

void gs_seq_retire(gs_stream_t *s, gs_seq_t *q)
{
	if (q->state != GS_SEQ_ARMED)
		return;
	gs_gate_forget(s, q);
	gs_seq_uncount(s, q);
	gs_seq_release(q);
	q->state = GS_SEQ_RETIRED;
	q->retirements++;
	q->cooldown_left = gs_config.cooldown;
	q->retired_at = s->pos;
	GS_STAT_INC(retirements);
	gs_trace_retired(s->key.handle, q->id, q->mismatches);
	gs_seq_rebuild_bloom(s);
}

void gs_seq_free_all(gs_stream_t *s, bool release_graphs)
{
	gs_seq_t *q, *tmp;
	HASH_ITER(hh, s->seqs, q, tmp)
		gs_seq_drop(s, q, release_graphs);
	s->first_bloom = 0;
}
