/*
 * Cold streams: a stream whose last GRAPHSHIM_COLD_AFTER segments did not
 * repeat keeps no records and passes its launches through, chaining a
 * structural key of each into its cold segment (gs_lane.h, in the
 * stream's first cache line).  A segment whose (hash, length) was seen
 * among the last cold ones warms the stream again, and so does a segment
 * beginning like an armed sequence (its first launch always takes the
 * full path).  See docs/how-it-works.md, "Cold streams".
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
} gs_cold_t;

/*
 * A launch of rec on s, which is cold; stream lock held.  True when it
 * was counted into the cold segment and passes through; false when it
 * woke the stream (it then takes the full path).
 */
bool gs_cold_launch(gs_stream_t *s, const gs_rec_t *rec);
/*
 * A warm segment of len records ended (`repeated`: some of it repeated);
 * s goes cold after enough that did not.  Stream lock held.
 */
void gs_cold_ended(gs_stream_t *s, uint64_t len, bool repeated);
/* The end of a cold segment: count it, and wake if it repeated.  Stream lock held. */
void gs_cold_end(gs_stream_t *s);

#endif /* GS_COLD_H */
