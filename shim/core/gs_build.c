/*
 * The background builder: one thread that builds and instantiates graphs,
 * so that learning a long sequence never stalls the application's launch
 * path.  A sequence waits in state BUILDING (never matched, never evicted)
 * and is published by its stream's own next call once its graphs are
 * ready (see gs_seq_t.handoff).  A sequence dropped meanwhile is freed here.
 */
#include "gs_arm.h"
#include "gs_build.h"
#include "gs_clock.h"
#include "gs_log.h"
#include "gs_self.h"
#include "gs_stream.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t gs_build_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gs_build_cv = PTHREAD_COND_INITIALIZER;   /* work queued */
static pthread_cond_t gs_build_idle = PTHREAD_COND_INITIALIZER; /* queue drained */
static gs_seq_t *gs_build_head, *gs_build_tail;
static bool gs_build_running, gs_build_busy, gs_build_quit;
static int gs_build_paused; /* application captures in progress */
static pthread_t gs_build_thread;
/*
 * Held by the builder while it builds a job's graphs, and by the
 * application's thread across a call that frees memory.  The driver checks
 * a copy's or memset's pointers when it adds the node (graphshim checks
 * them before: a node on memory freed since the pass goes on a stand-in,
 * cu_stand.c), and a free between that and the instantiation left a graph
 * whose node lies on memory that is gone.  A free waits for the build in
 * progress, a few milliseconds, at most once a build; a build waits for the
 * free.  Builds on the application's own thread (GRAPHSHIM_ASYNC_BUILD=0)
 * need nothing: no free runs during them.
 */
static pthread_mutex_t gs_build_mem = PTHREAD_MUTEX_INITIALIZER;

/*
 * A build is a few driver calls that return in milliseconds, but a driver
 * can fail to return: on an H100 cuGraphInstantiate spun forever on a graph
 * with a node on freed memory (gs_build_mem), and the program hung at its
 * next module unload, which waits for the build in progress, with nothing
 * said.  So a wait for the builder that lasts says so, once a build, and
 * no wait goes on past gs_build_leave_ms of one build: the program goes on
 * (the job was cancelled, or at the exit is left to the builder, which is
 * left behind), and graphshim's statistics are written.  The build in
 * progress: when it began (gs_clock_ns) and its records.
 */
static uint64_t gs_build_began;
static uint32_t gs_build_recs;
static uint64_t gs_build_told; /* gs_build_began of the build reported last */
static unsigned gs_build_warn_ms = 5000, gs_build_leave_ms = 30000;

/*
 * GRAPHSHIM_BUILD_SCHED.  The builder wakes when a launch call queues a
 * build, and a woken thread of the ordinary policy may take the CPU of the
 * thread that woke it: the application's, for the whole build (1-3 ms on
 * the H100 host).  SCHED_BATCH and SCHED_IDLE never preempt on waking.
 * Lowering its own policy needs no privilege.
 */
static void gs_build_set_sched(void)
{
#if defined(SCHED_BATCH) && defined(SCHED_IDLE)
	int policy;
	switch (gs_config.build_sched) {
	case GS_BUILD_SCHED_BATCH:
		policy = SCHED_BATCH;
		break;
	case GS_BUILD_SCHED_IDLE:
		policy = SCHED_IDLE;
		break;
	default:
		return;
	}
	struct sched_param p = { .sched_priority = 0 };
	int rc = pthread_setschedparam(pthread_self(), policy, &p);
	if (rc)
		gs_log_once(GS_LOG_WARN, "cannot set the builder thread's scheduling policy (error %d); it keeps the application's",
			    rc);
#endif
}

static void *gs_build_main(void *arg)
{
	(void)arg;
	gs_build_set_sched();
	pthread_mutex_lock(&gs_build_lock);
	for (;;) {
		while ((!gs_build_head || gs_build_paused) && !gs_build_quit)
			pthread_cond_wait(&gs_build_cv, &gs_build_lock);
		if (!gs_build_head)
			break;
		gs_seq_t *q = gs_build_head;
		gs_build_head = q->job_next;
		if (!gs_build_head)
			gs_build_tail = NULL;
		gs_build_busy = true;
		gs_build_began = gs_clock_ns();
		gs_build_recs = q->n;
		pthread_mutex_unlock(&gs_build_lock);

		/*
		 * A job cancelled while queued is not built: its stream or its
		 * module may be gone, and a module's functions must not reach
		 * the driver after it was unloaded (gs_engine_forget_funcs).
		 */
		int expect = GS_HANDOFF_BUILDING;
		bool live = __atomic_load_n(&q->handoff, __ATOMIC_ACQUIRE) == expect;
		if (live) {
			pthread_mutex_lock(&gs_build_mem);
			uint64_t t0 = gs_clock_ns();
			q->build_rc = gs_arm_build(q);
			q->build_dt = gs_clock_ns() - t0;
			pthread_mutex_unlock(&gs_build_mem);
		}
		gs_stream_t *s = q->owner; /* stream states are never freed */
		if (live && __atomic_compare_exchange_n(&q->handoff, &expect, GS_HANDOFF_BUILT, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			__atomic_add_fetch(&s->cache.built, 1, __ATOMIC_RELEASE);
		else
			gs_seq_free(q); /* cancelled while queued or being built */

		pthread_mutex_lock(&gs_build_lock);
		gs_build_busy = false;
		pthread_cond_broadcast(&gs_build_idle); /* pause and wait both watch this */
	}
	pthread_cond_broadcast(&gs_build_idle);
	pthread_mutex_unlock(&gs_build_lock);
	return NULL;
}

/* Start the thread if it is not running; build lock held.  True on failure. */
static bool gs_build_spawn(void)
{
	if (gs_build_running)
		return false;
	gs_build_quit = false;
	if (pthread_create(&gs_build_thread, NULL, gs_build_main, NULL)) {
		gs_log_once(GS_LOG_WARN, "cannot start the builder thread; building in place");
		return true;
	}
	gs_build_running = true;
	return false;
}

/*
 * Started with the engine: creating a thread took up to 150 us on the H100
 * host, which the first sequence armed used to pay inside a launch call.
 */
void gs_build_start(void)
{
	pthread_mutex_lock(&gs_build_lock);
	gs_build_spawn();
	pthread_mutex_unlock(&gs_build_lock);
}

bool gs_build_submit(gs_seq_t *q)
{
	pthread_mutex_lock(&gs_build_lock);
	if (gs_build_spawn()) {
		pthread_mutex_unlock(&gs_build_lock);
		return true;
	}
	q->job_next = NULL;
	if (gs_build_tail)
		gs_build_tail->job_next = q;
	else
		gs_build_head = q;
	gs_build_tail = q;
	pthread_cond_signal(&gs_build_cv);
	pthread_mutex_unlock(&gs_build_lock);
	return false;
}

/*
 * How long the build in progress has been going, in ms (0: none); said once
 * a build when a wait has lasted gs_build_warn_ms.  Build lock held.
 */
static uint64_t gs_build_age(void)
{
	if (!gs_build_busy)
		return 0;
	uint64_t ms = (gs_clock_ns() - gs_build_began) / 1000000u;
	if (ms >= gs_build_warn_ms && gs_build_told != gs_build_began) {
		gs_build_told = gs_build_began;
		gs_log(GS_LOG_WARN, "waiting for the builder, which has been building a graph of %u "
		       "operations for %llu ms, inside the driver; if the driver never returns, the "
		       "program hangs here: please report it, and run with GRAPHSHIM_ENABLE=0 meanwhile",
		       (unsigned)gs_build_recs, (unsigned long long)ms);
	}
	return ms;
}

/* 100 ms from now, for a timed wait: a long wait looks at the build that often. */
static void gs_build_deadline(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += 100 * 1000000L;
	if (ts->tv_nsec >= 1000000000L)
		ts->tv_sec++, ts->tv_nsec -= 1000000000L;
}

/* What each wait for the builder waits for; build lock held. */
static bool gs_build_more_wait(void)
{
	return gs_build_running && ((gs_build_head && !gs_build_paused) || gs_build_busy);
}

static bool gs_build_more_pause(void)
{
	return gs_build_busy;
}

static bool gs_build_more_stop(void)
{
	return gs_build_head || gs_build_busy;
}

/*
 * Wait on gs_build_idle while more(), build lock held: true once more() is
 * false, false when the build in progress has gone on for
 * gs_build_leave_ms (a builder stuck in the driver is not waited for: the
 * program goes on, where it would hang; its job was cancelled or, at the
 * exit, is left to it).
 */
static bool gs_build_await(bool (*more)(void))
{
	while (more()) {
		if (gs_build_age() >= gs_build_leave_ms)
			return false;
		struct timespec ts;
		gs_build_deadline(&ts);
		pthread_cond_timedwait(&gs_build_idle, &gs_build_lock, &ts);
	}
	return true;
}

void gs_build_wait(void)
{
	pthread_mutex_lock(&gs_build_lock);
	gs_build_await(gs_build_more_wait);
	pthread_mutex_unlock(&gs_build_lock);
}

void gs_build_patience(unsigned warn_ms, unsigned leave_ms)
{
	pthread_mutex_lock(&gs_build_lock);
	gs_build_warn_ms = warn_ms;
	gs_build_leave_ms = leave_ms;
	pthread_mutex_unlock(&gs_build_lock);
}

/*
 * While the application captures a stream in the global mode, a graph API
 * call from any other thread may invalidate its capture.  The builder
 * finishes the build in progress, then waits until every capture ended.
 */
void gs_build_pause(void)
{
	pthread_mutex_lock(&gs_build_lock);
	gs_build_paused++;
	gs_build_await(gs_build_more_pause);
	pthread_mutex_unlock(&gs_build_lock);
}

void gs_build_resume(void)
{
	pthread_mutex_lock(&gs_build_lock);
	if (gs_build_paused > 0 && --gs_build_paused == 0)
		pthread_cond_signal(&gs_build_cv);
	pthread_mutex_unlock(&gs_build_lock);
}

bool gs_build_stop(void)
{
	pthread_mutex_lock(&gs_build_lock);
	if (!gs_build_running) {
		pthread_mutex_unlock(&gs_build_lock);
		return false;
	}
	gs_build_quit = true;
	pthread_cond_signal(&gs_build_cv);
	bool drained = gs_build_await(gs_build_more_stop); /* it drains the queue first */
	uint64_t ms = drained ? 0 : gs_build_age();
	pthread_mutex_unlock(&gs_build_lock);
	if (!drained) {
		gs_log(GS_LOG_WARN, "the builder has been inside the driver for %llu ms, building a graph "
		       "of %u operations: leaving it behind (its graphs are not released)",
		       (unsigned long long)ms, (unsigned)gs_build_recs);
		pthread_detach(gs_build_thread);
	} else {
		pthread_join(gs_build_thread, NULL);
	}
	pthread_mutex_lock(&gs_build_lock);
	gs_build_running = false;
	pthread_mutex_unlock(&gs_build_lock);
	return !drained;
}

bool gs_build_free_enter(void)
{
	if (pthread_mutex_trylock(&gs_build_mem) == 0)
		return true;
	gs_self_did(GS_SELF_DID_WAIT);
	for (;;) {
		pthread_mutex_lock(&gs_build_lock);
		uint64_t ms = gs_build_age();
		pthread_mutex_unlock(&gs_build_lock);
		/* A builder stuck this long in the driver is past freeing under it. */
		if (ms >= gs_build_leave_ms)
			return false;
		struct timespec ts;
		gs_build_deadline(&ts);
		if (pthread_mutex_timedlock(&gs_build_mem, &ts) == 0)
			return true;
	}
}

void gs_build_free_leave(bool locked)
{
	if (locked)
		pthread_mutex_unlock(&gs_build_mem);
}

void gs_build_forget(void)
{
	pthread_mutex_init(&gs_build_mem, NULL);
	pthread_mutex_init(&gs_build_lock, NULL);
	pthread_cond_init(&gs_build_cv, NULL);
	pthread_cond_init(&gs_build_idle, NULL);
	gs_build_head = gs_build_tail = NULL;
	gs_build_running = gs_build_busy = gs_build_quit = false;
	gs_build_paused = 0;
}
