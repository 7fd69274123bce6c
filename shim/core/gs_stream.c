/*
 * Stream states: creating, finding, growing, emptying and freeing them,
 * and the table they are found in (gs_stream.h), with the hot globals
 * every launch reads and each thread's cache of its last stream.
 */
#include "gs_log.h"
#include "gs_self.h"
#include "gs_sig.h"
#include "gs_stats.h"
#include "gs_stream.h"

#include <stdlib.h>

_Static_assert(offsetof(gs_stream_t, lane) == 0 && sizeof(gs_lane_t) <= 64,
	       "a stream state's lane is its first cache line");

static pthread_mutex_t gs_stream_table_mu = PTHREAD_MUTEX_INITIALIZER;
static gs_stream_t *gs_streams;       /* uthash by key */
/* On a line of its own (gs_lane.h). */
gs_hot_t gs_hot __attribute__((aligned(64)));
/* Emptied states of destroyed streams, for the next streams created. */
static gs_stream_t *gs_stream_pool;

_Thread_local gs_lane_cache_t gs_lane_cache GS_TLS_IE;
_Thread_local gs_lane_cache_t gs_stream_recent[GS_STREAM_RECENT] GS_TLS_IE;

static void gs_stream_free(gs_stream_t *s, bool release_graphs)
{
	gs_seq_free_all(s, release_graphs);
	if (s->ring) {
		for (uint32_t i = 0; i < s->cap; i++)
			free(s->ring[i]);
		free(s->ring);
	}
	free(s->match.diffs);
	free(s->cold.ids);
	gs_period_free(&s->period);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static gs_stream_t *gs_stream_new(gs_skey_t key, unsigned flags)
{
	gs_stream_t *s = gs_stream_pool;
	if (s) {
		/* Positions keep counting, so nothing stale can match. */
		gs_stream_pool = s->hh.next;
		pthread_mutex_lock(&s->lock);
		/* Read without the lock (gs_engine_event_origin): stored atomically. */
		__atomic_store_n(&s->key.handle, key.handle, __ATOMIC_RELAXED);
		__atomic_store_n(&s->key.ctx, key.ctx, __ATOMIC_RELAXED);
		s->lane.flags = flags;
		gs_learn_begin(&s->seg, &s->period, s->pos);
		s->match.ncands = 0;
		s->match.done = NULL;
		s->match.nheld = 0;
		s->seg.last_id = 0;
		gs_cold_reset(s);
		__atomic_store_n(&s->lane.bare, gs_bloom_empty(&s->cache.first_bloom), __ATOMIC_RELAXED);
		gs_thrift_reset(s);
		s->pass.trial = NULL;
		s->pass.prior_n = 0;
		__atomic_store_n(&s->absorbs, false, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&s->lock);
		return s;
	}
	/* On a line of its own: the cold lane's fields are its first line. */
	if (posix_memalign((void **)&s, 64, sizeof(*s)))
		return NULL;
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->lane.flags = flags;
	s->lane.bare = true; /* nothing armed yet */
	s->cap = gs_stream_ring_max() < GS_STREAM_RING_MIN ? gs_stream_ring_max() : GS_STREAM_RING_MIN;
	s->seg.hash = 0;
	pthread_mutex_init(&s->lock, NULL);
	s->ring = calloc(s->cap, sizeof(*s->ring));
	s->match.diffs = calloc(gs_stream_ring_max(), sizeof(*s->match.diffs));
	if (!s->ring || !s->match.diffs) {
		gs_stream_free(s, false);
		return NULL;
	}
	return s;
}

/* A segment longer than the history is then not learnable, as when it reaches max_seq. */
void gs_stream_grow(gs_stream_t *s)
{
	uint32_t max = gs_stream_ring_max(), ncap = s->cap * 2 < max ? s->cap * 2 : max;
	gs_rec_t **n = calloc(ncap, sizeof(*n));
	if (!n)
		return;
	uint64_t lo = s->pos > s->cap ? s->pos - s->cap : 0;
	for (uint64_t i = lo; i < s->pos; i++)
		n[i % ncap] = s->ring[i % s->cap];
	free(s->ring);
	s->ring = n;
	s->cap = ncap;
}

gs_stream_t *gs_stream_lookup(uintptr_t handle, void *ctx, unsigned flags)
{
	gs_skey_t key;
	memset(&key, 0, sizeof(key));
	key.handle = handle;
	key.ctx = ctx;
	gs_stream_t *s;
	pthread_mutex_lock(&gs_stream_table_mu);
	HASH_FIND(hh, gs_streams, &key, sizeof(key), s);
	if (!s && (s = gs_stream_new(key, flags)) != NULL) {
		GS_HASH_TRY();
		HASH_ADD(hh, gs_streams, key, sizeof(key), s);
		if (gs_hash_oom) { /* no table: this stream passes through */
			s->hh.next = gs_stream_pool;
			gs_stream_pool = s;
			s = NULL;
		}
	}
	unsigned gen = __atomic_load_n(&gs_hot.generation, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&gs_stream_table_mu);
	gs_lane_cache.key = key;
	gs_lane_cache.gen = gen;
	gs_lane_cache.lane = s ? &s->lane : NULL;
	gs_stream_recent[gs_stream_recent_slot(handle)] = gs_lane_cache;
	return s;
}

void gs_stream_table_lock(void)
{
	gs_sig_hold();
	gs_self_lock(&gs_stream_table_mu);
}

bool gs_stream_table_trylock(void)
{
	return pthread_mutex_trylock(&gs_stream_table_mu) == 0;
}

void gs_stream_table_unlock(void)
{
	pthread_mutex_unlock(&gs_stream_table_mu);
	gs_sig_release();
}

gs_stream_t *gs_stream_first(void)
{
	return gs_streams;
}

gs_stream_t *gs_stream_remove(uintptr_t handle, void *ctx)
{
	gs_skey_t key;
	memset(&key, 0, sizeof(key));
	key.handle = handle;
	key.ctx = ctx;
	gs_stream_t *s;
	HASH_FIND(hh, gs_streams, &key, sizeof(key), s);
	if (s)
		HASH_DELETE(hh, gs_streams, s);
	return s;
}

gs_stream_t *gs_stream_pop(void)
{
	gs_stream_t *s = gs_streams;
	if (s)
		HASH_DELETE(hh, gs_streams, s);
	return s;
}

void gs_stream_order_error(const gs_stream_t *s, uint64_t first)
{
	GS_STAT_INC(order_errors);
	gs_log_once(GS_LOG_ERROR, "a record went to the vendor out of its stream's order or twice "
				  "(position %llu after %llu): a bug, please report it",
		    (unsigned long long)first, (unsigned long long)s->sent - 1);
	if (gs_config.check_order)
		abort();
}

void gs_stream_empty(gs_stream_t *s)
{
	gs_seq_free_all(s, true);
	s->cache.n = 0;
	s->cache.nodes = 0;
	for (uint32_t i = 0; i < s->cap; i++) {
		free(s->ring[i]);
		s->ring[i] = NULL;
	}
}

void gs_stream_keep(gs_stream_t *s)
{
	s->hh.next = gs_stream_pool;
	gs_stream_pool = s;
}

void gs_stream_free_all(void)
{
	pthread_mutex_lock(&gs_stream_table_mu);
	gs_stream_t *s;
	while ((s = gs_stream_pop()) != NULL)
		gs_stream_free(s, true);
	while ((s = gs_stream_pool) != NULL) {
		gs_stream_pool = s->hh.next;
		gs_stream_free(s, true);
	}
	__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&gs_stream_table_mu);
}

void gs_stream_forget(void)
{
	pthread_mutex_init(&gs_stream_table_mu, NULL);
	gs_streams = NULL;
	gs_stream_pool = NULL;
}
