/*
 * Events whose record a stream holds (gs_event.h): a small table under a
 * leaf lock, with a count of entries read without it.  Few records are
 * held at once (those of the chunk being matched on each stream), so a
 * linear table is enough and its size bounds the work of a check.
 */
#include "gs_event.h"
#include "gs_stream.h"

#include <pthread.h>
#include <string.h>

typedef struct gs_event_ent {
	uint64_t ev;
	gs_stream_t *s;
	uint32_t records; /* held records of ev by s */
	uint32_t waits;   /* held waits on ev by s */
	uint8_t spins;    /* queries answered "not ready" since ev's latest record or s's last progress */
	uint32_t qstamp;  /* s->match.stamp at the last query answered "not ready" */
	bool destroy;     /* the application destroyed ev (gs_event_destroy) */
} gs_event_ent_t;

static pthread_mutex_t gs_event_lock = PTHREAD_MUTEX_INITIALIZER;
static gs_event_ent_t gs_event_tab[GS_EVENT_MAX];
static uint32_t gs_event_n; /* entries in use, at the front (atomic reads) */

bool gs_event_any(void)
{
	return __atomic_load_n(&gs_event_n, __ATOMIC_ACQUIRE) != 0;
}

bool gs_event_hold(uint64_t ev, gs_stream_t *s, bool record)
{
	bool full = false;
	pthread_mutex_lock(&gs_event_lock);
	uint32_t i = 0;
	while (i < gs_event_n && (gs_event_tab[i].ev != ev || gs_event_tab[i].s != s))
		i++;
	if (i == gs_event_n && gs_event_n == GS_EVENT_MAX) {
		full = true;
	} else {
		if (i == gs_event_n) {
			gs_event_tab[i] = (gs_event_ent_t){.ev = ev, .s = s};
			__atomic_store_n(&gs_event_n, gs_event_n + 1, __ATOMIC_RELEASE);
		}
		if (record) {
			gs_event_tab[i].records++;
			gs_event_tab[i].spins = 0; /* a new record: its first query is to come */
		} else {
			gs_event_tab[i].waits++;
		}
	}
	pthread_mutex_unlock(&gs_event_lock);
	return full;
}

/* Whether an entry other than `but` names ev. */
static bool gs_event_named(uint64_t ev, uint32_t but)
{
	for (uint32_t k = 0; k < gs_event_n; k++)
		if (k != but && gs_event_tab[k].ev == ev)
			return true;
	return false;
}

bool gs_event_unhold(uint64_t ev, gs_stream_t *s, bool record)
{
	bool destroy = false;
	pthread_mutex_lock(&gs_event_lock);
	for (uint32_t i = 0; i < gs_event_n; i++) {
		gs_event_ent_t *e = &gs_event_tab[i];
		if (e->ev != ev || e->s != s || !(record ? e->records : e->waits))
			continue;
		if (record)
			e->records--;
		else
			e->waits--;
		if (!e->records && !e->waits) {
			destroy = e->destroy && !gs_event_named(ev, i);
			*e = gs_event_tab[gs_event_n - 1];
			__atomic_store_n(&gs_event_n, gs_event_n - 1, __ATOMIC_RELEASE);
		}
		break;
	}
	pthread_mutex_unlock(&gs_event_lock);
	return destroy;
}

bool gs_event_destroy(uint64_t ev)
{
	bool held = false;
	if (!gs_event_any())
		return false;
	pthread_mutex_lock(&gs_event_lock);
	for (uint32_t i = 0; i < gs_event_n; i++)
		if (gs_event_tab[i].ev == ev)
			held = gs_event_tab[i].destroy = true;
	pthread_mutex_unlock(&gs_event_lock);
	return held;
}

/*
 * A held record's queries: "not ready" while its holder goes on holding,
 * and for GS_NOT_READY_SPINS answers in a row without (gs_match_not_ready):
 * an allocator polls at every allocation, and allocations come back to
 * back.
 */
bool gs_event_first_query(uint64_t ev)
{
	bool first = false;
	if (!gs_event_any())
		return false;
	pthread_mutex_lock(&gs_event_lock);
	for (uint32_t i = 0; i < gs_event_n; i++) {
		gs_event_ent_t *e = &gs_event_tab[i];
		if (e->ev != ev || !e->records)
			continue;
		first = gs_match_not_ready(&e->s->match, &e->qstamp, &e->spins);
		break;
	}
	pthread_mutex_unlock(&gs_event_lock);
	return first;
}

size_t gs_event_holders(uint64_t ev, gs_stream_t **out, size_t max)
{
	size_t n = 0;
	if (!gs_event_any())
		return 0;
	pthread_mutex_lock(&gs_event_lock);
	for (uint32_t i = 0; i < gs_event_n && n < max; i++) {
		if (ev && gs_event_tab[i].ev != ev)
			continue;
		size_t k = 0;
		while (k < n && out[k] != gs_event_tab[i].s)
			k++;
		if (k == n)
			out[n++] = gs_event_tab[i].s;
	}
	pthread_mutex_unlock(&gs_event_lock);
	return n;
}

/*
 * Who recorded each event last, and whether it crossed streams: an
 * open-addressed table keyed by event, an entry taken lock-free at an
 * event's first record or wait and kept (the driver hands handles out
 * again, so few distinct ones come).  Exact: direct-mapped by handle, two
 * events in one slot hid each other, and by their addresses that happened
 * in some runs and not others (fwstep --side-streams 12 --fresh-events
 * under GRAPHSHIM_ABSORB=1, adopting off: 8% replayed about one run in 200,
 * 60% otherwise, as the fork's record went uncut).  An event that finds no
 * room in GS_EVENT_PROBES slots takes its first slot over, as the direct
 * map did: an entry lost that way only moves a cut.
 */
#define GS_EVENT_SEEN 1024u
#define GS_EVENT_PROBES 16u

static uint64_t gs_event_seen_ev[GS_EVENT_SEEN];
static const gs_stream_t *gs_event_rec_by[GS_EVENT_SEEN];
static bool gs_event_cross[GS_EVENT_SEEN];

/* ev's slot; `make`: entered if absent.  GS_EVENT_SEEN: not there. */
static uint32_t gs_event_slot(uint64_t ev, bool make)
{
	uint32_t home = (uint32_t)((ev * 0x9e3779b97f4a7c15ULL) >> 54) & (GS_EVENT_SEEN - 1);
	uint32_t i = gs_probe_slot(gs_event_seen_ev, GS_EVENT_SEEN, home, GS_EVENT_PROBES, ev, make);
	if (i < GS_EVENT_SEEN || !make)
		return i;
	__atomic_store_n(&gs_event_rec_by[home], NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&gs_event_cross[home], false, __ATOMIC_RELAXED);
	__atomic_store_n(&gs_event_seen_ev[home], ev, __ATOMIC_RELEASE);
	return home;
}

void gs_event_recorded(uint64_t ev, const gs_stream_t *s)
{
	uint32_t i = ev ? gs_event_slot(ev, true) : GS_EVENT_SEEN;
	if (i < GS_EVENT_SEEN)
		__atomic_store_n(&gs_event_rec_by[i], s, __ATOMIC_RELAXED);
}

void gs_event_waited(uint64_t ev, const gs_stream_t *s)
{
	uint32_t i = ev ? gs_event_slot(ev, false) : GS_EVENT_SEEN;
	if (i == GS_EVENT_SEEN)
		return;
	const gs_stream_t *by = __atomic_load_n(&gs_event_rec_by[i], __ATOMIC_RELAXED);
	if (by == s) {
		/* The stream waits on its own record: no longer crossing (an
		 * adopted side stream's join, recorded and waited on by its root). */
		if (__atomic_load_n(&gs_event_cross[i], __ATOMIC_RELAXED))
			__atomic_store_n(&gs_event_cross[i], false, __ATOMIC_RELAXED);
	} else if (by && !__atomic_load_n(&gs_event_cross[i], __ATOMIC_RELAXED)) {
		__atomic_store_n(&gs_event_cross[i], true, __ATOMIC_RELAXED);
	}
}

const gs_stream_t *gs_event_recorder(uint64_t ev)
{
	uint32_t i = ev ? gs_event_slot(ev, false) : GS_EVENT_SEEN;
	return i < GS_EVENT_SEEN ? __atomic_load_n(&gs_event_rec_by[i], __ATOMIC_RELAXED) : NULL;
}

bool gs_event_crosses(uint64_t ev)
{
	uint32_t i = ev ? gs_event_slot(ev, false) : GS_EVENT_SEEN;
	return i < GS_EVENT_SEEN && __atomic_load_n(&gs_event_cross[i], __ATOMIC_RELAXED);
}

static uint64_t gs_event_shared_ev[GS_EVENT_SHARED_MAX];
static uint32_t gs_event_nshared; /* entries in use; GS_EVENT_SHARED_MAX + 1: the table overflowed */

void gs_event_share(uint64_t ev)
{
	pthread_mutex_lock(&gs_event_lock);
	if (!gs_event_shared(ev)) {
		/* Past the table, the count alone says every event is shared. */
		uint32_t n = gs_event_nshared;
		if (n < GS_EVENT_SHARED_MAX)
			__atomic_store_n(&gs_event_shared_ev[n], ev, __ATOMIC_RELAXED);
		__atomic_store_n(&gs_event_nshared, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&gs_event_lock);
}

bool gs_event_shared(uint64_t ev)
{
	uint32_t n = __atomic_load_n(&gs_event_nshared, __ATOMIC_ACQUIRE);
	if (GS_LIKELY(!n))
		return false;
	if (n > GS_EVENT_SHARED_MAX)
		return true;
	for (uint32_t i = 0; i < n; i++)
		if (__atomic_load_n(&gs_event_shared_ev[i], __ATOMIC_RELAXED) == ev)
			return true;
	return false;
}

void gs_event_reset(bool child)
{
	memset(gs_event_seen_ev, 0, sizeof(gs_event_seen_ev));
	memset(gs_event_rec_by, 0, sizeof(gs_event_rec_by));
	memset(gs_event_cross, 0, sizeof(gs_event_cross));
	memset(gs_event_shared_ev, 0, sizeof(gs_event_shared_ev));
	__atomic_store_n(&gs_event_nshared, 0, __ATOMIC_RELEASE);
	if (child) {
		pthread_mutex_init(&gs_event_lock, NULL); /* its holder may be a parent's thread */
		gs_event_n = 0;
		return;
	}
	pthread_mutex_lock(&gs_event_lock);
	__atomic_store_n(&gs_event_n, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&gs_event_lock);
}
