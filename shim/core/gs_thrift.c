/* Thrift (gs_thrift.h): builds that are never replayed slow learning down. */
#include "gs_log.h"
#include "gs_stats.h"
#include "gs_stream.h"
#include "gs_thrift.h"

static void gs_thrift_move(gs_stream_t *s, int by)
{
	gs_thrift_t *t = &s->thrift;
	uint32_t on_at = (uint32_t)gs_config.thrift;
	if (!on_at)
		return;
	if (by < 0)
		t->score = t->score > (uint32_t)-by ? t->score - (uint32_t)-by : 0;
	else if (t->score < 2 * on_at)
		t->score += (uint32_t)by;
	if (!t->on && t->score >= on_at) {
		t->on = true;
		GS_STAT_INC(thrift_on);
		gs_log(GS_LOG_INFO, "stream %#llx: %u graph builds wasted more than paid: thrifty (no "
		       "speculation, %lld sightings to learn)", (unsigned long long)s->key.handle,
		       t->score, 2 * gs_config.learn_reps);
	} else if (t->on && 2 * t->score <= on_at) {
		t->on = false;
		gs_log(GS_LOG_INFO, "stream %#llx: builds pay again: no longer thrifty",
		       (unsigned long long)s->key.handle);
	}
}

void gs_thrift_armed(gs_seq_t *q)
{
	q->invest.base = q->replays;
	q->invest.open = true;
}

void gs_thrift_replayed(gs_stream_t *s, gs_seq_t *q)
{
	if (!q->invest.open || q->replays < q->invest.base + 2)
		return;
	q->invest.open = false;
	gs_thrift_move(s, -2);
}

void gs_thrift_dropped(gs_stream_t *s, gs_seq_t *q)
{
	if (!q->invest.open)
		return;
	q->invest.open = false;
	gs_thrift_move(s, 1);
}

void gs_thrift_guessed(gs_stream_t *s, gs_seq_t *q, bool hit)
{
	if (hit || !q->invest.open)
		return; /* a guess that repeated pays as any arming does */
	GS_STAT_INC(guesses_missed);
	gs_thrift_dropped(s, q);
}

void gs_thrift_reset(gs_stream_t *s)
{
	s->thrift.score = 0;
	s->thrift.on = false;
}

uint64_t gs_thrift_reps(const gs_stream_t *s)
{
	uint64_t reps = (uint64_t)gs_config.learn_reps;
	return s->thrift.on ? 2 * reps : reps;
}

bool gs_thrift_speculates(const gs_stream_t *s)
{
	return gs_config.speculate && !s->thrift.on;
}
