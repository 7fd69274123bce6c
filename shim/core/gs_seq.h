/*
 * Sequences: a run of records learned on a stream, its graphs once armed,
 * and its figures; and each stream's cache of them (gs_seq_cache_t:
 * hashed by id, kept on an LRU list, bounded in count and in graph nodes).
 * The sequence's own bookkeeping (sightings, passes, mismatches, patches,
 * cool-down) goes through the functions below; arming (chunks, baking,
 * building) is gs_arm.h.
 */
#ifndef GS_SEQ_H
#define GS_SEQ_H

#include "gs_gate.h"
#include "gs_hash.h"
#include "gs_rec.h"
#include "gs_stats.h"
#include "gs_thrift.h"

typedef struct gs_seq gs_seq_t;
typedef struct gs_stream gs_stream_t;

/* The builder hand-off (gs_seq_t.handoff). */
enum { GS_HANDOFF_NONE, GS_HANDOFF_BUILDING, GS_HANDOFF_BUILT, GS_HANDOFF_CANCELLED };

struct gs_seq {
	/*
	 * First, on one cache line: what a launch that may begin a match reads
	 * of every cached sequence as it walks the LRU list (gs_match_starts).
	 * With the list's links 648 bytes in and `spec` on the second line, a
	 * walk touched three lines a sequence.
	 */
	uint64_t id;          /* hash of every record's shape and the length */
	uint64_t first_shape; /* shape of record 0, where matching may begin */
	uint32_t n;
	gs_seq_state_t state;
	bool periodic;   /* may begin anywhere, not only after a boundary */
	bool spec;       /* built from its first sighting before it repeated: not matched yet */
	gs_seq_t *prev, *next;  /* LRU list, most recent first */
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
	gs_invest_t invest; /* its last arming, until it paid or was wasted (gs_thrift.h) */
	uint64_t seen, replays, patches, mismatches, retirements, build_ns;
	uint64_t eager_passes;  /* complete passes submitted eagerly by the gate's choice */
	gs_gate_t gate;
	uint32_t mismatch_run;  /* consecutive mismatches; a clean replay resets it */
	bool by_siblings;       /* the charge that retired it came from another step's segment that began like it (gs_seq_settle) */
	long long cooldown_left;/* sightings until a retired sequence may learn again */
	uint64_t retired_at;    /* stream position at retirement */
	gs_stream_t *owner;     /* for the background builder */
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
	uint32_t refuse_at;     /* the record whose node the vendor refused (a build) or would not update (a patch), or n */
	uint32_t nrefused;      /* its records refused so far: each runs eagerly at its place */
	uint32_t replans;       /* refusals it was planned and built again for (gs_arm_replan) */
	uint32_t ncut;          /* chunks cut where the program waited (gs_arm_waited) */
	uint32_t rebuilds;      /* builds again for what its nodes drift in (gs_arm_rebuild) */
	uint32_t idle_run;      /* replayed passes in a row that waited for the idle watchdog */
	/* A posted chunk the vendor refused (gs_submit.h; atomic, 0 or the
	 * gs_mismatch_reason_t + 1), at which position, with what status. */
	int sub_fail;
	uint32_t sub_fail_pos;
	int sub_fail_rc;
	uint64_t idle_eager;    /* passes still to go eagerly because of them (gs_seq_passed) */
	bool counted;           /* its nodes are in the owner's budget */
	gs_seq_t *job_next;     /* the builder's queue */
	/*
	 * Variants (gs_variant.h): more graphs of a chunk, baked from other
	 * operands.  A variant is a gs_seq_t of one chunk whose `parent` is
	 * the sequence it serves, on var[vchunk] once built (its parent's
	 * fields below are unused in it).
	 */
	gs_seq_t **var;     /* per chunk: its variants, most recently used first */
	uint32_t *vcnt;     /* per chunk: passes whose operand hashes are in vhist */
	uint64_t *vhist;    /* the last passes' operand hashes, a row of n per pass */
	uint32_t vnodes;    /* nodes of its built variants, in the owner's budget */
	uint32_t vbuilding; /* its variants the builder has not handed back */
	gs_seq_t *parent;   /* a variant: the sequence it serves */
	uint32_t vchunk;    /* a variant: the chunk */
	gs_seq_t *vnext;    /* a variant: the next of its chunk, or the next pending on the stream */
	UT_hash_handle hh;
};

/*
 * The first shapes of a stream's armed sequences, as a filter: a launch
 * whose shape is not in it begins no match, and only one that is walks
 * the stream's sequences (gs_match_starts).  512 bits, 64 bytes: with
 * 64, a program with a dozen armed steps sent a fifth of its other launches
 * through that walk, a pointer chased for each of up to 64 cached sequences
 * (bench_hook n, never cold: gs_match_starts a quarter of graphshim's time).
 */
#define GS_BLOOM_WORDS 8
typedef struct gs_bloom {
	uint64_t w[GS_BLOOM_WORDS];
} gs_bloom_t;

static inline bool gs_bloom_has(const gs_bloom_t *b, uint64_t shape)
{
	return (b->w[(shape >> 6) & (GS_BLOOM_WORDS - 1)] >> (shape & 63)) & 1;
}

static inline void gs_bloom_add(gs_bloom_t *b, uint64_t shape)
{
	b->w[(shape >> 6) & (GS_BLOOM_WORDS - 1)] |= 1ULL << (shape & 63);
}

static inline bool gs_bloom_empty(const gs_bloom_t *b)
{
	uint64_t any = 0;
	for (int i = 0; i < GS_BLOOM_WORDS; i++)
		any |= b->w[i];
	return !any;
}

/* A stream's sequences (gs_stream_t.cache); guarded by the stream's lock. */
typedef struct gs_seq_cache {
	gs_seq_t *seqs;      /* hashed by id */
	gs_seq_t *lru;       /* most recently used first */
	uint32_t n;
	uint64_t nodes;      /* nodes of armed sequences */
	gs_bloom_t first_bloom; /* every armed sequence's first shape */
	uint64_t evicted_at; /* the stream's position after its last eviction + 1 (0: none) */
	uint32_t built;      /* sequences and variants built and not yet published (atomic) */
	gs_seq_t *vpending;  /* variants handed to the builder (gs_variant.c) */
} gs_seq_cache_t;

/*
 * Whether the stream evicted a sequence in its last GS_SEQ_CHURN records:
 * its steps do not fit its cache, and a step seen before there may be a
 * repeat by chance (a stream whose work never repeats).
 */
bool gs_seq_churning(const gs_stream_t *s);

/* Whether q takes part in matching: armed, or building with a chunk ready. */
static inline bool gs_seq_matchable(const gs_seq_t *q)
{
	return !q->spec && (q->state == GS_SEQ_ARMED ||
			    (q->state == GS_SEQ_BUILDING && __atomic_load_n(&q->ready, __ATOMIC_ACQUIRE)));
}

/* The first record of chunk j of q. */
static inline uint32_t gs_seq_chunk_begin(const gs_seq_t *q, uint32_t j)
{
	return j ? q->chunk_end[j - 1] : 0;
}

/*
 * Whether chunk j of q is one record with no graph, submitted eagerly at
 * its place: a lone mark (its own call submits it), or a record the vendor
 * would not take as a node (gs_arm.c).
 */
static inline bool gs_seq_chunk_bare(const gs_seq_t *q, uint32_t j)
{
	uint32_t b = gs_seq_chunk_begin(q, j);
	return q->chunk_end[j] == b + 1 && (gs_rec_is_mark(q->recs[b]) || q->recs[b]->refused);
}

/* ---- the cache (stream lock held) ---- */

/* The id of the n records at positions from.. of s's history; 0 when one is gone. */
uint64_t gs_seq_id(const gs_stream_t *s, uint64_t from, uint32_t n);
gs_seq_t *gs_seq_find(gs_stream_t *s, uint64_t id);
/* A new sequence, learning; NULL when the cache cannot take one. */
gs_seq_t *gs_seq_add(gs_stream_t *s, uint64_t id, uint32_t n, uint64_t first_shape);
/* q was used: most recent in the LRU list. */
void gs_seq_touch(gs_stream_t *s, gs_seq_t *q);
/* Set the stream's first_bloom, and the lane's hint that nothing is armed (gs_lane.h). */
void gs_seq_bloom_set(gs_stream_t *s, const gs_bloom_t *b);
/* Add a sequence's first shape to the stream's first_bloom (it is armed now). */
void gs_seq_bloom_add(gs_stream_t *s, uint64_t first_shape);
/*
 * Evict least recently used sequences until n more nodes fit; `keep`, the
 * match's candidates and those being built stay.  True when they do not.
 */
bool gs_seq_make_room(gs_stream_t *s, uint32_t n, const gs_seq_t *keep);
/* Count q's nodes into s's budget, or take them out. */
void gs_seq_count(gs_stream_t *s, gs_seq_t *q);
void gs_seq_uncount(gs_stream_t *s, gs_seq_t *q);
/* Destroy q's graphs and baked records; touches nothing of its stream. */
void gs_seq_release(gs_seq_t *q);
/* Destroy q's graphs, variants and chunk plan only (its records stay, to plan it again). */
void gs_seq_release_graphs(gs_seq_t *q);
/* Release q and free it (any thread). */
void gs_seq_free(gs_seq_t *q);
/* Drop every sequence of s; with release_graphs their graphs are destroyed. */
void gs_seq_free_all(gs_stream_t *s, bool release_graphs);

/* ---- bookkeeping (stream lock held) ---- */

/* A boundary ended a segment that is q again. */
void gs_seq_sighted(gs_stream_t *s, gs_seq_t *q);
/*
 * q was seen again in a segment that began at `from`: true when q was
 * retired, its cool-down ends there, and it learns again from scratch.
 */
bool gs_seq_cooled(gs_seq_t *q, uint64_t from);
/* Period detection found q: it may begin anywhere, and counts `seen` sightings more. */
void gs_seq_periodic(gs_seq_t *q, uint64_t seen);
/* A pass over q completed, eagerly (the gate's choice) or replayed; `clean`: no mismatch in it. */
void gs_seq_passed(gs_stream_t *s, gs_seq_t *q, bool eager, bool clean);
/* q mismatched; it retires at GRAPHSHIM_MISMATCH_LIMIT in a row. */
void gs_seq_mismatch(gs_stream_t *s, gs_seq_t *q);
/*
 * q mismatched in structure, or was cut, in the segment s is in: counted
 * now, charged toward retirement when the segment ends (gs_seq_settle).
 */
void gs_seq_owe(gs_stream_t *s, gs_seq_t *q);
/*
 * The segment ends: what it owes is charged, or forgiven when the segment
 * is `sibling`: another sequence seen before (a step that begins like q's
 * and is a repeat of its own, not a failure of q's), or one too short to
 * be a sequence (a read-back right after a step's first launch).  seg_id:
 * the segment's sequence id (0: too short or not learnable), for the trace.
 */
void gs_seq_settle(gs_stream_t *s, bool sibling, uint64_t seg_id);
/* Node k of a graph (a chunk's, or a variant's) was patched with r's operands: its baked
 * record follows (what the core counts on it stays). */
void gs_seq_rebake(gs_rec_t **baked, uint32_t k, const gs_rec_t *r);
/* A replay of q patched n nodes. */
void gs_seq_patched(gs_seq_t *q, uint32_t n);
/* Release q's graphs and send it eager (a no-op unless armed). */
void gs_seq_retire(gs_stream_t *s, gs_seq_t *q);

/* ---- figures ---- */

/* q's figures for the statistics; stream lock held. */
void gs_seq_info_fill(const gs_stream_t *s, const gs_seq_t *q, gs_seq_info_t *i);
/* Copy up to max figures of dropped sequences; returns how many are kept. */
size_t gs_seq_gone_info(gs_seq_info_t *out, size_t max);
/* The same without waiting for their lock (a signal handler): SIZE_MAX when it is taken. */
size_t gs_seq_gone_info_try(gs_seq_info_t *out, size_t max);
/* Forget them (engine restart in tests). */
void gs_seq_gone_reset(void);

#endif /* GS_SEQ_H */
