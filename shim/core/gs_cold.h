/*
 * Cold streams: a stream whose last GRAPHSHIM_COLD_AFTER segments did not
 * repeat keeps no records and passes its launches through, chaining a
 * structural key of each into its cold segment (gs_lane.h, in the
 * stream's first cache line).  A segment whose (hash, length) was seen
 * among the last cold ones warms the stream again, and so does a segment
 * beginning like an armed sequence (its first launch always takes the
 * full path).  See docs/how-it-works.md, "Cold streams".
 *
 * A stream whose armed sequences the gate all keeps eager goes cold too,
 * quietly (GRAPHSHIM_COLD_EAGER): matching a pass launch by launch only to
 * submit each launch as it comes costs the host more than the lane, and
 * tells nothing until the next re-check.  A quiet stream wakes when a
 * segment begins like an armed sequence the gate does not keep eager, or
 * after about as many launches as its sequences' passes until their next
 * re-check (which the gate then makes), or on a segment that repeats
 * and did not begin like one of the kept sequences (a step to learn);
 * not for period detection.
 *
 * With GRAPHSHIM_COLD_REPLAY, a stream whose steps replay between work
 * that never repeats (a training step after each batch's augmentation)
 * goes cold too: a segment that was a whole pass of an armed sequence
 * neither counts as new nor as a repeat, and a stream woken to replay one
 * goes cold again when that segment ends, unless it repeated a step still
 * to learn; a thrifty stream (gs_thrift.h) wakes at a cold segment's
 * second repeat.  See docs/how-it-works.md, "Cold between replayed steps".
 *
 * A repeat wakes the stream for the segments after it, which is where a
 * step that repeats back to back comes again.  A step that comes back
 * only after other work (a rollout's advantage pass every 64 environment
 * steps, between replayed steps cut by copies) finds the stream cold again
 * by then: the stream also remembers how the repeated segment began
 * (gs_cold_t.want), and wakes at the first launch of a later cold segment
 * that begins so, up to GRAPHSHIM_COLD_WANT times, for that segment alone
 * unless it repeats a step to learn.  See docs/how-it-works.md, "Cold
 * streams".
 */
#ifndef GS_COLD_H
#define GS_COLD_H

#include "gs_rec.h"

typedef struct gs_stream gs_stream_t;

/* Cold segments a cold stream remembers (a power of two). */
#define GS_COLD_IDS 64u

/* A stream's cold state besides its lane (gs_stream_t.cold). */
typedef struct gs_cold {
	uint32_t fresh;      /* segments in a row that did not repeat (warm) */
	uint32_t woken;      /* segments left since it woke that may have come while cold */
	uint64_t *ids;       /* GS_COLD_IDS recent cold segments, direct-mapped */
	uint8_t passes;      /* GS_COLD_PASS_*: the passes completed in the warm segment in progress */
	bool cut;            /* the cold segment in progress began at no boundary (a quiet stream's long one) */
	bool kept;           /* ... and began like a sequence the gate keeps eager */
	uint64_t quiet;      /* launches a quiet stream passes before it wakes (0: not quiet) */
	uint64_t quiet_used; /* ... passed so far */
	bool rewarm;         /* woke to replay an armed step (GRAPHSHIM_COLD_REPLAY): cold again after it */
	bool first_full;     /* the cold segment in progress began on the full path (first_shape) */
	uint8_t want_left;   /* wakes left at a segment that begins as want */
	uint64_t first_shape; /* ... its first launch's shape */
	uint64_t want;       /* the first shape of a cold segment that repeated (0: none) */
} gs_cold_t;

/* gs_cold_t.passes: a pass the gate keeps eager went, and another went. */
#define GS_COLD_PASS_KEPT 1u
#define GS_COLD_PASS_OTHER 2u

typedef struct gs_seq gs_seq_t;
/* A pass over q completed on s (eagerly or not).  Stream lock held. */
void gs_cold_passed(gs_stream_t *s, const gs_seq_t *q, bool eager);

/*
 * A launch of rec on s, which is cold; stream lock held.  True when it
 * was counted into the cold segment and passes through; false when it
 * woke the stream (it then takes the full path).
 */
bool gs_cold_launch(gs_stream_t *s, const gs_rec_t *rec);
/*
 * A warm segment of len records ended (`repeated`: some of it repeated;
 * `replayed`: it was a pass of an armed sequence, whole); s goes cold
 * after enough that did not.  Stream lock held.
 */
void gs_cold_ended(gs_stream_t *s, uint64_t len, bool repeated, bool replayed);
/* A stream reused for another handle: warm, nothing counted towards going cold.  Stream lock held. */
void gs_cold_reset(gs_stream_t *s);
/* The end of a cold segment: count it, and wake if it repeated.  Stream lock held. */
void gs_cold_end(gs_stream_t *s);

#endif /* GS_COLD_H */
