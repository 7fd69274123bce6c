/*
 * Side streams adopted into the stream they fork from (GRAPHSHIM_ADOPT,
 * on by default).
 *
 * cuDNN's RNNs, and programs that fork work onto side streams and join it
 * again with events, spread one step over several streams; the engine
 * learns and replays each stream on its own, so the side streams' few
 * launches between waits never replay (docs/limits.md, "Several streams in
 * one step").  Adoption makes them one stream: when stream T waits on an
 * event last recorded on stream R, T is adopted into R, and from then on
 * every stream-ordered call the program makes on T is made on R instead
 * (launches, copies, memsets, event records and waits, host functions,
 * synchronizations and queries).  The engine then sees R's step whole.
 *
 * Why that keeps every result.  R's order is T's order with more in it:
 * T's work before the adoption is joined into R (an event graphshim
 * records on T, which R waits on), and T's work after it goes to R in
 * the program's order, so everything that ran after something on T still
 * does; a record of an event on T completes after R's work up to it (later,
 * never earlier); a synchronization or query of T waits for or looks at R,
 * which holds all of T's work.  What is lost is concurrency between T and
 * R, which CUDA never promised.  The adoption ends first (T is joined
 * back: T waits on an event recorded on R) at a wait on a value or an
 * external semaphore (a stream memory operation), which could wait for
 * later work on R; at the application's own capture, which must see its
 * streams as the program made them; at R's destruction; and at a
 * context's teardown, which destroys streams with no cuStreamDestroy (a
 * handle may come back as another stream's).  T's destruction drops its
 * entry.  T is adopted only where that adds no ordering the driver
 * would not otherwise give it: T blocking only when R is the legacy stream
 * or blocking too; never the default streams; R and T in one context, with
 * no capture in progress.
 *
 * And only a fork that the program joins before R does anything else: at
 * T's wait on R's event the fork is noted with R's count of work so far,
 * and when R next waits on an event T recorded last, the fork was *closed*
 * if R issued no work in between (only marks).  T is adopted at a fork
 * after one closed fork and no spoilt one (R issued work while T's ran):
 * in a closed fork R's later work waits for T's anyway, so issuing T's
 * work on R adds no wait that the program's own join does not already
 * make, and a kernel of T's that polls memory R's later work writes could
 * not have run beside that work before either.  A copy stream that
 * prefetches while R computes, or two streams that work side by side,
 * stay apart.
 *
 * A stream R adopted into absorbs event records and waits into its chunks
 * from then on (gs_engine_stream_absorb): its step is full of its sides'
 * forks and joins, which would otherwise cut it into pieces of a launch or
 * two.  Other streams cut at marks as before.
 *
 * Armed lazily: until a stream first waits on another stream's event,
 * nothing can be adopted and nothing is counted, and launches keep the
 * cold lane (gs_cu_lane.adopt false: one load a call).  That first wait
 * arms it (the lane stops taking launches, every call takes the read lock
 * and counts its work) and is not itself noted as a fork; nor is any
 * until the grace after it is over.  A call another thread made just
 * before arming read "not armed", took no lock and counted nothing; were
 * T adopted before such a call on T reached the driver, it would land on
 * T after the join, and T's next call, made on R, would not wait for it.
 * The grace (gs_cu_adopt_graced) ends when every other thread that had
 * made stream calls has made more since (so the one it had under way has
 * returned), or after GRAPHSHIM_ADOPT_GRACE_US (100 ms) where one has not
 * (a thread that never calls again: only then does it rest on time, and a
 * thread stalled that long inside a call is not excluded).  Forks are
 * judged on counts taken after the grace.  The cost once armed: 15-30 ns
 * a launch on the fake driver of tests/cuda (tools/bench-hook.sh), against
 * some 3.5 us of a real launch.
 *
 * Concurrency: once armed, every hook that takes a stream holds a read
 * lock from the redirection to its return, and adopting or releasing
 * takes the write lock, so no call on T from another thread falls between
 * a join and the table's change (and the grace above covers the calls
 * made before arming).
 */
#include "cu_internal.h"
#include "gs_clock.h"
#include "gs_stats.h"

#include <pthread.h>

#define GS_CU_ADOPT_MAX 64

typedef struct gs_cu_adoptee {
	CUstream t;    /* the side stream */
	CUstream root; /* where its work goes: a CUstream or CU_STREAM_LEGACY */
	CUcontext ctx;
	CUevent join;  /* graphshim's own, for the joins */
} gs_cu_adoptee_t;

/*
 * Work issued on each stream (launches, copies, memsets, anything but event
 * records and waits), in an open-addressed table keyed by handle, entered
 * lock-free at a stream's first work and never removed.  Exact: a
 * direct-mapped table made two streams share a count one run in three (a
 * dozen streams in 256 slots, by their addresses), which made cuDNN's
 * forks look spoilt and left rnn-lstm unadopted in some runs and not
 * others.  A stream that finds no room in GS_CU_WORK_PROBES slots counts
 * in the last, shared one, which can only make a fork look spoilt.
 */
#define GS_CU_WORK_SLOTS 1024u
#define GS_CU_WORK_PROBES 16u
static CUstream gs_cu_work_key[GS_CU_WORK_SLOTS];
static uint64_t gs_cu_work[GS_CU_WORK_SLOTS + 1];

static unsigned gs_cu_work_slot(CUstream s)
{
	unsigned i = (unsigned)gs_mix64((uintptr_t)s) & (GS_CU_WORK_SLOTS - 1);
	for (unsigned n = 0; n < GS_CU_WORK_PROBES; n++, i = (i + 1) & (GS_CU_WORK_SLOTS - 1)) {
		CUstream k = __atomic_load_n(&gs_cu_work_key[i], __ATOMIC_ACQUIRE);
		if (k == s)
			return i;
		if (!k && (__atomic_compare_exchange_n(&gs_cu_work_key[i], &k, s, false, __ATOMIC_ACQ_REL,
						       __ATOMIC_ACQUIRE) || k == s))
			return i;
	}
	return GS_CU_WORK_SLOTS;
}

/* Forks seen of streams not adopted (yet): where T forked from, and how they ended. */
#define GS_CU_FORKS 64
typedef struct gs_cu_fork {
	CUstream t, root;
	uint64_t work;           /* the root's work count at the fork */
	bool open;               /* a fork of T's not yet joined */
	uint32_t closed, spoilt; /* joins with no work of the root's between, and with some */
} gs_cu_fork_t;
static pthread_mutex_t gs_cu_fork_lock = PTHREAD_MUTEX_INITIALIZER;
static gs_cu_fork_t gs_cu_forks[GS_CU_FORKS];
static unsigned gs_cu_nforks;

static gs_cu_fork_t *gs_cu_fork_of(CUstream t, bool make)
{
	for (unsigned i = 0; i < gs_cu_nforks; i++)
		if (gs_cu_forks[i].t == t)
			return &gs_cu_forks[i];
	if (!make || gs_cu_nforks == GS_CU_FORKS)
		return NULL;
	gs_cu_forks[gs_cu_nforks] = (gs_cu_fork_t){ .t = t };
	return &gs_cu_forks[gs_cu_nforks++];
}

static pthread_rwlock_t gs_cu_adopt_lock = PTHREAD_RWLOCK_INITIALIZER;
static gs_cu_adoptee_t gs_cu_adopt_tab[GS_CU_ADOPT_MAX];
static unsigned gs_cu_adopt_n; /* entries in use, at the front; under the lock */

/* The entry of t, or NULL; lock held. */
static gs_cu_adoptee_t *gs_cu_adoptee(CUstream t)
{
	for (unsigned i = 0; i < gs_cu_adopt_n; i++)
		if (gs_cu_adopt_tab[i].t == t)
			return &gs_cu_adopt_tab[i];
	return NULL;
}

static bool gs_cu_adopt_is_root(CUstream s)
{
	for (unsigned i = 0; i < gs_cu_adopt_n; i++)
		if (gs_cu_adopt_tab[i].root == s)
			return true;
	return false;
}

/* `later` waits for everything issued on `first` so far: CUDA_SUCCESS, or the failing call's status. */
static CUresult gs_cu_adopt_join(CUevent ev, CUstream first, CUstream later)
{
	if (!gs_cu_real.cuEventRecord || !gs_cu_real.cuStreamWaitEvent)
		return CUDA_ERROR_NOT_SUPPORTED;
	CUresult rc = gs_cu_real.cuEventRecord(ev, first);
	return rc == CUDA_SUCCESS ? gs_cu_real.cuStreamWaitEvent(later, ev, 0) : rc;
}

/* Entry e goes: its join event with it (the last entry takes its place).  Write lock held. */
static void gs_cu_adopt_drop(gs_cu_adoptee_t *e)
{
	if (gs_cu_real.cuEventDestroy_v2)
		gs_cu_real.cuEventDestroy_v2(e->join);
	*e = gs_cu_adopt_tab[--gs_cu_adopt_n];
}

/*
 * Entry e ends: T waits for what R holds of its work, and takes its own
 * work back.  The engine's held work on R is submitted first.  Write lock
 * held.  A join that fails leaves the entry in place: T's work keeps going
 * to R, which is still correct; where the driver is shutting down or the
 * context is gone, the entry goes (true), as nothing of either runs again.
 */
static bool gs_cu_adopt_end(gs_cu_adoptee_t *e, const char *api)
{
	bool pushed = gs_cu_ctx_enter(e->ctx);
	gs_cu_flush_stream(e->root, 0, GS_FLUSH_STREAM, api);
	CUresult rc = gs_cu_adopt_join(e->join, e->root, e->t);
	gs_cu_ctx_leave(pushed);
	if (rc == CUDA_ERROR_DEINITIALIZED || rc == CUDA_ERROR_CONTEXT_IS_DESTROYED) {
		/* The process is exiting (the driver shuts down, at its context's
		 * last release: every adopting program on an H200) or the context
		 * is gone: no work of either stream can run again. */
		gs_log(GS_LOG_DEBUG, "cuda: side stream %p dropped at %s (status %d)", (void *)e->t, api,
		       (int)rc);
		gs_cu_adopt_drop(e);
		return true;
	}
	if (rc != CUDA_SUCCESS) {
		gs_log_once(GS_LOG_WARN, "cuda: a side stream could not be given back its own work "
			    "at %s (the join failed, status %d): its work stays on the stream it was "
			    "adopted into", api, (int)rc);
		return false;
	}
	gs_cu_adopt_drop(e);
	return true;
}

/*
 * The grace after arming: no fork is noted until every call another thread
 * had under way when adoption armed has returned, for such a call read
 * "not armed", took no lock and counted no work (on T, reaching the
 * driver after T's join, T's next call, made on R, would not wait for it).
 * A thread's call has returned once its count is three past the one read
 * at arming: a launch counts twice (the cold lane's check, then the full
 * path's), and a count stored may not be seen yet at arming.  A
 * thread that never calls again, or one with no slot of its own, holds
 * the grace to GRAPHSHIM_ADOPT_GRACE_US.  Under gs_cu_fork_lock.
 */
uint64_t gs_cu_calls[GS_CU_THREADS + 1];
__thread int gs_cu_call_slot GS_TLS_IE = -1;
static int gs_cu_nthreads;                   /* slots taken */
static uint64_t gs_cu_armed_calls[GS_CU_THREADS]; /* each slot's count at arming */
static int gs_cu_armed_n;                    /* slots taken at arming */
static uint64_t gs_cu_armed_ns;
static bool gs_cu_grace_over;

int gs_cu_call_register(void)
{
	pthread_mutex_lock(&gs_cu_fork_lock);
	int i = gs_cu_nthreads < GS_CU_THREADS ? gs_cu_nthreads++ : GS_CU_THREADS;
	pthread_mutex_unlock(&gs_cu_fork_lock);
	gs_cu_call_slot = i;
	return i;
}

/* Arm adoption; gs_cu_fork_lock held. */
static void gs_cu_adopt_arm(void)
{
	gs_cu_armed_ns = gs_clock_ns();
	gs_cu_grace_over = false;
	__atomic_store_n(&gs_cu_lane.adopt, true, __ATOMIC_SEQ_CST);
	gs_cu_armed_n = gs_cu_nthreads;
	for (int i = 0; i < gs_cu_armed_n; i++)
		gs_cu_armed_calls[i] = __atomic_load_n(&gs_cu_calls[i], __ATOMIC_SEQ_CST);
}

/* Whether the grace after arming is over; gs_cu_fork_lock held. */
static bool gs_cu_adopt_graced(void)
{
	if (gs_cu_grace_over)
		return true;
	bool over = gs_clock_ns() - gs_cu_armed_ns >= (uint64_t)gs_config.adopt_grace_us * 1000u;
	if (!over && gs_cu_nthreads < GS_CU_THREADS) {
		over = true;
		for (int i = 0; i < gs_cu_armed_n && over; i++)
			over = i == gs_cu_call_slot ||
			       __atomic_load_n(&gs_cu_calls[i], __ATOMIC_RELAXED) >= gs_cu_armed_calls[i] + 3;
	}
	return gs_cu_grace_over = over;
}

void gs_cu_adopt_try(CUstream t, int pt, CUevent ev)
{
	if (!gs_config.adopt || !ev || gs_engine_capturing())
		return;
	if (!t)
		t = pt ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	if (t == CU_STREAM_PER_THREAD)
		return;
	uintptr_t h = 0;
	void *octx = NULL;
	if (!gs_engine_event_origin((uint64_t)(uintptr_t)ev, &h, &octx))
		return;
	CUstream root = (CUstream)h;
	if (root == t || root == CU_STREAM_PER_THREAD)
		return;
	CUcontext ctx = gs_cu_ctx_current();
	if (!ctx || ctx != (CUcontext)octx)
		return;
	if (!__atomic_load_n(&gs_cu_lane.adopt, __ATOMIC_ACQUIRE)) {
		/* The first wait across streams arms adoption: from here on
		 * every call counts its stream's work, and forks are noted
		 * from the first such wait after the grace. */
		pthread_mutex_lock(&gs_cu_fork_lock);
		gs_cu_adopt_arm();
		pthread_mutex_unlock(&gs_cu_fork_lock);
		gs_log(GS_LOG_DEBUG, "cuda: a stream waits on another's event: adoption armed");
		return;
	}
	pthread_mutex_lock(&gs_cu_fork_lock);
	bool graced = gs_cu_adopt_graced();
	pthread_mutex_unlock(&gs_cu_fork_lock);
	if (!graced)
		return;
	/*
	 * t waits on root's event: the join of a fork of root's from t (root
	 * the side there), and a fork of t from root.
	 */
	uint64_t t_work = __atomic_load_n(&gs_cu_work[gs_cu_work_slot(t)], __ATOMIC_RELAXED);
	uint64_t r_work = __atomic_load_n(&gs_cu_work[gs_cu_work_slot(root)], __ATOMIC_RELAXED);
	pthread_mutex_lock(&gs_cu_fork_lock);
	gs_cu_fork_t *j = gs_cu_fork_of(root, false);
	if (j && j->open && j->root == t) {
		j->open = false;
		if (t_work == j->work)
			j->closed++;
		else
			j->spoilt++;
	}
	/* The default streams join forks; they are never adopted. */
	gs_cu_fork_t *f = t == CU_STREAM_LEGACY ? NULL : gs_cu_fork_of(t, true);
	bool ready = f && f->closed && !f->spoilt && !f->open && f->root == root;
	if (f && !ready) {
		if (f->root != root)
			*f = (gs_cu_fork_t){ .t = t }; /* another root: start again */
		f->root = root;
		f->work = r_work;
		f->open = true;
	}
	pthread_mutex_unlock(&gs_cu_fork_lock);
	if (!ready)
		return;
	pthread_rwlock_wrlock(&gs_cu_adopt_lock);
	gs_cu_adoptee_t *r = gs_cu_adoptee(root);
	if (r)
		root = r->root; /* R was adopted since: its root */
	gs_cu_sref_t ts, rs;
	gs_cu_stream_ref(t, pt, &ts);
	gs_cu_stream_ref(root, 0, &rs);
	bool fits = root != t && !gs_cu_adoptee(t) && !gs_cu_adopt_is_root(t) &&
		    gs_cu_adopt_n < GS_CU_ADOPT_MAX && !(ts.sflags & GS_STREAM_PASSTHRU) &&
		    !(rs.sflags & GS_STREAM_PASSTHRU) &&
		    (!(ts.sflags & GS_STREAM_BLOCKING) ||
		     (rs.sflags & (GS_STREAM_LEGACY | GS_STREAM_BLOCKING)));
	CUevent join = NULL;
	if (fits && gs_cu_real.cuEventCreate &&
	    gs_cu_real.cuEventCreate(&join, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		join = NULL;
	if (join) {
		/* T's held work first, then T's work so far joined into R. */
		gs_cu_flush_stream(t, pt, GS_FLUSH_STREAM, "adopt");
		if (gs_cu_adopt_join(join, t, root) == CUDA_SUCCESS) {
			gs_cu_adopt_tab[gs_cu_adopt_n++] = (gs_cu_adoptee_t){ t, root, ctx, join };
			gs_cu_depth++;
			gs_engine_stream_absorb(rs.handle, ctx, rs.sflags);
			gs_cu_depth--;
			GS_STAT_INC(adopted);
			gs_log(GS_LOG_DEBUG, "cuda: stream %p adopted into %p", (void *)t, (void *)root);
		} else if (gs_cu_real.cuEventDestroy_v2) {
			gs_cu_real.cuEventDestroy_v2(join);
		}
	}
	pthread_rwlock_unlock(&gs_cu_adopt_lock);
}

gs_cu_adopt_scope_t gs_cu_adopt_enter_on(CUstream *s, bool work)
{
	gs_cu_adopt_scope_t g = { false };
	if (!gs_config.adopt)
		return g;
	pthread_rwlock_rdlock(&gs_cu_adopt_lock);
	g.locked = true;
	CUstream t = *s;
	if (gs_cu_adopt_n && t && t != CU_STREAM_LEGACY && t != CU_STREAM_PER_THREAD) {
		const gs_cu_adoptee_t *e = gs_cu_adoptee(t);
		/* A call on T from another context is the driver's to judge, on T. */
		if (e && (e->root != CU_STREAM_LEGACY || gs_cu_ctx_current() == e->ctx))
			*s = e->root;
	}
	if (work)
		__atomic_fetch_add(&gs_cu_work[gs_cu_work_slot(*s ? *s : CU_STREAM_LEGACY)], 1,
				   __ATOMIC_RELAXED);
	return g;
}

void gs_cu_adopt_unlock(void)
{
	pthread_rwlock_unlock(&gs_cu_adopt_lock);
}

void gs_cu_adopt_release(CUstream t, const char *api)
{
	if (!gs_config.adopt || !t || t == CU_STREAM_LEGACY || t == CU_STREAM_PER_THREAD)
		return;
	pthread_rwlock_wrlock(&gs_cu_adopt_lock);
	gs_cu_adoptee_t *e = gs_cu_adoptee(t);
	if (e)
		gs_cu_adopt_end(e, api);
	pthread_rwlock_unlock(&gs_cu_adopt_lock);
}

void gs_cu_adopt_destroyed(CUstream s, const char *api)
{
	if (!gs_config.adopt || !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return;
	pthread_rwlock_wrlock(&gs_cu_adopt_lock);
	/* Streams adopted into s take their work back before s goes. */
	for (unsigned i = 0; i < gs_cu_adopt_n;) {
		if (gs_cu_adopt_tab[i].root == s && gs_cu_adopt_end(&gs_cu_adopt_tab[i], api))
			continue; /* the last entry moved into i */
		i++;
	}
	pthread_mutex_lock(&gs_cu_fork_lock);
	for (unsigned i = 0; i < gs_cu_nforks;) {
		if (gs_cu_forks[i].t == s || gs_cu_forks[i].root == s)
			gs_cu_forks[i] = gs_cu_forks[--gs_cu_nforks]; /* its handle may come back */
		else
			i++;
	}
	pthread_mutex_unlock(&gs_cu_fork_lock);
	gs_cu_adoptee_t *e = gs_cu_adoptee(s);
	if (e)
		gs_cu_adopt_drop(e); /* nothing of s's own is on s to join */
	pthread_rwlock_unlock(&gs_cu_adopt_lock);
}

void gs_cu_adopt_release_all(const char *api)
{
	if (!gs_config.adopt)
		return;
	pthread_rwlock_wrlock(&gs_cu_adopt_lock);
	for (unsigned i = 0; i < gs_cu_adopt_n;)
		if (!gs_cu_adopt_end(&gs_cu_adopt_tab[i], api))
			i++;
	pthread_rwlock_unlock(&gs_cu_adopt_lock);
	/* The forks seen so far may be of streams about to go (a context's
	 * teardown destroys them with no cuStreamDestroy): seen again. */
	pthread_mutex_lock(&gs_cu_fork_lock);
	gs_cu_nforks = 0;
	pthread_mutex_unlock(&gs_cu_fork_lock);
}

void gs_cu_adopt_forget(void)
{
	/* A forked child: the parent's streams are not its own. */
	pthread_rwlock_init(&gs_cu_adopt_lock, NULL);
	pthread_mutex_init(&gs_cu_fork_lock, NULL);
	gs_cu_adopt_n = 0;
	gs_cu_nforks = 0;
}
