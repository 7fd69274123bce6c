/*
 * Thrift: a stream whose learning keeps paying for graphs that are never
 * replayed learns more slowly.
 *
 * Every arming of a sequence is an investment: its graphs are built and
 * instantiated on the builder thread, which competes with the program for
 * the driver (augment-sample on an H200: 443 graphs built in a 38-step
 * run, 219 ms of building, 14 sequences replayed).  An investment pays at
 * its second replay; it is wasted when a speculative build's guess does
 * not repeat, or when the sequence is retired or evicted before it paid.
 * Each stream keeps a score, wasted investments less twice those that
 * paid (from 0 to twice GRAPHSHIM_THRIFT); from GRAPHSHIM_THRIFT on, the
 * stream is thrifty until the score falls to half of it: it speculates no
 * more, and a sequence needs twice GRAPHSHIM_LEARN_REPS sightings to be
 * armed.  What it learns and replays is unchanged otherwise, and so is
 * what every launch does: thrift moves only when graphs are built.  See
 * docs/how-it-works.md, "Thrift".
 */
#ifndef GS_THRIFT_H
#define GS_THRIFT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gs_stream gs_stream_t;
typedef struct gs_seq gs_seq_t;

/* A stream's thrift (gs_stream_t.thrift). */
typedef struct gs_thrift {
	uint32_t score; /* wasted investments, less twice those that paid */
	bool on;        /* thrifty: no speculation, twice the sightings to arm */
} gs_thrift_t;

/* An investment's state in its sequence (gs_seq_t.invest). */
typedef struct gs_invest {
	uint64_t base;   /* the sequence's replays when it was armed */
	bool open;       /* armed, not yet judged */
} gs_invest_t;

/* q was armed (its graphs go to be built). */
void gs_thrift_armed(gs_seq_t *q);
/* q replayed a pass on s: at its investment's second replay, it paid. */
void gs_thrift_replayed(gs_stream_t *s, gs_seq_t *q);
/* q leaves the cache, or retires: an open investment was wasted. */
void gs_thrift_dropped(gs_stream_t *s, gs_seq_t *q);
/* The segment after a speculative build of q ended: `hit` if it was q. */
void gs_thrift_guessed(gs_stream_t *s, gs_seq_t *q, bool hit);
/* A stream reused for another handle: its thrift starts anew. */
void gs_thrift_reset(gs_stream_t *s);

/* Sightings that arm a sequence on s. */
uint64_t gs_thrift_reps(const gs_stream_t *s);
/* Whether s builds a step's graphs a sighting early (GRAPHSHIM_SPECULATE). */
bool gs_thrift_speculates(const gs_stream_t *s);

#endif
