/*
 * Period detection over the records of a stream that does not reach a
 * boundary: their full hashes (shape and argument bytes) propose a period,
 * their shapes carry a run, in which a few records may drift.  O(1) a
 * record.
 */
#ifndef GS_PERIOD_H
#define GS_PERIOD_H

#include "gs_common.h"

typedef struct gs_period {
	uint64_t *sig;   /* ring of the last `cap` full hashes */
	uint64_t *shp;   /* ... and of their shapes */
	uint64_t *tkey;  /* direct-mapped table: hash -> last absolute position */
	uint64_t *tpos;
	uint32_t cap;
	uint32_t tmask;
	uint64_t pos;    /* records pushed in all */
	uint64_t base;   /* pos at the last reset: older history does not count */
	uint64_t per;    /* candidate period, 0 when none */
	uint64_t run;    /* consecutive records of the shape of the one `per` earlier */
	uint64_t same;   /* ... of which equal to it in every byte */
	uint64_t fired;  /* run length at which the current period was reported */
} gs_period_t;

/* Allocate the tables for a history of cap records; true on failure. */
bool gs_period_init(gs_period_t *p, uint32_t cap);
void gs_period_free(gs_period_t *p);
/* Forget what was pushed (O(1)). */
void gs_period_reset(gs_period_t *p);
/*
 * Push the next record's full hash and shape.  Returns the length L of a
 * sequence that the last L*reps records repeat (L a multiple of the period,
 * at least min_len, below cap; every record of the shape of the one a
 * period earlier, and at most one more than one in GS_PERIOD_DRIFT of them
 * differing from it in its operands), once per periodic run; 0 otherwise.
 */
uint32_t gs_period_push(gs_period_t *p, uint64_t hash, uint64_t shape, uint32_t min_len,
			uint32_t reps);

/* A periodic run may have one record, and one in this many more, that
 * differ from the one a period earlier in their operands (a position, a
 * step's coefficient). */
#define GS_PERIOD_DRIFT 3

#endif /* GS_PERIOD_H */
