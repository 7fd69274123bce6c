/*
 * The cold lane, inline in a backend's launch entry point.
 *
 * A stream whose segments stopped repeating goes cold (gs_engine.h,
 * gs_engine_cold): it keeps no records and passes its launches through.
 * Between two launches a real driver runs thousands of instructions and
 * evicts its caller's code and data from the first-level caches, so what
 * a pass-through launch costs is mostly the cache lines it touches
 * (docs/performance.md, "Pass-through cost").  The lane touches as few as
 * it can: the engine's hot globals (one line), the thread's cache of its
 * last stream (thread-local), and the first line of that stream's state;
 * and it is inlined into the backend's exported entry point, which then
 * calls the vendor with the caller's own arguments.
 *
 * Only the engine (gs_stream.h, gs_cold.c) and a backend's launch entry
 * points use this file.
 */
#ifndef GS_LANE_H
#define GS_LANE_H

#include "gs_common.h"
#include "gs_engine.h"

/* A stream as the engine names it: the handle, and the context for the
 * default streams, whose handles every context shares. */
typedef struct gs_skey {
	uintptr_t handle;
	void *ctx;
} gs_skey_t;

/*
 * The first cache line of every stream state (gs_stream_t.lane; states are
 * allocated on a line of their own).  The segment of a cold stream (hash,
 * len, fast) is guarded by `spin`, which the lane holds for a few
 * instructions and the engine inside the stream's mutex; changing `cold`
 * needs both, so it is stable under the mutex.
 */
typedef struct gs_lane {
	unsigned flags;    /* GS_STREAM_*, fixed for the state's life */
	bool cold;         /* atomic: read without either lock as a hint */
	bool bare;         /* atomic: no sequence armed or building (first_bloom 0): no launch can wake it */
	unsigned char spin;
	uint64_t hash;     /* the cold segment so far */
	uint64_t len;      /* its launches */
	uint64_t fast;     /* ... of them through the lane, not yet counted */
} gs_lane_t;

/* The engine's globals every launch reads, on one cache line. */
typedef struct gs_hot {
	bool active;           /* init done and enabled */
	int capturing;         /* application captures in progress */
	int capture_pending;   /* captures beginning: their flush under way (gs_engine_capture_begin) */
	unsigned generation;   /* bumped when a stream is forgotten */
	unsigned held_streams; /* streams with held work (a hint) */
	unsigned held_legacy;  /* ... of them the legacy stream (a hint) */
	unsigned held_blocking; /* ... of them blocking streams (a hint) */
	uint64_t cold_limit;   /* a cold segment this long ends (period detection) */
} gs_hot_t;
extern gs_hot_t gs_hot;

/*
 * Whether a stream of flags `sflags` is tied to one that holds work: the
 * legacy stream to blocking streams, a blocking stream to the legacy one
 * (gs_engine_flush_peers).  By class, so a stream's own holding never
 * counts: PyTorch's default stream holds its step at almost every launch,
 * and counting every holder sent each of them through the stream table.
 * A hint, as held_streams was: a tied stream whose holding happened
 * before the caller's call is counted by then.
 */
static inline bool gs_hot_held_tied(unsigned sflags)
{
	if (sflags & GS_STREAM_LEGACY)
		return __atomic_load_n(&gs_hot.held_blocking, __ATOMIC_RELAXED) != 0;
	if (sflags & GS_STREAM_BLOCKING)
		return __atomic_load_n(&gs_hot.held_legacy, __ATOMIC_RELAXED) != 0;
	return false;
}

/* The calling thread's last stream (its state's first member is its lane). */
typedef struct gs_lane_cache {
	gs_skey_t key;
	unsigned gen;
	gs_lane_t *lane;
} gs_lane_cache_t;
extern _Thread_local gs_lane_cache_t gs_lane_cache GS_TLS_IE;

/*
 * The calling thread's recent streams, beyond the last one: a program that
 * turns from stream to stream at every call (cuDNN's RNNs: thirteen streams
 * a token, a call or two on each) would otherwise take the table's mutex
 * and hash at every call.  Direct-mapped by handle; an entry is valid while
 * the generation it was made in lasts, as gs_lane_cache is.
 */
#define GS_STREAM_RECENT_BITS 5
#define GS_STREAM_RECENT (1u << GS_STREAM_RECENT_BITS)
extern _Thread_local gs_lane_cache_t gs_stream_recent[GS_STREAM_RECENT] GS_TLS_IE;

static inline unsigned gs_stream_recent_slot(uintptr_t handle)
{
	return (unsigned)(((uint64_t)handle * 0x9e3779b97f4a7c15ULL) >> (64 - GS_STREAM_RECENT_BITS));
}

/* The lane's spin lock, contended (out of line: gs_cold.c). */
void gs_lane_wait(gs_lane_t *l);

static inline void gs_lane_lock(gs_lane_t *l)
{
	if (GS_UNLIKELY(__atomic_exchange_n(&l->spin, 1, __ATOMIC_ACQUIRE)))
		gs_lane_wait(l);
}

static inline void gs_lane_unlock(gs_lane_t *l)
{
	__atomic_store_n(&l->spin, 0, __ATOMIC_RELEASE);
}

/*
 * Count a launch with structural key `key` into a cold stream's segment,
 * unless it must take the full path: the first launch of a segment where
 * the stream has a sequence armed (it may begin one and wake the stream)
 * and the one that makes it long enough for period detection (which needs
 * records).  A stream that synchronises after every launch or two (Thrust's
 * default policy) has a segment's first launch in every other call.  True when counted: the caller then
 * calls the vendor, with no lock held (nothing is held on a cold stream,
 * and a launch racing with it from another thread is unordered with it in
 * the application too).
 */
static inline __attribute__((always_inline)) bool gs_lane_count(gs_lane_t *l, uint64_t key)
{
	gs_lane_lock(l);
	uint64_t len = l->len;
	bool ok = __atomic_load_n(&l->cold, __ATOMIC_RELAXED) &&
		  (len || __atomic_load_n(&l->bare, __ATOMIC_RELAXED)) && len + 1 < gs_hot.cold_limit;
	if (GS_LIKELY(ok)) {
		l->hash = gs_hash_step(l->hash, key);
		l->len = len + 1;
		l->fast++;
	}
	gs_lane_unlock(l);
	return ok;
}

/*
 * gs_engine_cold() for the stream the calling thread's last launch went to:
 * no stream kind, no table, no call.  `ctx` is the current context for a
 * default stream (whose handle every context shares), and NULL for a
 * stream its handle alone names.  False also when the stream is not the
 * thread's last; the backend then calls gs_engine_cold(), which caches it.
 */
static inline __attribute__((always_inline)) bool gs_engine_cold_cached(uintptr_t handle,
									 void *ctx, uint64_t key)
{
	gs_lane_t *l = gs_lane_cache.lane;
	if (!l || gs_lane_cache.key.handle != handle || (ctx && gs_lane_cache.key.ctx != ctx) ||
	    gs_lane_cache.gen != __atomic_load_n(&gs_hot.generation, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&gs_hot.active, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&l->cold, __ATOMIC_RELAXED))
		return false;
	/* Held work it must wait for, or that must wait for it: the full path flushes it. */
	if (gs_hot_held_tied(l->flags))
		return false;
	return gs_lane_count(l, key);
}

#endif /* GS_LANE_H */
