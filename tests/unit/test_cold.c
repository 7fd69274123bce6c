/*
 * Cold streams: a stream whose segments stopped repeating keeps no records
 * and passes its launches through (GRAPHSHIM_COLD_AFTER); a repeat, or a
 * segment beginning like an armed sequence, warms it again.
 */
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <pthread.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)
#define LEG ((uintptr_t)0)
#define BLK ((uintptr_t)0xb10c)

/* Step number i of launches that never repeat (functions unique to it). */
static void unique_step(uintptr_t s, unsigned flags, unsigned i, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		cr_assert_eq(tb_launch_on(s, flags, 0x10000 + i * 64 + k, k, i), 0);
	tb_sync(s, flags);
}

/* Start with GRAPHSHIM_COLD_AFTER=2 and make stream s cold. */
static void start_cold(uintptr_t s, unsigned flags, const char *var, const char *val)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "2", var, val, NULL);
	unique_step(s, flags, 0, 8);
	unique_step(s, flags, 1, 8);
	cr_assert_eq(gs_stats.cold_streams, 1);
}

static void step(uintptr_t s, unsigned n, uint64_t a1)
{
	tb_step(s, F, n, a1);
	tb_sync(s, 0);
}

Test(cold, a_stream_goes_cold_after_segments_that_did_not_repeat)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "4", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (unsigned i = 0; i < 3; i++)
		unique_step(S1, 0, i, 8);
	cr_expect_eq(gs_stats.cold_streams, 0);
	unique_step(S1, 0, 3, 8);
	cr_expect_eq(gs_stats.cold_streams, 1, "cold after the 4th new segment in a row");
	for (unsigned i = 4; i < 14; i++)
		unique_step(S1, 0, i, 8);
	tb_check();
	cr_expect_eq(gs_stats.cold_passed, 80, "the 10 cold segments' launches");
	cr_expect_eq(gs_stats.sequences, 4, "nothing learned while cold");
	cr_expect_eq(gs_stats.launches, 112, "fast-path launches are counted");
	cr_expect_eq(gs_stats.passed, 112);
	cr_expect_eq(gs_stats.cold_woken, 0);
}

Test(cold, a_step_that_repeats_warms_the_stream_and_replays_from_its_fifth_sighting)
{
	start_cold(S1, 0, "GRAPHSHIM_PERIOD_AFTER", "1000");
	step(S1, 6, 0);
	cr_expect_eq(gs_stats.cold_woken, 0);
	step(S1, 6, 0);
	cr_expect_eq(gs_stats.cold_woken, 1, "the second cold sighting warms the stream");
	step(S1, 6, 0);
	step(S1, 6, 0);
	cr_expect_eq(tb.builds, 1, "learned from the 3rd and 4th sightings");
	cr_expect_eq(gs_stats.replayed, 0);
	step(S1, 6, 0);
	cr_expect_eq(gs_stats.replayed, 6);
	for (int i = 0; i < 10; i++)
		step(S1, 6, 0);
	cr_expect_eq(gs_stats.replayed, 66);
	cr_expect_eq(gs_stats.cold_streams, 1, "a replaying stream stays warm");
	tb_check();
}

Test(cold, a_segment_that_begins_like_an_armed_sequence_wakes_the_stream_at_once)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "3", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (int i = 0; i < 3; i++)
		step(S1, 6, 0);
	cr_assert_eq(gs_stats.replayed, 6);
	for (unsigned i = 0; i < 3; i++)
		unique_step(S1, 0, i, 8);
	cr_assert_eq(gs_stats.cold_streams, 1);
	step(S1, 6, 7);
	cr_expect_eq(gs_stats.cold_woken, 1);
	cr_expect_eq(gs_stats.replayed, 12, "the step replays (patched) the first time it comes back");
	tb_check();
}

Test(cold, repeating_steps_never_go_cold)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "1", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (int i = 0; i < 50; i++)
		step(S1, 6, (uint64_t)i);
	cr_expect_eq(gs_stats.cold_streams, 1, "only after the first step, the only new one");
	cr_expect_eq(gs_stats.cold_woken, 1);
	cr_expect_geq(gs_stats.replayed, 6 * 40);
	tb_check();
}

Test(cold, zero_turns_it_off)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "0", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (unsigned i = 0; i < 40; i++)
		unique_step(S1, 0, i, 8);
	tb_check();
	cr_expect_eq(gs_stats.cold_streams, 0);
	cr_expect_eq(gs_stats.cold_passed, 0);
	cr_expect_eq(gs_stats.sequences, 40);
}

Test(cold, a_long_cold_segment_wakes_for_period_detection)
{
	start_cold(S1, 0, "GRAPHSHIM_PERIOD_AFTER", "50");
	for (int i = 0; i < 100; i++)
		tb_step(S1, F, 5, 0); /* no boundary */
	cr_expect_eq(gs_stats.cold_woken, 1, "woken at 50 launches");
	cr_expect_eq(gs_stats.periods, 1, "found once detection ran 50 launches");
	cr_expect_geq(gs_stats.replayed, 5 * 70);
	tb_check();
}

Test(cold, a_cold_blocking_stream_submits_held_legacy_work_first)
{
	start_cold(BLK, GS_STREAM_BLOCKING, "GRAPHSHIM_PERIOD", "0");
	/* The legacy stream learns F[0..4) and holds half of a third step. */
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < 4; k++)
			tb_launch_on(LEG, GS_STREAM_LEGACY, F[k], k, 0);
		tb_sync(LEG, GS_STREAM_LEGACY);
	}
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[0], 0, 0);
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[1], 1, 0);
	cr_assert_eq(gs_stats.held, 2);
	/* The first launch of a cold segment takes the full path ... */
	tb_launch_on(BLK, GS_STREAM_BLOCKING, 0x9001, 1, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_LEGACY], 1);
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[0], 0, 0);
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[1], 1, 0);
	cr_assert_eq(gs_stats.held, 4, "held again");
	size_t before = tb.nexec;
	/* ... the next one the fast path, which must flush the legacy stream too. */
	tb_launch_on(BLK, GS_STREAM_BLOCKING, 0x9002, 2, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_LEGACY], 2);
	cr_assert_eq(tb.nexec, before + 3);
	cr_expect_eq(tb.exec[before].func, F[0]);
	cr_expect_eq(tb.exec[before + 1].func, F[1]);
	cr_expect_eq(tb.exec[before + 2].func, 0x9002, "after the held legacy launches");
	cr_expect_eq(gs_stats.cold_woken, 0, "still cold: that was the fast path");
	tb_check();
}

static void *flush_all_elsewhere(void *arg)
{
	(void)arg;
	gs_engine_flush_all(GS_FLUSH_SYNC, "another thread's sync");
	return NULL;
}

Test(cold, segments_cut_by_another_threads_flush_do_not_count)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "2", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (unsigned i = 0; i < 10; i++) {
		for (unsigned k = 0; k < 8; k++)
			tb_launch(S1, 0x10000 + i * 64 + k, k, i);
		pthread_t t;
		cr_assert_eq(pthread_create(&t, NULL, flush_all_elsewhere, NULL), 0);
		pthread_join(t, NULL);
	}
	cr_expect_eq(gs_stats.cold_streams, 0, "another thread's flushes say nothing");
	unique_step(S1, 0, 10, 8);
	unique_step(S1, 0, 11, 8);
	cr_expect_eq(gs_stats.cold_streams, 1, "this thread's own syncs do");
	tb_check();
}
