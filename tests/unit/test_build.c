/* The background builder: learning never stalls the launch path. */
#include "gs_engine_int.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <time.h>
#include <unistd.h>

#define S1 ((uintptr_t)0x5001)

static void step(int n)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
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
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
		double dt = now_ms() - t0;
		worst = dt > worst ? dt : worst;
	}
	cr_expect_lt(worst, 25.0, "a call waited %.2f ms", worst);
	gs_build_wait();
	tb_check();
}

Test(build, nothing_is_built_while_the_application_captures)
{
	/* A graph call from another thread can invalidate a global-mode capture. */
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	step(16);
	for (int i = 0; i < 16; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	/* The capture's own flush ends the segment and queues the build. */
	gs_engine_capture_begin("cuStreamBeginCapture");
	usleep(100 * 1000);
	cr_expect_eq(__atomic_load_n(&tb.builds, __ATOMIC_RELAXED), 0, "built during a capture");
	gs_engine_capture_end("cuStreamEndCapture");
	gs_build_wait();
	cr_expect_eq(__atomic_load_n(&tb.builds, __ATOMIC_RELAXED), 1, "built once the capture ended");
	tb_check();
}
