/*
 * The per-stream sequence cache: sequences hashed by id (uthash) and kept
 * on an LRU list, bounded in count (GRAPHSHIM_MAX_SEQS) and in armed nodes
 * (GRAPHSHIM_MAX_NODES); building a sequence's graph from the records in a
 * stream's ring; retiring a sequence to eager.
 */
#include "gs_engine_int.h"
#include "gs_log.h"
#include "gs_trace.h"

#include <stdlib.h>
#include <utlist.h>



uint64_t gs_seq_id(const gs_stream_t *s, uint64_t from, uint32_t n)
{
	uint64_t h = 0x73657175656e6365ULL;
	for (uint32_t i = 0; i < n; i++)
		h = gs_hash_step(h, gs_ring_at(s, from + i)->shape);
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

static void gs_seq_release_graph(gs_stream_t *s, gs_seq_t *q)
{
	if (q->graphs) {
		for (uint32_t j = 0; j < q->nchunks; j++)
			if (q->graphs[j])
				gs_engine_ops->graph_destroy(q->graphs[j]);
		free(q->graphs);
		q->graphs = NULL;
	}
	free(q->chunk_end);
	q->chunk_end = NULL;
	q->nchunks = 0;
	if (q->recs) {
		for (uint32_t i = 0; i < q->n; i++)
			free(q->recs[i]);
		free(q->recs);
		q->recs = NULL;
	}
	if (q->state == GS_SEQ_ARMED)
		s->nodes -= q->n;
}

static void gs_seq_drop(gs_stream_t *s, gs_seq_t *q, bool release_graph)
{
	if (release_graph)
		gs_seq_release_graph(s, q);
	HASH_DELETE(hh, s->seqs, q);
	DL_DELETE2(s->lru, q, prev, next);
	s->nseqs--;
	free(q);
}

/*
 * Evict least recently used sequences until `want` returns false.  The
 * sequences in the current match are never evicted.
 */
static bool gs_seq_evict(gs_stream_t *s, bool (*want)(const gs_stream_t *, const void *),
			 const void *arg, const gs_seq_t *keep)
{
	gs_seq_t *q = s->lru ? s->lru->prev : NULL; /* the tail: least recent */
	while (q && want(s, arg)) {
		gs_seq_t *older = (q == s->lru) ? NULL : q->prev;
		if (q != keep && !gs_seq_is_cand(s, q)) {
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
	HASH_ADD(hh, s->seqs, id, sizeof(q->id), q);
	DL_PREPEND2(s->lru, q, prev, next);
	s->nseqs++;
	GS_STAT_INC(sequences);
	return q;
}

void gs_seq_rebuild_bloom(gs_stream_t *s)
{
	uint64_t b = 0;
	for (gs_seq_t *q = s->lru; q; q = q->next)
		if (q->state == GS_SEQ_ARMED)
			b |= 1ULL << (q->first_shape & 63);
	s->first_bloom = b;
}

/*
 * Cut q into chunks: GRAPHSHIM_CHUNK_FIRST launches, then twice as many each
 * time up to GRAPHSHIM_CHUNK_MAX.  A last chunk shorter than half the one
 * before is merged into it, so no graph is launched for a handful of nodes.
 */
static bool gs_seq_plan(gs_seq_t *q)
{
	uint32_t *end = NULL, count = 0;
	for (int pass = 0; pass < 2; pass++) { /* count, then fill */
		uint32_t size = (uint32_t)gs_config.chunk_first, at = 0, k = 0, prev = 0;
		while (at < q->n) {
			uint32_t len = size < q->n - at ? size : q->n - at;
			if (k && len < prev / 2) {
				if (end)
					end[k - 1] = q->n;
				break;
			}
			at += len;
			if (end)
				end[k] = at;
			k++;
			prev = len;
			size = size * 2 < (uint32_t)gs_config.chunk_max ? size * 2 : (uint32_t)gs_config.chunk_max;
		}
		if (pass == 0 && !(end = calloc(count = k, sizeof(*end))))
			return true;
	}
	q->nchunks = count;
	q->chunk_end = end;
	q->graphs = calloc(count, sizeof(*q->graphs));
	return q->graphs == NULL;
}

bool gs_seq_arm(gs_stream_t *s, gs_seq_t *q, uint64_t from)
{
	uint32_t n = q->n;
	if (gs_seq_evict(s, gs_seq_too_big, &n, q))
		return true; /* cannot fit even alone: stays learning */
	q->recs = calloc(n, sizeof(*q->recs));
	if (!q->recs)
		return true;
	for (uint32_t i = 0; i < n; i++) {
		if (gs_rec_copy(&q->recs[i], gs_ring_at(s, from + i))) {
			q->state = GS_SEQ_LEARNING; /* nodes not yet counted */
			gs_seq_release_graph(s, q);
			return true;
		}
	}
	if (gs_seq_plan(q)) {
		q->state = GS_SEQ_LEARNING;
		gs_seq_release_graph(s, q);
		return true;
	}
	uint64_t t0 = gs_now_ns();
	int rc = 0;
	for (uint32_t j = 0; j < q->nchunks && !rc; j++) {
		uint32_t b = gs_chunk_begin(q, j);
		rc = gs_engine_ops->graph_build((const gs_rec_t *const *)q->recs + b,
						q->chunk_end[j] - b, &q->graphs[j]);
	}
	uint64_t dt = gs_now_ns() - t0;
	GS_STAT_ADD(build_ns, dt);
	gs_stats_max(&gs_stats.build_max_ns, dt);
	q->build_ns += dt;
	gs_trace_built(s->key.handle, q->id, n, dt, rc);
	if (rc) {
		GS_STAT_INC(fallbacks);
		gs_log_once(GS_LOG_WARN, "building a graph of %u nodes failed (status %d); that sequence stays eager",
			    n, rc);
		q->state = GS_SEQ_FAILED;
		gs_seq_release_graph(s, q);
		return true;
	}
	GS_STAT_INC(graphs);
	q->state = GS_SEQ_ARMED;
	q->mismatch_run = 0;
	s->nodes += n;
	s->first_bloom |= 1ULL << (q->first_shape & 63);
	return false;
}

void gs_seq_retire(gs_stream_t *s, gs_seq_t *q)
{
	if (q->state != GS_SEQ_ARMED)
		return;
	gs_seq_release_graph(s, q);
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
