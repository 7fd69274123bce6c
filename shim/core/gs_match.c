/*
 * Matching (gs_match.h).  When a record arrives and no match is in
 * progress, the armed sequences whose first record has its shape become
 * candidates (sequences learned between boundaries only at the start of a
 * segment; periodic ones anywhere).  Matching records are held; candidates
 * that disagree drop out.  Chunks every candidate shares go as they
 * complete (gs_match_shared).  Once one candidate is left, its complete chunks
 * go to replay (or, on a pass the gate sends eagerly, each record as it
 * comes).  A record that matches no candidate ends the match.
 */
#include "gs_arm.h"
#include "gs_event.h"
#include "gs_idle.h"
#include "gs_match.h"
#include "gs_replay.h"
#include "gs_stream.h"
#include "gs_trace.h"
#include "gs_variant.h"

/* The holders' counts (gs_hot) as s begins (d = 1) or stops (d = -1)
 * holding; its flags are set when its state is made, never while it holds. */
static void gs_match_held_count(const gs_stream_t *s, unsigned d)
{
	__atomic_fetch_add(&gs_hot.held_streams, d, __ATOMIC_RELAXED);
	if (s->lane.flags & GS_STREAM_LEGACY)
		__atomic_fetch_add(&gs_hot.held_legacy, d, __ATOMIC_RELAXED);
	if (s->lane.flags & GS_STREAM_BLOCKING)
		__atomic_fetch_add(&gs_hot.held_blocking, d, __ATOMIC_RELAXED);
}

static void gs_match_held(gs_stream_t *s, uint32_t nheld)
{
	uint32_t before = s->match.nheld;
	__atomic_store_n(&s->match.nheld, nheld, __ATOMIC_RELEASE);
	if (nheld)
		__atomic_store_n(&s->match.stamp, s->match.stamp + 1, __ATOMIC_RELAXED);
	if (!before && nheld) {
		gs_match_held_count(s, 1);
		gs_idle_start();
	} else if (before && !nheld) {
		gs_match_held_count(s, (unsigned)-1);
	}
}

static void gs_match_clear(gs_stream_t *s)
{
	gs_gate_abandon(s);
	s->pass.seq = NULL;
	s->match.ncands = 0;
	s->match.done = NULL;
	s->match.chunk = 0;
	s->match.submitted = 0;
	s->match.pass_clean = true;
	s->match.graphs = 0;
	s->match.spared = 0;
	s->match.idled = false;
	s->match.unshared = 0;
	gs_match_held(s, 0);
	gs_seq_t *q = s->match.replan;
	if (q) {
		/* The vendor refused a node update in the match that just ended:
		 * that record goes eager, or past the bound the sequence retires. */
		s->match.replan = NULL;
		if (!gs_arm_refuse_armed(s, q))
			gs_seq_retire(s, q);
	}
	if ((q = s->match.recut) != NULL) {
		s->match.recut = NULL;
		gs_arm_recut(s, q);
	}
	if ((q = s->match.rebuild) != NULL) {
		s->match.rebuild = NULL;
		gs_arm_rebuild(s, q);
	}
}

void gs_match_drain(gs_stream_t *s)
{
	gs_match_t *m = &s->match;
	if (m->submitted >= m->nheld)
		return;
	/* At a mark that cannot wait (several candidates, none chosen yet), or
	 * another thread's flush, or a use of a held event: what they hold goes
	 * eagerly, and a chunk that began before here goes eagerly too once it
	 * is replayed (gs_replay_chunk). */
	gs_replay_release(s, m->submitted, m->nheld);
	m->submitted = m->nheld;
}

bool gs_match_defer(gs_stream_t *s, gs_rec_t *r)
{
	/* Held records all go, in order, with a chunk's graph or eagerly: a
	 * mark among them may wait for them too, whichever candidate wins. */
	if (s->match.submitted >= s->match.nheld)
		return false;
	if (gs_rec_is_free(r)) {
		/*
		 * A stream-ordered free waits on every stream, absorbing or
		 * not: after each use of its block held before it, it may go
		 * after later work too, which cannot use the block (no
		 * allocation can return it before the free is made).  So the
		 * step is not cut at each of a pool allocator's frees.
		 */
		r->held_ev = GS_HELD_FREE;
		GS_STAT_INC(frees_held);
		return true;
	}
	if (!gs_stream_absorbs(s) || gs_event_shared(gs_rec_event(r)))
		return false;
	if (gs_rec_is_record(r)) {
		/*
		 * Held as learned, even where its event has crossed streams since
		 * (the arm cut the chunks of those that crossed then, gs_arm.c):
		 * the driver hands a destroyed event's handle out again, so one
		 * handle is a copy stream's in one use and the stream's own in
		 * the next (torch's wait_stream; twotower adopted released 2,101
		 * launches a run when such records went at their call).  A wait
		 * by another stream finds it in the table and has s submit.
		 */
		if (gs_event_hold(gs_rec_event(r), s, true))
			return false;
	} else if (gs_event_hold(gs_rec_event(r), s, false)) {
		/* Held, a wait must go before any later record of its event
		 * (gs_event.h): a wait held unknown to the table let another
		 * stream record the event again first, and the wait then named
		 * that record, not the one before it (fwstep --side-streams
		 * under GRAPHSHIM_ABSORB: results changed). */
		return false;
	}
	r->held_ev = GS_HELD_EVENT;
	return true;
}

bool gs_match_interrupt(gs_stream_t *s)
{
	gs_match_t *m = &s->match;
	gs_seq_t *q = m->ncands == 1 ? m->cands[0] : NULL;
	/*
	 * Several candidates: the match ends (the caller ends it), and a
	 * complete one replays.  Going on with all of them, their held records
	 * drained as at a mark, was tried (b0d3ce1) and lost on an H100:
	 * hf-llama pauses after the first 32 launches of every generate()
	 * call, where its steps are still candidates; ending the segment there
	 * learns a step that ends there too, which then replays those 32 as a
	 * complete candidate, while draining sent them eagerly every time
	 * (whole-run coverage 0.935 and 0.895 in the same rounds; nanogpt-chat
	 * released 340-400 launches a run and 1,800-1,900).
	 */
	if (!q || (m->done && m->done != q) || !gs_seq_matchable(q) || m->chunk >= q->nchunks)
		return false;
	/* Records submitted past the start of the current chunk say the rest
	 * of it goes eagerly too (gs_replay_chunk). */
	gs_match_drain(s);
	gs_gate_abandon(s); /* the pass's timing is not the sequence's */
	GS_STAT_INC(interrupted);
	return true;
}

void gs_match_end(gs_stream_t *s, gs_mismatch_reason_t why, const gs_rec_t *got, bool charge)
{
	gs_match_t *m = &s->match;
	uint32_t nheld = m->nheld;
	if (m->done) {
		if (gs_gate_eager(s, m->done))
			gs_replay_eager(s, m->done);
		else
			gs_replay_ready(s, m->done);
	} else if (charge && m->ncands && gs_seq_matchable(m->cands[0])) {
		gs_replay_mismatch(s, m->cands[0], why, nheld, got);
	}
	gs_replay_release(s, m->submitted, nheld);
	gs_match_clear(s);
}

static bool gs_match_start(gs_stream_t *s, gs_rec_t *r, uint64_t at);

/* Candidates' graphs compared for a shared chunk, at most (most recently used first). */
#define GS_MATCH_LEAD_TRIES 4

/*
 * The candidate whose graph may replay chunk j while several candidates
 * (and a complete shorter one, m->done) still match: every one has chunk j
 * with the same end and may share the pass (gs_gate_shares).  Of those
 * whose graph is ready (the first GS_MATCH_LEAD_TRIES), the one (or its
 * variant) that needs the fewest patches: steps that alternate bake other
 * operands (a parity's buffers), and the first candidate's graph would be
 * patched back and forth every pass.  Else one whose chunk is bare.  A
 * complete shorter one whose chunks all went already does not count (its
 * records went with them).  NULL when the chunk must wait for one
 * candidate to be left.
 */
static gs_seq_t *gs_match_lead(gs_stream_t *s, uint32_t j)
{
	gs_match_t *m = &s->match;
	const gs_seq_t *c = m->cands[0];
	/* Every record while several match: most often chunk j is not complete. */
	if ((c->chunk_end && j < c->nchunks && c->chunk_end[j] > m->nheld) ||
	    (m->unshared == j + 1 && m->unshared_n == m->ncands))
		return NULL;
	uint32_t end = 0;
	for (uint32_t i = 0; i <= m->ncands; i++) {
		gs_seq_t *q = i < m->ncands ? m->cands[i] : m->done;
		if (!q || (q == m->done && q->chunk_end && j >= q->nchunks))
			continue;
		if (!gs_seq_matchable(q) || !q->chunk_end || j >= q->nchunks ||
		    (end && q->chunk_end[j] != end) || !gs_gate_shares(s, q)) {
			/* Asked again only once a candidate has dropped out. */
			m->unshared = j + 1;
			m->unshared_n = m->ncands;
			return NULL;
		}
		end = q->chunk_end[j];
	}
	if (!end || end > m->nheld)
		return NULL;
	gs_seq_t *lead = NULL, *bare = NULL;
	uint32_t best = UINT32_MAX, tried = 0;
	for (uint32_t i = 0; i <= m->ncands && best && tried < GS_MATCH_LEAD_TRIES; i++) {
		gs_seq_t *q = i < m->ncands ? m->cands[i] : m->done;
		if (!q || j >= q->nchunks)
			continue;
		if (gs_seq_chunk_bare(q, j)) {
			if (!bare)
				bare = q;
		} else if (j < __atomic_load_n(&q->ready, __ATOMIC_ACQUIRE)) {
			tried++;
			uint32_t d = gs_variant_fit(s, q, j, gs_seq_chunk_begin(q, j), end, best);
			if (d < best) {
				best = d;
				lead = q;
			}
		}
	}
	return lead ? lead : bare;
}

/*
 * Several candidates still match (steps that begin alike: a decoder's
 * tokens that differ only near their end).  Waiting for one to be left held
 * every launch they share, and the GPU idled until then: hf-llama's two
 * 196-launch steps held 180 launches a token, then replayed five chunks in
 * a burst.  A chunk they all share, cut at the same place, goes as soon as
 * it is complete, with one candidate's graph: the held records match each
 * candidate's by shape, and replay revalidates every byte against the graph
 * it launches and patches what differs.  The one left goes on from the next
 * chunk.  A failure ends the match, as for one candidate.
 */
static void gs_match_shared(gs_stream_t *s)
{
	gs_match_t *m = &s->match;
	gs_seq_t *lead;
	while (gs_config.share && (lead = gs_match_lead(s, m->chunk)) != NULL) {
		GS_STAT_INC(shared_chunks);
		if (m->done && m->chunk >= m->done->nchunks)
			m->done = NULL; /* past its end: it can no longer replay on its own */
		if (gs_replay_chunk(s, lead, m->chunk++, true)) {
			gs_replay_release(s, m->submitted, m->nheld);
			gs_match_clear(s);
			return;
		}
	}
}

/* Hold r as the next record of the current match, or end the match. */
static bool gs_match_next(gs_stream_t *s, gs_rec_t *r, uint64_t at)
{
	gs_match_t *m = &s->match;
	uint32_t k = m->nheld, keep = 0;
	for (uint32_t i = 0; i < m->ncands; i++) {
		gs_seq_t *q = m->cands[i];
		if (gs_seq_matchable(q) && q->n > k && gs_rec_same_shape(q->recs[k], r))
			m->cands[keep++] = q;
	}
	if (!keep) {
		gs_match_end(s, GS_MISMATCH_STRUCTURE, r, true);
		return gs_match_start(s, r, at);
	}
	m->ncands = keep;
	s->seg.matched = true;
	gs_match_held(s, k + 1);
	if (!gs_rec_is_mark(r)) { /* a mark is the engine's to submit (gs_match_drain) */
		GS_STAT_INC(held);
		if (gs_trace_on)
			gs_trace_launch(m->api ? m->api : "held", s->key.handle, r, "held");
	}
	bool longer = false;
	for (uint32_t i = 0; i < keep; i++) {
		if (m->cands[i]->n == k + 1)
			m->done = m->cands[i];
		else
			longer = true;
	}
	/*
	 * With one candidate left (or one complete and none longer), its
	 * complete chunks go now; once the longer one commits a chunk, a
	 * shorter complete candidate can no longer be replayed on its own.
	 */
	gs_seq_t *q = !longer ? m->done : (keep == 1 ? m->cands[0] : NULL);
	if (!q) {
		gs_match_shared(s);
		return true;
	}
	if (gs_gate_eager(s, q)) {
		if (gs_replay_eager(s, q))
			gs_match_clear(s);
		return true;
	}
	uint32_t before = m->chunk;
	if (gs_replay_ready(s, q)) {
		gs_replay_release(s, m->submitted, m->nheld);
		gs_match_clear(s);
		return true;
	}
	if (m->chunk > before && q != m->done)
		m->done = NULL;
	if (m->chunk == q->nchunks)
		gs_match_clear(s);
	return true;
}

uint32_t gs_match_starts(const gs_stream_t *s, const gs_rec_t *r, bool anchored, gs_seq_t **out)
{
	if (!gs_bloom_has(&s->cache.first_bloom, r->shape))
		return 0;
	uint32_t n = 0;
	for (gs_seq_t *q = s->cache.lru; q && n < GS_MAX_CANDS; q = q->next)
		if (gs_seq_matchable(q) && q->first_shape == r->shape && (q->periodic || anchored) &&
		    gs_rec_same_shape(q->recs[0], r))
			out[n++] = q;
	return n;
}

/* Begin matching at r if an armed sequence may start there. */
static bool gs_match_start(gs_stream_t *s, gs_rec_t *r, uint64_t at)
{
	uint32_t n = gs_match_starts(s, r, at == s->seg.start, s->match.cands);
	if (!n)
		return false;
	gs_match_clear(s);
	for (uint32_t i = 0; i < n; i++)
		s->seg.periodic |= s->match.cands[i]->periodic;
	s->match.ncands = n;
	s->match.held_start = at;
	gs_gate_begin(s, s->match.cands, n);
	return gs_match_next(s, r, at);
}

bool gs_match_launch(gs_stream_t *s, gs_rec_t *r, uint64_t at)
{
	return s->match.ncands ? gs_match_next(s, r, at) : gs_match_start(s, r, at);
}
