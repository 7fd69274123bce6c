/*
 * Learning (gs_learn.h): every record kept extends its segment's hash and,
 * in a long segment, feeds period detection; every boundary ends the
 * segment, which is then a sighting of a sequence (new, repeating, armed
 * at GRAPHSHIM_LEARN_REPS, or retired and cooling down).  When a segment
 * one sighting short of learning is followed by one that begins the same
 * way, its graphs are built early (speculation).
 */
#include "gs_arm.h"
#include "gs_clock.h"
#include "gs_learn.h"
#include "gs_stream.h"
#include "gs_trace.h"

/* Rotations of a periodic sequence tried for a better first record. */
#define GS_LEARN_ROTATIONS 64

/* A segment of fewer operations is too short to say anything against the
 * sequence it began like (gs_learn_end), whatever GRAPHSHIM_MIN_SEQ is. */
#define GS_LEARN_TINY 4

/*
 * Where the periodic sequence of len records found at `at` should begin.
 * A periodic sequence is matched wherever a record of its first record's
 * shape arrives, so a first record whose shape recurs in the step (a
 * matrix-vector product of every layer) starts a match at each, and all
 * but one end in a STRUCTURE mismatch: three retire it.  Of the first
 * GS_LEARN_ROTATIONS rotations, the one whose first shape the period holds
 * fewest times; the rotated sequence is the period one step back (the last
 * len * reps records repeat: at least two periods), where the history still
 * holds all of it.
 */
static uint64_t gs_learn_period_start(const gs_stream_t *s, uint64_t at, uint32_t len)
{
	uint64_t from = at + 1 - len;
	if (at + 1 < 2 * (uint64_t)len || 2 * (uint64_t)len >= s->cap || gs_config.learn_reps < 2)
		return from;
	uint32_t best = 0, best_n = UINT32_MAX;
	for (uint32_t k = 0; k < len && k < GS_LEARN_ROTATIONS && best_n > 1; k++) {
		const gs_rec_t *r = gs_stream_at(s, from + k);
		if (!r)
			return from;
		uint32_t n = 0;
		for (uint32_t i = 0; i < len && n < best_n; i++) {
			const gs_rec_t *o = gs_stream_at(s, from + i);
			if (!o)
				return from;
			n += o->shape == r->shape;
		}
		if (n < best_n)
			best = k, best_n = n;
	}
	if (!best)
		return from;
	for (uint64_t i = from + best - len; i < from; i++)
		if (!gs_stream_at(s, i))
			return from; /* taken by an earlier arming */
	return from + best - len;
}

/* Whether the len records from `from` hold min_seq that are not marks. */
static bool gs_learn_long_enough(const gs_stream_t *s, uint64_t from, uint32_t len)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < len && n < (uint32_t)gs_config.min_seq; i++) {
		const gs_rec_t *o = gs_stream_at(s, from + i);
		n += o && !gs_rec_is_mark(o);
	}
	return n >= (uint32_t)gs_config.min_seq;
}

/* Push one record into period detection; arm what it finds. */
static void gs_learn_period(gs_stream_t *s, const gs_rec_t *r, uint64_t at)
{
	uint32_t len = gs_period_push(&s->period, r->hash, r->shape, (uint32_t)gs_config.min_seq,
				      (uint32_t)gs_config.learn_reps);
	if (!len || len > (uint32_t)gs_config.max_seq)
		return;
	uint64_t from = gs_learn_period_start(s, at, len);
	uint64_t id = gs_seq_id(s, from, len);
	if (!id || (s->seg.marks && !gs_learn_long_enough(s, from, len)))
		return;
	gs_seq_t *q = gs_seq_find(s, id);
	if (q && q->state != GS_SEQ_LEARNING) {
		gs_seq_periodic(q, 0);
		return;
	}
	if (!q && !(q = gs_seq_add(s, id, len, gs_stream_at(s, from)->shape)))
		return;
	gs_seq_periodic(q, (uint64_t)gs_config.learn_reps);
	s->seg.periodic = true;
	GS_STAT_INC(periods);
	gs_trace_learned(s->key.handle, id, len, "period");
	uint64_t span = at + 1 - s->seg.start;
	/* Records held by a match in progress must stay; otherwise take them,
	 * and the segment they came from can no longer be learned. */
	bool steal = s->match.ncands == 0;
	gs_arm_seq(s, q, from, span ? (gs_clock_ns() - s->seg.t0) / span : 0,
		   steal ? GS_ARM_STEAL : 0);
	if (steal)
		s->seg.bad = true;
}

void gs_learn_record(gs_stream_t *s, const gs_rec_t *r, uint64_t at)
{
	s->seg.hash = gs_hash_step(s->seg.hash, r->shape);
	if (gs_rec_is_mark(r))
		s->seg.marks++;
	uint64_t len = at - s->seg.start + 1;
	if (len * 2 >= s->cap && s->cap < gs_stream_ring_max())
		gs_stream_grow(s);
	if (len >= s->cap)
		s->seg.bad = true; /* older records of the segment are overwritten */
	if (!gs_config.period)
		return;
	if (!s->seg.period_on) {
		uint64_t after = (uint64_t)gs_config.period_after;
		if (after > gs_stream_ring_max() - 1)
			after = gs_stream_ring_max() - 1;
		if (len < after)
			return;
		/* A long segment: detection starts, fed what the history holds of it. */
		if (!s->period.cap && gs_period_init(&s->period, gs_stream_ring_max()))
			return;
		s->seg.period_on = true;
		gs_period_reset(&s->period);
		uint64_t keep = s->cap - 1; /* the records the history still holds */
		uint64_t b = at + 1 >= keep && at + 1 - keep > s->seg.start ? at + 1 - keep : s->seg.start;
		for (uint64_t i = b; i < at; i++) {
			const gs_rec_t *o = gs_stream_at(s, i);
			if (o)
				gs_learn_period(s, o, i);
			else
				gs_period_reset(&s->period); /* taken: start after it */
		}
	}
	gs_learn_period(s, r, at);
}

/*
 * Whether the segment ending now, of len records from s->seg.start, first
 * seen, is a variant of a step the stream has learned (GRAPHSHIM_SIBLINGS):
 * at least GS_LEARN_TINY records, as long as an armed sequence and unlike
 * it at no more than one place in GS_SIBLING_SPAN (at least one).
 * Frameworks choose a kernel by size and alignment: transformers' decode
 * step of 343 launches came as six structures as its KV cache grew, each
 * first unlike an armed one at a single place (a vectorized or an unrolled
 * elementwise kernel as a pointer's alignment went, a GEMM kernel for a
 * longer K), and each ran eagerly twice before it was learned; a variant
 * is a step that will come again.  Not on a thrifty stream, whose builds
 * are wasted more than they pay.  Stream lock held: the armed sequences'
 * records are read for their shapes only, which nothing changes.
 */
#define GS_SIBLING_MIN GS_LEARN_TINY
#define GS_SIBLING_SPAN 32u
static bool gs_learn_sibling(gs_stream_t *s, uint64_t len)
{
	/* (The caller's segment is learnable: not bad, shorter than the history;
	 * the stream is not thrifty.) */
	if (!gs_config.siblings || len < GS_SIBLING_MIN)
		return false;
	uint64_t most = len / GS_SIBLING_SPAN ? len / GS_SIBLING_SPAN : 1;
	for (const gs_seq_t *p = s->cache.lru; p; p = p->next) {
		if (p->n != len || p->spec || p->periodic || !p->recs ||
		    (p->state != GS_SEQ_ARMED && p->state != GS_SEQ_BUILDING))
			continue;
		uint64_t unlike = 0;
		for (uint64_t i = 0; i < len && unlike <= most; i++) {
			const gs_rec_t *r = gs_stream_at(s, s->seg.start + i);
			if (!r)
				return false; /* taken: not learnable here */
			unlike += r->shape != p->recs[i]->shape;
		}
		if (unlike <= most)
			return true;
	}
	return false;
}

/*
 * Whether a step first seen now, of ops launches, copies and memsets, is
 * learned at once (GRAPHSHIM_LEARN_LONG).  Waiting for a step to repeat
 * before its graphs are built sends each sighting but the last eagerly,
 * which in a short program is most of its work: one generate() of 48
 * tokens ran its 164- and 196-launch tokens as four structures, each
 * eagerly twice (H200, sixty-second session: 0.815 of its launches
 * replayed, 0.884 when every step was learned at its first sighting).  A
 * long step seen once is seldom seen only once; a short one costs little
 * to wait for, and short segments learned at once (JAX's five- and
 * six-launch ones) mostly began matches that failed.  (The caller's
 * stream is not thrifty.)
 */
static bool gs_learn_at_once(uint64_t ops)
{
	return gs_config.learn_long && ops >= (uint64_t)gs_config.learn_long;
}

static void gs_learn_finish(gs_stream_t *s, bool keep_period)
{
	if (__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED)) {
		if (s->seg.owed)
			gs_seq_settle(s, false, 0);
		gs_cold_end(s);
		return;
	}
	uint64_t len = s->pos - s->seg.start;
	/*
	 * A segment that matched launches of an armed sequence repeats it,
	 * unless it then diverged or was cut (it owes a mismatch): that says
	 * nothing, whether charged or forgiven; the segment itself may still
	 * be a sequence seen before (below).  Forgiven mismatches keep the
	 * sequence armed, and its beginning matched by segments of a stream
	 * that never repeats kept r_stress's cold worker warm.
	 */
	bool repeated = s->seg.matched && !s->seg.owed;
	bool replayed = repeated; /* a pass of an armed sequence, whole */
	/*
	 * What the segment owes is spared when it is too short to be a step
	 * (its hold cost little) or another sequence seen before, and only
	 * when the stream's own calls began and ended it.  Another thread's
	 * syncs flush every stream, at places that have nothing to do with
	 * this stream's steps; pieces cut so repeat by chance (r_stress's
	 * cold worker, cut by a thread that syncs the context) and say
	 * nothing for the sequence they cut: with them sparing, that stream
	 * stayed warm in 1 run of 16 under ThreadSanitizer.
	 */
	bool cut_by_other = len && s->seg.thread != gs_stream_thread();
	bool natural = !s->seg.from_other && !cut_by_other;
	/* A step's length is its operations' count, but only its launches,
	 * copies and memsets make it long enough to be one. */
	uint64_t ops = len - s->seg.marks;
	bool enough = ops >= (uint64_t)gs_config.min_seq;
	/* Shorter than GS_LEARN_TINY it spares what it owes as a segment too
	 * short to learn does, even where GRAPHSHIM_MIN_SEQ learns it: with
	 * 3, ode-rk4's compare-copy-read-back bursts (eight after sixteen
	 * steps) were siblings spared by a ratio, and retired its 129-launch
	 * steps on the H100. */
	bool tiny = ops < GS_LEARN_TINY;
	bool spare = natural && !s->seg.bad && (!enough || tiny);
	uint64_t seg_id = 0;
	uint64_t whole = enough && !s->seg.bad ? gs_hash_step(s->seg.hash, len) : 0;
	/* A guess is judged first: a miss may make the stream thrifty before
	 * this segment's sequence is considered for the next guess. */
	gs_seq_t *g = s->seg.guess && whole ? gs_seq_find(s, s->seg.guess) : NULL;
	if (g)
		gs_thrift_guessed(s, g, whole == g->id);
	if (whole) {
		uint64_t id = whole;
		bool fresh = false; /* first seen now */
		gs_seq_t *q = gs_seq_find(s, id);
		/* A step first seen now is a sibling too (gs_seq_settle weighs it). */
		spare = natural && (tiny || id != s->seg.owed);
		seg_id = tiny ? 0 : id;
		if (q) {
			/*
			 * A sequence that does not replay now (retired: every pass
			 * drifted past the cost rule, as when every launch's
			 * arguments change every step; or failed to build) is no
			 * repeat, cooling down or not: a stream of such segments
			 * should go cold.  A cold stream wakes when a segment
			 * repeats, and the cool-down counts on from there.  On
			 * a stream whose steps do not fit its cache
			 * (gs_seq_churning), one seen before may be so by
			 * chance: only a complete match is a repeat there.
			 */
			repeated = q->state != GS_SEQ_FAILED && q->state != GS_SEQ_RETIRED &&
				   (!gs_seq_churning(s) || repeated);
		} else {
			q = gs_seq_add(s, id, (uint32_t)len, gs_stream_at(s, s->seg.start)->shape);
			if (q)
				gs_trace_learned(s->key.handle, id, (uint32_t)len, "boundary");
			fresh = q != NULL;
		}
		if (q) {
			uint64_t reps = gs_thrift_reps(s);
			gs_seq_sighted(s, q);
			bool learning = q->state == GS_SEQ_LEARNING;
			/* Learned at its first sighting, for its length or as a variant:
			 * not on a thrifty stream, whose builds are wasted more than
			 * they pay.  A step learned now leaves nothing to guess at the
			 * next segment. */
			bool first = learning && fresh && natural && !s->thrift.on && q->seen < reps;
			bool at_once = first && gs_learn_at_once(ops);
			bool sibling = first && !at_once && gs_learn_sibling(s, len);
			if (at_once) {
				GS_STAT_INC(learned_long);
				gs_trace_learned(s->key.handle, q->id, q->n, "long");
			} else if (sibling) {
				GS_STAT_INC(siblings);
				gs_trace_learned(s->key.handle, q->id, q->n, "sibling");
			} else if (gs_thrift_speculates(s) && gs_config.async_build && reps > 1 && learning &&
				   q->seen + 1 == reps) {
				s->seg.last_id = q->id;
				s->seg.last_start = s->seg.start;
				s->seg.last_host_ns = (gs_clock_ns() - s->seg.t0) / len;
			}
			if (learning && (q->seen >= reps || at_once || sibling)) {
				gs_arm_seq(s, q, s->seg.start, (gs_clock_ns() - s->seg.t0) / len, GS_ARM_STEAL);
			} else {
				gs_seq_cooled(q, s->seg.start); /* sightings after the one that retired it count */
			}
		}
	}
	if (s->seg.owed)
		gs_seq_settle(s, spare, seg_id);
	bool from_other = len ? cut_by_other : s->seg.from_other; /* empty: the same place */
	bool period_on = s->seg.period_on;
	gs_learn_begin(&s->seg, keep_period ? NULL : &s->period, s->pos);
	s->seg.from_other = from_other;
	s->seg.period_on = keep_period && period_on;
	/* After a boundary, or a long cut, which only an anchored segment takes. */
	s->seg.anchored = true;
	gs_cold_ended(s, len, repeated, replayed);
}

void gs_learn_end(gs_stream_t *s)
{
	gs_learn_finish(s, false);
}

/*
 * A long cut.  A step of more records than the history holds between two
 * boundaries was never learned: its oldest records are overwritten before
 * it ends (a deep model's token, thousands of launches between read-backs,
 * whose layers differ in their weights, so that period detection finds
 * nothing either).  Such a segment ends where it reaches GRAPHSHIM_MAX_SEQ
 * records, so the step is learned as pieces of at most that many, each
 * anchored where the last one ended: the same places every step, since the
 * count starts at the step's boundary.  A replayed piece ends its match
 * exactly there, and the next piece begins its segment.
 *
 * Period detection goes on across the cut, unreset: it finds periods of up
 * to GRAPHSHIM_MAX_SEQ records, after two of them, past the cut.  No cut
 * where a match is under way or anything is held (the segment runs on, as
 * before), in a segment a period governs (a periodic sequence matches
 * anywhere: cuts in a never-synchronizing stream would fall at other
 * places of its period every time, and learn nothing), or on a cold stream
 * (which keeps no records); and only counted from a boundary (seg.anchored):
 * a stream that never synchronizes has no step to cut into pieces.
 */
void gs_learn_long(gs_stream_t *s)
{
	uint64_t len = s->pos - s->seg.start;
	if (len != (uint64_t)gs_config.max_seq || !s->seg.anchored || s->match.ncands ||
	    s->match.nheld || s->seg.bad || s->seg.periodic ||
	    __atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED))
		return;
	if (gs_trace_on)
		gs_trace_segment(s->key.handle, len, s->seg.marks, GS_FLUSH_OTHER, "GRAPHSHIM_MAX_SEQ");
	gs_learn_finish(s, true);
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
void gs_learn_speculate(gs_stream_t *s, const gs_rec_t *r)
{
	uint64_t id = s->seg.last_id;
	s->seg.last_id = 0;
	gs_seq_t *q = gs_seq_find(s, id);
	if (!q || q->state != GS_SEQ_LEARNING || q->first_shape != r->shape ||
	    s->pos - s->seg.last_start > s->cap)
		return; /* another sequence, or its records are overwritten */
	if (gs_arm_seq(s, q, s->seg.last_start, s->seg.last_host_ns, GS_ARM_STEAL | GS_ARM_SPEC))
		return;
	s->seg.guess = q->id;
	GS_STAT_INC(speculated);
	gs_trace_learned(s->key.handle, q->id, q->n, "speculative");
}
