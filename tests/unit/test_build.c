/* The background builder: learning never stalls the launch path. */
#include "gs_build.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S1 ((uintptr_t)0x5001)

static void step(int n)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	tb_sync(S1, 0);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

Test(build, graphs_are_built_off_the_launch_path)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	tb.build_sleep_ms = 200;
	step(16);
	double t0 = now_ms();
	step(16); /* second sighting: the build is queued, not waited for */
	step(16); /* still building: runs eagerly */
	double dt = now_ms() - t0;
	cr_expect_lt(dt, 100.0, "the launch path waited %.1f ms for a build", dt);
	cr_expect_eq(gs_stats.replays, 0);
	gs_build_wait();
	cr_expect_eq(tb.builds, 1);
	step(16); /* the stream publishes the finished graph on its next call */
	cr_expect_eq(gs_stats.graphs, 1);
	cr_expect_eq(gs_stats.replays, 1, "the sequence replays once its graph is ready");
	tb_check();
}

/* GRAPHSHIM_BUILD_SCHED: the policy the builder thread builds under. */
static int policy_of_builds(const char *sched)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_BUILD_SCHED",
		 sched, NULL);
	step(16);
	step(16);
	gs_build_wait();
	cr_assert_eq(tb.builds, 1);
	return __atomic_load_n(&tb.build_policy, __ATOMIC_ACQUIRE) - 1;
}

Test(build, the_builder_runs_under_the_policy_asked_for)
{
	cr_expect_eq(policy_of_builds("batch"), SCHED_BATCH);
	tb_check();
}

Test(build, an_idle_builder_still_builds)
{
	cr_expect_eq(policy_of_builds("idle"), SCHED_IDLE);
	step(16);
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

Test(build, a_normal_builder_keeps_the_applications_policy)
{
	cr_expect_eq(policy_of_builds("normal"), sched_getscheduler(0));
	tb_check();
}

Test(build, a_stream_destroyed_while_building)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	tb.build_sleep_ms = 100;
	step(16);
	step(16);
	gs_engine_stream_destroy(S1, NULL, "cuStreamDestroy");
	gs_build_wait();
	cr_expect_eq(tb.live_graphs, 0, "the cancelled sequence's graph was released");
	cr_expect_eq(gs_stats.graphs, 0);
	tb_check();
}

/* Wait up to 2 s until n builds have begun. */
static bool builds_began(int n)
{
	for (int i = 0; i < 2000; i++) {
		if (__atomic_load_n(&tb.builds, __ATOMIC_ACQUIRE) >= n)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * A 16-launch step seen twice: its graph is being built (for ms) on return.
 * Waits for the builder stop waiting for a build after leave_ms (and say so
 * after 50 ms).
 */
static void a_build_under_way(int ms, unsigned leave_ms)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	gs_build_patience(50, leave_ms);
	tb.build_sleep_ms = ms;
	step(16);
	step(16);
	cr_assert(builds_began(1));
}

Test(build, a_module_unloaded_while_building)
{
	/* The unload reaches the driver only after the forget returns, and a
	 * graph being built may hold the module's functions: it must be done. */
	a_build_under_way(100, 30000);
	gs_engine_forget_funcs("cuModuleUnload");
	cr_expect_eq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 1,
		     "a build was still running when the module was forgotten");
	cr_expect_eq(tb.live_graphs, 0, "the cancelled sequence's graph was released");
	cr_expect_eq(gs_stats.graphs, 0);
	tb_check();
}

Test(build, a_free_waits_for_the_build_in_progress)
{
	/* A graph whose copy or memset lies on memory freed between its nodes
	 * and its instantiation: an H100's cuGraphInstantiate spun forever. */
	a_build_under_way(100, 30000);
	bool on = gs_engine_free_begin();
	cr_expect(on);
	cr_expect_eq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 1,
		     "a free went ahead while a graph was being built");
	gs_engine_free_end(on);
	gs_build_wait();
	step(16);
	cr_expect_eq(gs_stats.replays, 1, "the graph built is used");
	tb_check();
}

Test(build, a_build_waits_for_a_free_in_progress)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	bool on = gs_engine_free_begin();
	step(16);
	step(16); /* queued: the builder takes it and waits */
	usleep(50 * 1000);
	cr_expect_eq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 0,
		     "a graph was built while the application freed memory");
	gs_engine_free_end(on);
	gs_build_wait();
	cr_expect_eq(tb.builds, 1);
	tb_check();
}

/* What this process wrote to stderr so far (redirected by the test). */
static void stderr_text(char *buf, size_t len)
{
	fflush(stderr);
	FILE *f = cr_get_redirected_stderr();
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
}

Test(build, an_exit_leaves_a_builder_stuck_in_the_driver_behind, .init = cr_redirect_stderr)
{
	/* A driver call that does not return (cuGraphInstantiate spun so on an
	 * H100): the exit says so and ends instead of waiting for ever. */
	a_build_under_way(1500, 200);
	double t0 = now_ms();
	gs_engine_fini();
	double dt = now_ms() - t0;
	cr_expect_lt(dt, 1000.0, "the exit waited %.0f ms for a builder stuck in the driver", dt);
	cr_expect_eq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 0);
	/* It comes back later, to what was left to it: nothing was freed. */
	for (int i = 0; i < 400 && !__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE); i++)
		usleep(10 * 1000);
	cr_expect_eq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 1);
	usleep(50 * 1000); /* its thread ends */
	char err[4096];
	stderr_text(err, sizeof(err));
	cr_expect(strstr(err, "waiting for the builder, which has been building a graph of 16") != NULL,
		  "no word of the wait: %s", err);
	cr_expect(strstr(err, "leaving it behind") != NULL, "no word of leaving it: %s", err);
}

Test(build, a_free_goes_on_past_a_builder_stuck_in_the_driver, .init = cr_redirect_stderr)
{
	a_build_under_way(1000, 200);
	double t0 = now_ms();
	bool on = gs_engine_free_begin();
	double dt = now_ms() - t0;
	cr_expect_not(on, "the free took the lock of a build still in progress");
	cr_expect(dt >= 150.0 && dt < 800.0, "the free waited %.0f ms", dt);
	gs_engine_free_end(on);
	gs_build_patience(50, 10000);
	gs_build_wait(); /* the build does end */
	cr_expect_eq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 1);
	char err[4096];
	stderr_text(err, sizeof(err));
	cr_expect(strstr(err, "waiting for the builder") != NULL, "no word of the wait: %s", err);
	/* The lock is free again: the next free takes it at once. */
	on = gs_engine_free_begin();
	cr_expect(on);
	gs_engine_free_end(on);
	tb_check();
}

Test(build, a_module_unload_goes_on_past_a_builder_stuck_in_the_driver)
{
	/* Its job is cancelled, and the builder frees it when it returns. */
	a_build_under_way(800, 200);
	double t0 = now_ms();
	gs_engine_forget_funcs("cuModuleUnload");
	double dt = now_ms() - t0;
	cr_expect(dt < 600.0, "the unload waited %.0f ms for a builder stuck in the driver", dt);
	gs_build_patience(50, 10000);
	gs_build_wait();
	cr_expect_eq(tb.live_graphs, 0, "the cancelled sequence's graph was released");
	cr_expect_eq(gs_stats.graphs, 0);
}

Test(build, a_long_wait_for_the_builder_is_reported_once, .init = cr_redirect_stderr)
{
	a_build_under_way(400, 10000);
	gs_build_wait(); /* waits the whole build, under the limit */
	cr_expect_eq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 1);
	char err[4096];
	stderr_text(err, sizeof(err));
	const char *first = strstr(err, "waiting for the builder");
	cr_expect(first != NULL, "no word of the wait: %s", err);
	cr_expect(first == NULL || strstr(first + 1, "waiting for the builder") == NULL, "said twice: %s", err);
	tb_check();
}

Test(build, a_build_cancelled_in_the_queue_is_never_built)
{
	const uintptr_t s2 = 0x5002;
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	tb.build_sleep_ms = 100;
	step(16);
	step(16);
	cr_assert(builds_began(1));
	for (int k = 0; k < 2; k++) { /* queued behind the slow build */
		for (int i = 0; i < 8; i++)
			tb_launch(s2, 0x200 + (uintptr_t)i, i, 0);
		tb_sync(s2, 0);
	}
	gs_engine_forget_funcs("cuModuleUnload");
	gs_build_wait();
	cr_expect_eq(tb.builds, 1, "%d builds: the cancelled one was built", tb.builds);
	cr_expect_eq(tb.live_graphs, 0);
	tb_check();
}

Test(build, fini_waits_for_builds)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	tb.build_sleep_ms = 100;
	step(16);
	step(16);
	gs_engine_fini();
	cr_expect_eq(tb.builds, 1);
	cr_expect_eq(tb.live_graphs, 0);
}

Test(build, failure_in_the_background_stays_eager)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	tb.fail_build_at = 1;
	step(16);
	step(16);
	gs_build_wait();
	for (int i = 0; i < 3; i++)
		step(16);
	cr_expect_eq(gs_stats.fallbacks, 1);
	cr_expect_eq(gs_stats.replays, 0);
	tb_check();
}

Test(build, long_sequence_learned_with_short_launch_calls)
{
	/* A 1000-launch step: no launch call may wait for the build. */
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	tb.build_sleep_ms = 50;
	double worst = 0;
	for (int s = 0; s < 4; s++) {
		for (int i = 0; i < 1000; i++) {
			double t0 = now_ms();
			tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
			double dt = now_ms() - t0;
			worst = dt > worst ? dt : worst;
		}
		double t0 = now_ms();
		tb_sync(S1, 0);
		double dt = now_ms() - t0;
		worst = dt > worst ? dt : worst;
	}
	cr_expect_lt(worst, 25.0, "a call waited %.2f ms", worst);
	gs_build_wait();
	tb_check();
}

Test(build, nothing_is_built_while_the_application_captures)
{
	/* A graph call from another thread can invalidate a global-mode capture.
	 * The build must be queued by the capture's own flush, not started
	 * speculatively when the second sighting begins (it could then finish
	 * before the capture, or not, by chance). */
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_SPECULATE", "0",
		 NULL);
	step(16);
	for (int i = 0; i < 16; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	/* The capture's own flush ends the segment and queues the build. */
	gs_engine_capture_begin("cuStreamBeginCapture", NULL);
	usleep(100 * 1000);
	cr_expect_eq(__atomic_load_n(&tb.builds, __ATOMIC_RELAXED), 0, "built during a capture");
	gs_engine_capture_end("cuStreamEndCapture");
	gs_build_wait();
	cr_expect_eq(__atomic_load_n(&tb.builds, __ATOMIC_RELAXED), 1, "built once the capture ended");
	tb_check();
}

static void wait_builds_done(int n)
{
	for (int i = 0; i < 20000 && __atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE) < n; i++)
		usleep(500);
	cr_assert_geq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), n, "the builder never built");
}

/*
 * The third sighting replays even when a build takes longer than a step:
 * the build starts when the second sighting begins like the first.
 */
static void third_step_replays(const char *speculate)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_SPECULATE",
		 speculate, NULL);
	tb.build_sleep_ms = 50;
	step(16);
	tb_launch(S1, 0x100, 0, 0); /* the second sighting begins ... */
	if (!strcmp(speculate, "1"))
		wait_builds_done(1); /* (a step that outlasts the build) */
	for (int i = 1; i < 16; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	tb_sync(S1, 0);
	step(16);
}

Test(build, the_third_sighting_replays_with_a_speculative_build)
{
	third_step_replays("1");
	cr_expect_eq(gs_stats.speculated, 1);
	cr_expect_eq(tb_from_graph_in_last(16), 16, "the third step ran from the graph");
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

Test(build, without_speculation_the_third_sighting_is_eager)
{
	third_step_replays("0");
	cr_expect_eq(gs_stats.speculated, 0);
	cr_expect_eq(tb_from_graph_in_last(16), 0);
	gs_build_wait();
	step(16);
	cr_expect_eq(tb_from_graph_in_last(16), 16);
	tb_check();
}

/*
 * GRAPHSHIM_GATE=eager: no graph is ever launched, not even a chunk built
 * while the rest of its sequence is still being built.  The gate's state
 * was set when the whole build was published, so until then a ready chunk
 * replayed (a forced-eager run of hostwork on the HIP simulator launched
 * one graph, now and then, on a loaded CI machine).
 */
Test(build, forced_eager_replays_no_ready_chunk_while_the_rest_is_built)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "4",
		 "GRAPHSHIM_GATE", "eager", NULL);
	tb.hold_builds_after = 1;
	step(12);
	step(12);
	wait_builds_done(1);
	step(12);
	cr_expect_eq(tb_from_graph_in_last(12), 0, "the ready chunk goes eagerly too");
	__atomic_store_n(&tb.release_builds, 1, __ATOMIC_RELEASE);
	gs_build_wait();
	step(12);
	cr_expect_eq(tb_from_graph_in_last(12), 0);
	cr_expect_eq(gs_stats.replays, 0);
	tb_check();
}

Test(build, ready_chunks_replay_while_the_rest_is_built)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "4",
		 NULL);
	tb.hold_builds_after = 1; /* the first chunk's graph, then the builder stalls */
	step(12);                  /* chunks of 4 and 8 */
	step(12);
	wait_builds_done(1);
	step(12);
	cr_expect_eq(tb_from_graph_in_last(12), 4, "the ready chunk replays, the other goes eagerly");
	cr_expect_eq(gs_stats.mismatches, 0, "a chunk not yet built is no mismatch");
	__atomic_store_n(&tb.release_builds, 1, __ATOMIC_RELEASE);
	gs_build_wait();
	step(12);
	cr_expect_eq(tb_from_graph_in_last(12), 12);
	tb_check();
}

Test(build, a_guess_that_does_not_repeat_is_never_matched)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	step(16);
	step(10); /* begins like the first: built speculatively, but it is another step */
	gs_build_wait();
	cr_expect_eq(gs_stats.speculated, 1);
	step(16); /* the 16-launch step is seen a second time only now */
	cr_expect_eq(tb_from_graph_in_last(16), 0, "not replayed before it repeated");
	step(16);
	cr_expect_eq(tb_from_graph_in_last(16), 16, "replayed once it had repeated");
	tb_check();
}
