/*
 * Events whose record, or a wait on which, a stream holds.  Inside a
 * replayed chunk an event record is submitted after the chunk's graph
 * (gs_replay.c, "absorbed marks"), so from the application's call until
 * then the event does not yet carry that record; a wait goes before the
 * graph, and must go before the event is recorded again.  Whatever would
 * observe or change it meanwhile (a query, another stream's wait or
 * record, elapsed time, destroying it, an application graph) first has
 * the holding stream submit what it holds
 * (gs_engine_event_use).  The table is exact: a record is held only if it
 * was entered here; when the table is full it is submitted at its call.
 * The table's lock is a leaf: no stream lock is taken while it is held.
 */
#ifndef GS_EVENT_H
#define GS_EVENT_H

#include "gs_common.h"

typedef struct gs_stream gs_stream_t;

/* Records held at once, at most: past it a record goes at its call. */
#define GS_EVENT_MAX 128

/*
 * Enter event ev as held by s (again, if it is already); true when the table
 * is full.  `record`: s holds a record of ev.  Otherwise s holds a wait on
 * ev, which must reach the driver before any later record of ev does (the
 * wait names the record before it, not a later one): a record of ev by
 * another stream has s submit first, as for a held record; a query is not
 * answered for it (the event's state is its last record's, held by nobody).
 */
bool gs_event_hold(uint64_t ev, gs_stream_t *s, bool record);
/*
 * s's held record (`record`) or wait on ev went to the driver.  True when
 * that was the last held use of ev and the application has destroyed it
 * meanwhile (gs_event_destroy): the caller destroys it now.
 */
bool gs_event_unhold(uint64_t ev, gs_stream_t *s, bool record);
/*
 * The application destroys ev.  True when a stream holds a record of it or
 * a wait on it: the destruction is deferred until the last of them goes to
 * the driver (gs_event_unhold says when), as the driver itself defers
 * releasing an event whose record is still to complete.  Until then the
 * handle cannot be handed out again, so no new event is taken for it.
 */
bool gs_event_destroy(uint64_t ev);
/*
 * A query of ev finds a record of it held, and one of the first few since
 * it was held or since its holder last held another record: the answer is
 * "not ready", which is the truth (the work before the record is not even
 * submitted), and nothing need be submitted for it.  The holder's chunk,
 * at most GRAPHSHIM_CHUNK_MAX records, ends after a bounded number of
 * them, so that answer cannot go on for ever.  Past those few queries
 * with no progress (a program spinning on it), the caller submits first.
 */
bool gs_event_first_query(uint64_t ev);
/* Up to max distinct streams holding a record of or a wait on ev (any event: ev 0;
 * GS_EVENT_MAX covers them all); returns how many. */
size_t gs_event_holders(uint64_t ev, gs_stream_t **out, size_t max);
/* Whether any record is held (one relaxed load: the fast path of every check). */
bool gs_event_any(void);
/*
 * Events that cross streams: recorded on one stream, waited on by another.
 * A sequence armed with a record of such an event has its chunk cut there
 * (gs_arm.c): the other stream's wait would find it held and make the
 * whole chunk go eagerly.  Exact and lock-free, an entry an event's for
 * good (gs_event.c); an entry lost when the table is crowded only moves a
 * cut, never the order.
 */
/* Stream s recorded ev (a mark). */
void gs_event_recorded(uint64_t ev, const gs_stream_t *s);
/* Stream s waits on ev: ev crosses streams when another stream recorded it
 * last, and no longer when s itself did. */
void gs_event_waited(uint64_t ev, const gs_stream_t *s);
/* Whether ev has been seen crossing streams. */
bool gs_event_crosses(uint64_t ev);
/* The stream that last recorded ev, as far as the table of records knows
 * (a hint: another thread may be recording it); NULL. */
const gs_stream_t *gs_event_recorder(uint64_t ev);

/*
 * Events shared with another process (cuIpcGetEventHandle): that process
 * waits on or queries them where this one cannot see, so a record of or a
 * wait on one is never held (gs_match_defer) and cuts its chunk (gs_arm.c).
 * Exact for the first GS_EVENT_SHARED_MAX; past them every event counts as
 * shared (nothing is absorbed any more: slower, never wrong).
 */
#define GS_EVENT_SHARED_MAX 64
void gs_event_share(uint64_t ev);
bool gs_event_shared(uint64_t ev);

/* Forget every entry (the end of the engine; `child`: in a forked child, where the lock may be taken). */
void gs_event_reset(bool child);

#endif /* GS_EVENT_H */
