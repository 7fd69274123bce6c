/*
 * The engine's internal types, shared by gs_engine.c (streams, matching,
 * replay), gs_seq.c (the sequence cache and graph building) and
 * gs_period.c (period detection).  Not for backends.
 */
#ifndef GS_ENGINE_INT_H
#define GS_ENGINE_INT_H

#include "gs_backend.h"
#include "gs_clock.h"
#include "gs_config.h"
#include "gs_engine.h"
#include "gs_lane.h"
#include "gs_stats.h"

#include <pthread.h>
#include "gs_hash.h"

/* Cold segments a cold stream remembers (a power of two). */
#define GS_COLD_IDS 64u

/* Armed sequences that may match one prefix at once. */
#define GS_MAX_CANDS 8

typedef struct gs_seq gs_seq_t;

/* GPU timers a sequence may have in flight, and samples kept per kind. */
#define GS_GATE_TIMERS 4
#define GS_GATE_MAX_SAMPLES 15

/*
 * The gate's state per armed sequence (gs_gate.c); X(NAME, "name").
 * REPLAY: replay (decided, forced, or no timers).  EAGER: eager passes
 * (decided or forced).  TRIAL: timing eager and replayed passes in turn.
 */
#define GS_GATE_STATES(X)                                                     \
	X(REPLAY, "replay")                                                   \
	X(EAGER, "eager")                                                     \
	X(TRIAL, "trial")

typedef enum gs_gate_state {
#define GS_X(n, s) GS_GATE_S_##n,
	GS_GATE_STATES(GS_X)
#undef GS_X
	GS_GATE_NSTATES
} gs_gate_state_t;

typedef struct gs_gate {
	uint8_t state;     /* gs_gate_state_t */
	uint32_t warm;     /* replays to run before one is timed */
	uint8_t ne, nr;    /* samples read in this trial */
	uint8_t se, sr;    /* timed passes completed in this trial */
	uint8_t started;   /* timed passes begun in this trial, completed or cut */
	int8_t running;    /* the timer of the pass in progress, or -1 */
	bool off;          /* no timers: replay, never measured again */
	uint8_t tstate[GS_GATE_TIMERS];
	void *timer[GS_GATE_TIMERS];
	uint32_t e_ns[GS_GATE_MAX_SAMPLES], r_ns[GS_GATE_MAX_SAMPLES];
	uint64_t passes;   /* passes since the last decision */
	uint64_t eager_ns, replay_ns; /* the medians behind the last decision */
	uint32_t trials;   /* decisions made */
} gs_gate_t;

struct gs_seq {
	uint64_t id;          /* hash of every record's shape and the length */
	uint64_t first_shape; /* shape of record 0, where matching may begin */
	uint32_t n;
	gs_seq_state_t state;
	bool periodic;   /* may begin anywhere, not only after a boundary */
	gs_rec_t **recs; /* baked records (armed only) */
	/*
	 * A replay is submitted in chunks, one graph each, so the GPU starts on
	 * the first chunk while the host is still issuing the rest.  Chunk j
	 * covers records [chunk_end[j-1], chunk_end[j]).
	 */
	uint32_t nchunks;
	uint32_t *chunk_end;
	uint64_t host_ns;/* host time per launch when it was learned (wall clock) */
	void **graphs;   /* the backend's instantiated graphs (armed only) */
	/*
	 * Chunks whose graphs are ready, in order (atomic: the builder stores
	 * graphs[j], then raises it).  A sequence still BUILDING replays its
	 * ready chunks and sends the others eagerly.
	 */
	uint32_t ready;
	bool spec;       /* built from its first sighting before it repeated: not matched yet */
	uint64_t seen, replays, patches, mismatches, retirements, build_ns;
	uint64_t eager_passes;  /* complete passes submitted eagerly by the gate's choice */
	gs_gate_t gate;
	uint32_t mismatch_run;  /* consecutive mismatches; a clean replay resets it */
	long long cooldown_left;/* sightings until a retired sequence may learn again */
	uint64_t retired_at;    /* stream position at retirement */
	gs_seq_t *prev, *next;  /* LRU list, most recent first */
	struct gs_stream *owner;/* for the background builder */
	/*
	 * The builder hand-off, changed only by compare-and-swap: BUILDING ->
	 * BUILT by the builder (the stream publishes it on its next call), or
	 * BUILDING -> CANCELLED by the stream (the builder frees it).  The
	 * builder never takes a stream lock, so a busy launch path cannot
	 * starve it.
	 */
	int handoff;
	int build_rc;
	uint64_t build_dt;
	bool counted;           /* its nodes are in the owner's budget */
	gs_seq_t *job_next;     /* the builder's queue */
	UT_hash_handle hh;
};

/*
 * Period detection over the full hashes (shape and argument bytes) of the
 * records of a stream that does not reach a boundary.  O(1) a record.
 */
typedef struct gs_period {
	uint64_t *sig;   /* ring of the last `cap` hashes */
	uint64_t *tkey;  /* direct-mapped table: hash -> last absolute position */
	uint64_t *tpos;
	uint32_t cap;
	uint32_t tmask;
	uint64_t pos;    /* records pushed in all */
	uint64_t base;   /* pos at the last reset: older history does not count */
	uint64_t per;    /* candidate period, 0 when none */
	uint64_t run;    /* consecutive records equal to the one `per` earlier */
	uint64_t fired;  /* run length at which the current period was reported */
} gs_period_t;

typedef struct gs_stream {
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
	 */
	gs_rec_t **ring;
	uint32_t cap;
	uint64_t pos;

	/* The learning segment: records since the last boundary. */
	uint64_t seg_start;
	uint64_t seg_hash;
	bool seg_bad; /* overflowed, or held a failed launch: not learnable */
	bool seg_matched; /* some launch of it was matched against an armed sequence */
	uint64_t seg_t0; /* when the segment's first record arrived */

	/* Matching: held records are ring[held_start .. held_start + nheld). */
	uint32_t nheld; /* read without the lock by cross-stream flushes */
	uint64_t held_start;
	uint32_t ncands;
	gs_seq_t *cands[GS_MAX_CANDS];
	gs_seq_t *done; /* a candidate already complete while longer ones go on */
	uint32_t chunk; /* next chunk of the sole candidate to submit */
	uint32_t submitted; /* held records already submitted (graph or eager) */
	bool pass_clean;/* no mismatch so far in this pass over the sequence */
	const char *api;/* the entry point of the launch in progress, for the trace */
	gs_seq_t *pass_seq; /* the candidate the gate chose this pass's kind for */
	bool pass_eager;    /* ... and whether the pass goes eagerly */
	gs_seq_t *gate_seq; /* the sequence whose timer runs for this pass */
	uint32_t *diffs;/* scratch: indices of records that need a patch */

	/* Sequences: hashed by id, and an LRU list. */
	gs_seq_t *seqs;
	gs_seq_t *lru;
	uint32_t nseqs;
	uint64_t nodes;      /* nodes of armed sequences */
	uint64_t first_bloom;/* bit (first_shape & 63) of every armed sequence */
	uint32_t built;      /* sequences built and not yet published (atomic) */
	/* The segment that just ended, when its sequence was one sighting short
	 * of learning: if the next segment begins the same way, its graphs are
	 * built now (gs_seq_speculate). */
	uint64_t last_id, last_start, last_host_ns;

	/*
	 * Cold: the last GRAPHSHIM_COLD_AFTER segments did not repeat, so the
	 * stream keeps no records (pos does not move) and passes launches
	 * through, chaining a structural key of each into cold_hash.  A
	 * segment whose (cold_hash, length) was seen among the last cold ones
	 * warms the stream again, and so does a segment beginning like an
	 * armed sequence (its first launch always takes the full path).  The
	 * segment itself is in `lane`, at the top.
	 */
	uint32_t fresh;      /* segments in a row that did not repeat (warm) */
	const void *seg_thread; /* the thread that issued the segment's last launch */
	uint64_t *cold_ids;  /* GS_COLD_IDS recent cold segments, direct-mapped */

	/* Period detection runs only in segments longer than
	 * GRAPHSHIM_PERIOD_AFTER (its tables are allocated then, and the
	 * segment's earlier records are fed from the history). */
	gs_period_t period;
	bool period_on;
	UT_hash_handle hh;
} gs_stream_t;

/* The state whose lane l is (its first member). */
static inline gs_stream_t *gs_stream_of(gs_lane_t *l)
{
	return (gs_stream_t *)(void *)l;
}

/* gs_period.c */
bool gs_period_init(gs_period_t *p, uint32_t cap);
void gs_period_free(gs_period_t *p);
void gs_period_reset(gs_period_t *p);
/*
 * Push the next record's hash.  Returns the length L of a sequence that the
 * last L*reps records repeat (L a multiple of the period, at least min_len,
 * below cap), once per periodic run; 0 otherwise.
 */
uint32_t gs_period_push(gs_period_t *p, uint64_t hash, uint32_t min_len, uint32_t reps);

/* gs_seq.c */
uint64_t gs_seq_id(const gs_stream_t *s, uint64_t from, uint32_t n);
gs_seq_t *gs_seq_find(gs_stream_t *s, uint64_t id);
gs_seq_t *gs_seq_add(gs_stream_t *s, uint64_t id, uint32_t n, uint64_t first_shape);
void gs_seq_touch(gs_stream_t *s, gs_seq_t *q);
/*
 * Build the graph of q from ring[from .. from+n); host_ns is the host time
 * per launch measured while those records arrived.  With `steal` the
 * records move out of the ring (see gs_seq_bake).  True when it failed.
 */
bool gs_seq_arm(gs_stream_t *s, gs_seq_t *q, uint64_t from, uint64_t host_ns, bool steal);
void gs_seq_retire(gs_stream_t *s, gs_seq_t *q);
void gs_seq_free_all(gs_stream_t *s, bool release_graphs);
void gs_seq_rebuild_bloom(gs_stream_t *s);
/* A segment begins with r: build the last one's sequence if r may repeat it. */
void gs_seq_speculate(gs_stream_t *s, const gs_rec_t *r);

/* Whether q takes part in matching: armed, or building with a chunk ready. */
static inline bool gs_seq_matchable(const gs_seq_t *q)
{
	return !q->spec && (q->state == GS_SEQ_ARMED ||
			    (q->state == GS_SEQ_BUILDING && __atomic_load_n(&q->ready, __ATOMIC_ACQUIRE)));
}
/* Build q's graphs now (the caller's thread); 0 or the backend's status. */
int gs_seq_build(gs_seq_t *q);
/* Publish the result of a build; stream lock held. */
void gs_seq_built(gs_stream_t *s, gs_seq_t *q, int rc, uint64_t ns);
/* Publish what the builder finished for s; stream lock held. */
void gs_seq_publish(gs_stream_t *s);
enum { GS_HANDOFF_NONE, GS_HANDOFF_BUILDING, GS_HANDOFF_BUILT, GS_HANDOFF_CANCELLED };
void gs_seq_free(gs_seq_t *q);
/* q's figures for the statistics; stream lock held. */
void gs_seq_info_fill(const gs_stream_t *s, const gs_seq_t *q, gs_seq_info_t *i);
/* Copy up to max figures of dropped sequences; returns how many are kept. */
size_t gs_seq_gone_info(gs_seq_info_t *out, size_t max);
/* Forget them (engine restart in tests). */
void gs_seq_gone_reset(void);

/* gs_build.c: the background builder. */
/* Start the builder thread (engine init). */
void gs_build_start(void);
/* Queue q (state BUILDING) for the builder; true when no thread could run. */
bool gs_build_submit(gs_seq_t *q);
/* Wait until every queued build is published. */
void gs_build_wait(void);
/* Hold the builder while the application captures (see gs_build.c). */
void gs_build_pause(void);
void gs_build_resume(void);
/* Wait, then stop the builder thread. */
void gs_build_stop(void);
/* In a forked child: forget the builder without touching its locks. */
void gs_build_forget(void);
/* gs_gate.c: eager or graph, by measurement (see the file). */
/* q was just armed: start its gate afresh. */
void gs_gate_armed(gs_seq_t *q);
/* A pass over q begins on s: true when it goes eagerly.  May start a timer. */
bool gs_gate_begin(gs_stream_t *s, gs_seq_t *q);
/* Whether a pass over q, which became the sole candidate, goes eagerly. */
bool gs_gate_eager(const gs_stream_t *s, const gs_seq_t *q);
/* The pass over q completed (eagerly or replayed): stop its timer. */
void gs_gate_complete(gs_stream_t *s, gs_seq_t *q, bool eager);
/* The pass ended incomplete: its timing is dropped. */
void gs_gate_abandon(gs_stream_t *s);
/* q leaves s's matching (retired or dropped): forget it there. */
void gs_gate_forget(gs_stream_t *s, const gs_seq_t *q);
/* Destroy q's timers (any thread; touches no stream). */
void gs_gate_release(gs_seq_t *q);
/* "replay", "eager", "trial", "off" (untimed) or "none" (not armed). */
const char *gs_gate_state_name(const gs_seq_t *q);

/* The first record of chunk j of q. */
static inline uint32_t gs_chunk_begin(const gs_seq_t *q, uint32_t j)
{
	return j ? q->chunk_end[j - 1] : 0;
}

/* The history's first size, and its largest: max_seq + 1. */
#define GS_RING_MIN 64u
static inline uint32_t gs_ring_max(void)
{
	return (uint32_t)gs_config.max_seq + 1;
}

/* The ring slot of absolute position i. */
static inline gs_rec_t *gs_ring_at(const gs_stream_t *s, uint64_t i)
{
	return s->ring[i % s->cap];
}


#endif /* GS_ENGINE_INT_H */
