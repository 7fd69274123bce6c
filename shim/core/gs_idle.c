/*
 * The idle watchdog (gs_idle.h): its thread.  What it does to a stream is
 * the engine's (gs_engine_idle_scan), under the engine's locks.
 */
#include "gs_clock.h"
#include "gs_config.h"
#include "gs_engine.h"
#include "gs_idle.h"
#include "gs_lane.h"
#include "gs_log.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

/* OFF: may start; STOPPED: the engine ended, none may start until it begins again. */
enum { GS_IDLE_OFF, GS_IDLE_RUNNING, GS_IDLE_FAILED, GS_IDLE_STOPPED };

static pthread_mutex_t gs_idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gs_idle_cv; /* on CLOCK_MONOTONIC; made with the thread */
static int gs_idle_state;         /* GS_IDLE_*, read without the lock on the launch path */
static bool gs_idle_quit;
static pthread_t gs_idle_thread;

/* The time ns from now on the condition's clock (CLOCK_MONOTONIC, gs_clock.h). */
static struct timespec gs_idle_after(uint64_t ns)
{
	uint64_t t = gs_clock_ns() + ns;
	return (struct timespec){ (time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL) };
}

static void *gs_idle_main(void *arg)
{
	(void)arg;
	/* Half the idle time between looks: a stream is idle at the second
	 * look that finds it holding the same records, so it waits
	 * GRAPHSHIM_IDLE_US / 2 to GRAPHSHIM_IDLE_US. */
	uint64_t period = (uint64_t)gs_config.idle_us * 500u;
	if (period < 1000)
		period = 1000;
	pthread_mutex_lock(&gs_idle_lock);
	while (!gs_idle_quit) {
		struct timespec t = gs_idle_after(period);
		pthread_cond_timedwait(&gs_idle_cv, &gs_idle_lock, &t);
		if (gs_idle_quit)
			break;
		pthread_mutex_unlock(&gs_idle_lock);
		if (__atomic_load_n(&gs_hot.held_streams, __ATOMIC_RELAXED) && gs_engine_active())
			gs_engine_idle_scan();
		pthread_mutex_lock(&gs_idle_lock);
	}
	pthread_mutex_unlock(&gs_idle_lock);
	return NULL;
}

void gs_idle_start(void)
{
	if (GS_LIKELY(__atomic_load_n(&gs_idle_state, __ATOMIC_ACQUIRE) != GS_IDLE_OFF) ||
	    !gs_config.idle_us)
		return;
	pthread_mutex_lock(&gs_idle_lock);
	if (gs_idle_state == GS_IDLE_OFF) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&gs_idle_cv, &ca);
		pthread_condattr_destroy(&ca);
		gs_idle_quit = false;
		/* Every signal blocked in the thread: the application's handlers,
		 * and graphshim's own (gs_sig.h), run on the application's threads. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int rc = pthread_create(&gs_idle_thread, NULL, gs_idle_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc) {
			pthread_cond_destroy(&gs_idle_cv);
			gs_log_once(GS_LOG_WARN, "cannot start the idle watchdog (error %d): launches held "
				    "when a program stops calling wait for its next call", rc);
		}
		__atomic_store_n(&gs_idle_state, rc ? GS_IDLE_FAILED : GS_IDLE_RUNNING, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&gs_idle_lock);
}

void gs_idle_stop(void)
{
	pthread_mutex_lock(&gs_idle_lock);
	int state = gs_idle_state;
	if (state == GS_IDLE_RUNNING) {
		gs_idle_quit = true;
		pthread_cond_signal(&gs_idle_cv);
	}
	pthread_mutex_unlock(&gs_idle_lock);
	if (state == GS_IDLE_RUNNING) {
		pthread_join(gs_idle_thread, NULL);
		pthread_cond_destroy(&gs_idle_cv);
	}
	/* Under the lock: a launch held meanwhile on another thread does not
	 * start another one while the engine ends. */
	pthread_mutex_lock(&gs_idle_lock);
	__atomic_store_n(&gs_idle_state, GS_IDLE_STOPPED, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&gs_idle_lock);
}

void gs_idle_allow(void)
{
	pthread_mutex_lock(&gs_idle_lock);
	if (gs_idle_state == GS_IDLE_STOPPED || gs_idle_state == GS_IDLE_FAILED)
		__atomic_store_n(&gs_idle_state, GS_IDLE_OFF, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&gs_idle_lock);
}

bool gs_idle_running(void)
{
	return __atomic_load_n(&gs_idle_state, __ATOMIC_ACQUIRE) == GS_IDLE_RUNNING;
}

void gs_idle_forget(void)
{
	pthread_mutex_init(&gs_idle_lock, NULL);
	gs_idle_quit = false;
	__atomic_store_n(&gs_idle_state, GS_IDLE_OFF, __ATOMIC_RELEASE);
}
