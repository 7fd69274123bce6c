/*
 * A stream's state, as the engine keeps it: its lane (gs_lane.h, the
 * first cache line), its key and lock, its history of records, and one
 * part per concern, each defined by the module that owns it:
 *
 *   seg    the learning segment          gs_learn.h
 *   match  the match in progress         gs_match.h
 *   pass   the gate's choice for it      gs_gate.h
 *   cache  the stream's sequences        gs_seq.h
 *   cold   its cold state                gs_cold.h
 *   thrift whether its builds pay         gs_thrift.h
 *   period period detection              gs_period.h
 *
 * And the stream table.  Locking: a global mutex guards the table; each
 * stream has its own mutex guarding everything in it.  A thread holds at
 * most one stream lock at a time and never takes the table lock while
 * holding a stream lock, so there is no lock-order cycle.  Stream states
 * are never freed while the engine runs: a thread may hold a pointer from
 * its cache (gs_lane_cache), and a destroyed stream's state is emptied and
 * kept for the next stream created.
 */
#ifndef GS_STREAM_H
#define GS_STREAM_H

#include "gs_cold.h"
#include "gs_config.h"
#include "gs_gate.h"
#include "gs_hash.h"
#include "gs_lane.h"
#include "gs_learn.h"
#include "gs_match.h"
#include "gs_period.h"
#include "gs_seq.h"
#include "gs_thrift.h"

#include <pthread.h>

struct gs_stream {
	/* First: the kind, and the cold segment (gs_lane.h), on one line. */
	gs_lane_t lane;
	gs_skey_t key;
	pthread_mutex_t lock;

	/*
	 * Every record the stream saw, newest at pos-1.  The history starts
	 * short and doubles whenever a segment reaches half of it, up to
	 * max_seq + 1, so it always holds the segment in progress and the one
	 * before: a stream that synchronizes every 256 launches keeps 512
	 * records, not 4097, and its launches write into less memory (see
	 * docs/performance.md, "Pass-through cost", for what that bought).
	 * While the stream is cold pos does not move.
	 */
	gs_rec_t **ring;
	uint32_t cap;
	uint64_t pos;

	gs_segment_t seg;
	gs_match_t match;
	gs_gate_pass_t pass;
	gs_seq_cache_t cache;
	gs_cold_t cold;
	gs_thrift_t thrift;
	gs_period_t period;
	uint64_t sent;   /* the position after the last record submitted (gs_stream_sent) */
	uint32_t idle_seen; /* match.stamp at the idle watchdog's last look (its thread's only) */
	uint32_t qstamp;    /* match.stamp at the last query answered "not ready" (gs_engine_stream_query) */
	uint8_t qspins;     /* such answers in a row with match.stamp unmoved */
	bool absorbs;    /* side streams were adopted into it: marks absorbed (gs_stream_absorbs) */
	UT_hash_handle hh;
};

/*
 * Whether s absorbs event records and waits into its chunks (gs_arm.c,
 * gs_match_defer): everywhere under GRAPHSHIM_ABSORB=1, and on a stream
 * side streams were adopted into (gs_engine_stream_absorb), whose step
 * is full of its sides' forks and joins.  Read without the lock (the
 * builder arms too): a stale answer only moves a cut.
 */
static inline bool gs_stream_absorbs(const gs_stream_t *s)
{
	return gs_config.absorb || (s && __atomic_load_n(&s->absorbs, __ATOMIC_RELAXED));
}

/* The state whose lane l is (its first member). */
static inline gs_stream_t *gs_stream_of(gs_lane_t *l)
{
	return (gs_stream_t *)(void *)l;
}

/* A token unique to the calling thread (the address of its stream cache). */
static inline const void *gs_stream_thread(void)
{
	return &gs_lane_cache;
}

/* ---- the history ---- */

/* The history's first size, and its largest: max_seq + 1. */
#define GS_STREAM_RING_MIN 64u
static inline uint32_t gs_stream_ring_max(void)
{
	return (uint32_t)gs_config.max_seq + 1;
}

/* The record at absolute position i (NULL when taken by an arming). */
static inline gs_rec_t *gs_stream_at(const gs_stream_t *s, uint64_t i)
{
	return s->ring[i % s->cap];
}

/*
 * Double the history (up to max_seq + 1), keeping every record at its
 * position.  When memory is short it stays as it is.
 */
void gs_stream_grow(gs_stream_t *s);

/*
 * Records [first, last] of the history go to the vendor now (eagerly, or
 * as the nodes of a chunk's graph).  Every record the stream keeps is
 * submitted once, in its stream's order, whatever matching does: one
 * submitted before an earlier one, or a second time, breaks the ordering
 * contract.  Counted in `order_errors` and logged; with
 * GRAPHSHIM_CHECK_ORDER (the fuzzer's setting) the process aborts, so that
 * it shows even where the results happen to come out the same.  Marks are
 * not checked: absorbed ones go before or after their chunk's graph by
 * design (gs_replay.c).  Stream lock held.  On every submission's path:
 * the check is inline, its report (gs_stream_order_error) out of line.
 */
void gs_stream_order_error(const gs_stream_t *s, uint64_t first);

static inline void gs_stream_sent(gs_stream_t *s, uint64_t first, uint64_t last)
{
	if (GS_UNLIKELY(first < s->sent))
		gs_stream_order_error(s, first);
	if (last >= s->sent)
		s->sent = last + 1;
}

/* ---- the table ---- */

/* Find or create the state of a stream (slow path of gs_stream_get). */
gs_stream_t *gs_stream_lookup(uintptr_t handle, void *ctx, unsigned flags);

/* Find or create the state of a stream; NULL when memory is short. */
static inline gs_stream_t *gs_stream_get(uintptr_t handle, void *ctx, unsigned flags)
{
	unsigned gen = __atomic_load_n(&gs_hot.generation, __ATOMIC_ACQUIRE);
	if (gs_lane_cache.lane && gs_lane_cache.key.handle == handle &&
	    gs_lane_cache.key.ctx == ctx && gs_lane_cache.gen == gen)
		return gs_stream_of(gs_lane_cache.lane);
	const gs_lane_cache_t *c = &gs_stream_recent[gs_stream_recent_slot(handle)];
	if (c->lane && c->key.handle == handle && c->key.ctx == ctx && c->gen == gen) {
		gs_lane_cache = *c; /* the last stream again, for the cold lane */
		return gs_stream_of(c->lane);
	}
	return gs_stream_lookup(handle, ctx, flags);
}

void gs_stream_table_lock(void);
void gs_stream_table_unlock(void);
/* The table lock if it is free now (a signal handler never waits); true when taken. */
bool gs_stream_table_trylock(void);
/* The first stream of the table (then s->hh.next); table lock held. */
gs_stream_t *gs_stream_first(void);
/* Take a stream out of the table (then: gs_stream_empty, gs_stream_keep); table lock held. */
gs_stream_t *gs_stream_remove(uintptr_t handle, void *ctx);
/* Take the first stream out of the table, NULL when it is empty; table lock held. */
gs_stream_t *gs_stream_pop(void);
/* Drop a removed stream's sequences and records; its lock held. */
void gs_stream_empty(gs_stream_t *s);
/* Keep an emptied stream's state for the next stream created; table lock held. */
void gs_stream_keep(gs_stream_t *s);
/* Free every stream state, in the table and kept (exit). */
void gs_stream_free_all(void);
/* In a forked child: forget every stream without touching its locks. */
void gs_stream_forget(void);

#endif /* GS_STREAM_H */
