/*
 * Variants (gs_variant.h).  A variant is a sequence of one chunk (its own
 * records, one graph) whose `parent` is the armed sequence it serves; once
 * built it hangs on its parent's var[chunk] list, most recently used
 * first, and counts in the stream's node budget.  While the builder works
 * on it, it waits on the stream's pending list (cache.vpending), and the
 * stream attaches it on its next call, like a sequence (gs_arm_publish).
 */
#include "gs_arm.h"
#include "gs_backend.h"
#include "gs_build.h"
#include "gs_clock.h"
#include "gs_self.h"
#include "gs_seq.h"
#include "gs_stream.h"
#include "gs_trace.h"
#include "gs_variant.h"

#include <stdlib.h>

/* Passes of each chunk whose operand hashes are kept, to see a set recur. */
#define GS_VARIANT_HIST 16

/*
 * Whether node k needs a patch: its record differs from the held one, or
 * its node holds a stand-in (gs_rec_t.stale).  A mark's node is empty
 * (gs_replay.c): its event is never baked, so a mark never needs one.
 */
static bool gs_variant_patch(gs_rec_t *const *baked, const gs_stream_t *s, uint64_t at, uint32_t k)
{
	return !gs_rec_is_mark(baked[k]) &&
	       (baked[k]->stale || gs_rec_differs(baked[k], gs_stream_at(s, at + k)));
}

/*
 * Records of `baked` whose operand hashes differ from the held ones' at
 * `at` (or that hold a stand-in), counted up to `stop`: an estimate, to
 * compare graphs (unequal hashes prove a difference, equal ones are
 * confirmed byte by byte only for the graph launched: gs_variant_pick).
 */
static uint32_t gs_variant_differs(gs_rec_t *const *baked, const gs_stream_t *s, uint64_t at, uint32_t n,
				   uint32_t stop)
{
	uint32_t d = 0;
	for (uint32_t k = 0; k < n && d < stop; k++)
		d += !gs_rec_is_mark(baked[k]) &&
		     (baked[k]->stale || baked[k]->hash != gs_stream_at(s, at + k)->hash);
	return d;
}

/*
 * Of chunk j of q (records [b, b + n), against the held ones) and its
 * variants, the fewest records that differ by their hashes, counted up to
 * `stop`; *link (when given): the link that holds the variant with that
 * many, or NULL for q's own graph.
 */
static uint32_t gs_variant_best(const gs_stream_t *s, gs_seq_t *q, uint32_t j, uint32_t b, uint32_t n,
				uint32_t stop, gs_seq_t ***link)
{
	uint64_t at = s->match.held_start + b;
	uint32_t bd = gs_variant_differs(q->recs + b, s, at, n, stop);
	gs_seq_t **bl = NULL;
	for (gs_seq_t **pv = q->var ? &q->var[j] : NULL; bd && pv && *pv; pv = &(*pv)->vnext) {
		uint32_t d = gs_variant_differs((*pv)->recs, s, at, n, bd);
		if (d < bd) {
			bd = d;
			bl = pv;
		}
	}
	if (link)
		*link = bl;
	return bd;
}

uint32_t gs_variant_fit(const gs_stream_t *s, gs_seq_t *q, uint32_t j, uint32_t b, uint32_t e,
			uint32_t stop)
{
	return gs_variant_best(s, q, j, b, e - b, stop, NULL);
}

void gs_variant_pick(gs_stream_t *s, gs_seq_t *q, uint32_t j, uint32_t b, uint32_t e,
		     gs_variant_pick_t *out)
{
	uint32_t n = e - b;
	uint64_t at = s->match.held_start + b;
	gs_seq_t **bl;
	/* Chosen by operand hashes (unequal ones prove a difference; equal ones
	 * are bytes to compare): only the graph chosen has its records compared
	 * byte by byte, once, below.  Comparing every candidate so, then the
	 * chosen one again, read each candidate's kilobytes of parameters
	 * (PyTorch's) on every replayed chunk, cold after the interpreter. */
	gs_variant_best(s, q, j, b, n, n + 1, &bl);
	gs_seq_t *bv = bl ? *bl : NULL;
	gs_rec_t **best = q->recs + b;
	if (bv && bl != &q->var[j]) { /* most recently used first */
		*bl = bv->vnext;
		bv->vnext = q->var[j];
		q->var[j] = bv;
	}
	if (bv)
		best = bv->recs;
	out->graph = bv ? bv->graphs[0] : q->graphs[j];
	out->recs = best;
	out->var = bv;
	out->ndiff = 0;
	for (uint32_t k = 0; k < n; k++) /* every byte, whatever the hashes said */
		if (gs_variant_patch(best, s, at, k))
			s->match.diffs[out->ndiff++] = b + k;
}

/* Attach a built variant to its parent's chunk, or free it (failed build). */
static void gs_variant_attach(gs_stream_t *s, gs_seq_t *v, int rc, uint64_t ns)
{
	gs_seq_t *q = v->parent;
	q->vbuilding--;
	GS_STAT_ADD(build_ns, ns);
	gs_stats_max(&gs_stats.build_max_ns, ns);
	gs_trace_variant(s->key.handle, q->id, q->n, v->vchunk, v->n, ns, rc, v->recs[0]);
	if (rc || !q->var) {
		GS_STAT_INC(fallbacks);
		gs_seq_free(v);
		return;
	}
	v->state = GS_SEQ_ARMED;
	v->vnext = q->var[v->vchunk];
	q->var[v->vchunk] = v;
	q->vnodes += v->n;
	s->cache.nodes += v->n;
	GS_STAT_INC(variants);
}

/*
 * A variant of chunk j from `recs` (n records), built on the builder or,
 * without one, in place.  True when it could not be made.
 */
static bool gs_variant_make(gs_stream_t *s, gs_seq_t *q, uint32_t j, gs_rec_t *const *recs,
			    uint32_t n)
{
	gs_self_did(GS_SELF_DID_VARIANT);
	gs_seq_t *v = calloc(1, sizeof(*v));
	if (!v)
		return true;
	v->n = n;
	v->id = q->id;
	v->owner = s;
	v->parent = q;
	v->vchunk = j;
	v->gate.running = -1;
	v->nchunks = 1;
	v->recs = calloc(n, sizeof(*v->recs));
	v->chunk_end = malloc(sizeof(*v->chunk_end));
	v->graphs = calloc(1, sizeof(*v->graphs));
	bool bad = !v->recs || !v->chunk_end || !v->graphs;
	for (uint32_t k = 0; !bad && k < n; k++)
		bad = gs_rec_copy(&v->recs[k], recs[k]);
	if (bad) {
		gs_seq_free(v); /* frees what was copied */
		return true;
	}
	v->chunk_end[0] = n;
	v->state = GS_SEQ_BUILDING;
	q->vbuilding++;
	v->handoff = GS_HANDOFF_BUILDING;
	if (gs_config.async_build && !gs_build_submit(v)) {
		v->vnext = s->cache.vpending;
		s->cache.vpending = v;
		return false;
	}
	v->handoff = GS_HANDOFF_NONE;
	uint64_t t0 = gs_clock_ns();
	int rc = gs_arm_build(v);
	gs_variant_attach(s, v, rc, gs_clock_ns() - t0);
	return false;
}

/* Variants of chunk j, built or being built. */
static uint32_t gs_variant_count(const gs_seq_t *q, uint32_t j)
{
	uint32_t c = 0;
	for (const gs_seq_t *v = q->var ? q->var[j] : NULL; v; v = v->vnext)
		c++;
	return c + q->vbuilding;
}

/*
 * Whether a variant of chunk j is with the builder.  Until it is attached
 * the pick cannot choose it, so every pass of the set it bakes would look
 * like a new recurrence and queue the same variant again.
 */
static bool gs_variant_building(const gs_stream_t *s, const gs_seq_t *q, uint32_t j)
{
	for (const gs_seq_t *v = q->vbuilding ? s->cache.vpending : NULL; v; v = v->vnext)
		if (v->parent == q && v->vchunk == j)
			return true;
	return false;
}

/*
 * Whether chunk j already has a variant baked from exactly recs.  With the
 * builder, the chunk's own graph is patched on while a variant is built,
 * and may be patched back to that variant's operands before it is
 * attached: kept again, it would be a second graph of one set.
 */
static bool gs_variant_has(const gs_seq_t *q, uint32_t j, gs_rec_t *const *recs, uint32_t n)
{
	for (const gs_seq_t *v = q->var[j]; v; v = v->vnext) {
		uint32_t k = 0;
		while (k < n && !gs_rec_differs(v->recs[k], recs[k]))
			k++;
		if (k == n)
			return true;
	}
	return false;
}

/* The history of operand hashes, allocated when a chunk first drifts. */
static bool gs_variant_hist(gs_seq_t *q)
{
	if (!q->var)
		q->var = calloc(q->nchunks, sizeof(*q->var));
	if (!q->vcnt)
		q->vcnt = calloc(q->nchunks, sizeof(*q->vcnt));
	if (!q->vhist)
		q->vhist = calloc((size_t)GS_VARIANT_HIST * q->n, sizeof(*q->vhist));
	return !q->var || !q->vcnt || !q->vhist;
}

/*
 * Before the picked graph is patched to this pass's operands: when an
 * earlier pass (not the last, which the graph was patched to) resembles
 * this one more than the picked graph does, and in most of the chunk's
 * records, the operands recur, and the graph's current ones (about to be
 * overwritten) are kept as a variant.  (Operands that drift every pass,
 * a caching allocator's addresses behind a growing KV cache, still agree
 * with some earlier pass here and there: a graph kept for those would
 * save a patch or two, never be picked, and cost a build.)
 * With period P the chunk then settles on P graphs, none patched; with
 * operands that never recur (a growing position, buffers moved every
 * step) nothing is built.  Then this pass's hashes join the history.
 */
void gs_variant_passed(gs_stream_t *s, gs_seq_t *q, uint32_t j, uint32_t b, uint32_t e,
		       const gs_variant_pick_t *pick)
{
	if (gs_config.variants <= 1 || (!pick->ndiff && !q->vhist) || gs_variant_hist(q))
		return;
	uint32_t n = e - b, c = q->vcnt[j];
	uint64_t at = s->match.held_start + b;
	if (pick->ndiff >= 2 && c >= 2 && !gs_variant_building(s, q, j) &&
	    gs_variant_count(q, j) + 1 < (uint32_t)gs_config.variants &&
	    s->cache.nodes + n <= (uint64_t)gs_config.max_nodes) {
		uint32_t same = n - pick->ndiff;
		for (uint32_t k = 2; k <= c && k <= GS_VARIANT_HIST; k++) {
			const uint64_t *h = q->vhist + (size_t)((c - k) % GS_VARIANT_HIST) * q->n;
			uint32_t sim = 0;
			for (uint32_t i = b; i < e; i++)
				sim += h[i] == gs_stream_at(s, at + (i - b))->hash;
			if (sim > same && 2 * sim > n) {
				if (!gs_variant_has(q, j, pick->recs, n))
					gs_variant_make(s, q, j, pick->recs, n);
				break;
			}
		}
	}
	uint64_t *h = q->vhist + (size_t)(c % GS_VARIANT_HIST) * q->n;
	for (uint32_t i = b; i < e; i++)
		h[i] = gs_stream_at(s, at + (i - b))->hash;
	q->vcnt[j] = c + 1;
}

void gs_variant_publish(gs_stream_t *s)
{
	gs_seq_t **pv = &s->cache.vpending;
	while (*pv && __atomic_load_n(&s->cache.built, __ATOMIC_ACQUIRE)) {
		gs_seq_t *v = *pv;
		if (__atomic_load_n(&v->handoff, __ATOMIC_ACQUIRE) != GS_HANDOFF_BUILT) {
			pv = &v->vnext;
			continue;
		}
		*pv = v->vnext;
		v->vnext = NULL;
		v->handoff = GS_HANDOFF_NONE;
		__atomic_sub_fetch(&s->cache.built, 1, __ATOMIC_ACQ_REL);
		gs_self_did(GS_SELF_DID_PUBLISH);
		gs_variant_attach(s, v, v->build_rc, v->build_dt);
	}
}

/* Free a variant, its graph destroyed only with `graphs` (a forked child has none to destroy). */
static void gs_variant_free(gs_seq_t *v, bool graphs)
{
	if (graphs) {
		gs_seq_free(v);
		return;
	}
	for (uint32_t k = 0; v->recs && k < v->n; k++)
		free(v->recs[k]);
	free(v->recs);
	free(v->chunk_end);
	free(v->graphs);
	free(v);
}

void gs_variant_release(gs_seq_t *q, bool graphs)
{
	if (q->var) {
		for (uint32_t j = 0; j < q->nchunks; j++)
			while (q->var[j]) {
				gs_seq_t *v = q->var[j];
				q->var[j] = v->vnext;
				gs_variant_free(v, graphs);
			}
		free(q->var);
		q->var = NULL;
	}
	/* Builds under way: the builder frees a cancelled one when it is done. */
	for (gs_seq_t **pv = q->vbuilding ? &q->owner->cache.vpending : NULL; pv && *pv;) {
		gs_seq_t *v = *pv;
		if (v->parent != q) {
			pv = &v->vnext;
			continue;
		}
		*pv = v->vnext;
		int expect = GS_HANDOFF_BUILDING;
		if (!__atomic_compare_exchange_n(&v->handoff, &expect, GS_HANDOFF_CANCELLED, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			__atomic_sub_fetch(&q->owner->cache.built, 1, __ATOMIC_ACQ_REL);
			gs_variant_free(v, graphs); /* built, never attached */
		}
	}
	q->vbuilding = 0;
	q->vnodes = 0;
	free(q->vhist);
	q->vhist = NULL;
	free(q->vcnt);
	q->vcnt = NULL;
}
