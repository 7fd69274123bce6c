/*
 * Cold streams: a stream whose segments stopped repeating keeps no records
 * and passes its launches through (GRAPHSHIM_COLD_AFTER); a repeat, or a
 * segment beginning like an armed sequence, warms it again.
 */
#include "gs_stream.h"
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

/*
 * Who recorded an event last is noted on a cold stream too: a side stream
 * goes cold between its marks, and its root's wait on the event it records
 * must name it (GRAPHSHIM_ADOPT's forks are told by it, cu_adopt.c).
 */
Test(cold, a_cold_streams_record_is_the_events_last)
{
	start_cold(S1, 0, NULL, NULL);
	uintptr_t h = 0;
	void *ctx = (void *)1;
	tb_mark(BLK, 300, 1);
	cr_assert(gs_engine_event_origin(300, &h, &ctx));
	cr_expect_eq(h, BLK);
	tb_mark(S1, 300, 1);
	cr_assert(gs_engine_event_origin(300, &h, &ctx), "recorded by a cold stream");
	cr_expect_eq(h, S1);
	cr_expect_null(ctx);
	tb_mark(S1, 301, 2);
	cr_expect_not(gs_engine_event_origin(301, &h, &ctx), "a wait records nothing");
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

/*
 * Steps seen twice S4 S4 among new ones: a repeat that keeps the stream
 * warm, unless the stream evicts (its steps do not fit its cache, and a
 * step seen before there may be so by chance: only a step matched whole
 * is a repeat).
 */
static void seen_twice_among_new(const char *max_seqs)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "5", "GRAPHSHIM_PERIOD_AFTER", "1000",
		 "GRAPHSHIM_MAX_SEQS", max_seqs, NULL);
	for (unsigned i = 0; i < 4; i++)
		unique_step(S1, 0, i, 8);
	unique_step(S1, 0, 3, 8); /* the 4th again: seen before, not matched */
	unique_step(S1, 0, 4, 8);
	tb_check();
}

Test(cold, a_step_seen_before_is_a_repeat)
{
	seen_twice_among_new("64");
	cr_expect_eq(gs_stats.evictions, 0);
	cr_expect_eq(gs_stats.cold_streams, 0, "the repeat began the count again");
}

Test(cold, on_a_stream_that_evicts_only_a_step_matched_whole_is_a_repeat)
{
	seen_twice_among_new("3");
	cr_expect_geq(gs_stats.evictions, 1);
	cr_expect_eq(gs_stats.cold_streams, 1, "five segments, none matched whole");
}

/*
 * Steps first seen while the stream was cold are new to the learner when
 * it wakes; the first of them to diverge from an armed step is spared, as
 * a sibling seen before is (a loop of many branches whose first pass made
 * the stream cold retired its armed steps one after another).
 */
Test(cold, a_new_sibling_just_after_waking_spares_the_armed_step)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "2", "GRAPHSHIM_PERIOD_AFTER", "1000",
		 "GRAPHSHIM_FORGIVE", "1", NULL);
	step(S1, 6, 0);
	step(S1, 6, 0); /* armed */
	unique_step(S1, 0, 0, 8);
	unique_step(S1, 0, 1, 8);
	cr_assert_eq(gs_stats.cold_streams, 1);
	step(S1, 6, 0); /* begins like the armed step: wakes, replays */
	cr_assert_eq(gs_stats.cold_woken, 1);
	const uintptr_t sib[6] = { F[0], F[1], F[2], 0xa7, F[4], F[5] };
	tb_step(S1, sib, 6, 0); /* new, diverges at 3: one pass, one mismatch */
	tb_sync(S1, 0);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 1);
	cr_expect_eq(gs_stats.forgiven, 1);
	tb_check();
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

/* Another thread's cuMemFree: a flush of every stream that ends their
 * segments (another thread's sync no longer does where nothing is held). */
static void flush_all_elsewhere(void)
{
	tb_flush_all_elsewhere(GS_FLUSH_FREE);
}

Test(cold, segments_cut_by_another_threads_flush_do_not_count)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "2", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (unsigned i = 0; i < 10; i++) {
		for (unsigned k = 0; k < 8; k++)
			tb_launch(S1, 0x10000 + i * 64 + k, k, i);
		flush_all_elsewhere();
	}
	cr_expect_eq(gs_stats.cold_streams, 0, "another thread's flushes say nothing");
	unique_step(S1, 0, 10, 8);
	unique_step(S1, 0, 11, 8);
	cr_expect_eq(gs_stats.cold_streams, 1, "this thread's own syncs do");
	tb_check();
}

/*
 * Nor in the other direction: a learned step cut short by another thread's
 * flush (the place is that thread's, not this stream's) does not make the
 * segments this thread ended before it count for nothing.
 */
Test(cold, a_repeat_that_another_threads_flush_ends_does_not_reset_the_count)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "2", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (unsigned i = 0; i < 3; i++)
		step(S1, 6, 0); /* learned and armed, own syncs: repeats */
	unique_step(S1, 0, 0, 8);
	cr_assert_eq(gs_stats.cold_streams, 0, "one new segment in a row");
	tb_step(S1, F, 6, 0);
	flush_all_elsewhere();
	unique_step(S1, 0, 1, 8);
	cr_expect_eq(gs_stats.cold_streams, 1, "the second new segment this thread ended");
	tb_check();
}

/* ---- the cold lane (gs_engine_cold_cached) -------------------------------- */

#define S2 ((uintptr_t)0x5002)

Test(cold, the_lane_takes_a_cold_segment_of_a_stream_with_nothing_armed)
{
	start_cold(S1, 0, "GRAPHSHIM_PERIOD_AFTER", "1000");
	uint64_t launches = gs_stats.launches;
	tb.lane_hits = tb.cold_hits = 0;
	unique_step(S1, 0, 2, 8);
	cr_expect_eq(tb.lane_hits, 8, "the first too: no armed sequence it could begin");
	cr_expect_eq(tb.cold_hits, 0);
	unique_step(S1, 0, 3, 8);
	cr_expect_eq(tb.lane_hits, 16);
	tb_check();
	cr_expect_eq(gs_stats.launches, launches + 16, "the lane's launches are counted");
	cr_expect_eq(gs_stats.cold_passed, 16);
}

/* A segment of one launch and a sync, over and over (Thrust's default policy): all through the lane. */
Test(cold, the_lane_takes_segments_of_one_launch)
{
	start_cold(S1, 0, "GRAPHSHIM_PERIOD_AFTER", "1000");
	tb.lane_hits = 0;
	for (unsigned i = 0; i < 20; i++)
		unique_step(S1, 0, 2 + i, 1);
	cr_expect_eq(tb.lane_hits, 20);
	tb_check();
}

Test(cold, the_lane_leaves_a_segments_first_launch_where_a_sequence_is_armed)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "3", "GRAPHSHIM_PERIOD_AFTER", "1000", NULL);
	for (int i = 0; i < 3; i++)
		step(S1, 6, 0);
	cr_assert_gt(gs_stats.replayed, 0, "a step armed on S1");
	for (unsigned i = 0; i < 3; i++)
		unique_step(S1, 0, i, 8);
	cr_assert_eq(gs_stats.cold_streams, 1);
	tb.lane_hits = tb.cold_hits = 0;
	unique_step(S1, 0, 3, 8);
	cr_expect_eq(tb.lane_hits, 7, "all but the first, which may begin the armed step and wake the stream");
	tb_check();
}

Test(cold, the_lane_knows_only_the_threads_last_stream)
{
	start_cold(S1, 0, "GRAPHSHIM_PERIOD_AFTER", "1000");
	tb.lane_hits = tb.cold_hits = 0;
	tb_launch(S1, 0x7001, 0, 0); /* the segment's first: nothing armed on S1, the lane too */
	tb_launch(S1, 0x7002, 0, 0);
	cr_expect_eq(tb.lane_hits, 2);
	tb_launch(S2, 0x7003, 0, 0); /* a warm stream: recorded */
	tb_launch(S1, 0x7004, 0, 0);
	cr_expect_eq(tb.lane_hits, 2, "S2 took the thread's cache");
	cr_expect_eq(tb.cold_hits, 1, "the full lookup takes it, and caches S1 again");
	tb_launch(S1, 0x7005, 0, 0);
	cr_expect_eq(tb.lane_hits, 3);
	tb_sync(S1, 0);
	tb_sync(S2, 0);
	tb_check();
}

/* S1 cold, in a segment, and this thread's last stream: in the lane. */
static void start_in_lane(void)
{
	start_cold(S1, 0, "GRAPHSHIM_PERIOD_AFTER", "1000");
	tb_launch(S1, 0x7001, 0, 0);
	tb_launch(S1, 0x7002, 0, 0);
	cr_assert_eq(tb.lane_hits, 2);
	tb.lane_hits = tb.cold_hits = 0;
}

Test(cold, a_destroyed_stream_leaves_the_lane)
{
	start_in_lane();
	gs_engine_stream_destroy(S1, NULL, "tb_destroy");
	/* A new stream with the old handle is a new, warm stream. */
	uint64_t held = gs_stats.held, passed = gs_stats.passed;
	tb_launch(S1, 0x7003, 0, 0);
	tb_launch(S1, 0x7004, 0, 0);
	cr_expect_eq(tb.lane_hits + tb.cold_hits, 0);
	cr_expect_eq(gs_stats.held + gs_stats.passed, held + passed + 2, "full-path launches");
	tb_sync(S1, 0);
	tb_check();
}

Test(cold, a_destroyed_stream_leaves_the_threads_recent_streams)
{
	start_in_lane();
	tb_launch(S2, 0x7003, 0, 0); /* S1 is now one of the thread's recent streams, not its last */
	gs_engine_stream_destroy(S1, NULL, "tb_destroy");
	uint64_t held = gs_stats.held, passed = gs_stats.passed;
	tb_launch(S1, 0x7004, 0, 0);
	tb_launch(S1, 0x7005, 0, 0);
	cr_expect_eq(tb.lane_hits + tb.cold_hits, 0, "a new, warm stream, not the cold one");
	cr_expect_eq(gs_stats.held + gs_stats.passed, held + passed + 2, "full-path launches");
	tb_sync(S1, 0);
	tb_sync(S2, 0);
	tb_check();
}

Test(cold, a_thread_turning_among_many_streams_finds_each_ones_state)
{
	/* Streams in turn, several sharing a slot of the thread's recent ones
	 * (gs_stream_recent: 15 handles 16 bytes apart fill 9 of its 32):
	 * a state found for the wrong stream would take its records. */
	enum { N = 15, ROUNDS = 3 };
	tb_start(NULL);
	for (int round = 0; round < ROUNDS; round++)
		for (uintptr_t i = 0; i < N; i++)
			tb_launch(0x9000 + 0x10 * i, 0x7100 + i, (uint64_t)round, 0);
	for (uintptr_t i = 0; i < N; i++) {
		gs_stream_t *s = gs_stream_lookup(0x9000 + 0x10 * i, NULL, 0);
		cr_assert(s);
		cr_expect_eq(s->pos, ROUNDS, "stream %u has its own %d records", (unsigned)i, ROUNDS);
		cr_expect_eq(s->key.handle, 0x9000 + 0x10 * i);
	}
	for (uintptr_t i = 0; i < N; i++)
		tb_sync(0x9000 + 0x10 * i, 0);
	tb_check();
}

Test(cold, no_lane_during_an_application_capture)
{
	start_in_lane();
	gs_engine_capture_begin("tb_capture", NULL);
	tb_launch(S1, 0x7003, 0, 0);
	tb_launch(S1, 0x7004, 0, 0);
	gs_engine_capture_end("tb_capture");
	cr_expect_eq(tb.lane_hits + tb.cold_hits, 0, "a capture passes everything straight through");
	tb_sync(S1, 0);
	tb_check();
}

static void *flush_all_often(void *arg)
{
	for (int i = 0; i < 2000 && !__atomic_load_n((int *)arg, __ATOMIC_ACQUIRE); i++)
		gs_engine_flush_all(GS_FLUSH_SYNC, "another thread's sync");
	return NULL;
}

/*
 * The lane counts a launch into the segment under the segment's own lock,
 * which another thread's flush (ending the segment) takes too: no launch
 * is lost from the counts or counted twice (and TSan sees no race).
 */
Test(cold, the_lane_and_another_threads_flushes_count_every_launch)
{
	start_cold(S1, 0, "GRAPHSHIM_PERIOD_AFTER", "1000");
	uint64_t launches = gs_stats.launches;
	tb.lane_hits = tb.cold_hits = 0;
	int stop = 0;
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, flush_all_often, &stop), 0);
	for (unsigned i = 0; i < 20000; i++)
		tb_launch(S1, 0x20000 + i, i, 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	tb_sync(S1, 0);
	cr_expect_gt(tb.lane_hits, 0);
	tb_check();
	cr_expect_eq(gs_stats.launches, launches + 20000);
	cr_expect_eq(gs_stats.passed + gs_stats.held, gs_stats.launches - gs_stats.replayed);
}

/* ---- quiet streams: the gate keeps every armed step eager ---------------- */

/*
 * The gate on, a graph launch dearer than eight eager launches and cheaper
 * than forty: an 8-launch step goes eager (8 us against 20.8), a 40-launch
 * one replays (40 us against 24).
 */
static void quiet_start(const char *k, const char *v, const char *k2, const char *v2)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_GATE", "auto", "GRAPHSHIM_GATE_SAMPLES", "3",
		 "GRAPHSHIM_GATE_AFTER", "1", "GRAPHSHIM_CHUNK_FIRST", "64", "GRAPHSHIM_GATE_MARGIN",
		 "0.05", k, v, k2 ? k2 : k, k2 ? v2 : v, NULL);
	tb.timers = true;
	tb.cost_eager = 1000;
	tb.cost_node = 100;
	tb.cost_graph = 20000;
}

/* The 40-launch step (functions of its own), then a sync. */
static void long_step(uintptr_t s)
{
	for (unsigned k = 0; k < 40; k++)
		cr_assert_eq(tb_launch_on(s, 0, 0xb000 + k, k, 0), 0);
	tb_sync(s, 0);
}

/* Steps of 8 launches until the gate keeps them eager and the stream is quiet. */
static void until_quiet(void)
{
	for (int i = 0; i < 80 && !gs_stats.cold_quiet; i++)
		step(S1, 8, 0);
	cr_assert_eq(gs_stats.gate_eager, 1);
	cr_assert_eq(gs_stats.cold_quiet, 1, "quiet once the gate kept its only step eager");
}

Test(cold, a_step_the_gate_keeps_eager_passes_quietly_until_its_recheck)
{
	/* Decided, watched for 24 passes (half the re-check's), quiet for the 24 left. */
	quiet_start("GRAPHSHIM_GATE_RECHECK", "48", NULL, NULL);
	until_quiet();
	uint64_t decisions = gs_stats.gate_decisions, eager = gs_stats.gate_eager;
	uint64_t eager_passes = gs_stats.gated;
	for (int i = 0; i < 10; i++)
		step(S1, 8, 0);
	cr_expect_eq(gs_stats.cold_quiet_passed, 80, "ten passes, none matched");
	cr_expect_eq(gs_stats.gated, eager_passes, "nothing matched while quiet");
	cr_expect_eq(gs_stats.cold_woken, 0, "the step repeats, and does not wake it");
	/* Its passes until the re-check go by; it wakes, the gate times the
	 * step again, keeps it eager, and the stream is quiet again. */
	for (int i = 0; i < 60; i++)
		step(S1, 8, 0);
	cr_expect_geq(gs_stats.cold_woken, 1);
	cr_expect_gt(gs_stats.gate_decisions, decisions, "re-checked");
	cr_expect_gt(gs_stats.gate_eager, eager);
	cr_expect_geq(gs_stats.cold_quiet, 2);
	cr_expect_eq(tb.launches, gs_stats.replays);
	tb_check();
}

Test(cold, a_verdict_of_eager_is_watched_before_its_stream_goes_quiet)
{
	quiet_start("GRAPHSHIM_GATE_RECHECK", "1000", NULL, NULL);
	int steps = 0;
	while (!gs_stats.gate_eager && steps < 40) {
		step(S1, 8, 0);
		steps++;
	}
	cr_assert_eq(gs_stats.gate_eager, 1);
	for (int i = 0; i < 30; i++)
		step(S1, 8, 0);
	cr_expect_eq(gs_stats.cold_quiet, 0, "its first 32 passes after the verdict are watched");
	for (int i = 0; i < 4; i++)
		step(S1, 8, 0);
	cr_expect_eq(gs_stats.cold_quiet, 1);
	tb_check();
}

Test(cold, a_step_the_gate_replays_keeps_its_stream_from_going_quiet)
{
	quiet_start("GRAPHSHIM_GATE_RECHECK", "1000", NULL, NULL);
	for (int i = 0; i < 30; i++) {
		step(S1, 8, 0);
		long_step(S1);
	}
	cr_expect_eq(gs_stats.gate_eager, 1, "the short step kept eager");
	cr_expect_eq(gs_stats.cold_quiet, 0);
	size_t from_graph = 0;
	for (size_t i = tb.nexec - 40; i < tb.nexec; i++)
		from_graph += tb.exec[i].from_graph;
	cr_expect_eq(from_graph, 40, "the long step replays");
	tb_check();
}

Test(cold, a_new_step_that_repeats_wakes_a_quiet_stream)
{
	quiet_start("GRAPHSHIM_GATE_RECHECK", "1000", NULL, NULL);
	until_quiet();
	long_step(S1);
	cr_expect_eq(gs_stats.cold_woken, 0, "seen once");
	long_step(S1);
	cr_expect_eq(gs_stats.cold_woken, 1, "seen again: a step to learn");
	for (int i = 0; i < 12; i++) {
		step(S1, 8, 0);
		long_step(S1);
	}
	cr_expect_gt(gs_stats.replays, 0, "the new step learned and replayed");
	tb_check();
}

Test(cold, forced_eager_passes_quietly_and_matches_again_every_recheck)
{
	quiet_start("GRAPHSHIM_GATE", "eager", "GRAPHSHIM_GATE_RECHECK", "3");
	for (int i = 0; i < 40; i++)
		step(S1, 8, 0);
	cr_expect_eq(tb.launches, 0, "no graph launched");
	cr_expect_geq(gs_stats.cold_quiet, 5);
	cr_expect_geq(gs_stats.cold_woken, 4);
	cr_expect_gt(gs_stats.cold_quiet_passed, 0);
	cr_expect_eq(gs_stats.launches, 320);
	tb_check();
}

Test(cold, cold_eager_off_matches_every_eager_pass)
{
	quiet_start("GRAPHSHIM_GATE", "eager", "GRAPHSHIM_COLD_EAGER", "0");
	for (int i = 0; i < 20; i++)
		step(S1, 8, 0);
	cr_expect_eq(gs_stats.cold_quiet, 0);
	cr_expect_eq(gs_stats.cold_streams, 0);
	cr_expect_geq(gs_stats.gated, 17 * 8);
	tb_check();
}

/*
 * GRAPHSHIM_COLD_REPLAY: a step that replays between segments that never
 * repeat (a training step after each batch's augmentation).  The replayed
 * segments neither count as new nor as repeats, so the stream goes cold;
 * each pass of the step wakes it at its first launch, replays, and the
 * stream is cold again after it.
 */
static void replay_among_unique(const char *cold_replay)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "4", "GRAPHSHIM_PERIOD_AFTER", "1000", "GRAPHSHIM_ASYNC_BUILD", "0",
		 "GRAPHSHIM_COLD_REPLAY", cold_replay, NULL);
	unsigned u = 0;
	for (unsigned k = 0; k < 12; k++) {
		step(S1, 8, 0); /* the step: learned at its 2nd sighting, replayed from its 3rd */
		for (unsigned j = 0; j < 3; j++)
			unique_step(S1, 0, u++, 8);
	}
	tb_check();
}

Test(cold, steps_that_replay_among_new_ones_go_cold_between_passes)
{
	replay_among_unique("1");
	/* Cold after the first pass and its three new segments, the step is
	 * learned from sightings the cold lane saw (its 4th and 5th). */
	cr_expect_eq(gs_stats.replays, 8, "every pass from the 5th replays");
	cr_expect_geq(gs_stats.cold_rewarmed, 7, "woken to replay, cold again after: %llu",
		      (unsigned long long)gs_stats.cold_rewarmed);
	cr_expect_geq(gs_stats.cold_passed, 7 * 3 * 8, "the new segments pass cold: %llu",
		      (unsigned long long)gs_stats.cold_passed);
}

Test(cold, without_cold_replay_such_a_stream_stays_warm)
{
	replay_among_unique("0");
	cr_expect_eq(gs_stats.replays, 8);
	cr_expect_eq(gs_stats.cold_streams, 1, "only before the step was learned: each pass a repeat");
	cr_expect_leq(gs_stats.cold_passed, 5 * 8);
}

/* Woken to replay, a segment that repeats a step still to learn keeps the
 * stream warm, so that step is learned. */
Test(cold, a_step_to_learn_after_a_replay_wakes_the_stream_for_good)
{
	replay_among_unique("1");
	uint64_t before = gs_stats.replays;
	static const uintptr_t G[] = {0xe1, 0xe2, 0xe3, 0xe4, 0xe5};
	for (unsigned k = 0; k < 6; k++) {
		step(S1, 8, 0);
		tb_step(S1, G, 5, 0); /* a new step, the same every time */
		tb_sync(S1, 0);
	}
	tb_check();
	cr_expect_geq(gs_stats.replays - before, 6 + 2, "the step and, learned, the new one: %llu",
		      (unsigned long long)(gs_stats.replays - before));
}

/*
 * A step that comes back only after other work: rl's rollouts (an H200),
 * 64 environment steps of replayed passes, each cut once by a copy (a
 * one-launch segment that counts as new), then the advantage pass, 586
 * launches.  The pass repeated while cold and woke the stream for the
 * segments after it, which were cold again well before it came back: it
 * never replayed (10,548 launches a run passed cold, 0.83 covered).  The
 * stream now also wakes where a segment begins as that one did.
 */
static void rollouts(unsigned every, unsigned rollouts, const char *want, int *replayed)
{
	tb_start("GRAPHSHIM_PERIOD_AFTER", "1024", "GRAPHSHIM_COLD_WANT", want, NULL);
	static const uintptr_t A[] = {0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7};
	static const uintptr_t B[] = {0xb1, 0xb2, 0xb3, 0xb4};
	static const uintptr_t G[] = {0xd1, 0xd2, 0xd3, 0xd4, 0xd5};
	for (unsigned r = 0; r < rollouts; r++) {
		for (unsigned t = 0; t < every; t++) {
			uint64_t a = r * every + t;
			for (unsigned k = 0; k < 12; k++)
				cr_assert_eq(tb_launch(S1, A[k % 7], k, a), 0);
			tb_sync(S1, 0);
			tb_step(S1, B, 4, a);
			tb_sync(S1, 0);
			cr_assert_eq(tb_launch(S1, A[0], 0, a), 0); /* begins like the first step: cut */
			tb_sync(S1, 0);
		}
		for (unsigned k = 0; k < 40; k++)
			cr_assert_eq(tb_launch(S1, G[k % 5], k, r), 0);
		tb_sync(S1, 0);
		replayed[r] = tb_from_graph_in_last(40);
	}
	tb_check();
}

Test(cold, a_step_that_comes_back_after_other_work_wakes_the_stream_where_it_begins)
{
	int replayed[8];
	rollouts(24, 8, "4", replayed);
	cr_expect_eq(replayed[0] + replayed[1], 0, "seen cold twice: a repeat");
	for (unsigned r = 4; r < 8; r++)
		cr_expect_eq(replayed[r], 40, "replayed from its 5th sighting (rollout %u: %d)", r, replayed[r]);
	cr_expect_geq(gs_stats.cold_wanted, 2, "woken where it began: %llu",
		      (unsigned long long)gs_stats.cold_wanted);
	cr_expect_geq(gs_stats.cold_streams, 8, "cold between times");
}

/* Each repeat wakes it at most GRAPHSHIM_COLD_WANT times where a segment begins so. */
Test(cold, a_wanted_beginning_wakes_the_stream_a_few_times_at_most)
{
	tb_start("GRAPHSHIM_COLD_AFTER", "2", NULL);
	static const uintptr_t G[] = {0xd1, 0xd2, 0xd3, 0xd4, 0xd5};
	unsigned u = 0;
	unique_step(S1, 0, u++, 8);
	unique_step(S1, 0, u++, 8);
	cr_assert_eq(gs_stats.cold_streams, 1);
	/* A step that never repeats again after its one repeat while cold,
	 * then new steps beginning as it does, forever. */
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned j = 0; j < 5; j++)
			cr_assert_eq(tb_launch(S1, G[j], j, k), 0);
		tb_sync(S1, 0);
	}
	for (unsigned i = 0; i < 40; i++) {
		cr_assert_eq(tb_launch(S1, G[0], 0, i), 0);
		for (unsigned j = 1; j < 6; j++)
			cr_assert_eq(tb_launch(S1, 0x20000 + i * 8 + j, j, i), 0);
		tb_sync(S1, 0);
		unique_step(S1, 0, u++, 8);
		unique_step(S1, 0, u++, 8);
	}
	tb_check();
	cr_expect_leq(gs_stats.cold_wanted, (uint64_t)gs_config.cold_want, "bounded: %llu",
		      (unsigned long long)gs_stats.cold_wanted);
}

Test(cold, cold_want_zero_leaves_such_a_step_cold)
{
	int replayed[8];
	rollouts(24, 8, "0", replayed);
	for (unsigned r = 0; r < 8; r++)
		cr_expect_eq(replayed[r], 0, "never seen warm (rollout %u: %d)", r, replayed[r]);
	cr_expect_eq(gs_stats.cold_wanted, 0);
}
