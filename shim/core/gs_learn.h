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
typedef struct gs_segment {
	uint64_t start;   /* the position of its first record */
	uint64_t hash;    /* its records' shapes, chained */
	bool bad;         /* overflowed, or held a failed launch: not learnable */
	uint32_t marks;   /* of its records, marks (event records and waits) */
	bool matched;     /* some launch of it was matched against an armed sequence */
	uint64_t t0;      /* when its first record arrived */
	const void *thread; /* the thread that issued its last launch */
	bool from_other;  /* it began where another thread's call cut the last one */
	/* The segment that just ended, when its sequence was one sighting short
	 * of learning: if the next segment begins the same way, its graphs are
	 * built now (gs_learn_speculate). */
	uint64_t last_id, last_start, last_host_ns;
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
/* A segment begins with r: build the last one's sequence if r may repeat it. */
void gs_learn_speculate(gs_stream_t *s, const gs_rec_t *r);

#endif /* GS_LEARN_H */
