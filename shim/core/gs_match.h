/*
 * Matching: holding a stream's incoming records while they follow an
 * armed sequence, narrowing the candidates, and handing complete chunks
 * to replay (gs_replay.h).  See docs/how-it-works.md, "Matching and
 * replay".  Stream lock held throughout.
 */
#ifndef GS_MATCH_H
#define GS_MATCH_H

#include "gs_stats.h"
#include "gs_rec.h"

typedef struct gs_seq gs_seq_t;
typedef struct gs_stream gs_stream_t;

/*
 * Armed sequences that may match one prefix at once: as many as a stream
 * keeps by default (GRAPHSHIM_MAX_SEQS).  Steps that branch begin alike
 * by the dozen (JAX's NUTS under XLA: 87 segments between syncs, each
 * beginning with the loop's carried copies), and the most recently used
 * eight were never the one that came next in their cycle: tiny --stages
 * 12 on the simulator replayed 32% with eight, 99% with all.
 */
#define GS_MAX_CANDS 64

/* The match in progress on a stream (gs_stream_t.match). */
typedef struct gs_match {
	/* Held records are the history's [held_start, held_start + nheld). */
	uint32_t nheld; /* read without the lock by cross-stream flushes */
	uint32_t stamp; /* moves at every record held: read without the lock by the idle watchdog */
	uint64_t held_start;
	uint32_t ncands;
	gs_seq_t *cands[GS_MAX_CANDS];
	gs_seq_t *done; /* a candidate already complete while longer ones go on */
	uint32_t chunk; /* next chunk of the sole candidate to submit */
	uint32_t submitted; /* held records already submitted (graph or eager) */
	bool pass_clean;/* no mismatch so far in this pass over the sequence */
	uint32_t graphs;/* chunks of this pass launched as graphs */
	uint32_t spared;/* 1 + the first drifted record of a chunk too short to patch, or 0 */
	const char *api;/* the entry point of the launch in progress, for the trace */
	uint32_t *diffs;/* scratch: indices of records that need a patch */
	/* The mark whose call is in progress (gs_engine_launch): whoever
	 * submits it leaves its status here for that call. */
	gs_rec_t *inflight;
	int inflight_rc;
	bool inflight_sent;
	/* A sequence with a record the vendor refused to patch (gs_replay.c):
	 * planned again around it once the match has ended (gs_match_clear). */
	gs_seq_t *replan;
	/* A sequence the program waited in at one place, pass after pass
	 * (gs_arm_waited): its chunks are planned again once the match has ended. */
	gs_seq_t *recut;
	/* A sequence a record of which drifted so that its node would be built
	 * otherwise (gs_arm_rebuild): built again once the match has ended. */
	gs_seq_t *rebuild;
	/* The idle watchdog submitted what this match held (gs_seq_passed counts it). */
	bool idled;
	/* Chunk unshared - 1 could not be shared while unshared_n candidates matched. */
	uint32_t unshared, unshared_n;
} gs_match_t;

/* Whether q takes part in the match in progress. */
static inline bool gs_match_has(const gs_match_t *m, const gs_seq_t *q)
{
	for (uint32_t i = 0; i < m->ncands; i++)
		if (m->cands[i] == q)
			return true;
	return m->done == q;
}

/*
 * The armed sequences that may begin with r (at most GS_MAX_CANDS, into
 * out); `anchored`: r begins a segment, where any may, not only periodic ones.
 */
uint32_t gs_match_starts(const gs_stream_t *s, const gs_rec_t *r, bool anchored, gs_seq_t **out);
/*
 * r, kept at position at, continues the match in progress or begins one.
 * True when it is held (or already submitted with its chunk or pass).
 */
bool gs_match_launch(gs_stream_t *s, gs_rec_t *r, uint64_t at);
/*
 * End the match in progress: a complete candidate is replayed, held
 * records not yet submitted go eagerly, in order.  With `charge` the
 * sequence being matched counts a mismatch `why` (at record `got`).
 */
void gs_match_end(gs_stream_t *s, gs_mismatch_reason_t why, const gs_rec_t *got, bool charge);
/*
 * Submit every held record not submitted yet, eagerly, marks included.
 * At a mark that cannot wait for its chunk, and for gs_match_interrupt.
 */
void gs_match_drain(gs_stream_t *s);
/*
 * The mark r, just held and not submitted: with GRAPHSHIM_ABSORB it waits
 * with the records held before it, for the chunk's graph or their eager
 * release (an absorbed mark, gs_replay.c), its event entered as held when
 * it is a record.  True when so; false when it must go now (gs_match_drain).
 */
bool gs_match_defer(gs_stream_t *s, gs_rec_t *r);
/*
 * Another thread's flush (the legacy stream's tie to blocking streams), or
 * the idle watchdog's, finding held records not yet submitted: submit them
 * eagerly and, where one sequence is being matched, go on matching it (the
 * rest of the chunk they were held for goes eagerly too, later chunks
 * replay).  False, with nothing done, where the match should end (several
 * candidates; gs_match.c says why): the caller ends it.  (Where nothing
 * held is left unsubmitted the caller does not come here: the match goes
 * on whatever its candidates, gs_engine_interrupt_held.)
 */
bool gs_match_interrupt(gs_stream_t *s);

/*
 * Work held and not yet submitted is not complete: a query of it (a held
 * event record's, another thread's of the stream) may be answered "not
 * ready" without the driver.  So it is while the holder's match.stamp
 * moves (it holds more: it goes on towards its chunk's end) and for
 * GS_NOT_READY_SPINS answers in a row without that; then the caller
 * submits and asks the driver, so that a program spinning on the query
 * for work whose thread has stopped issuing waits only this many answers
 * longer.  `seen` and `spins` are the asker's record of its last answers
 * (an event's entry, a stream), under the asker's lock; `stamp` is read as
 * the idle watchdog reads it.
 */
#define GS_NOT_READY_SPINS 4

static inline bool gs_match_not_ready(const gs_match_t *m, uint32_t *seen, uint8_t *spins)
{
	uint32_t stamp = __atomic_load_n(&m->stamp, __ATOMIC_RELAXED);
	if (stamp != *seen)
		*spins = 0;
	bool yes = *spins < GS_NOT_READY_SPINS;
	*spins += yes;
	*seen = stamp;
	return yes;
}

#endif /* GS_MATCH_H */
