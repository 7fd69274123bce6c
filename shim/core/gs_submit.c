/*
 * The submission thread (gs_submit.h).  A ring of jobs: posters append
 * under a lock; one executor at a time (the thread, or a thread that
 * drains) takes them in order under another.  The thread spins a while
 * after its last job (GRAPHSHIM_SUBMIT_SPIN_US), then sleeps until a post
 * wakes it.
 */
#include "gs_clock.h"
#include "gs_config.h"
#include "gs_log.h"
#include "gs_self.h"
#include "gs_seq.h"
#include "gs_stats.h"
#include "gs_submit.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#define GS_SUBMIT_RING 256u   /* jobs pending at most */
#define GS_SUBMIT_INLINE 64u  /* patches a job carries without an allocation */
#define GS_SUBMIT_BUCKETS 4096u /* graphs' last jobs, by a hash of the graph */

typedef struct gs_submit_job {
	void *graph;
	uintptr_t stream;
	gs_rec_t *const *recs;
	struct gs_seq *q;
	uint32_t n, ndiff, base;
	bool var;        /* the graph is a variant's (gs_variant.h) */
	uint32_t *diffs; /* inl, or allocated */
	uint32_t inl[GS_SUBMIT_INLINE];
} gs_submit_job_t;

uint64_t gs_submit_posted, gs_submit_done;
GS_TLS_IE __thread bool gs_submit_running;
const gs_ops_t *gs_submit_raw;

static gs_submit_job_t gs_submit_ring[GS_SUBMIT_RING];
/* The ticket (posted count) of the last job naming a graph of each bucket. */
static uint64_t gs_submit_last[GS_SUBMIT_BUCKETS];

static pthread_mutex_t gs_submit_post_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gs_submit_exec_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gs_submit_sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gs_submit_wake = PTHREAD_COND_INITIALIZER;
static int gs_submit_sleeping; /* atomic: the thread is (about to be) asleep */
static bool gs_submit_quit;    /* under the sleep lock */
static int gs_submit_state;    /* 0 not started, 1 running, 2 could not start */
static pthread_t gs_submit_thread;

static inline void gs_submit_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline uint32_t gs_submit_bucket(const void *graph)
{
	return (uint32_t)(((uintptr_t)graph >> 4) * 0x9E3779B97F4A7C15ull >> 52) &
	       (GS_SUBMIT_BUCKETS - 1);
}

/* The vendor refused a patch or the launch: the records go eagerly, in order. */
static void gs_submit_failed(const gs_submit_job_t *j, gs_mismatch_reason_t why, uint32_t pos, int rc)
{
	for (uint32_t i = 0; i < j->n; i++)
		if (gs_submit_raw->submit(j->recs[i], j->stream))
			gs_log_once(GS_LOG_WARN, "a launch of a refused graph failed when submitted eagerly");
	/* Counted as replayed when posted; what gs_replay_chunk counts when
	 * the vendor refuses it there is nothing of the chunk's. */
	GS_STAT_ADD(released, j->n);
	GS_STAT_ADD(replays, (uint64_t)-1);
	GS_STAT_ADD(replayed, (uint64_t)0 - j->n);
	if (j->ndiff) {
		GS_STAT_ADD(patches, (uint64_t)0 - j->ndiff);
		GS_STAT_ADD(patched_replays, (uint64_t)-1);
	}
	if (j->var)
		GS_STAT_ADD(variant_replays, (uint64_t)-1);
	j->q->sub_fail_pos = pos;
	j->q->sub_fail_rc = rc;
	__atomic_store_n(&j->q->sub_fail, (int)why + 1, __ATOMIC_RELEASE);
}

static void gs_submit_run(gs_submit_job_t *j)
{
	for (uint32_t k = 0; k < j->ndiff; k++) {
		uint32_t d = j->diffs[k];
		int rc = gs_submit_raw->graph_patch(j->graph, d, j->recs[d], NULL);
		if (rc) {
			gs_submit_failed(j, GS_MISMATCH_PATCH_FAILED, j->base + d, rc);
			goto out;
		}
	}
	int rc = gs_submit_raw->graph_launch(j->graph, j->stream);
	if (rc)
		gs_submit_failed(j, GS_MISMATCH_LAUNCH_FAILED, j->base, rc);
out:
	if (j->diffs != j->inl)
		free(j->diffs);
	j->diffs = NULL;
}

/* Run pending jobs until none is left.  Executor lock held. */
static void gs_submit_run_pending(void)
{
	bool was = gs_submit_running;
	gs_submit_running = true;
	for (;;) {
		uint64_t done = __atomic_load_n(&gs_submit_done, __ATOMIC_RELAXED);
		if (done == __atomic_load_n(&gs_submit_posted, __ATOMIC_ACQUIRE))
			break;
		gs_submit_run(&gs_submit_ring[done % GS_SUBMIT_RING]);
		__atomic_store_n(&gs_submit_done, done + 1, __ATOMIC_RELEASE);
	}
	gs_submit_running = was;
}

/*
 * Until every job posted so far has run: the caller runs them where no
 * one is (the thread asleep, or not yet woken), else spins while the
 * thread does (a job is a few driver calls: sleeping on the lock would
 * cost the caller a wake-up as long).
 */
static void gs_submit_until(uint64_t ticket)
{
	for (unsigned spins = 0; __atomic_load_n(&gs_submit_done, __ATOMIC_ACQUIRE) < ticket; spins++) {
		if (!pthread_mutex_trylock(&gs_submit_exec_lock)) {
			gs_submit_run_pending();
			pthread_mutex_unlock(&gs_submit_exec_lock);
			return;
		}
		if (spins < 4096) {
			gs_submit_relax();
		} else {
			sched_yield(); /* the thread in a long driver call (a full launch queue) */
		}
	}
}

void gs_submit_drain_slow(void)
{
	gs_submit_until(__atomic_load_n(&gs_submit_posted, __ATOMIC_ACQUIRE));
}

static void *gs_submit_main(void *arg)
{
	(void)arg;
	gs_submit_running = true;
	gs_self_tl.depth = 1; /* its vendor calls count as launch calls' (GRAPHSHIM_SELFTIME) */
	uint64_t spin = (uint64_t)gs_config.submit_spin_us * 1000u;
	for (;;) {
		pthread_mutex_lock(&gs_submit_exec_lock);
		gs_submit_run_pending();
		pthread_mutex_unlock(&gs_submit_exec_lock);
		uint64_t t0 = gs_clock_ns();
		while (!gs_submit_pending() && gs_clock_ns() - t0 < spin)
			gs_submit_relax();
		if (gs_submit_pending())
			continue;
		pthread_mutex_lock(&gs_submit_sleep_lock);
		__atomic_store_n(&gs_submit_sleeping, 1, __ATOMIC_SEQ_CST);
		while (!gs_submit_pending() && !gs_submit_quit)
			pthread_cond_wait(&gs_submit_wake, &gs_submit_sleep_lock);
		__atomic_store_n(&gs_submit_sleeping, 0, __ATOMIC_RELAXED);
		bool quit = gs_submit_quit && !gs_submit_pending();
		pthread_mutex_unlock(&gs_submit_sleep_lock);
		if (quit)
			return NULL;
	}
}

bool gs_submit_ready(void)
{
	if (!gs_config.submit_thread)
		return false;
	int st = __atomic_load_n(&gs_submit_state, __ATOMIC_ACQUIRE);
	if (GS_LIKELY(st == 1))
		return true;
	if (st == 2)
		return false;
	pthread_mutex_lock(&gs_submit_sleep_lock);
	if (!gs_submit_state) {
		gs_submit_quit = false;
		if (pthread_create(&gs_submit_thread, NULL, gs_submit_main, NULL)) {
			gs_log_once(GS_LOG_WARN, "cannot start the submission thread; chunks are "
				    "patched and launched on the application's threads");
			__atomic_store_n(&gs_submit_state, 2, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&gs_submit_state, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&gs_submit_sleep_lock);
	return __atomic_load_n(&gs_submit_state, __ATOMIC_ACQUIRE) == 1;
}

bool gs_submit_post(void *graph, uintptr_t stream, gs_rec_t *const *recs, uint32_t n,
		    const uint32_t *diffs, uint32_t ndiff, struct gs_seq *q, uint32_t base, bool var)
{
	uint32_t *heap = NULL;
	if (ndiff > GS_SUBMIT_INLINE && !(heap = malloc(ndiff * sizeof(*heap))))
		return false;
	pthread_mutex_lock(&gs_submit_post_lock);
	uint64_t t = __atomic_load_n(&gs_submit_posted, __ATOMIC_RELAXED);
	if (t - __atomic_load_n(&gs_submit_done, __ATOMIC_ACQUIRE) >= GS_SUBMIT_RING)
		gs_submit_drain_slow(); /* full: run them here */
	gs_submit_job_t *j = &gs_submit_ring[t % GS_SUBMIT_RING];
	j->graph = graph;
	j->stream = stream;
	j->recs = recs;
	j->q = q;
	j->n = n;
	j->ndiff = ndiff;
	j->base = base;
	j->var = var;
	j->diffs = heap ? heap : j->inl;
	for (uint32_t k = 0; k < ndiff; k++)
		j->diffs[k] = diffs[k] - base;
	__atomic_store_n(&gs_submit_last[gs_submit_bucket(graph)], t + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&gs_submit_posted, t + 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&gs_submit_post_lock);
	if (__atomic_load_n(&gs_submit_sleeping, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&gs_submit_sleep_lock);
		pthread_cond_signal(&gs_submit_wake);
		pthread_mutex_unlock(&gs_submit_sleep_lock);
	}
	return true;
}

void gs_submit_wait_graph(const void *graph)
{
	uint64_t t = __atomic_load_n(&gs_submit_last[gs_submit_bucket(graph)], __ATOMIC_RELAXED);
	if (GS_LIKELY(__atomic_load_n(&gs_submit_done, __ATOMIC_ACQUIRE) >= t) || gs_submit_running)
		return;
	gs_submit_until(t); /* rarely: a job of the last pass still pending */
}

void gs_submit_stop(void)
{
	gs_submit_drain();
	pthread_mutex_lock(&gs_submit_sleep_lock);
	bool join = __atomic_load_n(&gs_submit_state, __ATOMIC_ACQUIRE) == 1;
	gs_submit_quit = true;
	pthread_cond_signal(&gs_submit_wake);
	pthread_mutex_unlock(&gs_submit_sleep_lock);
	if (join)
		pthread_join(gs_submit_thread, NULL);
	__atomic_store_n(&gs_submit_state, 0, __ATOMIC_RELEASE);
}

/* ---- the table the core calls through ---------------------------------- */

static int gs_submit_w_submit(const gs_rec_t *rec, uintptr_t stream)
{
	gs_submit_drain();
	return gs_submit_raw->submit(rec, stream);
}

static int gs_submit_w_graph_launch(void *graph, uintptr_t stream)
{
	gs_submit_drain();
	return gs_submit_raw->graph_launch(graph, stream);
}

static int gs_submit_w_graph_patch(void *graph, size_t node, const gs_rec_t *rec, const gs_rec_t *old)
{
	gs_submit_drain();
	return gs_submit_raw->graph_patch(graph, node, rec, old);
}

static void gs_submit_w_graph_destroy(void *graph)
{
	gs_submit_drain();
	gs_submit_raw->graph_destroy(graph);
}

static int gs_submit_w_timer_mark(void *timer, int which, uintptr_t stream)
{
	gs_submit_drain();
	return gs_submit_raw->timer_mark(timer, which, stream);
}

static void gs_submit_w_timer_destroy(void *timer)
{
	gs_submit_drain();
	gs_submit_raw->timer_destroy(timer);
}

static void gs_submit_w_event_destroy(uint64_t ev)
{
	gs_submit_drain();
	gs_submit_raw->event_destroy(ev);
}

static gs_ops_t gs_submit_table;

const gs_ops_t *gs_submit_wrap(const gs_ops_t *raw)
{
	gs_submit_raw = raw;
	/* What reaches the vendor drains first; the rest (a build, a timer's
	 * creation or read, a name) is the backend's own.  An operation the
	 * backend left out stays out. */
	gs_submit_table = *raw;
	gs_submit_table.submit = gs_submit_w_submit;
	gs_submit_table.graph_launch = gs_submit_w_graph_launch;
	gs_submit_table.graph_patch = gs_submit_w_graph_patch;
	gs_submit_table.graph_destroy = gs_submit_w_graph_destroy;
	if (raw->timer_mark)
		gs_submit_table.timer_mark = gs_submit_w_timer_mark;
	if (raw->timer_destroy)
		gs_submit_table.timer_destroy = gs_submit_w_timer_destroy;
	if (raw->event_destroy)
		gs_submit_table.event_destroy = gs_submit_w_event_destroy;
	return &gs_submit_table;
}
