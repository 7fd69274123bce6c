/*
 * Replay: submitting what a match holds.  A chunk of the sole candidate
 * (or one that every candidate shares, gs_match.c) is revalidated byte by
 * byte, patched where its arguments drifted (while that costs less than
 * eager launches) and launched as its graph; records that cannot go as a
 * graph go eagerly, in order.  A backend failure sends the records eagerly
 * and retires the sequence.  The program's results never depend on the
 * graph.  Stream lock held throughout.
 */
#ifndef GS_REPLAY_H
#define GS_REPLAY_H

#include "gs_stats.h"
#include "gs_rec.h"

typedef struct gs_seq gs_seq_t;
typedef struct gs_stream gs_stream_t;

/* Submit held records [from, to) eagerly, in order (divergence, flush, drift). */
void gs_replay_release(gs_stream_t *s, uint32_t from, uint32_t to);
/*
 * A pass the gate sends eagerly: what is held of q goes now, as it came.
 * True when the pass is complete (q's last record went).
 */
bool gs_replay_eager(gs_stream_t *s, gs_seq_t *q);
/*
 * Submit chunk j of q over the held records it covers (its graph, patched,
 * or eagerly where it drifted or has none yet); `shared`: several
 * candidates still match (gs_match.c; for the trace).  True when the match
 * must end.
 */
bool gs_replay_chunk(gs_stream_t *s, gs_seq_t *q, uint32_t j, bool shared);
/* Submit every complete chunk of q not yet submitted; true when the match must end. */
bool gs_replay_ready(gs_stream_t *s, gs_seq_t *q);
/* q mismatched (why, at held position pos, record got or NULL): counted, traced, maybe retired. */
void gs_replay_mismatch(gs_stream_t *s, gs_seq_t *q, gs_mismatch_reason_t why, uint32_t pos,
			const gs_rec_t *got);

#endif /* GS_REPLAY_H */
