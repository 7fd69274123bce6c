/*
 * The engine's entry points (gs_engine.h): the launch path, flushes,
 * forgetting streams and modules, the application's captures, and the
 * process lifecycle (init, exit, fork, termination signals).  What they do is in the modules
 * they call: streams (gs_stream.c), cold streams (gs_cold.c), matching
 * (gs_match.c), replay (gs_replay.c), learning (gs_learn.c), arming
 * (gs_arm.c), the builder (gs_build.c).  docs/architecture.md draws them.
 *
 * Locking (gs_stream.h): the table lock, then at most one stream lock.
 * Backend ops are called with the stream lock held; they call the vendor
 * directly and never come back in.
 */
#include "gs_arm.h"
#include "gs_backend.h"
#include "gs_submit.h"
#include "gs_build.h"
#include "gs_clock.h"
#include "gs_engine.h"
#include "gs_event.h"
#include "gs_fmt.h"
#include "gs_gate.h"
#include "gs_idle.h"
#include "gs_log.h"
#include "gs_out.h"
#include "gs_self.h"
#include "gs_sig.h"
#include "gs_stream.h"
#include "gs_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Whether this process made a GPU call, for the files at exit: a launch,
 * copy or memset reached the engine (gs_stats.launches, .kernels), or an
 * operation that orders or waits for GPU work did (a flush, noted here).
 * Allocations, queries, module loads and contexts alone are not GPU work:
 * a process that made none of the above (a helper that only looked at the
 * devices) writes no statistics and no trace, and says nothing.
 */
static bool gs_engine_flushed;

static void gs_engine_note_flush(void)
{
	if (GS_UNLIKELY(!__atomic_load_n(&gs_engine_flushed, __ATOMIC_RELAXED)))
		__atomic_store_n(&gs_engine_flushed, true, __ATOMIC_RELAXED);
}

static bool gs_engine_used(void)
{
	return __atomic_load_n(&gs_stats.launches, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&gs_stats.kernels, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&gs_engine_flushed, __ATOMIC_RELAXED);
}

bool gs_engine_active(void)
{
	return __atomic_load_n(&gs_hot.active, __ATOMIC_ACQUIRE);
}

/* ---- flushes -------------------------------------------------------------- */

/* For a flush's trace event, the last record s holds (where its program was); NULL with no trace. */
static const gs_rec_t *gs_engine_last_held(const gs_stream_t *s)
{
	if (!gs_trace_on || !s->match.nheld)
		return NULL;
	return gs_stream_at(s, s->match.held_start + s->match.nheld - 1);
}

/*
 * Submit what the stream holds and end its segment; lock held.  `own` says
 * the flush comes from an operation on this stream: a match it cuts is then
 * a mismatch of the sequence.  A flush from elsewhere (every stream's, the
 * legacy stream's peers) interrupts the match without charging it, so
 * another thread's syncs cannot retire this stream's sequences.
 */
static void gs_engine_flush_locked(gs_stream_t *s, gs_flush_reason_t why, const char *api, bool own)
{
	if (gs_trace_on && s->pos > s->seg.start)
		gs_trace_segment(s->key.handle, s->pos - s->seg.start, s->seg.marks, why, api);
	if (s->match.nheld || s->match.ncands) {
		GS_STAT_INC(flushes);
		GS_STAT_INC(flush_by[why]);
		gs_trace_flush(s->key.handle, why, api, s->match.nheld, gs_engine_last_held(s));
		gs_match_end(s, GS_MISMATCH_CUT, NULL, own);
	}
	gs_learn_end(s);
}

/*
 * A stream's lock on the application's paths, with a terminating signal
 * held off meanwhile (gs_sig_hold): its handler then reads every stream.
 */
static inline void gs_engine_lock(gs_stream_t *s)
{
	gs_sig_hold();
	gs_self_lock(&s->lock);
}

static inline void gs_engine_unlock(gs_stream_t *s)
{
	pthread_mutex_unlock(&s->lock);
	gs_sig_release();
}

/*
 * Another thread's synchronization (of every stream, or of this one: a
 * monitor polling a worker's stream), query of this stream, synchronous
 * copy, or operation on the legacy stream (tied to blocking streams) needs
 * this stream's held work submitted first.  Such calls fall anywhere in
 * this stream's step: ending the match there cut the step at random places
 * (decode with two threads, each reading back with cuMemcpyDtoH, on an
 * H100: 294 sequences of 14-183 launches learned from the pieces, a
 * quarter of the launches not replayed).  So where one sequence is being
 * matched, the held launches go eagerly and the match, and the step's
 * segment, go on (gs_match_interrupt); where what the match held has all
 * gone already, with any number of candidates, there is nothing to submit
 * and it goes on as it was (gs_engine_interrupt_held).  Where the stream
 * holds nothing, its segment goes on too: the step is learned whole, not
 * from the pieces another thread's calls happened to cut.  The stream's
 * own thread's calls, and other reasons (a module unloaded, a capture,
 * exit), end both, as any boundary.
 */
/* Whether s's segment is another thread's than the caller's (lock held). */
static inline bool gs_engine_elsewhere(const gs_stream_t *s)
{
	return s->seg.thread && s->seg.thread != gs_stream_thread();
}

static bool gs_engine_interrupts(gs_flush_reason_t why)
{
	return why == GS_FLUSH_LEGACY || why == GS_FLUSH_SYNC || why == GS_FLUSH_COPY ||
	       why == GS_FLUSH_QUERY;
}

/*
 * Lock held, a call from elsewhere that needs s's held work submitted:
 * true when the match goes on (what it held is submitted, or had all gone
 * already), false when the caller must end it.  Everything held already
 * went (a pass the gate sends eagerly, a chunk just launched): the call
 * needs nothing, and the match goes on uncounted.  Whether the pass keeps
 * its timing is what keeps the gate's two kinds of sample alike: a
 * replayed pass that a synchronization falls in is interrupted and not
 * timed, so neither is an eager one; but a replayed pass that a query
 * falls in is answered "not ready" and timed, so an eager one is too
 * (where the idle watchdog runs: without it the query is not answered,
 * gs_engine_stream_query).
 * Until the forty-seventh session every such pass was interrupted and
 * its timing dropped: under a monitor polling every 2 ms, eager passes
 * were dropped whenever polled and replayed ones kept, so the eager
 * samples left were the short passes, and a replay 1.1-1.3x faster timed
 * 0.59x (threads-monitor on an H200: one worker's step eager, 0.54 of its
 * steady state replayed).  (The idle watchdog and an event's users,
 * gs_engine_held_go, come here only for work not yet submitted.)
 */
static bool gs_engine_interrupt_held(gs_stream_t *s, gs_flush_reason_t why, const char *api)
{
	uint32_t n = s->match.nheld - s->match.submitted;
	if (!n) {
		if (why != GS_FLUSH_QUERY || !gs_idle_running())
			gs_gate_abandon(s);
		return true;
	}
	if (!gs_match_interrupt(s))
		return false;
	GS_STAT_INC(flushes);
	GS_STAT_INC(flush_by[why]);
	gs_trace_flush(s->key.handle, why, api, n, gs_engine_last_held(s));
	return true;
}

/*
 * Lock held, a flush from elsewhere: true when it leaves the stream's match
 * and segment going (nothing held, everything held gone already, or a
 * match of one sequence interrupted: gs_engine_interrupt_held); false when
 * the caller must end them.
 */
static bool gs_engine_outlived(gs_stream_t *s, gs_flush_reason_t why, const char *api)
{
	if (!gs_engine_interrupts(why) || !gs_engine_elsewhere(s))
		return false;
	if (!s->match.nheld)
		return !s->match.ncands; /* nothing to submit, no segment to end */
	return gs_engine_interrupt_held(s, why, api);
}

static void gs_engine_flush_one(gs_stream_t *s, gs_flush_reason_t why, const char *api, bool own)
{
	gs_engine_lock(s);
	if (__atomic_load_n(&s->cache.built, __ATOMIC_ACQUIRE))
		gs_arm_publish(s);
	if (own && gs_engine_elsewhere(s))
		own = false; /* another thread's call on this stream: gs_engine_interrupts */
	if (own || !gs_engine_outlived(s, why, api))
		gs_engine_flush_locked(s, why, api, own);
	gs_engine_unlock(s);
}

/*
 * The legacy default stream waits for all blocking streams of its context,
 * and blocking streams wait for it.  Before work on one side is submitted
 * (or held behind work that will be), held work on the other side must go.
 * The table lock is held across the flushes: the only lock order in the
 * engine is table, then stream.
 */
static void gs_engine_flush_peers(gs_stream_t *self, void *ctx, unsigned flags, const char *api)
{
	if (!gs_hot_held_tied(flags))
		return;
	gs_stream_table_lock();
	for (gs_stream_t *s = gs_stream_first(); s; s = s->hh.next) {
		if (s == self || s->key.ctx != ctx || !__atomic_load_n(&s->match.nheld, __ATOMIC_ACQUIRE))
			continue;
		bool tied = (flags & GS_STREAM_LEGACY) ? (s->lane.flags & GS_STREAM_BLOCKING) != 0
						       : (s->lane.flags & GS_STREAM_LEGACY) != 0;
		if (tied) {
			gs_self_did(GS_SELF_DID_PEERS);
			gs_engine_flush_one(s, GS_FLUSH_LEGACY, api, false);
		}
	}
	gs_stream_table_unlock();
}

void gs_engine_flush_stream(uintptr_t handle, void *ctx, unsigned sflags, gs_flush_reason_t why,
			    const char *api)
{
	if (gs_engine_active()) {
		gs_engine_note_flush();
		gs_stream_t *s = gs_stream_get(handle, ctx, sflags);
		gs_engine_flush_peers(s, ctx, s ? s->lane.flags : sflags, api);
		if (s)
			gs_engine_flush_one(s, why, api, true);
	}
	gs_submit_drain(); /* what was posted, the flush's too, before the caller's call */
}

/*
 * What a synchronization of one stream waits for: that stream's work, which
 * holds whatever its waits on events made it wait for (the work before a
 * held record goes when a wait on it is made: gs_event.h), and, for the
 * legacy stream and blocking streams, the other side's (their ties,
 * gs_engine_flush_peers).  Nothing another stream holds can be part of it,
 * nor can the host count on that work having run once the call returns:
 * the work was not the synchronized stream's.  Flushing every stream at
 * each synchronization, as it was, made every thread's read-back cut the
 * other threads' steps at random places (torch_threads.py: two workers of
 * a decode server, each on its own stream reading back a token, replayed
 * 0.80 of their steady state on an H200, four 0.36, both slower than
 * eager).  A stream's state is keyed by its context as well, and the
 * context current to the calling thread need not be the stream's: every
 * state of an ordinary handle is flushed (at most GS_SYNCED_CTXS other
 * contexts; past that, as rare as it is, every stream).
 *
 * The calling thread's other streams still end their segments here, as
 * they did: a side stream that never synchronizes itself (a copy stream
 * prefetching the next batch, a tower of a two-tower model) has no other
 * boundary, and learned its step from them (train-prefetch and twotower
 * replayed 0.978 and 0.982 of their steady state without, 1.000 with).
 * What is left held can still be needed: a kernel of the synchronized
 * stream may spin on memory that another thread's stream's held work
 * writes.  The idle watchdog submits that work while the call waits (no
 * call comes meanwhile: gs_idle.h); with no watchdog
 * (GRAPHSHIM_IDLE_US=0), every stream goes first, as it did.
 */
#define GS_SYNCED_CTXS 8

/* Under the table lock: s, when the calling thread made its segment. */
static void gs_engine_flush_mine(gs_stream_t *s, gs_flush_reason_t why, const char *api)
{
	gs_engine_lock(s);
	if (s->seg.thread == gs_stream_thread()) {
		if (__atomic_load_n(&s->cache.built, __ATOMIC_ACQUIRE))
			gs_arm_publish(s);
		gs_engine_flush_locked(s, why, api, false);
	}
	gs_engine_unlock(s);
}

/* Every stream whose segment the calling thread made ends it (gs_engine_flush_mine). */
static void gs_engine_flush_mine_all(gs_flush_reason_t why, const char *api)
{
	gs_stream_table_lock();
	for (gs_stream_t *s = gs_stream_first(); s; s = s->hh.next)
		gs_engine_flush_mine(s, why, api);
	gs_stream_table_unlock();
}

/* Held work and no watchdog to release it while the host waits: every stream goes (true). */
static bool gs_engine_wait_flushes_all(gs_flush_reason_t why, const char *api)
{
	if (!__atomic_load_n(&gs_hot.held_streams, __ATOMIC_RELAXED) || gs_idle_running())
		return false;
	gs_engine_flush_all(why, api);
	return true;
}

void gs_engine_flush_synced(uintptr_t handle, void *ctx, unsigned sflags, gs_flush_reason_t why,
			    const char *api)
{
	if (!gs_engine_active()) {
		gs_submit_drain();
		return;
	}
	if (gs_engine_wait_flushes_all(why, api))
		return;
	bool ordinary = !(sflags & (GS_STREAM_LEGACY | GS_STREAM_PASSTHRU));
	void *other[GS_SYNCED_CTXS];
	unsigned n = 0;
	bool more = false;
	gs_stream_table_lock();
	for (gs_stream_t *s = gs_stream_first(); s; s = s->hh.next) {
		if (s->key.handle != handle || (!ordinary && s->key.ctx != ctx)) {
			gs_engine_flush_mine(s, why, api); /* (another context's legacy stream too) */
		} else if (s->key.ctx != ctx) {
			if (n < GS_SYNCED_CTXS)
				other[n++] = s->key.ctx;
			else
				more = true;
		}
	}
	gs_stream_table_unlock();
	if (more) {
		gs_engine_flush_all(why, api);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		gs_engine_flush_stream(handle, other[i], sflags, why, api);
	gs_engine_flush_stream(handle, ctx, sflags, why, api);
}

/*
 * A monitor thread that polls the workers' streams (a health check, a load
 * report) falls anywhere in their steps.  Submitting what the polled stream
 * held there, so that the driver could answer, sent the rest of that chunk
 * eagerly at every poll: a thread-pool decode server polled every 2 ms
 * (torch_threads.py --monitor 2) replayed about half of its steady state
 * and ran 0.8x of eager on an H200.  Work held and not submitted is not
 * complete: "not ready" is the answer the driver would give once it had
 * it, and the worker's pass goes on whole.  Only another thread's query:
 * a stream's own thread polling it waits for the answer (threads-query).
 * The calling thread's own streams end their segments as at any query
 * (gs_engine_flush_synced): its held work may be what the polled stream's
 * kernels spin on.  Without the idle watchdog, the query flushes every
 * stream as before (gs_engine_wait_flushes_all): nothing else would send
 * what the polled stream's work could be waiting for.
 */
bool gs_engine_stream_query(uintptr_t handle, void *ctx, unsigned sflags, const char *api)
{
	if (gs_engine_active() && !(sflags & GS_STREAM_PASSTHRU) &&
	    __atomic_load_n(&gs_hot.held_streams, __ATOMIC_RELAXED) && gs_idle_running()) {
		gs_stream_t *s = gs_stream_get(handle, ctx, sflags);
		bool busy = false;
		if (s) {
			gs_engine_lock(s);
			busy = gs_engine_elsewhere(s) && s->match.nheld > s->match.submitted &&
			       gs_match_not_ready(&s->match, &s->qstamp, &s->qspins);
			gs_engine_unlock(s);
		}
		if (busy) {
			GS_STAT_INC(query_not_ready);
			gs_engine_flush_mine_all(GS_FLUSH_QUERY, api);
			gs_submit_drain();
			return true;
		}
	}
	gs_engine_flush_synced(handle, ctx, sflags, GS_FLUSH_QUERY, api);
	return false;
}

void gs_engine_stream_absorb(uintptr_t handle, void *ctx, unsigned sflags)
{
	if (!gs_engine_active() || (sflags & GS_STREAM_PASSTHRU))
		return;
	gs_stream_t *s = gs_stream_get(handle, ctx, sflags);
	if (s)
		__atomic_store_n(&s->absorbs, true, __ATOMIC_RELAXED);
}

void gs_engine_flush_all(gs_flush_reason_t why, const char *api)
{
	if (gs_engine_active()) {
		if (why != GS_FLUSH_EXIT)
			gs_engine_note_flush();
		gs_stream_table_lock();
		for (gs_stream_t *s = gs_stream_first(); s; s = s->hh.next)
			gs_engine_flush_one(s, why, api, false);
		gs_stream_table_unlock();
	}
	gs_submit_drain(); /* what was posted, the flush's too, before the caller's call */
}

/* ---- the launch path ------------------------------------------------------ */

/* Submit r as it came (a launch not held); s NULL for a stream the engine does not keep. */
static int gs_engine_pass(gs_stream_t *s, gs_rec_t *r, const char *api)
{
	int rc = gs_backend->submit(r, s ? s->key.handle : 0);
	GS_STAT_INC(passed);
	if (gs_trace_on)
		gs_trace_launch(api, s ? s->key.handle : 0, r, "eager");
	return rc;
}

/* Who recorded or waited on a mark's event last (gs_event.h); a free names none. */
static void gs_engine_mark_note(gs_stream_t *s, const gs_rec_t *r)
{
	if (gs_rec_is_record(r))
		gs_event_recorded(gs_rec_event(r), s);
	else if (!gs_rec_is_free(r))
		gs_event_waited(gs_rec_event(r), s);
}

/*
 * A mark (an event record or wait, a free, gs_rec.h), at its own call.
 * Held with the records a match holds, it may wait for them (a free
 * always, a record or wait under GRAPHSHIM_ABSORB: gs_match_defer,
 * gs_replay.c).  Otherwise it goes to the driver now, after every record
 * held before it (gs_match_drain), unless the match submitted it already
 * on the way.  Not a launch: neither counted nor traced as one.
 */
static int gs_engine_mark(gs_stream_t *s, gs_rec_t *r, uint64_t at)
{
	gs_match_t *m = &s->match;
	gs_engine_mark_note(s, r);
	m->inflight = r;
	m->inflight_sent = false;
	m->inflight_rc = 0;
	bool held = gs_match_launch(s, r, at);
	if (held && !m->inflight_sent && gs_match_defer(s, r)) {
		m->inflight = NULL;
		return 0;
	}
	if (held && !m->inflight_sent)
		gs_match_drain(s);
	int rc = m->inflight_sent ? m->inflight_rc : gs_backend->submit(r, s->key.handle);
	r->held_ev = GS_HELD_SENT;
	m->inflight = NULL;
	if (rc)
		s->seg.bad = true;
	return rc;
}

/*
 * h's lock held, a call from elsewhere: h submits what it holds.  Where one
 * sequence is being matched, its match goes on (gs_match_interrupt);
 * otherwise h's segment ends, as at any flush, uncharged.
 */
static void gs_engine_held_go(gs_stream_t *h, gs_flush_reason_t why, const char *api)
{
	uint32_t at = h->match.nheld;
	gs_seq_t *q = h->match.ncands == 1 ? h->match.cands[0] : NULL;
	if (at == h->match.submitted)
		return; /* all gone already */
	if (!gs_engine_interrupt_held(h, why, api)) {
		gs_engine_flush_locked(h, why, api, false);
	} else if (why == GS_FLUSH_IDLE && q) {
		h->match.idled = true;
		gs_arm_waited(h, q, at); /* the program waits here: a chunk may end here */
	}
}

/*
 * Before a call that observes or changes event ev (or, with ev 0, any
 * event: an application's graph may record or wait on one): a stream other
 * than `self` that holds a record of it submits what it holds
 * (gs_engine_held_go).  No stream lock is held by the caller.
 */
static void gs_engine_event_free(gs_stream_t *h, const char *api)
{
	gs_engine_lock(h);
	gs_engine_held_go(h, GS_FLUSH_EVENT, api);
	gs_engine_unlock(h);
}

void gs_engine_idle_scan(void)
{
	gs_sig_hold(); /* the table's unlock releases it */
	if (!gs_stream_table_trylock()) {
		gs_sig_release();
		return;
	}
	for (gs_stream_t *s = gs_stream_first(); s; s = s->hh.next) {
		uint32_t stamp = __atomic_load_n(&s->match.stamp, __ATOMIC_RELAXED);
		bool idle = __atomic_load_n(&s->match.nheld, __ATOMIC_ACQUIRE) && stamp == s->idle_seen;
		s->idle_seen = stamp;
		if (!idle || pthread_mutex_trylock(&s->lock))
			continue;
		/* Under the lock: still the same records held, some not submitted. */
		if (s->match.stamp == stamp && s->match.nheld > s->match.submitted)
			gs_engine_held_go(s, GS_FLUSH_IDLE, "idle");
		pthread_mutex_unlock(&s->lock);
	}
	gs_stream_table_unlock();
}

static void gs_engine_event_used(const gs_stream_t *self, uint64_t ev, const char *api)
{
	if (GS_LIKELY(!gs_event_any()))
		return;
	gs_stream_t *hs[GS_EVENT_MAX]; /* every holder: none may be left out */
	size_t n = gs_event_holders(ev, hs, sizeof(hs) / sizeof(hs[0]));
	for (size_t i = 0; i < n; i++)
		if (hs[i] != self)
			gs_engine_event_free(hs[i], api);
}

bool gs_engine_event_query(uint64_t ev, const char *api)
{
	if (!gs_engine_active() || GS_LIKELY(!gs_event_any()))
		return false;
	if (gs_event_first_query(ev)) {
		GS_STAT_INC(event_not_ready);
		return true;
	}
	gs_engine_event_used(NULL, ev, api);
	return false;
}

void gs_engine_event_share(uint64_t ev, const char *api)
{
	if (!gs_engine_active())
		return;
	gs_event_share(ev);
	gs_engine_event_used(NULL, ev, api);
}

void gs_engine_event_use(uint64_t ev, const char *api)
{
	if (gs_engine_active())
		gs_engine_event_used(NULL, ev, api);
}

/*
 * An event's synchronization waits for the work before its last record,
 * on the stream that made it: a record held there (in a chunk, or behind
 * held work) goes with what precedes it (gs_engine_event_used), and one
 * already submitted had everything before it submitted first.  As for a
 * stream's synchronization, the calling thread's streams end their
 * segments (first: a record one of them holds goes with their flush) and
 * other threads' streams are left alone (a decode server's workers, each
 * waiting for its own read-back's event).
 */
void gs_engine_event_synced(uint64_t ev, const char *api)
{
	if (!gs_engine_active()) {
		gs_submit_drain();
		return;
	}
	if (gs_engine_wait_flushes_all(GS_FLUSH_EVENT, api))
		return;
	gs_engine_note_flush();
	gs_engine_flush_mine_all(GS_FLUSH_EVENT, api);
	if (ev) /* (0 would name every event: the driver refuses the call) */
		gs_engine_event_used(NULL, ev, api);
	gs_submit_drain(); /* what was posted, the flushes' too, before the caller's call */
}

bool gs_engine_event_destroy(uint64_t ev, const char *api)
{
	if (!gs_engine_active() || GS_LIKELY(!gs_event_any()))
		return false;
	if (gs_backend->event_destroy && gs_event_destroy(ev)) {
		GS_STAT_INC(destroys_deferred);
		return true;
	}
	gs_engine_event_used(NULL, ev, api);
	return false;
}

int gs_engine_launch(uintptr_t handle, void *ctx, unsigned sflags, gs_rec_t *rec, const char *api)
{
	bool mark = gs_rec_is_mark(rec);
	if (mark) {
		gs_engine_note_flush();
	} else {
		gs_stats_launched(1);
		if (rec->kind == GS_REC_KERNEL)
			GS_STAT_INC(kernels);
	}
	gs_stream_t *s = NULL;
	if (!gs_engine_active() || __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) ||
	    (sflags & GS_STREAM_PASSTHRU) || !(s = gs_stream_get(handle, ctx, sflags))) {
		if (mark && gs_engine_active() && gs_rec_is_evmark(rec)) {
			gs_engine_mark_note(NULL, rec); /* where no stream is kept */
			gs_engine_event_used(NULL, gs_rec_event(rec), api);
		}
		gs_engine_flush_peers(NULL, ctx, sflags, api);
		int rc = gs_backend ? gs_backend->submit(rec, handle) : -1;
		if (mark)
			return rc;
		GS_STAT_INC(passed);
		if (gs_engine_active() && !__atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE))
			GS_STAT_INC(unkept);
		if (gs_trace_on) /* counted: traced, so that the trace adds up */
			gs_trace_launch(api, handle, rec, "eager");
		return rc;
	}
	gs_engine_flush_peers(s, ctx, s->lane.flags, api);
	if (mark && gs_rec_is_evmark(rec))
		gs_engine_event_used(s, gs_rec_event(rec), api);

	gs_engine_lock(s);
	if (GS_UNLIKELY(gs_engine_capture_begun())) {
		/* A capture began since the check above (gs_engine_capture_begin):
		 * what the stream holds goes, then this record, as it came. */
		if (mark)
			gs_engine_mark_note(s, rec);
		gs_engine_flush_locked(s, GS_FLUSH_CAPTURE, api, false);
		int rc = mark ? gs_backend->submit(rec, handle) : gs_engine_pass(s, rec, api);
		gs_engine_unlock(s);
		return rc;
	}
	if (mark && gs_trace_on)
		gs_trace_mark(s->key.handle, api, gs_rec_event(rec),
			      __atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED));
	if (mark && __atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED)) {
		/* A cold stream keeps no records: the mark ends its segment, as
		 * any boundary does there.  Who recorded an event last is noted
		 * all the same (gs_event.h): a cold side stream's record is what
		 * its root's next wait names.  A free ends it only where
		 * something is held (a segment's first launch may be): the
		 * cold lane's segments are a pool allocator's whole steps. */
		gs_engine_mark_note(s, rec);
		if (!gs_rec_is_free(rec) || s->match.nheld > s->match.submitted)
			gs_engine_flush_locked(s, GS_FLUSH_EVENT, api, true);
		int rc = gs_backend->submit(rec, handle);
		gs_engine_unlock(s);
		return rc;
	}
	if (__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED) && gs_cold_launch(s, rec)) {
		int rc = gs_engine_pass(s, rec, api);
		gs_engine_unlock(s);
		return rc;
	}
	uint64_t at = s->pos;
	gs_rec_t **slot = &s->ring[at % s->cap];
	if (gs_rec_copy(slot, rec)) {
		/* No memory for the history: submit everything and pass through. */
		gs_engine_flush_locked(s, GS_FLUSH_OTHER, api, false);
		gs_engine_unlock(s);
		return mark ? gs_backend->submit(rec, handle) : gs_engine_pass(NULL, rec, api);
	}
	gs_rec_t *r = *slot;
	if (at == s->seg.start) {
		s->seg.t0 = gs_clock_ns(); /* one clock read a segment, for the chunk plan */
		if (s->seg.last_id)
			gs_learn_speculate(s, r);
	}
	if (__atomic_load_n(&s->cache.built, __ATOMIC_ACQUIRE))
		gs_arm_publish(s);
	r->orig = rec->orig; /* valid until this call returns */
	s->match.api = api;
	s->seg.thread = gs_stream_thread();
	s->pos++;
	int rc = 0;
	if (mark) {
		rc = gs_engine_mark(s, r, at);
	} else if (!gs_match_launch(s, r, at)) {
		gs_stream_sent(s, at, at);
		rc = gs_engine_pass(s, r, api);
		if (rc)
			s->seg.bad = true; /* a failed launch is no sequence element */
	}
	r->orig = NULL;
	s->match.api = NULL;
	gs_learn_record(s, r, at);
	gs_learn_long(s);
	gs_engine_unlock(s);
	return rc;
}

bool gs_engine_cold(uintptr_t handle, void *ctx, unsigned sflags, uint64_t key)
{
	gs_stream_t *s;
	if ((sflags & GS_STREAM_PASSTHRU) || !gs_engine_active() ||
	    __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) ||
	    !(s = gs_stream_get(handle, ctx, sflags)) || !__atomic_load_n(&s->lane.cold, __ATOMIC_RELAXED))
		return false;
	gs_engine_flush_peers(s, ctx, s->lane.flags, "launch");
	return gs_lane_count(&s->lane, key);
}

/* ---- forgetting streams and modules --------------------------------------- */

/*
 * Submit a stream's held work, drop its sequences and free its records,
 * and keep the emptied state for reuse (stream states are never freed while
 * the engine runs).  The caller removed it from the table (lock held).
 */
static void gs_engine_retire(gs_stream_t *s, gs_flush_reason_t why, const char *api)
{
	gs_engine_lock(s);
	gs_engine_flush_locked(s, why, api, false);
	gs_stream_empty(s);
	gs_engine_unlock(s);
	gs_stream_keep(s);
}

void gs_engine_forget_funcs(const char *api)
{
	if (!gs_engine_active())
		return;
	gs_stream_table_lock();
	gs_stream_t *s;
	while ((s = gs_stream_pop()) != NULL)
		gs_engine_retire(s, GS_FLUSH_MODULE, api);
	__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
	gs_stream_table_unlock();
	gs_submit_drain(); /* no job may launch the module's functions after the unload */
	gs_trace_forget_names(); /* the handles may name other kernels from now on */
	/*
	 * Every sequence is cancelled now, but the builder may be building
	 * one with this module's functions or in this context: the call that
	 * unloads them reaches the driver only once it is done.
	 */
	gs_build_wait();
}

bool gs_engine_free_begin(void)
{
	gs_submit_drain(); /* the memory may be in posted work (gs_submit.h) */
	return gs_engine_active() && gs_build_free_enter();
}

void gs_engine_free_end(bool on)
{
	gs_build_free_leave(on);
}

bool gs_engine_event_origin(uint64_t ev, uintptr_t *handle, void **ctx)
{
	const gs_stream_t *s = gs_engine_active() ? gs_event_recorder(ev) : NULL;
	if (!s)
		return false;
	*handle = __atomic_load_n(&s->key.handle, __ATOMIC_RELAXED);
	*ctx = __atomic_load_n(&s->key.ctx, __ATOMIC_RELAXED);
	return *handle != 0;
}

void gs_engine_stream_destroy(uintptr_t handle, void *ctx, const char *api)
{
	if (gs_engine_active()) {
		gs_stream_table_lock();
		gs_stream_t *s = gs_stream_remove(handle, ctx);
		if (s) {
			__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
			gs_engine_retire(s, GS_FLUSH_STREAM, api);
		}
		gs_stream_table_unlock();
	}
	gs_submit_drain(); /* no job may launch on the stream once it is gone */
}

/* ---- the application's captures ------------------------------------------- */

void gs_engine_capture_begin(const char *api, void (*release)(const char *api))
{
	if (!gs_engine_active()) {
		if (release)
			release(api);
		return;
	}
	gs_build_pause(); /* before the flush, which may queue a build */
	/*
	 * A launch that read "not capturing" may take its stream's lock only
	 * after the flush has passed that stream: it finds the capture pending
	 * under the lock and holds nothing (gs_engine_launch).  Without it,
	 * such a launch stayed held through the capture and reached the driver
	 * after later work on its stream.  `capturing` itself is raised only
	 * after the flush: from then on the backends pass launches straight to
	 * the driver, which may happen only once nothing is held.
	 */
	__atomic_fetch_add(&gs_hot.capture_pending, 1, __ATOMIC_ACQ_REL);
	if (release) { /* no stream is adopted from here on (gs_engine_capture_begun) */
		gs_engine_flush_all(GS_FLUSH_CAPTURE, api);
		release(api);
	}
	gs_engine_flush_all(GS_FLUSH_CAPTURE, api);
	__atomic_fetch_add(&gs_hot.capturing, 1, __ATOMIC_ACQ_REL);
	__atomic_fetch_sub(&gs_hot.capture_pending, 1, __ATOMIC_ACQ_REL);
}

bool gs_engine_capturing(void)
{
	return __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) != 0;
}

/*
 * The pending count first: it is lowered only after `capturing` is raised,
 * so reading it down means the next load sees the capture (reading the two
 * the other way round, a capture could begin and finish its beginning
 * between them, and both read 0).
 */
bool gs_engine_capture_begun(void)
{
	if (__atomic_load_n(&gs_hot.capture_pending, __ATOMIC_ACQUIRE))
		return true;
	return __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE) != 0;
}

void gs_engine_capture_end(const char *api)
{
	(void)api;
	if (!gs_engine_active())
		return;
	int n = __atomic_load_n(&gs_hot.capturing, __ATOMIC_ACQUIRE);
	while (n > 0 && !__atomic_compare_exchange_n(&gs_hot.capturing, &n, n - 1, false,
						     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	if (n > 0)
		gs_build_resume();
}

size_t gs_engine_seq_info(gs_seq_info_t *out, size_t max)
{
	size_t n = 0;
	gs_stream_table_lock();
	for (gs_stream_t *s = gs_stream_first(); s; s = s->hh.next) {
		pthread_mutex_lock(&s->lock);
		for (gs_seq_t *q = s->cache.lru; q; q = q->next, n++)
			if (n < max)
				gs_seq_info_fill(s, q, &out[n]);
		pthread_mutex_unlock(&s->lock);
	}
	gs_stream_table_unlock();
	return n + gs_seq_gone_info(n < max ? out + n : NULL, n < max ? max - n : 0);
}

/*
 * The same from a signal handler: no lock is waited for (the interrupted
 * code may hold it).  A stream whose lock is taken is left out, and so
 * are dropped sequences when theirs is; *partial says so.
 */
static void gs_engine_nap_1ms(void)
{
	struct timespec ts = {0, 1000 * 1000};
	nanosleep(&ts, NULL);
}

static size_t gs_engine_seq_info_try(gs_seq_info_t *out, size_t max, bool *partial)
{
	size_t n = 0;
	*partial = false;
	/* Another thread (the idle watchdog's look, a flush of every stream)
	 * leaves the table within microseconds: a few tries, as for a stream. */
	bool table = gs_stream_table_trylock();
	for (int i = 0; !table && i < 5; i++) {
		gs_engine_nap_1ms();
		table = gs_stream_table_trylock();
	}
	if (!table) {
		*partial = true;
	} else {
		for (gs_stream_t *s = gs_stream_first(); s; s = s->hh.next) {
			/* Another thread leaves a stream within microseconds; the
			 * interrupted one (this thread) never will: a few tries. */
			int busy = pthread_mutex_trylock(&s->lock);
			for (int i = 0; busy && i < 5; i++) {
				gs_engine_nap_1ms();
				busy = pthread_mutex_trylock(&s->lock);
			}
			if (busy) {
				*partial = true;
				continue;
			}
			for (gs_seq_t *q = s->cache.lru; q; q = q->next)
				if (n < max)
					gs_seq_info_fill(s, q, &out[n++]);
				else
					*partial = true;
			pthread_mutex_unlock(&s->lock);
		}
		gs_stream_table_unlock();
	}
	size_t gone = gs_seq_gone_info_try(out + n, max - n);
	if (gone == SIZE_MAX) {
		*partial = true;
		return n;
	}
	if (gone > max - n)
		*partial = true;
	return n + (gone < max - n ? gone : max - n);
}

/* ---- lifecycle ------------------------------------------------------------ */

/* Per-sequence figures gathered without allocation when there are few. */
#define GS_SEQ_INLINE 64

/* The statistics file, with every sequence's figures; true on failure. */
static bool gs_engine_write_stats(const char *path, bool overwrite)
{
	gs_seq_info_t inl[GS_SEQ_INLINE];
	gs_seq_info_t *info = inl;
	size_t cap = GS_SEQ_INLINE;
	size_t total = gs_engine_seq_info(inl, cap);
	if (total > cap) {
		/* Sequences may be added meanwhile: leave room and take what fits. */
		size_t want = total + total / 4 + 16;
		gs_seq_info_t *big = malloc(want * sizeof(*big));
		if (big) {
			info = big;
			cap = want;
			total = gs_engine_seq_info(big, cap);
		}
	}
	size_t n = total < cap ? total : cap;
	gs_stats_file_t x = {.seqs = info, .nseqs = n, .truncated = total > n, .ended_by = "exit"};
	bool err = gs_stats_write_json(path, overwrite, &x);
	if (info != inl)
		free(info);
	return err;
}

/*
 * The files are written once: at exit (gs_engine_fini), or by a signal
 * that ends the process (gs_engine_on_term), whichever comes first.
 * 0: not yet; 1: being written, by thread gs_engine_fin_tid; 2: done.
 */
static int gs_engine_fin;
static long gs_engine_fin_tid;

static long gs_engine_gettid(void)
{
	return (long)syscall(SYS_gettid);
}

static bool gs_engine_fin_claim(void)
{
	int expect = 0;
	if (!__atomic_compare_exchange_n(&gs_engine_fin, &expect, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&gs_engine_fin_tid, gs_engine_gettid(), __ATOMIC_RELEASE);
	return true;
}

static void gs_engine_summary(void)
{
	if (!gs_config.summary)
		return;
	char line[512];
	gs_stats_summary(line, sizeof(line) - 1);
	size_t len = strlen(line);
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}

/* Statistics gathered in a signal handler: no allocation there. */
#define GS_SEQ_SIGNAL 256
static gs_seq_info_t gs_engine_sig_info[GS_SEQ_SIGNAL];

/*
 * A signal is ending the process (gs_sig.h): write what exit would have
 * written, async-signal-safely.  Held launches are not submitted (that is a
 * vendor call, not for a signal handler; the process ends anyway), so the
 * figures are those of the moment.  True when the signal must wait: this
 * thread is inside the trace, or is writing the files at exit itself.
 */
static bool gs_engine_on_term(int sig)
{
	if (gs_trace_busy_here())
		return true;
	if (!gs_engine_fin_claim()) {
		if (__atomic_load_n(&gs_engine_fin, __ATOMIC_ACQUIRE) == 1 &&
		    __atomic_load_n(&gs_engine_fin_tid, __ATOMIC_ACQUIRE) == gs_engine_gettid())
			return true; /* this thread's own exit: it raises the signal when done */
		/* Another thread writes them: give it a while, then end. */
		for (int i = 0; i < 2000 && __atomic_load_n(&gs_engine_fin, __ATOMIC_ACQUIRE) == 1; i++) {
			struct timespec ts = {0, 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		return false;
	}
	if (gs_engine_active() && !gs_config_secure()) {
		const char *name = gs_sig_name(sig);
		bool used = gs_engine_used();
		if (used)
			gs_engine_summary();
		if (used && gs_config.stats_path[0]) {
			bool partial;
			size_t n = gs_engine_seq_info_try(gs_engine_sig_info, GS_SEQ_SIGNAL, &partial);
			gs_stats_file_t x = {.seqs = gs_engine_sig_info, .nseqs = n,
					     .truncated = partial, .ended_by = name};
			gs_stats_write_json(gs_config.stats_path, gs_config.overwrite, &x);
		}
		if (gs_trace_close_signal(name, !used)) {
			char msg[GS_OUT_NAME_MAX + 128];
			gs_fmt_t f;
			gs_fmt_init(&f, msg, sizeof(msg));
			gs_fmt_str(&f, "the trace was busy when ");
			gs_fmt_str(&f, name);
			gs_fmt_str(&f, " came: it is left unfinished as NAME.PID.part for ");
			gs_fmt_str(&f, gs_config.trace_path);
			gs_log_str(GS_LOG_WARN, msg);
		}
	}
	__atomic_store_n(&gs_engine_fin, 2, __ATOMIC_RELEASE);
	return false;
}

static void gs_engine_atexit(void)
{
	gs_engine_fini();
}

static void gs_engine_fork_prepare(void)
{
	gs_engine_flush_all(GS_FLUSH_EXIT, "fork");
	gs_build_wait(); /* no build may be half done in the child's copy */
	gs_stream_table_lock();
}

static void gs_engine_fork_parent(void)
{
	gs_stream_table_unlock();
}

/*
 * The child starts clean: a GPU context does not survive fork, so the
 * child's copy of the streams and graphs is dropped without a vendor call,
 * and the engine stays off there.  It writes no files (they are the
 * parent's; an exec'd program starts graphshim afresh).
 */
static void gs_engine_fork_child(void)
{
	gs_stream_forget();
	gs_event_reset(true);
	__atomic_store_n(&gs_hot.active, false, __ATOMIC_RELEASE);
	__atomic_fetch_add(&gs_hot.generation, 1, __ATOMIC_ACQ_REL);
	gs_hot.held_streams = 0;
	gs_hot.held_legacy = 0;
	gs_hot.held_blocking = 0;
	gs_trace_on = false;
	gs_build_forget();
	gs_idle_forget();
	gs_sig_child();
}

static pthread_mutex_t gs_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool gs_inited;

bool gs_engine_init(const gs_ops_t *ops)
{
	pthread_mutex_lock(&gs_init_lock);
	if (gs_inited) {
		/* One backend owns the engine; a second one (a process that loads
		 * both vendors' libraries) passes its calls straight through. */
		bool mine = gs_submit_raw == ops && gs_engine_active();
		pthread_mutex_unlock(&gs_init_lock);
		if (!mine)
			gs_log_once(GS_LOG_INFO, "the %s backend passes through: the engine belongs to %s",
				    ops->name, gs_backend ? gs_backend->name : "none");
		return !mine;
	}
	gs_inited = true;
	gs_config_start();
	gs_idle_allow(); /* after an engine's end (tests start it again) */
	gs_seq_gone_reset();
	gs_backend = gs_submit_wrap(ops);
	__atomic_store_n(&gs_engine_fin, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&gs_engine_flushed, false, __ATOMIC_RELAXED);
	bool outputs = gs_config.stats_path[0] || gs_config.trace_path[0];
	if (!gs_config.enable && outputs && !gs_config_secure())
		gs_log(GS_LOG_WARN, "GRAPHSHIM_ENABLE=0: a pure pass-through, which writes no "
		       "statistics and no trace");
	if (gs_config.enable) {
		if (outputs && !gs_config_secure())
			gs_out_prepare(gs_config.stats_path[0] ? gs_config.stats_path : NULL,
				       gs_config.trace_path[0] ? gs_config.trace_path : NULL);
		gs_trace_set_namer(ops->func_name);
		if (gs_config.trace_path[0] && !gs_config_secure() &&
		    gs_trace_open(gs_config.trace_path, gs_config.trace_max, gs_config.overwrite))
			gs_log(GS_LOG_WARN, "tracing is off");
		static bool registered;
		if (!registered) {
			registered = true;
			atexit(gs_engine_atexit);
			pthread_atfork(gs_engine_fork_prepare, gs_engine_fork_parent, gs_engine_fork_child);
		}
		/* Files to write, or a line to print, at the end: at a signal's too. */
		if ((outputs || gs_config.summary) && !gs_config_secure())
			gs_sig_install(gs_engine_on_term);
		if (gs_config.async_build)
			gs_build_start();
		gs_hot.cold_limit = gs_config.period ? (uint64_t)gs_config.period_after : UINT64_MAX;
		__atomic_store_n(&gs_hot.active, true, __ATOMIC_RELEASE);
		gs_log(GS_LOG_INFO, "active with the %s backend", ops->name);
	}
	pthread_mutex_unlock(&gs_init_lock);
	return !gs_config.enable;
}

void gs_engine_fini(void)
{
	pthread_mutex_lock(&gs_init_lock);
	if (!gs_engine_active() || !gs_engine_fin_claim()) {
		/* Not running, or a signal that ends the process wrote the files. */
		pthread_mutex_unlock(&gs_init_lock);
		return;
	}
	gs_idle_stop(); /* before the streams go */
	gs_engine_flush_all(GS_FLUSH_EXIT, "exit");
	gs_submit_stop();
	gs_event_reset(false); /* nothing is held now */
	/* Graphs being built are published or freed first; a builder stuck in
	 * the driver is left behind with every stream it may touch. */
	bool left = gs_build_stop();
	__atomic_store_n(&gs_hot.active, false, __ATOMIC_RELEASE);
	bool used = gs_engine_used();
	if (used)
		gs_engine_summary();
	if (used && gs_config.stats_path[0] && !gs_config_secure())
		gs_engine_write_stats(gs_config.stats_path, gs_config.overwrite);
	if (used)
		gs_trace_close();
	else
		gs_trace_discard(); /* no GPU call: nothing to say, nothing left behind */
	if (!left)
		gs_stream_free_all();
	gs_inited = false; /* a test may start the engine again */
	__atomic_store_n(&gs_engine_fin, 2, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&gs_init_lock);
	gs_sig_resume(); /* a signal that came while the files were written */
}
