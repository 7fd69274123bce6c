/*
 * Learning: the segment a stream is in (the records since its last
 * boundary), what a boundary makes of it (a sighting of a sequence, an
 * arming, a speculative build), and period detection for segments that
 * never end.  See docs/how-it-works.md, "Learning".
 */
#ifndef GS_LEARN_H
#define GS_LEARN_H

#include "gs_period.h"
#include "gs_rec.h"

typedef struct gs_stream gs_stream_t;

/* The learning segment of a stream (gs_stream_t.seg). */
/*
 * A segment that ended one sighting short of learning: its sequence, where
 * its records begin in the stream's history, the host's time a record, and
 * the segment that came before it.  A step cut into several segments by
 * its host reads and copies comes back segment by segment, each after the
 * one it followed before: each is kept until the step comes again, not
 * only the segment that ended last (gs_learn_speculate).
 */
#define GS_SPEC_SLOTS 16u
typedef struct gs_spec_slot {
	uint64_t id, start, host_ns;
	uint64_t after; /* the structure of the segment before it (gs_segment_t.prev) */
} gs_spec_slot_t;

typedef struct gs_segment {
	uint64_t start;   /* the position of its first record */
	uint64_t hash;    /* its records' shapes, chained */
	bool bad;         /* overflowed, or held a failed launch: not learnable */
	uint32_t marks;   /* of its records, marks (event records and waits) */
	bool matched;     /* some launch of it was matched against an armed sequence */
	uint64_t t0;      /* when its first record arrived */
	const void *thread; /* the thread that issued its last launch */
	bool from_other;  /* it began where another thread's call cut the last one */
	/* Segments that ended one sighting short of learning, oldest first
	 * (gs_learn_speculate): a later segment that begins as one of them
	 * did has that one's graphs built now. */
	gs_spec_slot_t spec[GS_SPEC_SLOTS];
	uint32_t nspec;
	/* The structure (shapes and length) of the last segment that ended
	 * with a record in it, learnable or not (0: none yet). */
	uint64_t prev;
	/* The sequence built so when this segment began (0: none): whether the
	 * guess was right is known when it ends (gs_thrift_guessed). */
	uint64_t guess;
	/* Period detection runs only in segments longer than
	 * GRAPHSHIM_PERIOD_AFTER (its tables are allocated then, and the
	 * segment's earlier records are fed from the history). */
	bool period_on;
	/* A periodic sequence was armed or began a match in it: no long cut
	 * (gs_learn_long) ends it, the period governs the stream. */
	bool periodic;
	/* It began at a boundary, or at a long cut of a segment that did: long
	 * cuts fall at the same places of every step only counted from one.  A
	 * stream's first segment is not (a stream that never synchronizes is
	 * never cut), nor one a cold stream woke into for period detection. */
	bool anchored;
	/* The sequence a STRUCTURE or CUT mismatch in this segment was charged
	 * to (0: none), settled when the segment ends (gs_seq_settle). */
	uint64_t owed;
} gs_segment_t;

/* A new segment begins at position pos; period detection anew, but for p NULL. */
static inline void gs_learn_begin(gs_segment_t *g, gs_period_t *p, uint64_t pos)
{
	g->start = pos;
	g->hash = 0;
	g->bad = false;
	g->marks = 0;
	g->matched = false;
	g->period_on = false;
	g->periodic = false;
	g->anchored = false;
	g->owed = 0;
	g->from_other = false;
	g->guess = 0;
	if (p)
		gs_period_reset(p);
}

/* Learning on every record kept at position at: the segment's hash, periods. */
void gs_learn_record(gs_stream_t *s, const gs_rec_t *r, uint64_t at);
/* After the record at the stream's last position: end the segment there,
 * without a boundary, if it reached GRAPHSHIM_MAX_SEQ records with nothing
 * held (a long cut).  Stream lock held. */
void gs_learn_long(gs_stream_t *s);
/* The end of a segment (a boundary): learn it, then start the next one. */
void gs_learn_end(gs_stream_t *s);
/* A segment begins with r: build the sequence of a segment one sighting
 * short of learning that began as r does and came after the segment that
 * just ended (or was it), if any. */
void gs_learn_speculate(gs_stream_t *s, const gs_rec_t *r);

#endif /* GS_LEARN_H */
