/* Chunked replay: the GPU starts on the first chunk while the rest arrives. */
#include "gs_testbe.h"

#include <criterion/criterion.h>

#define S1 ((uintptr_t)0x5001)

static void step(int n, int diverge_at, int drift_at)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, i == diverge_at ? 0xdead : 0x100 + (uintptr_t)i, i, i == drift_at ? 5 : 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

static void learn100(void)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_MAX", "32", NULL);
	step(100, -1, -1);
	step(100, -1, -1);
	/* 8, 16, 32, 32 and a tail of 12 (< 16) merged into the last: 4 graphs. */
	cr_assert_eq(tb.builds, 4);
}

Test(chunks, the_first_chunk_runs_before_the_step_is_complete)
{
	learn100();
	size_t before = tb.nexec;
	for (int i = 0; i < 8; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	cr_expect_eq(tb.nexec, before + 8, "chunk 0 was launched at its 8th launch");
	cr_expect(tb.exec[before].from_graph);
	for (int i = 8; i < 100; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	cr_expect_eq(gs_stats.replays, 4);
	cr_expect_eq(gs_stats.replayed, 100);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	tb_check();
}

Test(chunks, divergence_after_launched_chunks_keeps_order)
{
	learn100();
	step(100, 60, -1);
	cr_expect_eq(gs_stats.replayed, 56, "chunks ending at 8, 24 and 56 ran from graphs");
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 1);
	tb_check();
}

Test(chunks, a_flush_inside_a_later_chunk)
{
	learn100();
	for (int i = 0; i < 30; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	cr_expect_eq(gs_stats.replayed, 24);
	cr_expect_eq(gs_stats.released, 6);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_CUT], 1);
	tb_check();
}

Test(chunks, drift_is_patched_in_the_right_chunk)
{
	learn100();
	step(100, -1, 70);
	cr_expect_eq(gs_stats.patches, 1);
	cr_expect_eq(gs_stats.replayed, 100);
	tb_check();
}

Test(chunks, a_clean_pass_resets_after_chunked_mismatches)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "4", "GRAPHSHIM_CHUNK_MAX", "4",
		 "GRAPHSHIM_MISMATCH_LIMIT", "2", NULL);
	step(16, -1, -1);
	step(16, -1, -1);
	/* Each divergence at another place, so no diverging step repeats and
	 * becomes a sequence of its own. */
	step(16, 10, -1); /* mismatch 1 */
	step(16, -1, -1); /* clean: reset */
	step(16, 13, -1); /* mismatch 1 again */
	cr_expect_eq(gs_stats.retirements, 0, "mismatches %llu replays %llu", (unsigned long long)gs_stats.mismatches, (unsigned long long)gs_stats.replays);
	step(16, 14, -1); /* mismatch 2: retired */
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

Test(chunks, one_chunk_when_the_first_covers_it)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL); /* first chunk 32 */
	step(20, -1, -1);
	step(20, -1, -1);
	cr_expect_eq(tb.builds, 1);
	step(20, -1, -1);
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

Test(chunks, a_slow_host_gets_small_chunks_at_the_end)
{
	/* Host time per launch above the threshold (0 here): chunks double from
	 * the front and halve towards the end, so little GPU work is left after
	 * the last launch arrives. 100 launches: 8 16 32 16 | 16 8 4. */
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_LAST", "4",
		 "GRAPHSHIM_CHUNK_MAX", "64", "GRAPHSHIM_HOST_BOUND_US", "0", NULL);
	step(100, -1, -1);
	step(100, -1, -1);
	cr_assert_eq(tb.builds, 7);
	size_t before = tb.nexec;
	for (int i = 0; i < 96; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	cr_expect_eq(tb.nexec, before + 96, "every chunk before the last 4 launches already ran");
	for (int i = 96; i < 100; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
	cr_expect_eq(gs_stats.replays, 7);
	cr_expect_eq(gs_stats.replayed, 100);
	tb_check();
}

Test(chunks, a_fast_host_keeps_large_chunks)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_LAST", "4",
		 "GRAPHSHIM_CHUNK_MAX", "64", "GRAPHSHIM_HOST_BOUND_US", "1000000", NULL);
	step(100, -1, -1);
	step(100, -1, -1);
	cr_expect_eq(tb.builds, 4, "8 16 32 44");
	step(100, -1, -1);
	cr_expect_eq(gs_stats.replays, 4);
	tb_check();
}
