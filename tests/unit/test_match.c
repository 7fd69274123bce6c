/* Matching: holding, divergence at every position, prefixes, cuts. */
#include "gs_lane.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)

static void sync_s1(void)
{
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/* Learn the 6-launch step F[0..6) and arm it. */
static void learn6(void)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 2; i++) {
		tb_step(S1, F, 6, 0);
		sync_s1();
	}
	cr_assert_eq(tb.builds, 1);
}

Test(match, matching_launches_are_held_until_complete)
{
	learn6();
	size_t before = tb.nexec;
	for (int i = 0; i < 5; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	cr_expect_eq(tb.nexec, before, "nothing runs while the prefix matches");
	cr_expect_eq(gs_stats.held, 5);
	tb_launch(S1, F[5], 1005, 0);
	cr_expect_eq(tb.nexec, before + 6);
	cr_expect(tb.exec[before].from_graph);
	tb_check();
}

static void diverge_at(int pos)
{
	learn6();
	for (int i = 0; i < 6; i++)
		tb_launch(S1, i == pos ? F[7] : F[i], 1000 + i, 0);
	sync_s1();
	cr_expect_eq(gs_stats.replays, 0);
	tb_check();
}

Test(match, divergence_at_the_first_launch)
{
	diverge_at(0);
	cr_expect_eq(gs_stats.held, 0, "a different first launch starts no match");
	cr_expect_eq(gs_stats.mismatches, 0);
}

Test(match, divergence_in_the_middle)
{
	diverge_at(3);
	cr_expect_eq(gs_stats.held, 3);
	cr_expect_eq(gs_stats.released, 3);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 1);
}

Test(match, divergence_at_the_last_launch)
{
	diverge_at(5);
	cr_expect_eq(gs_stats.held, 5);
	cr_expect_eq(gs_stats.released, 5);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 1);
}

Test(match, divergence_in_grid_is_structural)
{
	learn6();
	tb_launch(S1, F[0], 1000, 0);
	/* Same function, different grid: build it by hand. */
	gs_rec_t *r = gs_rec_scratch(16);
	r->kind = GS_REC_KERNEL;
	r->func = (void *)F[1];
	r->grid[0] = 2;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = 32;
	r->block[1] = r->block[2] = 1;
	gs_rec_seal(r);
	gs_engine_launch(S1, NULL, 0, r, "test");
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 1);
	cr_expect_eq(tb.nexec, 12 + 2, "the held launch and the diverging one both ran");
	cr_expect_eq(tb.exec[12].func, F[0]);
	cr_expect_eq(tb.exec[13].func, F[1]);
}

Test(match, a_flush_cuts_the_match_and_releases_in_order)
{
	learn6();
	for (int i = 0; i < 4; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	sync_s1();
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_CUT], 1);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_SYNC], 1);
	cr_expect_eq(gs_stats.released, 4);
	tb_check();
}

Test(match, arguments_are_copied_at_call_time)
{
	learn6();
	/* The scratch record is reused by the next call: if the engine kept a
	 * pointer instead of a copy, the held launches would change. */
	for (int i = 0; i < 3; i++)
		tb_launch(S1, F[i], 5000 + i, 77);
	sync_s1();
	cr_expect_eq(tb.exec[12].a0, 5000);
	cr_expect_eq(tb.exec[13].a0, 5001);
	cr_expect_eq(tb.exec[14].a1, 77);
	tb_check();
}

Test(match, a_complete_prefix_waits_for_a_longer_candidate)
{
	/* A = F0..F3, B = F0..F5: both learned; a step of A then sync replays A. */
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 2; i++) {
		tb_step(S1, F, 4, 0);
		sync_s1();
		tb_step(S1, F, 6, 0);
		sync_s1();
	}
	cr_assert_eq(tb.builds, 2);
	/* A was already replayed inside the second B, before B was armed. */
	uint64_t r0 = gs_stats.replays, n0 = gs_stats.replayed;
	tb_step(S1, F, 4, 0);
	cr_expect_eq(gs_stats.replays, r0, "A is complete but B may still follow");
	sync_s1();
	cr_expect_eq(gs_stats.replays, r0 + 1);
	cr_expect_eq(gs_stats.replayed, n0 + 4);
	tb_step(S1, F, 6, 0);
	cr_expect_eq(gs_stats.replays, r0 + 2);
	cr_expect_eq(gs_stats.replayed, n0 + 10);
	sync_s1(); /* boundary-learned sequences begin only after a boundary */
	/* A, then a launch that continues neither: A replays, the rest runs eagerly. */
	tb_step(S1, F, 4, 0);
	tb_launch(S1, F[7], 1, 1);
	cr_expect_eq(gs_stats.replays, r0 + 3);
	cr_expect_eq(gs_stats.mismatches, 0, "a completed candidate is no mismatch (structure %llu cut %llu drift %llu)", (unsigned long long)gs_stats.mismatch_by[0], (unsigned long long)gs_stats.mismatch_by[1], (unsigned long long)gs_stats.mismatch_by[2]);
	tb_check();
}

Test(match, a_cut_match_is_followed_by_the_next_sequence)
{
	/* Two sequences with different first launches; the second begins at the
	 * launch that broke the first. */
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	const uintptr_t G[] = {0xa1, 0xa2, 0xa3, 0xa4};
	for (int i = 0; i < 2; i++) {
		tb_step(S1, F, 4, 0);
		sync_s1();
	}
	cr_assert_eq(tb.builds, 1);
	/* Arm G as a period-free boundary sequence too. */
	for (int i = 0; i < 2; i++) {
		tb_step(S1, G, 4, 0);
		sync_s1();
	}
	cr_assert_eq(tb.builds, 2);
	tb_step(S1, F, 2, 0);
	sync_s1();
	tb_step(S1, G, 4, 0);
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

Test(match, flushes_from_elsewhere_do_not_retire_a_sequence)
{
	/* Another thread's synchronous copy flushes every stream, cutting this
	 * stream's match at random points: the held work goes, uncharged. */
	learn6();
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 3; i++)
			tb_launch(S1, F[i], 1000 + i, 0);
		gs_engine_flush_all(GS_FLUSH_COPY, "cuMemcpyDtoH");
		for (int i = 3; i < 6; i++)
			tb_launch(S1, F[i], 1000 + i, 0);
		sync_s1();
	}
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_eq(gs_stats.retirements, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_COPY], 5);
	/* The pieces (3 launches each) are steps of their own by now. */
	unsigned long long r0 = gs_stats.replays;
	tb_step(S1, F, 6, 0);
	sync_s1();
	cr_expect_eq(gs_stats.replays, r0 + 1, "the sequence is still armed (%llu)", (unsigned long long)(gs_stats.replays - r0));
	tb_check();
}

/* Held streams are counted by the class that ties them (gs_hot_held_tied):
 * the legacy stream holding its own step sends none of its launches through
 * the stream table, a blocking stream's launch still flushes it. */
Test(match, held_streams_are_counted_by_what_ties_them)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	const uintptr_t LEG = 0, BLK = 0x7400, F[4] = { 0x9500, 0x9501, 0x9502, 0x9503 };
	for (int i = 0; i < 3; i++) {
		for (int k = 0; k < 4; k++)
			tb_launch_on(LEG, GS_STREAM_LEGACY, F[k], 1000 + k, 0);
		tb_sync(LEG, GS_STREAM_LEGACY);
	}
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[0], 1000, 0);
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[1], 1001, 0);
	cr_assert_gt(gs_stats.held, 0, "the legacy stream holds its step");
	cr_expect_eq(gs_hot.held_legacy, 1);
	cr_expect_eq(gs_hot.held_blocking, 0);
	cr_expect(!gs_hot_held_tied(GS_STREAM_LEGACY), "its own holding ties it to nothing");
	cr_expect(gs_hot_held_tied(GS_STREAM_BLOCKING));
	cr_expect(!gs_hot_held_tied(0), "a non-blocking stream is tied to nothing");
	tb_launch_on(BLK, GS_STREAM_BLOCKING, 0x9600, 1, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_LEGACY], 1, "the blocking stream's launch flushed it");
	cr_expect_eq(gs_hot.held_legacy, 0);
	tb_sync(LEG, GS_STREAM_LEGACY);
	cr_expect_eq(gs_hot.held_streams, 0);
	cr_expect_eq(gs_hot.held_legacy + gs_hot.held_blocking, 0);
	tb_check();
}
