/*
 * Replay (gs_replay.h).  For each chunk of the sequence being matched,
 * once its records have arrived:
 *   1. revalidate: every argument byte of every held record is compared
 *      with the record baked into the chunk's graph;
 *   2. cost rule: with n records and d that differ, the chunk is patched
 *      and launched when GRAPHSHIM_GRAPH_COST + d x GRAPHSHIM_PATCH_COST < n,
 *      otherwise its records go eagerly and a DRIFT mismatch is counted
 *      (none for a chunk too short to be worth even one patch);
 *   3. patch each differing node (only later launches see it);
 *   4. launch the chunk's graph on the stream.
 */
#include "gs_arm.h"
#include "gs_backend.h"
#include "gs_event.h"
#include "gs_log.h"
#include "gs_replay.h"
#include "gs_self.h"
#include "gs_stream.h"
#include "gs_submit.h"
#include "gs_trace.h"
#include "gs_variant.h"

#include <stdio.h>

/*
 * A held mark went to the driver, or (a wait its chunk's graph covers)
 * need not: its event's hold ends, and when its own call is in progress
 * the status goes to that call (gs_engine_launch).  A wait sent before
 * its chunk's graph is not sent again (gs_replay_mark).
 */
static void gs_replay_mark_sent(gs_stream_t *s, gs_rec_t *r, int rc)
{
	if (r->held_ev == GS_HELD_EVENT &&
	    gs_event_unhold(gs_rec_event(r), s, gs_rec_is_record(r)))
		gs_backend->event_destroy(gs_rec_event(r)); /* destroyed meanwhile (gs_event_destroy) */
	r->held_ev = GS_HELD_SENT;
	if (r == s->match.inflight) {
		s->match.inflight_sent = true;
		s->match.inflight_rc = rc;
	} else if (rc) {
		/* Its call returned success already, as a launch's does. */
		GS_STAT_INC(fallbacks);
		gs_log_once(GS_LOG_WARN, "a held event record, wait or free failed when submitted (status %d)",
			    rc);
	}
}

static void gs_replay_mark(gs_stream_t *s, gs_rec_t *r)
{
	if (r->held_ev == GS_HELD_SENT)
		return;
	gs_replay_mark_sent(s, r, gs_backend->submit(r, s->key.handle));
}

/*
 * Submit held records [from, to) eagerly, in order; `gated`: by the gate's
 * choice.  Marks go too (gs_replay_mark): not counted or traced as launches.
 */
static void gs_replay_submit(gs_stream_t *s, uint32_t from, uint32_t to, bool gated)
{
	for (uint32_t i = from; i < to; i++) {
		gs_rec_t *r = gs_stream_at(s, s->match.held_start + i);
		if (gs_rec_is_mark(r)) {
			gs_replay_mark(s, r);
			continue;
		}
		gs_stream_sent(s, s->match.held_start + i, s->match.held_start + i);
		int rc = gs_backend->submit(r, s->key.handle);
		if (gated) {
			GS_STAT_INC(gated);
		} else {
			GS_STAT_INC(released);
			gs_self_did(GS_SELF_DID_RELEASE);
		}
		if (gs_trace_on)
			gs_trace_launch(gated ? (s->match.api ? s->match.api : "gated") : "release",
					s->key.handle, r, gated ? "gated" : "released");
		if (rc) {
			/* The launch already returned success to the application, as a
			 * launch whose failure shows up asynchronously would. */
			GS_STAT_INC(fallbacks);
			gs_log_once(GS_LOG_WARN, "a held launch failed when submitted (status %d)", rc);
		}
	}
}

/*
 * Absorbed marks (GRAPHSHIM_ABSORB): inside a chunk a mark is an empty node
 * of its graph, and the chunk is not cut there.  Its own operation still
 * happens, on the stream, where it keeps the order the program asked for:
 * a wait goes before the graph (the whole chunk waits, not only what
 * followed it: more order, never less), unless the event's record is an
 * earlier record of the same chunk, which the graph's order already
 * covers; a record goes after the graph (the event completes after the
 * whole chunk: later, never earlier).  Meanwhile its event is held
 * (gs_event.h): anything that would observe it first has this stream
 * submit.  A free is held on every stream (gs_match_defer) and goes after
 * the graph as a record does: its block goes back after the whole chunk.
 */

/* The held record's wait at i has its event recorded earlier in [b, i). */
static bool gs_replay_inside(const gs_stream_t *s, uint32_t b, uint32_t i)
{
	uint64_t at = s->match.held_start, ev = gs_rec_event(gs_stream_at(s, at + i));
	for (uint32_t k = i; k-- > b;) {
		const gs_rec_t *o = gs_stream_at(s, at + k);
		if (gs_rec_is_record(o) && gs_rec_event(o) == ev)
			return true;
	}
	return false;
}

/* Before the chunk's graph: the waits it does not cover; returns the marks in held records [b, e). */
static uint32_t gs_replay_waits(gs_stream_t *s, uint32_t b, uint32_t e)
{
	uint32_t marks = 0;
	for (uint32_t i = b; i < e; i++) {
		gs_rec_t *r = gs_stream_at(s, s->match.held_start + i);
		if (!gs_rec_is_mark(r))
			continue;
		marks++;
		if (gs_rec_is_wait(r) && !gs_replay_inside(s, b, i))
			gs_replay_mark(s, r);
	}
	return marks;
}

/* After the chunk's graph: its records and frees, in order; the waits it covered are done. */
static void gs_replay_records(gs_stream_t *s, uint32_t b, uint32_t e)
{
	for (uint32_t i = b; i < e; i++) {
		gs_rec_t *r = gs_stream_at(s, s->match.held_start + i);
		if (gs_rec_is_record(r) || gs_rec_is_free(r)) {
			gs_replay_mark(s, r);
		} else if (gs_rec_is_mark(r) && r->held_ev != GS_HELD_SENT) {
			gs_replay_mark_sent(s, r, 0); /* the graph's order did its wait */
		}
	}
}

void gs_replay_release(gs_stream_t *s, uint32_t from, uint32_t to)
{
	gs_replay_submit(s, from, to, false);
}

bool gs_replay_eager(gs_stream_t *s, gs_seq_t *q)
{
	gs_match_t *m = &s->match;
	uint32_t end = m->nheld < q->n ? m->nheld : q->n;
	/*
	 * A complete shorter candidate (m->done) ends past what a mark's
	 * drain has submitted already when the longer ones mismatch later: its
	 * records went then, and the count never goes back, or the release
	 * that follows (gs_match_end) would submit them a second time.
	 */
	if (end > m->submitted) {
		gs_replay_submit(s, m->submitted, end, true);
		m->submitted = end;
	}
	if (q != m->done)
		m->done = NULL; /* its records are gone: it can no longer replay */
	if (end < q->n)
		return false;
	gs_seq_passed(s, q, true, true);
	gs_gate_complete(s, q, true);
	return true;
}

void gs_replay_mismatch(gs_stream_t *s, gs_seq_t *q, gs_mismatch_reason_t why, uint32_t pos,
			const gs_rec_t *got)
{
	GS_STAT_INC(mismatches);
	GS_STAT_INC(mismatch_by[why]);
	gs_self_did(GS_SELF_DID_MISMATCH);
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
		gs_trace_mismatch(s->key.handle, q->id, pos, why, field, NULL, got ? g : NULL, got);
	}
	/* A sequence learned between boundaries begins only at a segment's
	 * start, so the segment's end says whether a sibling step cut it. */
	if ((why == GS_MISMATCH_STRUCTURE || why == GS_MISMATCH_CUT) && !q->periodic)
		gs_seq_owe(s, q);
	else
		gs_seq_mismatch(s, q);
}

/* Patching is worth it while a graph launch plus the patches cost less than
 * submitting every record eagerly (costs in units of one eager launch). */
static bool gs_replay_worth(uint32_t n, uint32_t ndiff)
{
	return gs_config.graph_cost + ndiff * gs_config.patch_cost < (double)n;
}

/*
 * The backend failed while replaying records [b, e) of q: they go eagerly,
 * in order.  A graph that would not launch retires q (it may no longer
 * match what it holds).  A node the vendor would not update is refused:
 * once the match has ended, that record runs eagerly from then on and q is
 * built again around it (gs_arm_refuse_armed; past its bound q retires).
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
		gs_log(GS_LOG_WARN, "%s failed (status %d); %s", what, rc,
		       why == GS_MISMATCH_PATCH_FAILED ? "that launch goes eager, the rest of its step replays"
						       : "that sequence goes eager");
	gs_replay_release(s, b, e);
	gs_replay_mismatch(s, q, why, pos, r);
	if (why == GS_MISMATCH_PATCH_FAILED && q->state == GS_SEQ_ARMED) {
		q->refuse_at = pos;
		s->match.replan = q; /* gs_match_clear */
		return true;
	}
	gs_seq_retire(s, q);
	return true;
}

/*
 * A chunk posted earlier (gs_submit.h) that the vendor refused: its records
 * went eagerly then; here, once no job names this chunk's graph, q is
 * treated as gs_replay_failed would have then (this chunk's records go
 * eagerly too, and the match ends).  True when so.
 */
static bool gs_replay_posted_failed(gs_stream_t *s, gs_seq_t *q, uint32_t b, uint32_t e,
				    const void *graph)
{
	gs_submit_wait_graph(graph);
	int why = __atomic_exchange_n(&q->sub_fail, 0, __ATOMIC_ACQ_REL);
	if (GS_LIKELY(!why))
		return false;
	return gs_replay_failed(s, q, b, e, (gs_mismatch_reason_t)(why - 1), q->sub_fail_pos, NULL,
				q->sub_fail_rc);
}

/*
 * Record i of q, node i - b of the picked graph, patched with r: the drift
 * it shows is marked on the baked records (gs_rec_t.drift), and where the
 * backend would build that node otherwise, q is built again after the
 * match (gs_arm_rebuild).  While another sequence's request is pending in
 * this match, or past the bound, nothing is marked: its next patch asks
 * again.  A node marked already and still built as before the mark asks
 * again too: its build was asked for while q was not armed (its ready
 * chunks replay while the rest is built, and that build was planned
 * before the mark), and nothing else would ever build it for the mark.
 */
static void gs_replay_drift(gs_stream_t *s, gs_seq_t *q, const gs_variant_pick_t *pick,
			    uint32_t i, uint32_t b, const gs_rec_t *r)
{
	const gs_rec_t *o = pick->recs[i - b];
	if (r->kind != GS_REC_KERNEL || !gs_backend->graph_node_patching)
		return;
	uint32_t d = o->func != r->func || o->shmem != r->shmem ||
		     memcmp(o->block, r->block, sizeof(o->block)) ? GS_DRIFT_GEOMETRY : GS_DRIFT_ARGS;
	bool marked = o->drift & d;
	int how = gs_backend->graph_node_patching(pick->graph, i - b, r);
	bool again = d == GS_DRIFT_GEOMETRY ? how == GS_PATCH_DEVICE
					   : how == GS_PATCH_CAN && !(o->drift & GS_DRIFT_GEOMETRY);
	bool busy = (s->match.rebuild && s->match.rebuild != q) || !gs_arm_rebuild_may(q);
	if (marked) {
		if (again && !busy)
			s->match.rebuild = q;
		return;
	}
	if (d == GS_DRIFT_ARGS && how == GS_PATCH_HOST && gs_config.device_patch)
		GS_STAT_INC(drift_host_only);
	if (again && busy) {
		GS_STAT_INC(drift_deferred);
		return;
	}
	pick->recs[i - b]->drift |= d;
	q->recs[i]->drift |= d; /* the chunk's own record, where a variant was picked */
	if (again)
		s->match.rebuild = q;
}

/*
 * Chunks with fewer patches than this are launched on the caller's thread:
 * a post that finds the submission thread asleep wakes it (a system call),
 * and a step that synchronises right after its last chunk waits for the
 * job anyway; what the thread saves the caller is mostly the patches
 * (about 2 us each, and 1 us more at the graph's launch: docs/performance.md).
 */
#define GS_REPLAY_POST_PATCHES 2

/*
 * The chunk's patches and graph launch go to the submission thread: the
 * baked records become the held ones here (what the job patches from),
 * and the thread does the rest.  With GRAPHSHIM_SELFTIME the call counts
 * as a chunk's last.  False when it could not be posted.
 */
static bool gs_replay_post(gs_stream_t *s, gs_seq_t *q, uint32_t b, uint32_t e,
			   const gs_variant_pick_t *pick)
{
	gs_match_t *m = &s->match;
	for (uint32_t k = 0; k < pick->ndiff; k++) {
		uint32_t i = m->diffs[k];
		const gs_rec_t *r = gs_stream_at(s, m->held_start + i);
		gs_replay_drift(s, q, pick, i, b, r);
		gs_seq_rebake(pick->recs, i - b, r);
	}
	if (!gs_submit_post(pick->graph, s->key.handle, pick->recs, e - b, m->diffs, pick->ndiff, q, b,
			    pick->var != NULL))
		return false;
	gs_self_tl.kinds |= GS_SELF_GRAPH;
	GS_STAT_INC(posted);
	return true;
}

/*
 * Submit chunk j of q over the held records it covers: revalidate every
 * byte, patch what drifted, launch the chunk's graph.  Drift past the cost
 * rule releases the chunk's records eagerly.  A backend failure releases
 * them too and retires q; then the function returns true and the caller
 * ends the match.
 */
bool gs_replay_chunk(gs_stream_t *s, gs_seq_t *q, uint32_t j, bool shared)
{
	gs_match_t *m = &s->match;
	uint32_t b = gs_seq_chunk_begin(q, j), e = q->chunk_end[j], ndiff = 0;
	if (m->submitted > b) {
		/* Another thread's flush sent part of it eagerly (gs_match_interrupt),
		 * or a mark did while several candidates held it (gs_match_drain):
		 * so goes the rest. */
		gs_replay_release(s, m->submitted, e);
		if (m->submitted < e)
			m->submitted = e;
		return false;
	}
	if (gs_seq_chunk_bare(q, j)) {
		/* A lone mark, with no graph: it goes now, at its own call, after
		 * the chunks before it (or went already). */
		m->submitted = e;
		gs_replay_release(s, b, e);
		return false;
	}
	if (j >= __atomic_load_n(&q->ready, __ATOMIC_ACQUIRE)) {
		/* Still being built: this chunk goes eagerly, the pass goes on. */
		m->submitted = e;
		gs_replay_release(s, b, e);
		return false;
	}
	gs_variant_pick_t pick;
	gs_variant_pick(s, q, j, b, e, &pick);
	ndiff = pick.ndiff;
	m->submitted = e;
	if (ndiff && !gs_replay_worth(e - b, ndiff)) {
		m->pass_clean = false;
		if (!gs_replay_worth(e - b, 1)) {
			/* A chunk too short for any patch (a lone launch between two
			 * places the program waits): eager costs it no more than its
			 * graph, and its drift says nothing against the rest of the
			 * step.  train-deep's optimizer tail retired so, its last
			 * launch's tensor list drifting every step.  A pass that
			 * launches no graph at all is charged at its end. */
			if (!m->spared)
				m->spared = m->diffs[0] + 1;
			gs_replay_release(s, b, e);
			return false;
		}
		gs_replay_mismatch(s, q, GS_MISMATCH_DRIFT, m->diffs[0],
				   gs_stream_at(s, m->held_start + m->diffs[0]));
		gs_replay_release(s, b, e);
		return q->state != GS_SEQ_ARMED;
	}
	if (gs_replay_posted_failed(s, q, b, e, pick.graph))
		return true;
	gs_variant_passed(s, q, j, b, e, &pick);
	uint32_t marks = gs_replay_waits(s, b, e);
	if (!marks && ndiff >= GS_REPLAY_POST_PATCHES && gs_submit_ready()) {
		if (gs_replay_post(s, q, b, e, &pick))
			goto sent;
	}
	for (uint32_t k = 0; k < ndiff; k++) {
		uint32_t i = m->diffs[k];
		const gs_rec_t *r = gs_stream_at(s, m->held_start + i);
		const gs_rec_t *old = pick.recs[i - b]; /* the node's operands until now */
		int rc = gs_backend->graph_patch(pick.graph, i - b, r, old->stale ? NULL : old);
		if (rc)
			return gs_replay_failed(s, q, b, e, GS_MISMATCH_PATCH_FAILED, i, r, rc);
		gs_replay_drift(s, q, &pick, i, b, r);
		gs_seq_rebake(pick.recs, i - b, r);
	}
	int rc = gs_backend->graph_launch(pick.graph, s->key.handle);
	if (rc) /* nothing ran: its records go eagerly */
		return gs_replay_failed(s, q, b, e, GS_MISMATCH_LAUNCH_FAILED, b, NULL, rc);
sent:
	gs_stream_sent(s, m->held_start + b, m->held_start + e - 1);
	if (marks)
		gs_replay_records(s, b, e);
	m->graphs++;
	GS_STAT_INC(replays);
	GS_STAT_ADD(replayed, e - b - marks);
	if (pick.var)
		GS_STAT_INC(variant_replays);
	if (ndiff) {
		GS_STAT_ADD(patches, ndiff);
		GS_STAT_INC(patched_replays);
		gs_seq_patched(q, ndiff);
	}
	if (gs_trace_on)
		gs_trace_replay(s->key.handle, q->id, q->n, e - b - marks, ndiff, j, q->nchunks, pick.var != NULL,
				shared);
	return false;
}

bool gs_replay_ready(gs_stream_t *s, gs_seq_t *q)
{
	gs_match_t *m = &s->match;
	while (m->chunk < q->nchunks && q->chunk_end[m->chunk] <= m->nheld)
		if (gs_replay_chunk(s, q, m->chunk++, false))
			return true;
	if (m->chunk == q->nchunks) {
		if (m->spared && !m->graphs) {
			/* Every chunk that drifted was spared and none went as a
			 * graph: the pass replayed nothing, which the drift says. */
			uint32_t at = m->spared - 1;
			gs_replay_mismatch(s, q, GS_MISMATCH_DRIFT, at, gs_stream_at(s, m->held_start + at));
			if (q->state != GS_SEQ_ARMED)
				return true;
		}
		gs_seq_passed(s, q, false, m->pass_clean);
		gs_gate_complete(s, q, false);
	}
	return false;
}
