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
}

/* Stream lock held. */
static void gs_cold_enter(gs_stream_t *s)
{
	if (!s->cold.ids && !(s->cold.ids = calloc(GS_COLD_IDS, sizeof(*s->cold.ids))))
		return; /* no memory for it: the stream stays warm */
	gs_cold_lock(s);
	__atomic_store_n(&s->lane.cold, true, __ATOMIC_RELAXED);
	gs_cold_segment_begin(s);
	gs_cold_unlock(s);
	s->seg.last_id = 0; /* nothing recorded to speculate from */
	GS_STAT_INC(cold_streams);
	gs_log(GS_LOG_DEBUG, "stream %#lx goes cold: %u segments in a row did not repeat",
	       (unsigned long)s->key.handle, s->cold.fresh);
}

/*
 * Keep records again; the next launch begins a segment (pos did not move),
 * at a boundary or not (anchored: gs_segment_t).  Both locks held.
 */
static void gs_cold_wake(gs_stream_t *s, bool anchored)
{
	__atomic_store_n(&s->lane.cold, false, __ATOMIC_RELAXED);
	s->cold.fresh = 0;
	s->cold.woken = GS_COLD_IDS; /* its next segments may be ones seen while cold (gs_seq_settle) */
	gs_learn_begin(&s->seg, &s->period, s->pos);
	s->seg.anchored = anchored;
	GS_STAT_INC(cold_woken);
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
	if (s->lane.len >= (uint64_t)gs_config.min_seq) {
		uint64_t id = gs_hash_step(s->lane.hash, s->lane.len);
		uint64_t *slot = &s->cold.ids[id & (GS_COLD_IDS - 1)];
		if (*slot == id) {
			*slot = 0;
			gs_cold_wake(s, anchored);
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
		gs_cold_end_locked(s, false);
		if (__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED))
			gs_cold_wake(s, false);
	}
}

void gs_cold_end(gs_stream_t *s)
{
	gs_cold_lock(s);
	gs_cold_end_locked(s, true);
	gs_cold_unlock(s);
}

bool gs_cold_launch(gs_stream_t *s, const gs_rec_t *rec)
{
	gs_seq_t *cands[GS_MAX_CANDS];
	gs_cold_lock(s);
	bool first = !s->lane.len;
	gs_cold_unlock(s);
	/* A segment that begins like an armed sequence wakes the stream. */
	bool wake = first && gs_match_starts(s, rec, true, cands);
	gs_cold_lock(s);
	if (wake)
		gs_cold_wake(s, true);
	else
		gs_cold_step(s, rec->shape);
	gs_cold_unlock(s);
	return !wake;
}

void gs_cold_ended(gs_stream_t *s, uint64_t len, bool repeated)
{
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
	if (repeated)
		s->cold.fresh = 0;
	else if (gs_config.cold_after && ++s->cold.fresh >= (uint64_t)gs_config.cold_after &&
		 !gs_trace_on && !s->match.ncands)
		gs_cold_enter(s);
}
