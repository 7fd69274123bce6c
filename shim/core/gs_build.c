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
#include "gs_stream.h"

#include <sched.h>
#include <stdlib.h>

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

void gs_build_wait(void)
{
	pthread_mutex_lock(&gs_build_lock);
	while (gs_build_running && ((gs_build_head && !gs_build_paused) || gs_build_busy))
		pthread_cond_wait(&gs_build_idle, &gs_build_lock);
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
	while (gs_build_busy)
		pthread_cond_wait(&gs_build_idle, &gs_build_lock);
	pthread_mutex_unlock(&gs_build_lock);
}

void gs_build_resume(void)
{
	pthread_mutex_lock(&gs_build_lock);
	if (gs_build_paused > 0 && --gs_build_paused == 0)
		pthread_cond_signal(&gs_build_cv);
	pthread_mutex_unlock(&gs_build_lock);
}

void gs_build_stop(void)
{
	pthread_mutex_lock(&gs_build_lock);
	if (!gs_build_running) {
		pthread_mutex_unlock(&gs_build_lock);
		return;
	}
	gs_build_quit = true;
	pthread_cond_signal(&gs_build_cv);
	pthread_mutex_unlock(&gs_build_lock);
	pthread_join(gs_build_thread, NULL); /* it drains the queue first */
	pthread_mutex_lock(&gs_build_lock);
	gs_build_running = false;
	pthread_mutex_unlock(&gs_build_lock);
}

void gs_build_free_enter(void)
{
	pthread_mutex_lock(&gs_build_mem);
}

void gs_build_free_leave(void)
{
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
