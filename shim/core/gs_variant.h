/*
 * Variants: more graphs of one chunk of an armed sequence, each baked from
 * other operands.  Frameworks hand a step's buffers out from a few
 * addresses in rotation (a caching allocator), and repeat one structure
 * with other weights (a transformer's layers, learned as one sequence met
 * once per layer): every pass then needs most of a chunk's nodes patched,
 * although its operands are among a few sets seen before.  A chunk keeps
 * up to GRAPHSHIM_VARIANTS graphs; each pass replays the one that differs
 * least from what the program issued (exactly, when the set recurs) and
 * patches the rest.  A new variant is built, on the background builder,
 * from a pass whose operands resemble an earlier pass more than any graph
 * the chunk has: a recurring set, not drift that never comes back (a
 * position that grows, buffers moved every step), where building would
 * only cost.  Stream lock held throughout.
 */
#ifndef GS_VARIANT_H
#define GS_VARIANT_H

#include "gs_rec.h"

typedef struct gs_seq gs_seq_t;
typedef struct gs_stream gs_stream_t;

/* The graph a chunk's pass replays, and the records it has baked. */
typedef struct gs_variant_pick {
	void *graph;
	gs_rec_t **recs; /* recs[k]: the chunk's record k as this graph has it */
	gs_seq_t *var;   /* the variant, or NULL: the sequence's own graph */
	uint32_t ndiff;  /* records that differ (listed in the match's diffs) */
} gs_variant_pick_t;

/*
 * Choose the graph for chunk j of q (records [b, e)) against the held
 * records, which start at s's held_start: the one with the fewest records
 * whose operand hashes differ.  Its records that differ, compared byte by
 * byte, are listed in s->match.diffs as sequence positions.
 */
void gs_variant_pick(gs_stream_t *s, gs_seq_t *q, uint32_t j, uint32_t b, uint32_t e,
		     gs_variant_pick_t *out);
/*
 * The fewest records of chunk j of q (records [b, e)) whose operand hashes
 * differ from the held ones', over its graph and its variants, counted up
 * to `stop`: an estimate of the patches (equal hashes are not confirmed
 * byte by byte, as gs_variant_pick does for the graph it picks), to choose
 * among graphs.  Picks nothing (gs_variant_pick's order is left as it is).
 */
uint32_t gs_variant_fit(const gs_stream_t *s, gs_seq_t *q, uint32_t j, uint32_t b, uint32_t e,
			uint32_t stop);
/* The pick was replayed: remember the pass, and maybe build a new variant from it. */
void gs_variant_passed(gs_stream_t *s, gs_seq_t *q, uint32_t j, uint32_t b, uint32_t e,
		       const gs_variant_pick_t *pick);
/* Attach what the builder finished for s (gs_arm_publish). */
void gs_variant_publish(gs_stream_t *s);
/* Release q's variants (their graphs too, with `graphs`), cancel those being built. */
void gs_variant_release(gs_seq_t *q, bool graphs);

#endif /* GS_VARIANT_H */
