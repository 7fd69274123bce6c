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
 *
 * The tables, the fork rule and the ends of an adoption are the core's
 * (gs_adopt.c, shared with the HIP backend); this file is CUDA's part: the
 * arming and its grace, which streams may be adopted, and the joins.
 */
#include "cu_internal.h"
#include "gs_adopt.h"
#include "gs_clock.h"
#include "gs_submit.h"

#include <pthread.h>

/* `later` waits for everything issued on `first` so far: CUDA_SUCCESS, or the failing call's status. */
static int gs_cu_adopt_join(void *ev, uintptr_t first, uintptr_t later)
{
	if (!gs_cu_real.cuEventRecord || !gs_cu_real.cuStreamWaitEvent)
		return CUDA_ERROR_NOT_SUPPORTED;
	gs_submit_drain(); /* the record follows what was posted on `first` */
	CUresult rc = gs_cu_real.cuEventRecord((CUevent)ev, (CUstream)first);
	return rc == CUDA_SUCCESS ? gs_cu_real.cuStreamWaitEvent((CUstream)later, (CUevent)ev, 0) : rc;
}

static void *gs_cu_adopt_event_new(void)
{
	CUevent ev = NULL;
	if (!gs_cu_real.cuEventCreate ||
	    gs_cu_real.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		return NULL;
	return ev;
}

static void gs_cu_adopt_event_free(void *ev)
{
	if (gs_cu_real.cuEventDestroy_v2)
		gs_cu_real.cuEventDestroy_v2((CUevent)ev);
}

/* The end of an adoption: root's held work submitted, then t waits for root. */
static int gs_cu_adopt_give_back(void *ev, uintptr_t root, uintptr_t t, void *ctx, const char *api)
{
	bool pushed = gs_cu_ctx_enter((CUcontext)ctx);
	gs_cu_flush_stream((CUstream)root, 0, GS_FLUSH_STREAM, api);
	int rc = gs_cu_adopt_join(ev, root, t);
	gs_cu_ctx_leave(pushed);
	return rc;
}

/* The process is exiting (the driver shuts down, at its context's last
 * release: every adopting program on an H200) or the context is gone: no
 * work of either stream can run again. */
static bool gs_cu_adopt_gone(int rc)
{
	return rc == CUDA_ERROR_DEINITIALIZED || rc == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

static void *gs_cu_adopt_ctx(void)
{
	return gs_cu_ctx_current();
}

static const gs_adopt_ops_t gs_cu_adopt_ops = {
	.join = gs_cu_adopt_join,
	.event_new = gs_cu_adopt_event_new,
	.event_free = gs_cu_adopt_event_free,
	.give_back = gs_cu_adopt_give_back,
	.gone = gs_cu_adopt_gone,
	.ctx_current = gs_cu_adopt_ctx,
	.legacy = (uintptr_t)CU_STREAM_LEGACY,
	.per_thread = (uintptr_t)CU_STREAM_PER_THREAD,
	.name = "cuda",
};

static gs_adopt_t gs_cu_adoption = GS_ADOPT_INIT(&gs_cu_adopt_ops);

/*
 * The grace after arming: no fork is noted until every call another thread
 * had under way when adoption armed has returned, for such a call read
 * "not armed", took no lock and counted no work (on T, reaching the
 * driver after T's join, T's next call, made on R, would not wait for it).
 * A thread's call has returned once its count is three past the one read
 * at arming: a launch counts twice (the cold lane's check, then the full
 * path's), and a count stored may not be seen yet at arming.  A
 * thread that never calls again, or one with no slot of its own, holds
 * the grace to GRAPHSHIM_ADOPT_GRACE_US.  Under gs_cu_grace_lock.
 */
static pthread_mutex_t gs_cu_grace_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t gs_cu_calls[GS_CU_THREADS + 1];
__thread int gs_cu_call_slot GS_TLS_IE = -1;
static int gs_cu_nthreads;                   /* slots taken */
static uint64_t gs_cu_armed_calls[GS_CU_THREADS]; /* each slot's count at arming */
static int gs_cu_armed_n;                    /* slots taken at arming */
static uint64_t gs_cu_armed_ns;
static bool gs_cu_grace_over;

int gs_cu_call_register(void)
{
	pthread_mutex_lock(&gs_cu_grace_lock);
	int i = gs_cu_nthreads < GS_CU_THREADS ? gs_cu_nthreads++ : GS_CU_THREADS;
	pthread_mutex_unlock(&gs_cu_grace_lock);
	gs_cu_call_slot = i;
	return i;
}

/* Arm adoption; gs_cu_grace_lock held. */
static void gs_cu_adopt_arm(void)
{
	gs_cu_armed_ns = gs_clock_ns();
	gs_cu_grace_over = false;
	__atomic_store_n(&gs_cu_lane.adopt, true, __ATOMIC_SEQ_CST);
	gs_cu_armed_n = gs_cu_nthreads;
	for (int i = 0; i < gs_cu_armed_n; i++)
		gs_cu_armed_calls[i] = __atomic_load_n(&gs_cu_calls[i], __ATOMIC_SEQ_CST);
}

/* Whether the grace after arming is over; gs_cu_grace_lock held. */
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
	if (!gs_config.adopt || !ev || gs_engine_capture_begun())
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
		pthread_mutex_lock(&gs_cu_grace_lock);
		gs_cu_adopt_arm();
		pthread_mutex_unlock(&gs_cu_grace_lock);
		gs_log(GS_LOG_DEBUG, "cuda: a stream waits on another's event: adoption armed");
		return;
	}
	pthread_mutex_lock(&gs_cu_grace_lock);
	bool graced = gs_cu_adopt_graced();
	pthread_mutex_unlock(&gs_cu_grace_lock);
	/* t waits on root's event: the join of a fork of root's from t (root
	 * the side there), and a fork of t from root. */
	if (!graced || !gs_adopt_fork(&gs_cu_adoption, (uintptr_t)t, (uintptr_t)root))
		return;
	uintptr_t rh = (uintptr_t)root;
	/* Again under the lock: a capture that began meanwhile ends adoptions under it. */
	if (gs_adopt_take_begin(&gs_cu_adoption, (uintptr_t)t, &rh) && !gs_engine_capture_begun()) {
		root = (CUstream)rh;
		gs_cu_sref_t ts, rs;
		gs_cu_stream_ref(t, pt, &ts);
		gs_cu_stream_ref(root, 0, &rs);
		bool fits = !(ts.sflags & GS_STREAM_PASSTHRU) && !(rs.sflags & GS_STREAM_PASSTHRU) &&
			    (!(ts.sflags & GS_STREAM_BLOCKING) ||
			     (rs.sflags & (GS_STREAM_LEGACY | GS_STREAM_BLOCKING)));
		CUevent join = fits ? gs_cu_adopt_event_new() : NULL;
		if (join) {
			/* T's held work first, then T's work so far joined into R. */
			gs_cu_flush_stream(t, pt, GS_FLUSH_STREAM, "adopt");
			if (gs_cu_adopt_join(join, (uintptr_t)t, (uintptr_t)root) == CUDA_SUCCESS) {
				gs_adopt_insert(&gs_cu_adoption, (uintptr_t)t, (uintptr_t)root, ctx, join);
				gs_cu_depth++;
				gs_engine_stream_absorb(rs.handle, ctx, rs.sflags);
				gs_cu_depth--;
			} else {
				gs_cu_adopt_event_free(join);
			}
		}
	}
	gs_adopt_take_end(&gs_cu_adoption);
}

gs_cu_adopt_scope_t gs_cu_adopt_enter_on(CUstream *s, bool work)
{
	gs_cu_adopt_scope_t g = { false };
	if (!gs_config.adopt)
		return g;
	gs_adopt_rdlock(&gs_cu_adoption);
	g.locked = true;
	*s = (CUstream)gs_adopt_redirect(&gs_cu_adoption, (uintptr_t)*s);
	if (work)
		gs_adopt_count(&gs_cu_adoption, (uintptr_t)(*s ? *s : CU_STREAM_LEGACY));
	return g;
}

void gs_cu_adopt_unlock(void)
{
	gs_adopt_unlock(&gs_cu_adoption);
}

void gs_cu_adopt_release(CUstream t, const char *api)
{
	if (!gs_config.adopt || !t || t == CU_STREAM_LEGACY || t == CU_STREAM_PER_THREAD)
		return;
	gs_adopt_release(&gs_cu_adoption, (uintptr_t)t, api);
}

void gs_cu_adopt_destroyed(CUstream s, const char *api)
{
	if (!gs_config.adopt || !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return;
	gs_adopt_destroyed(&gs_cu_adoption, (uintptr_t)s, api);
}

void gs_cu_adopt_release_all(const char *api)
{
	if (!gs_config.adopt)
		return;
	gs_adopt_release_all(&gs_cu_adoption, api);
}

void gs_cu_adopt_forget(void)
{
	/* A forked child: the parent's streams are not its own. */
	pthread_mutex_init(&gs_cu_grace_lock, NULL);
	gs_adopt_reset(&gs_cu_adoption);
}
