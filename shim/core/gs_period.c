/*
 * Period detection for streams that never reach a boundary (a decode loop
 * with no sync inside).  Each record's full hash (shape and argument bytes)
 * and shape are pushed; a candidate period comes from the last position
 * the same full hash was seen (a direct-mapped table, so a collision only
 * delays detection), and a run counts how many records in a row have the
 * shape of the one a period earlier, and how many of those equal it in
 * every byte.  Proposing the period by the full hash keeps the repeated
 * layers of a model (same kernels, different weights) from passing for the
 * period of the whole step; carrying the run by the shape lets a step
 * repeat whose few scalars change every time (a position, a sampler's
 * coefficients, a learning rate: without a boundary such a loop was never
 * learned), as long as nearly all of its records repeat exactly (all but
 * one, and one in GS_PERIOD_DRIFT more): layers, whose weights differ, do
 * not.  Replays patch what drifts, under the cost rule.
 */
#include "gs_period.h"

#include <stdlib.h>

bool gs_period_init(gs_period_t *p, uint32_t cap)
{
	memset(p, 0, sizeof(*p));
	uint32_t t = 16;
	while (t < 2 * cap)
		t <<= 1;
	p->sig = calloc(cap, sizeof(*p->sig));
	p->shp = calloc(cap, sizeof(*p->shp));
	p->tkey = calloc(t, sizeof(*p->tkey));
	p->tpos = calloc(t, sizeof(*p->tpos));
	if (!p->sig || !p->shp || !p->tkey || !p->tpos) {
		gs_period_free(p);
		return true;
	}
	p->cap = cap;
	p->tmask = t - 1;
	return false;
}

void gs_period_free(gs_period_t *p)
{
	free(p->sig);
	free(p->shp);
	free(p->tkey);
	free(p->tpos);
	memset(p, 0, sizeof(*p));
}

void gs_period_reset(gs_period_t *p)
{
	/* Positions keep counting; table entries older than base are stale,
	 * which makes a reset O(1) (streams that sync every step reset often). */
	p->per = p->run = p->same = p->fired = 0;
	p->base = p->pos;
}

uint32_t gs_period_push(gs_period_t *p, uint64_t hash, uint64_t shape, uint32_t min_len,
			uint32_t reps)
{
	if (!p->cap)
		return 0;
	uint64_t i = p->pos++;
	p->sig[i % p->cap] = hash;
	p->shp[i % p->cap] = shape;
	/* Records of the run (this one included) that differ in their operands
	 * from the one a period earlier: one, and one in GS_PERIOD_DRIFT more. */
	bool eq = p->per && i >= p->base + p->per && p->sig[(i - p->per) % p->cap] == hash;
	if (p->per && i >= p->base + p->per && p->shp[(i - p->per) % p->cap] == shape &&
	    p->run + 1 - (p->same + eq) <= 1 + (p->run + 1) / GS_PERIOD_DRIFT) {
		p->run++;
		p->same += eq;
	} else {
		uint32_t slot = (uint32_t)gs_mix64(hash) & p->tmask;
		p->per = 0;
		p->run = 0;
		p->same = 0;
		p->fired = 0;
		if (p->tkey[slot] == hash && p->tpos[slot] >= 1) {
			uint64_t j = p->tpos[slot] - 1; /* stored +1 so 0 means empty */
			if (j >= p->base && j < i && i - j < p->cap) {
				p->per = i - j;
				p->run = 1;
				p->same = 1;
			}
		}
	}
	uint32_t slot = (uint32_t)gs_mix64(hash) & p->tmask;
	p->tkey[slot] = hash;
	p->tpos[slot] = i + 1;

	if (!p->per || p->fired)
		return 0;
	uint64_t len = p->per * ((min_len + p->per - 1) / p->per);
	if (len >= p->cap)
		return 0;
	/* After `run` matches the last run + per records repeat with period per. */
	if (p->run + p->per >= len * reps) {
		p->fired = p->run;
		return (uint32_t)len;
	}
	return 0;
}
