/*
 * Arming (gs_arm.h): a learned sequence gets its own records (baked from
 * the stream's history), is cut into chunks, and each chunk becomes a
 * graph, built on the background builder (gs_build.c) or in place.  The
 * builder hands a finished sequence back through gs_seq_t.handoff; the
 * stream publishes it on its next call.
 */
#include "gs_arm.h"
#include "gs_backend.h"
#include "gs_build.h"
#include "gs_clock.h"
#include "gs_event.h"
#include "gs_log.h"
#include "gs_self.h"
#include "gs_stream.h"
#include "gs_trace.h"
#include "gs_variant.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

/*
 * Whether record r cuts its sequence q's chunks: a chunk of its own, with
 * no graph, submitted eagerly at its place.  A mark does, at its own call,
 * on a stream that does not absorb marks; on one that does
 * (gs_stream_absorbs: GRAPHSHIM_ABSORB, or side streams adopted into it),
 * only the record of an event that crosses streams (gs_event.h), which
 * another stream would otherwise find held, and a mark of an event shared
 * with another process (gs_event_shared).  So does a record the vendor
 * would not take as a graph node (gs_arm_replan).  A free never does: it
 * goes after its chunk's graph on any stream (gs_match_defer).
 */
static bool gs_arm_cuts(const gs_seq_t *q, const gs_rec_t *r)
{
	if (r->refused)
		return true;
	return gs_rec_is_evmark(r) &&
	       (!gs_stream_absorbs(q->owner) || gs_event_shared(gs_rec_event(r)) ||
		(gs_rec_is_record(r) && gs_event_crosses(gs_rec_event(r))));
}

/* Replayed passes in a row that wait at one place before a chunk ends there
 * (gs_arm_waited): GRAPHSHIM_IDLE_CUT. */
#define GS_ARM_CUT_AFTER ((uint32_t)gs_config.idle_cut)

/*
 * Whether a chunk ends right after record r, which is not a chunk of its
 * own: the program waits there without a call (gs_arm_waited).
 */
static bool gs_arm_ends(const gs_seq_t *q, const gs_rec_t *r)
{
	return r->waits >= GS_ARM_CUT_AFTER && !gs_arm_cuts(q, r);
}

/*
 * The chunks planned are split around each record that cuts (they end
 * before it and begin after it) and after each where the program waits;
 * true when memory is short.  Each record's part is decided once, first:
 * whether a record cuts depends on what other threads change without this
 * stream's lock (an event another stream waits on starts crossing;
 * adoption makes the owner absorb), and deciding again while writing the
 * chunk ends wrote past the array sized by the first decisions (a fuzz run
 * under an oversubscribed CPU: free(): invalid next size).
 */
enum { GS_ARM_IN, GS_ARM_ENDS, GS_ARM_CUTS }; /* a record's part: its extra chunk ends */

void (*gs_arm_split_seam)(void);

static bool gs_arm_split(gs_seq_t *q)
{
	uint8_t *how = malloc(q->n ? q->n : 1);
	if (!how)
		return true;
	uint32_t extra = 0;
	for (uint32_t i = 0; i < q->n; i++) {
		if (gs_arm_cuts(q, q->recs[i]))
			how[i] = GS_ARM_CUTS;
		else
			how[i] = q->recs[i]->waits >= GS_ARM_CUT_AFTER ? GS_ARM_ENDS : GS_ARM_IN;
		extra += how[i];
	}
	if (gs_arm_split_seam)
		gs_arm_split_seam();
	uint32_t *end = extra ? calloc(q->nchunks + (size_t)extra, sizeof(*end)) : NULL;
	if (!end) {
		free(how);
		return extra != 0;
	}
	uint32_t k = 0, at = 0; /* at: where the chunk being cut began */
	for (uint32_t j = 0; j < q->nchunks; j++) {
		for (uint32_t i = gs_seq_chunk_begin(q, j); i < q->chunk_end[j]; i++) {
			if (how[i] == GS_ARM_ENDS) {
				if (i + 1 < q->chunk_end[j])
					end[k++] = at = i + 1;
				continue;
			}
			if (how[i] != GS_ARM_CUTS)
				continue;
			if (i > at)
				end[k++] = i;
			end[k++] = at = i + 1;
		}
		if (q->chunk_end[j] > at)
			end[k++] = at = q->chunk_end[j];
	}
	free(how);
	void **graphs = calloc(k, sizeof(*graphs));
	if (!graphs) {
		free(end);
		return true;
	}
	free(q->chunk_end);
	free(q->graphs);
	q->chunk_end = end;
	q->graphs = graphs;
	q->nchunks = k;
	return false;
}

/* The front chunk after one of f launches: twice as long, or GRAPHSHIM_CHUNK_GROWTH
 * times where the host is slow (tail), and at least one launch longer unless
 * that is 1 (1.5 times a chunk of 1 is still 1); at most max. */
static uint32_t gs_arm_grow(uint32_t f, uint32_t max, bool tail)
{
	double k = tail ? gs_config.chunk_growth : 2.0, g = (double)f * k;
	if (k > 1.0 && g < (double)f + 1.0)
		g = (double)f + 1.0;
	return g < (double)max ? (uint32_t)g : max;
}

/*
 * Cut q into chunks, one graph each.  From the front: GRAPHSHIM_CHUNK_FIRST
 * launches, each chunk longer than the one before up to GRAPHSHIM_CHUNK_MAX,
 * so the GPU starts early.  When the host took longer than
 * GRAPHSHIM_HOST_BOUND_US per launch while the sequence was learned (an
 * interpreter between launches), the GPU keeps up with the host and only
 * the last chunk's work is left after the last launch; so chunks also
 * shrink towards the end, halving down to GRAPHSHIM_CHUNK_LAST.  A piece
 * shorter than half its planned size joins its neighbour towards the
 * middle.  With GRAPHSHIM_CHUNK_SHORT, a step no longer than
 * GRAPHSHIM_CHUNK_FIRST (one chunk, all its GPU work after its last
 * launch) but at least twice GRAPHSHIM_CHUNK_LAST ends in a chunk of
 * GRAPHSHIM_CHUNK_LAST all the same: a 32-launch step
 * of a slow host is 24 and 8 (kmeans' Lloyd iteration on an H200 waited
 * for its whole graph in the read-back's synchronization).
 *
 * How much longer: twice, where the host is fast (its held launches cost
 * it a fraction of the GPU's time: nothing to wait for); where it is slow,
 * GRAPHSHIM_CHUNK_GROWTH (1.5).  The GPU starts a chunk only once the host
 * has issued all of it, so where the GPU takes longer per launch than the
 * host but less than the growth times as long it waits at each boundary of
 * the ramp for the host to issue a chunk longer than the one it ran, and
 * the longest front chunk's GPU work can outlast the shrinking tail's
 * launches.  hostwork --kernels 512 --host-us 10, forced replay on an H200
 * (docs/performance.md, thirty-fourth session): with the GPU at about 1.2x
 * the host's time a launch, 0.89x eager doubling, 0.99x at 1.5, 1.01x at
 * 1.25; with the GPU faster than the host, 1.08x doubling and 1.24x at 1.5.
 */
static bool gs_arm_plan(gs_seq_t *q)
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
		if (tail && gs_config.chunk_short && !nf && take == rem && rem >= 2 * b)
			take = rem - b; /* what is left still ends in a chunk of b */
		if (nf && take < f / 2 && take < front[nf - 1] / 2)
			front[nf - 1] += take; /* a short middle piece joins the front */
		else
			front[nf++] = take;
		rem -= take;
		f = gs_arm_grow(f, max, tail);
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
	return !end || !q->graphs || gs_arm_split(q);
}

/*
 * Kernels the vendor would not take as graph nodes, by function and shape,
 * process-wide.  A refusal at a build (gs_arm_replan) refuses, in that
 * sequence, every record of the same kernel with it: a step that launches
 * it at many places (a framework's batch norm in every layer) pays one
 * build again, not one a place, and does not reach GS_ARM_MAX_REFUSED and
 * fail whole for one kernel.  Sequences baked later have its records
 * refused before their first build.  Refusing a record the vendor would
 * have taken costs only that launch's replay (it runs eagerly at its
 * place), so a function handle reused after its module's unload, or a
 * full table, changes no result.  Copies and memsets are refused for their
 * operands (the kind of memory), and only at their place.
 */
#define GS_ARM_REFUSED_KERNELS 64
static struct {
	pthread_mutex_t mu; /* a leaf: taken under a stream's lock, takes none */
	uint32_t n;
	struct {
		const void *func;
		uint64_t shape;
	} k[GS_ARM_REFUSED_KERNELS];
} gs_arm_refused_kernels = { .mu = PTHREAD_MUTEX_INITIALIZER };

static bool gs_arm_alike(const gs_rec_t *a, const gs_rec_t *b)
{
	return a->kind == GS_REC_KERNEL && b->kind == GS_REC_KERNEL && a->func == b->func &&
	       a->shape == b->shape;
}

/* Whether kernel r is in the table; its lock held. */
static bool gs_arm_refused_known(const gs_rec_t *r)
{
	for (uint32_t i = 0; i < gs_arm_refused_kernels.n; i++)
		if (gs_arm_refused_kernels.k[i].func == r->func && gs_arm_refused_kernels.k[i].shape == r->shape)
			return true;
	return false;
}

/* Whether r is a kernel of one the vendor refused before (in any sequence). */
static bool gs_arm_refused_before(const gs_rec_t *r)
{
	if (r->kind != GS_REC_KERNEL || !__atomic_load_n(&gs_arm_refused_kernels.n, __ATOMIC_ACQUIRE))
		return false; /* nothing refused yet: the lock is not taken */
	pthread_mutex_lock(&gs_arm_refused_kernels.mu);
	bool found = gs_arm_refused_known(r);
	pthread_mutex_unlock(&gs_arm_refused_kernels.mu);
	return found;
}

static void gs_arm_remember_refused(const gs_rec_t *r)
{
	if (r->kind != GS_REC_KERNEL)
		return;
	pthread_mutex_lock(&gs_arm_refused_kernels.mu);
	uint32_t n = gs_arm_refused_kernels.n;
	if (n < GS_ARM_REFUSED_KERNELS && !gs_arm_refused_known(r)) {
		gs_arm_refused_kernels.k[n].func = r->func;
		gs_arm_refused_kernels.k[n].shape = r->shape;
		__atomic_store_n(&gs_arm_refused_kernels.n, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&gs_arm_refused_kernels.mu);
}

/*
 * Give q its own records of ring[from .. from+n).  With `steal` the ring's
 * record allocations themselves move to q and the ring slots are left empty
 * (refilled by the next launches), so arming costs a pointer per record
 * instead of a copy: a 1000-launch sequence was 130-380 us to copy.  The
 * caller steals only records nothing else will read: a segment that is
 * ending, or one it marks unlearnable.
 */
static bool gs_arm_bake(gs_stream_t *s, gs_seq_t *q, uint64_t from, bool steal)
{
	q->recs = calloc(q->n, sizeof(*q->recs));
	if (!q->recs)
		return true;
	q->nrefused = 0;
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
		q->recs[i]->held_ev = 0;
		q->recs[i]->refused = gs_arm_refused_before(q->recs[i]);
		q->nrefused += q->recs[i]->refused;
		q->recs[i]->waits = 0;
		q->recs[i]->idled = 0;
		q->recs[i]->stale = 0;
		q->recs[i]->drift = 0;
	}
	return false;
}

int gs_arm_build(gs_seq_t *q)
{
	int rc = 0;
	gs_self_did(GS_SELF_DID_BUILD); /* on the builder thread, counted nowhere */
	q->refuse_at = q->n;
	for (uint32_t j = 0; j < q->nchunks && !rc; j++) {
		uint32_t b = gs_seq_chunk_begin(q, j);
		if (gs_seq_chunk_bare(q, j)) { /* a chunk with no graph */
			__atomic_store_n(&q->ready, j + 1, __ATOMIC_RELEASE);
			continue;
		}
		size_t n = q->chunk_end[j] - b, refused = n;
		uint8_t *stand_in = calloc(n, 1); /* without it, the backend uses none */
		rc = gs_backend->graph_build((const gs_rec_t *const *)q->recs + b, n, &q->graphs[j],
					     &refused, stand_in);
		/* Before the chunk is published no replay reads its records. */
		for (size_t k = 0; !rc && k < n; k++) {
			q->recs[b + k]->stale = stand_in && stand_in[k];
			if (q->recs[b + k]->stale)
				GS_STAT_INC(stand_ins);
		}
		free(stand_in);
		if (!rc) /* the stream may replay it from now on */
			__atomic_store_n(&q->ready, j + 1, __ATOMIC_RELEASE);
		else if (refused < n)
			q->refuse_at = b + (uint32_t)refused;
	}
	return rc;
}

/* Refusals a sequence may be planned and built again for before it fails
 * whole: past a few, its steps are mostly what the vendor will not graph. */
#define GS_ARM_MAX_REFUSED 8

static void gs_arm_built(gs_stream_t *s, gs_seq_t *q, int rc, uint64_t ns);
static bool gs_arm_start_build(gs_stream_t *s, gs_seq_t *q);

/* Mark q failed: it stays eager, its graphs and records go. */
static void gs_arm_fail(gs_stream_t *s, gs_seq_t *q)
{
	q->state = GS_SEQ_FAILED;
	gs_seq_uncount(s, q);
	gs_seq_release(q);
}

/*
 * A record the vendor would not take as a graph node (a build that failed
 * at it), or whose node it would not update (a patch), need not send the
 * whole step eager: that record runs eagerly at its place from then on, in
 * a chunk of its own as a mark does (gs_arm_cuts), and the rest is planned
 * and built again.  The graphs built so far, and any variants, go: the
 * chunks change.  Only where the stream's lock is held and the sequence is
 * in no match (its publisher, or the end of the match that failed to
 * patch, sees to that) may its chunks change under the stream.  Past
 * GS_ARM_MAX_REFUSED refusals (a refused kernel's other records go with
 * it: gs_arm_refused_kernels), or where the vendor named none, the
 * sequence fails (a build) or retires (a patch) as before.
 */

/* Whether record q->refuse_at can be refused: named, not yet, and under the bound. */
static bool gs_arm_may_refuse(const gs_seq_t *q)
{
	uint32_t at = q->refuse_at;
	return at < q->n && !q->recs[at]->refused && q->replans < GS_ARM_MAX_REFUSED;
}

/* Plan q's chunks again and build them; its graphs so far go. */
static void gs_arm_again(gs_stream_t *s, gs_seq_t *q)
{
	gs_seq_release_graphs(q);
	if (gs_arm_plan(q)) {
		gs_arm_fail(s, q); /* no memory for the plan */
		return;
	}
	q->state = GS_SEQ_BUILDING;
	gs_arm_start_build(s, q); /* in place, gs_arm_built has published or failed it */
}

/*
 * Refuse record q->refuse_at, and the records of the same kernel with it,
 * and build q again around them (see above and gs_arm_refused_kernels).
 * `built`: the vendor refused the node at a build (not a patch of it,
 * which may be about the operands before): remembered for later sequences.
 */
static void gs_arm_replan(gs_stream_t *s, gs_seq_t *q, bool built)
{
	const gs_rec_t *r = q->recs[q->refuse_at];
	const char *name = gs_backend->func_name ? gs_backend->func_name(r) : NULL;
	gs_log_once(GS_LOG_WARN, "the driver refused a %s%s%s as a graph node, or its update; it "
		    "runs eagerly at its place and the rest of its step replays (counter refused)",
		    gs_rec_kind_name(r->kind), name ? " " : "", name ? name : "");
	if (built)
		gs_arm_remember_refused(r);
	for (uint32_t i = 0; i < q->n; i++)
		if (i == q->refuse_at || (!q->recs[i]->refused && gs_arm_alike(q->recs[i], r))) {
			GS_STAT_INC(refused);
			q->recs[i]->refused = 1;
			q->nrefused++;
		}
	q->replans++;
	gs_arm_again(s, q);
}

bool gs_arm_refuse_armed(gs_stream_t *s, gs_seq_t *q)
{
	if (q->state != GS_SEQ_ARMED || !gs_arm_may_refuse(q))
		return false;
	gs_arm_replan(s, q, false);
	return true;
}

/*
 * Where a program waits for its GPU without a call (it polls memory a
 * kernel writes, or sleeps), the records held before the wait reach the
 * GPU only when the idle watchdog finds the stream idle (gs_idle.h), 1-2 ms
 * late, and the rest of that chunk goes eagerly.  A program that does so
 * every step pays it every step.  So when the watchdog finds one
 * sequence's match waiting at the same place in GS_ARM_CUT_AFTER replayed
 * passes in a row, a chunk ends there from then on: the chunk's graph is
 * launched as its last record arrives, before the program waits.  A wait
 * at a place it does not come back to pass after pass (a pause of the
 * interpreter, a page fault) changes nothing.  Two passes by default
 * (GRAPHSHIM_IDLE_CUT; four until measured against two on an H200: at four
 * a program that rotates several steps, e3nn-train's four batches, waits
 * for the watchdog 16 steps before each is cut, and train-deep sent twice
 * as many launches eagerly).  A cut makes shorter chunks, and a short chunk
 * whose launches drift fails the cost rule sooner; a lone launch left
 * between two cuts that drifts does not charge its sequence (gs_replay.c).
 * Each cut is one graph launch more a pass; GS_ARM_MAX_CUTS bounds them.
 */
#define GS_ARM_MAX_CUTS 8

/* Whether a chunk of q ends at record at. */
static bool gs_arm_chunk_ends_at(const gs_seq_t *q, uint32_t at)
{
	for (uint32_t j = 0; j < q->nchunks; j++)
		if (q->chunk_end[j] == at)
			return true;
	return false;
}

void gs_arm_waited(gs_stream_t *s, gs_seq_t *q, uint32_t at)
{
	if (!at || at >= q->n || !q->recs || !q->chunk_end || gs_arm_chunk_ends_at(q, at) ||
	    (s->match.recut && s->match.recut != q))
		return;
	gs_rec_t *r = q->recs[at - 1];
	/* Passes in a row: the one before this completed with a wait here. */
	bool again = r->idled && r->idled == (uint32_t)q->replays;
	r->idled = (uint32_t)q->replays + 1;
	if (r->waits < GS_ARM_CUT_AFTER) {
		r->waits = again ? r->waits + 1 : 1;
		if (r->waits < GS_ARM_CUT_AFTER)
			return;
		if (q->ncut >= GS_ARM_MAX_CUTS) {
			r->waits = 0;
			return;
		}
		q->ncut++;
		GS_STAT_INC(idle_cuts);
		gs_trace_cut(s->key.handle, q->id, q->n, at, r);
	}
	/* Cut, and no chunk ends here yet (planned anew once the match ends). */
	s->match.recut = q;
}

void gs_arm_recut(gs_stream_t *s, gs_seq_t *q)
{
	/* Armed: built and in no match.  Otherwise its next wait there asks again. */
	if (q->state != GS_SEQ_ARMED)
		return;
	for (uint32_t i = 0; i + 1 < q->n; i++)
		if (gs_arm_ends(q, q->recs[i]) && !gs_arm_chunk_ends_at(q, i + 1)) {
			gs_arm_again(s, q);
			return;
		}
}

/*
 * Patches on the GPU (GRAPHSHIM_DEVICE_PATCH) cost a graph something on
 * every launch (an updater node, device-updatable nodes: tiny's 256-launch
 * step 0.92 of the hand-written graph with them, 0.95 without, on the
 * H200), so a sequence is built without them and only the nodes seen to
 * drift in their parameters take them; a node whose function, block or
 * shared memory drifts cannot (PyTorch's softmax takes shared memory by
 * the row's length, which a KV cache grows every token) and is patched
 * from the host, which for a device-updatable node costs the whole graph
 * an upload (nn-dynamic uploaded before all 300 of its chunk launches).
 * A patch that shows either marks the record (gs_rec_t.drift, gs_replay.c)
 * and the sequence is built again once the match has ended.  Drift first
 * seen later asks again; GS_ARM_MAX_REBUILDS bounds the builds.
 */
#define GS_ARM_MAX_REBUILDS 4

bool gs_arm_rebuild_may(const gs_seq_t *q)
{
	return q->rebuilds < GS_ARM_MAX_REBUILDS;
}

void gs_arm_rebuild(gs_stream_t *s, gs_seq_t *q)
{
	/* Armed: built and in no match.  Otherwise it is being built already
	 * (with the marks), or no longer replays. */
	if (q->state != GS_SEQ_ARMED) {
		GS_STAT_INC(drift_unarmed);
		return;
	}
	if (!gs_arm_rebuild_may(q))
		return;
	q->rebuilds++;
	GS_STAT_INC(drift_rebuilds);
	gs_arm_again(s, q);
}

/* Publish the result of a build; stream lock held. */
static void gs_arm_built(gs_stream_t *s, gs_seq_t *q, int rc, uint64_t ns)
{
	GS_STAT_ADD(build_ns, ns);
	gs_stats_max(&gs_stats.build_max_ns, ns);
	q->build_ns += ns;
	gs_trace_built(s->key.handle, q->id, q->n, ns, rc,
		       q->recs ? q->recs[rc && q->refuse_at < q->n ? q->refuse_at : 0] : NULL);
	if (rc) {
		GS_STAT_INC(fallbacks);
		if (gs_arm_may_refuse(q)) {
			gs_arm_replan(s, q, true);
			return;
		}
		gs_log_once(GS_LOG_WARN, "building a graph of %u nodes failed (status %d); that sequence stays eager",
			    q->n, rc);
		gs_arm_fail(s, q);
		return;
	}
	GS_STAT_INC(graphs);
	q->state = GS_SEQ_ARMED;
	q->mismatch_run = 0;
	gs_gate_armed(q); /* its first_bloom bit was set when it was armed */
}

static bool gs_arm_now(gs_stream_t *s, gs_seq_t *q, uint64_t from, uint64_t host_ns, bool steal)
{
	uint32_t n = q->n;
	q->host_ns = host_ns;
	if (gs_seq_make_room(s, n, q))
		return true; /* cannot fit even alone: stays learning */
	if (gs_arm_bake(s, q, from, steal) || gs_arm_plan(q)) {
		gs_seq_release(q);
		return true;
	}
	gs_seq_count(s, q);
	q->state = GS_SEQ_BUILDING;
	q->ready = 0;
	gs_seq_bloom_add(s, q->first_shape);
	return gs_arm_start_build(s, q);
}

/*
 * Hand q (planned, BUILDING) to the builder, or build it in place where
 * there is none; true when it failed in place.
 */
static bool gs_arm_start_build(gs_stream_t *s, gs_seq_t *q)
{
	q->handoff = GS_HANDOFF_BUILDING;
	if (gs_config.async_build && !gs_build_submit(q))
		return false;
	q->handoff = GS_HANDOFF_NONE;
	uint64_t t0 = gs_clock_ns();
	int rc = gs_arm_build(q);
	gs_arm_built(s, q, rc, gs_clock_ns() - t0);
	return q->state != GS_SEQ_BUILDING && q->state != GS_SEQ_ARMED;
}

/* The calling thread's involuntary context switches so far (0 if unknown). */
static long gs_arm_nivcsw(void)
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
bool gs_arm_seq(gs_stream_t *s, gs_seq_t *q, uint64_t from, uint64_t host_ns, unsigned how)
{
	if (how & GS_ARM_SPEC)
		q->spec = true;
	gs_self_did(GS_SELF_DID_ARM);
	long sw = gs_arm_nivcsw();
	uint64_t t0 = gs_clock_ns();
	bool failed = gs_arm_now(s, q, from, host_ns, (how & GS_ARM_STEAL) != 0);
	gs_stats_max(&gs_stats.arm_max_ns, gs_clock_ns() - t0);
	if (gs_arm_nivcsw() != sw)
		GS_STAT_INC(arm_preempted);
	if (failed && (how & GS_ARM_SPEC))
		q->spec = false;
	if (!failed)
		gs_thrift_armed(q);
	return failed;
}

void gs_arm_publish(gs_stream_t *s)
{
	for (gs_seq_t *q = s->cache.lru; q && __atomic_load_n(&s->cache.built, __ATOMIC_ACQUIRE);
	     q = q->next) {
		/* A sequence in the match in progress waits: a failed build
		 * releases graphs the match may still launch. */
		if (q->state != GS_SEQ_BUILDING ||
		    __atomic_load_n(&q->handoff, __ATOMIC_ACQUIRE) != GS_HANDOFF_BUILT ||
		    gs_match_has(&s->match, q))
			continue;
		q->handoff = GS_HANDOFF_NONE;
		__atomic_sub_fetch(&s->cache.built, 1, __ATOMIC_ACQ_REL);
		gs_self_did(GS_SELF_DID_PUBLISH);
		gs_arm_built(s, q, q->build_rc, q->build_dt);
	}
	if (__atomic_load_n(&s->cache.built, __ATOMIC_ACQUIRE))
		gs_variant_publish(s);
}
