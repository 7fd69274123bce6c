/* Backend failures: every one falls back to eager with the same results. */
#include "gs_testbe.h"

#include <criterion/criterion.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)

static void steps(int n, int drift_every)
{
	for (int s = 0; s < n; s++) {
		for (int i = 0; i < 6; i++)
			tb_launch(S1, F[i], 1000 + i, (drift_every && i == 2) ? (uint64_t)(s / drift_every) : 0);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
}

Test(faults, graph_build_failure_stays_eager)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	tb.fail_build_at = 1;
	steps(10, 0);
	cr_expect_eq(gs_stats.fallbacks, 1);
	cr_expect_eq(gs_stats.graphs, 0);
	cr_expect_eq(gs_stats.replays, 0);
	gs_seq_info_t info[2];
	cr_assert_eq(gs_engine_seq_info(info, 2), 1);
	cr_expect_eq(info[0].state, GS_SEQ_FAILED);
	tb_check();
}

Test(faults, graph_launch_failure_releases_the_same_work)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	tb.fail_launch_at = 1;
	steps(10, 0);
	cr_expect_eq(gs_stats.fallbacks, 1);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_LAUNCH_FAILED], 1);
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

Test(faults, patch_failure_releases_the_same_work)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	tb.fail_patch_at = 1;
	steps(10, 1);
	cr_expect_eq(gs_stats.fallbacks, 1);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_PATCH_FAILED], 1);
	tb_check();
}

Test(faults, a_later_patch_failure_after_successes)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	tb.fail_patch_at = 3;
	steps(12, 1);
	cr_expect_eq(gs_stats.patches, 2);
	cr_expect_eq(gs_stats.fallbacks, 1);
	tb_check();
}

Test(faults, pass_through_status_reaches_the_caller)
{
	tb_start(NULL);
	tb.submit_status = 201;
	cr_expect_eq(tb_launch(S1, F[0], 1, 2), 201);
	tb.submit_status = 0;
	cr_expect_eq(tb_launch(S1, F[0], 1, 2), 0);
}

Test(faults, a_failed_release_is_counted)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	steps(2, 0);
	for (int i = 0; i < 3; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	tb.fail_submit_at = tb.submits + 2;
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	cr_expect_eq(gs_stats.fallbacks, 1);
}
