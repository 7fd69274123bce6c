/*
 * Cold streams, the engine's side (gs_cold.h): going cold, counting the
 * launches of a cold segment that take the full path, ending a cold
 * segment, and waking.  The lane's own side, inline in a backend's launch
 * entry points, is gs_lane.h.
 */
#include "gs_cold.h"
#include "gs_log.h"
#include "gs_stream.h"
#include "gs_trace.h"

#include <sched.h>
#include <stdlib.h>

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
	s->cold.kept = false;
	s->cold.first_full = false;
}

/* Stream lock held; false when there is no memory for it (the stream stays warm). */
static bool gs_cold_enter(gs_stream_t *s, uint64_t quiet)
{
	if (!s->cold.ids && !(s->cold.ids = calloc(GS_COLD_IDS, sizeof(*s->cold.ids))))
		return false;
	gs_cold_lock(s);
	__atomic_store_n(&s->lane.cold, true, __ATOMIC_RELAXED);
	gs_cold_segment_begin(s);
	s->cold.cut = false;
	s->cold.quiet = quiet;
	s->cold.quiet_used = 0;
	gs_cold_unlock(s);
	s->seg.last_id = 0; /* nothing recorded to speculate from */
	GS_STAT_INC(cold_streams);
	if (quiet) {
		GS_STAT_INC(cold_quiet);
		gs_log(GS_LOG_DEBUG, "stream %#lx goes cold quietly: the gate keeps its steps eager (%llu launches)",
		       (unsigned long)s->key.handle, (unsigned long long)quiet);
	} else {
		gs_log(GS_LOG_DEBUG, "stream %#lx goes cold: %u segments in a row did not repeat",
		       (unsigned long)s->key.handle, s->cold.fresh);
	}
	return true;
}

/* A quiet stream wakes: the passes it let by count towards its kept-eager
 * sequences' re-checks.  Both locks held. */
static void gs_cold_quiet_end(gs_stream_t *s)
{
	for (gs_seq_t *q = s->cache.lru; q; q = q->next)
		if (q->n && gs_gate_kept_eager(q))
			gs_gate_passed_quietly(q, s->cold.quiet_used / q->n);
	s->cold.quiet = 0;
	s->cold.quiet_used = 0;
}

/*
 * Keep records again; the next launch begins a segment (pos did not move),
 * at a boundary or not (anchored: gs_segment_t).  Both locks held.
 */
static void gs_cold_wake(gs_stream_t *s, bool anchored)
{
	__atomic_store_n(&s->lane.cold, false, __ATOMIC_RELAXED);
	if (s->cold.quiet)
		gs_cold_quiet_end(s);
	s->cold.fresh = 0;
	s->cold.rewarm = false;
	s->cold.woken = GS_COLD_IDS; /* its next segments may be ones seen while cold (gs_seq_settle) */
	gs_learn_begin(&s->seg, &s->period, s->pos);
	s->seg.anchored = anchored;
	GS_STAT_INC(cold_woken);
}

/*
 * Whether a repeat wakes s only the second time: a thrifty stream learns
 * at twice the sightings, and with GRAPHSHIM_COLD_REPLAY (a stream cold
 * between its replayed steps) the first repeat of work that churns is
 * most often chance (gs_thrift.h).
 */
static bool gs_cold_twice(const gs_stream_t *s)
{
	return gs_config.cold_replay && s->thrift.on;
}

/* The end of a cold segment, at a boundary or not (anchored): count its
 * launches, and wake if it repeated.  Both locks held. */
static void gs_cold_end_locked(gs_stream_t *s, bool anchored)
{
	/* The lane counts nothing itself (no atomics on it); nor does an empty
	 * segment here (a cold side stream's marks end one at each call). */
	if (s->lane.fast) {
		gs_stats_launched(s->lane.fast);
		GS_STAT_ADD(kernels, s->lane.fast); /* the lane takes kernel launches only */
		GS_STAT_ADD(passed, s->lane.fast);
	}
	if (s->lane.len)
		GS_STAT_ADD(cold_passed, s->lane.len);
	bool repeat_wakes = true;
	if (s->cold.quiet) {
		/* Quiet: the kept steps' passes do not wake it, nor do the pieces
		 * of a long segment; the launches it may pass do, and so does a
		 * step that repeats among them (it may be one to learn). */
		GS_STAT_ADD(cold_quiet_passed, s->lane.len);
		s->cold.quiet_used += s->lane.len;
		if (s->cold.quiet_used >= s->cold.quiet) {
			gs_cold_wake(s, anchored);
			repeat_wakes = false;
		} else {
			repeat_wakes = anchored && !s->cold.cut && !s->cold.kept;
		}
	}
	if (repeat_wakes && s->lane.len >= (uint64_t)gs_config.min_seq) {
		/* The low bit of a slot: the segment repeated once already. */
		uint64_t id = gs_hash_step(s->lane.hash, s->lane.len) & ~1ULL;
		uint64_t *slot = &s->cold.ids[(id >> 1) & (GS_COLD_IDS - 1)];
		bool again = (*slot & ~1ULL) == id;
		if (again && ((*slot & 1) || !gs_cold_twice(s))) {
			*slot = 0;
			if (s->cold.first_full && gs_config.cold_want) {
				/* Where it comes again after other work (gs_cold.h). */
				s->cold.want = s->cold.first_shape;
				s->cold.want_left = (uint8_t)gs_config.cold_want;
			}
			gs_cold_wake(s, anchored);
		} else {
			*slot = again ? id | 1 : id;
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
		bool quiet = s->cold.quiet;
		gs_cold_end_locked(s, false);
		if (!__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED))
			return;
		if (quiet)
			s->cold.cut = true; /* its steps are eager: no period to find */
		else
			gs_cold_wake(s, false);
	}
}

void gs_cold_reset(gs_stream_t *s)
{
	__atomic_store_n(&s->lane.cold, false, __ATOMIC_RELAXED);
	s->cold.fresh = 0;
	s->cold.passes = 0;
	s->cold.cut = false;
	s->cold.quiet = 0;
	s->cold.quiet_used = 0;
	s->cold.rewarm = false;
	s->cold.want = 0;
	s->cold.want_left = 0;
}

void gs_cold_end(gs_stream_t *s)
{
	gs_cold_lock(s);
	gs_cold_end_locked(s, true);
	s->cold.cut = false;
	gs_cold_unlock(s);
}

/*
 * Whether a cold segment that begins with rec wakes s: it begins like an
 * armed sequence seen more than once (on a quiet stream, one the gate does
 * not keep eager).  A step learned at its first sighting (its length,
 * GRAPHSHIM_LEARN_LONG, or a variant's) has not shown that it comes back:
 * on a stream whose steps never repeat (nrepeat), each one learned before
 * the stream went cold woke it at every segment that began like it.
 * Stream lock held.
 */
static bool gs_cold_wakes(gs_stream_t *s, const gs_rec_t *rec, bool anchored, bool *kept)
{
	gs_seq_t *cands[GS_MAX_CANDS];
	uint32_t n = gs_match_starts(s, rec, anchored, cands), seen = 0;
	*kept = false;
	for (uint32_t i = 0; i < n; i++) {
		if (cands[i]->seen < 2)
			continue;
		if (!s->cold.quiet || !gs_gate_kept_eager(cands[i]))
			return true;
		seen++;
	}
	*kept = seen;
	return false;
}

bool gs_cold_launch(gs_stream_t *s, const gs_rec_t *rec)
{
	gs_cold_lock(s);
	bool first = !s->lane.len;
	bool anchored = !s->cold.cut;
	gs_cold_unlock(s);
	bool kept = false;
	bool wake = first && gs_cold_wakes(s, rec, anchored, &kept);
	/* Or it begins as a cold segment that repeated did (gs_cold.h). */
	bool want = first && !wake && anchored && !s->cold.quiet && s->cold.want_left &&
		    rec->shape == s->cold.want;
	gs_cold_lock(s);
	if (first) {
		s->cold.kept = kept; /* a kept step's pass, presumably */
		s->cold.first_full = true;
		s->cold.first_shape = rec->shape;
	}
	if (wake || want) {
		bool quiet = s->cold.quiet;
		gs_cold_wake(s, anchored);
		if (want) {
			/* For this segment: as cold as it was after it, unless it
			 * repeats a step to learn (gs_cold_ended). */
			GS_STAT_INC(cold_wanted);
			s->cold.want_left--;
			s->cold.fresh = (uint32_t)gs_config.cold_after;
		} else if (gs_config.cold_replay && !quiet && gs_config.cold_after) {
			/* Woken to replay: as cold as it was, once that step ends. */
			s->cold.rewarm = true;
			s->cold.fresh = (uint32_t)gs_config.cold_after;
		}
	} else
		gs_cold_step(s, rec->shape);
	gs_cold_unlock(s);
	return !wake && !want;
}

void gs_cold_passed(gs_stream_t *s, const gs_seq_t *q, bool eager)
{
	s->cold.passes |= eager && gs_gate_kept_eager(q) ? GS_COLD_PASS_KEPT : GS_COLD_PASS_OTHER;
}

/*
 * A warm segment whose passes all went eagerly, kept so by the gate: the
 * stream goes cold quietly where every sequence that could match next is
 * kept eager too (none building), for as many launches as the first of
 * them to be re-checked has until then.  Stream lock held.
 */
static void gs_cold_quiet(gs_stream_t *s)
{
	uint64_t budget = UINT64_MAX;
	for (const gs_seq_t *q = s->cache.lru; q; q = q->next) {
		if (q->state == GS_SEQ_BUILDING)
			return;
		if (!gs_seq_matchable(q))
			continue;
		if (!gs_gate_kept_eager(q))
			return;
		uint64_t b = gs_gate_until_recheck(q) * q->n;
		if (b < budget)
			budget = b;
	}
	if (budget != UINT64_MAX && budget)
		gs_cold_enter(s, budget);
}

void gs_cold_ended(gs_stream_t *s, uint64_t len, bool repeated, bool replayed)
{
	uint8_t passes = s->cold.passes;
	s->cold.passes = 0;
	/*
	 * Empty segments (a flush with nothing since the last) say nothing, nor
	 * do segments another thread's call cut short (its syncs flush every
	 * stream, at places that have nothing to do with this stream's steps):
	 * not that it is new, and not that it repeated (a short piece of a cold
	 * stream's work, cut at a place like an earlier cut, matches a learned
	 * piece; under a thread that syncs the context often, always).
	 */
	if (!len || s->seg.thread != gs_stream_thread())
		return;
	if (s->cold.woken)
		s->cold.woken--;
	bool rewarm = s->cold.rewarm;
	s->cold.rewarm = false;
	bool may = gs_config.cold_after && !gs_trace_on && !s->match.ncands;
	if (replayed && gs_config.cold_replay) {
		/* A pass of a step armed already: neither new nor one to learn.
		 * Woken for it, the stream is as cold as it was. */
		if (rewarm && may && gs_cold_enter(s, 0)) {
			GS_STAT_INC(cold_rewarmed);
			return;
		}
	} else if (repeated) {
		s->cold.fresh = 0;
	} else if (gs_config.cold_after && ++s->cold.fresh >= (uint64_t)gs_config.cold_after && may &&
		   gs_cold_enter(s, 0)) {
		return;
	}
	if (passes == GS_COLD_PASS_KEPT && gs_config.cold_eager && may)
		gs_cold_quiet(s);
}
