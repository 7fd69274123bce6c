/* Backend failures: every one falls back to eager with the same results. */
#include "gs_build.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)
#define S2 ((uintptr_t)0x5002)

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

/*
 * A node the vendor refuses (its index named) costs the step that one
 * record: it runs eagerly at its place, the records around it replay as
 * graphs, and every launch still runs in program order.
 */
static void refused_node(const char *async)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ASYNC_BUILD", async, NULL);
	tb.refuse_func = F[3];
	steps(10, 0);
	/* In the background: the failed build is published at the stream's
	 * next call, which plans the step again and hands it back. */
	gs_build_wait();
	steps(1, 0);
	gs_build_wait();
	steps(10, 0);
	cr_expect_eq(gs_stats.refused, 1);
	cr_expect_eq(gs_stats.fallbacks, 1);
	gs_seq_info_t info[2];
	cr_assert_eq(gs_engine_seq_info(info, 2), 1);
	cr_expect_eq(info[0].state, GS_SEQ_ARMED);
	cr_expect_geq(gs_stats.graphs, 1);
	/* Each replayed pass: F[0..3) and F[4..6) from graphs, F[3] eagerly. */
	cr_expect_gt(gs_stats.replays, 0);
	cr_expect_eq(gs_stats.replayed, gs_stats.replays / 2 * 5);
	size_t eager3 = 0, graph3 = 0;
	for (size_t i = 0; i < tb.nexec; i++)
		if (tb.exec[i].func == F[3])
			tb.exec[i].from_graph ? graph3++ : eager3++;
	cr_expect_eq(graph3, 0, "the refused record never runs from a graph");
	cr_expect_eq(eager3, 21);
	tb_check();
}

Test(faults, a_refused_node_runs_eagerly_and_the_rest_replays)
{
	refused_node("0");
}

Test(faults, a_refused_node_in_a_background_build)
{
	refused_node("1");
}

/* A step of n launches, those whose bit is set in `refused` of a function the
 * backend will not graph; run `steps` times with a sync after each. */
static void refusing_steps(int steps, int n, unsigned refused)
{
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < n; i++)
			tb_launch(S1, (0x100 + (uintptr_t)i) | (refused >> i & 1 ? TB_REFUSED : 0), 7, 0);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
}

Test(faults, two_refused_nodes_run_eagerly_among_replayed_ones)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	refusing_steps(10, 8, 1u << 0 | 1u << 5); /* the first launch and the sixth */
	cr_expect_eq(gs_stats.refused, 2);
	gs_seq_info_t info[2];
	cr_assert_eq(gs_engine_seq_info(info, 2), 1);
	cr_expect_eq(info[0].state, GS_SEQ_ARMED);
	cr_expect_eq(info[0].refused, 2);
	size_t last = tb.nexec - 8;
	for (size_t i = last; i < tb.nexec; i++)
		cr_expect_eq(tb.exec[i].from_graph, !(tb.exec[i].func & TB_REFUSED), "launch %zu", i - last);
	tb_check();
}

/*
 * A kernel the vendor refuses at many places of a step (a framework's batch
 * norm in every layer) is refused at all of them at once: one build again,
 * not one a place, so the sequence does not reach the bound on refusals
 * and fail whole; the launches between them still replay.
 */
Test(faults, a_kernel_refused_at_many_places_is_refused_at_all_of_them_at_once)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	const uintptr_t refused = 0x200 | TB_REFUSED;
	for (int s = 0; s < 10; s++) {
		for (int i = 0; i < 27; i++)
			tb_launch(S1, i % 3 ? 0x100 + (uintptr_t)i : refused, 7, 0);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
	cr_expect_eq(gs_stats.refused, 9, "the nine places of the refused kernel");
	cr_expect_eq(gs_stats.fallbacks, 1, "one failed build");
	gs_seq_info_t info[2];
	cr_assert_eq(gs_engine_seq_info(info, 2), 1);
	cr_expect_eq(info[0].state, GS_SEQ_ARMED);
	cr_expect_eq(info[0].refused, 9);
	size_t last = tb.nexec - 27;
	for (size_t i = last; i < tb.nexec; i++)
		cr_expect_eq(tb.exec[i].from_graph, tb.exec[i].func != refused, "launch %zu", i - last);
	tb_check();
}

/*
 * A kernel refused once is refused before the first build of any sequence
 * learned later (another stream's, another step's): no failed build finds
 * it again.
 */
Test(faults, a_kernel_refused_once_is_refused_in_later_sequences_before_their_build)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	const uintptr_t refused = 0x200 | TB_REFUSED;
	for (int s = 0; s < 8; s++) {
		for (int i = 0; i < 6; i++)
			tb_launch(S1, i == 2 ? refused : 0x100 + (uintptr_t)i, 7, 0);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
	cr_expect_eq(gs_stats.fallbacks, 1);
	cr_expect_eq(gs_stats.refused, 1);
	for (int s = 0; s < 8; s++) {
		for (int i = 0; i < 5; i++)
			tb_launch(S2, i == 3 ? refused : 0x300 + (uintptr_t)i, 9, 0);
		gs_engine_flush_stream(S2, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
	cr_expect_eq(gs_stats.fallbacks, 1, "the second sequence's build did not fail");
	gs_seq_info_t info[3];
	cr_assert_eq(gs_engine_seq_info(info, 3), 2);
	for (int k = 0; k < 2; k++) {
		cr_expect_eq(info[k].state, GS_SEQ_ARMED);
		cr_expect_eq(info[k].refused, 1);
	}
	size_t last = tb.nexec - 5;
	for (size_t i = last; i < tb.nexec; i++)
		cr_expect_eq(tb.exec[i].from_graph, tb.exec[i].func != refused, "launch %zu", i - last);
	tb_check();
}

/*
 * A node the backend could make only on a stand-in (a memset on memory the
 * program freed after its pass) is patched before its graph's first
 * launch, then replays like any other: nothing runs the stand-in.
 */
static void stand_in_node(const char *async)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ASYNC_BUILD", async, NULL);
	for (int s = 0; s < 12; s++) {
		for (int i = 0; i < 6; i++)
			tb_launch(S1, F[i] | (i == 3 ? TB_STAND_IN : 0), 1000 + i, 0);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
		gs_build_wait();
	}
	cr_expect_eq(gs_stats.refused, 0);
	cr_expect_eq(gs_stats.graphs, 1);
	cr_expect_eq(gs_stats.patches, 1, "one patch, at the first replay; then the baked record is the held one");
	cr_expect_geq(gs_stats.replays, 8);
	cr_expect_eq(gs_stats.replayed, gs_stats.replays * 6);
	tb_check(); /* every launch ran with the program's arguments */
}

Test(faults, a_node_made_on_a_stand_in_is_patched_before_it_runs)
{
	stand_in_node("0");
}

Test(faults, a_node_made_on_a_stand_in_in_a_background_build)
{
	stand_in_node("1");
}

Test(faults, past_eight_refused_nodes_the_sequence_fails)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	refusing_steps(10, 12, 0x1ffu); /* nine of twelve launches refused */
	cr_expect_eq(gs_stats.refused, 8);
	gs_seq_info_t info[2];
	cr_assert_eq(gs_engine_seq_info(info, 2), 1);
	cr_expect_eq(info[0].state, GS_SEQ_FAILED);
	cr_expect_eq(gs_stats.replays, 0);
	tb_check();
}

Test(faults, a_failure_that_names_no_node_still_fails_the_sequence)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	tb.fail_build_at = 1; /* names no record: refused is n */
	steps(10, 0);
	cr_expect_eq(gs_stats.refused, 0);
	cr_expect_eq(gs_stats.replays, 0);
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

/* A node the vendor would not update: that launch goes eager from then on,
 * the rest of the step keeps replaying, nothing retires. */
Test(faults, a_refused_patch_makes_that_launch_eager)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	tb.fail_patch_at = 2;
	steps(20, 1); /* F[2]'s second argument changes every step: a patch each pass */
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_PATCH_FAILED], 1);
	cr_expect_eq(gs_stats.refused, 1);
	cr_expect_eq(gs_stats.retirements, 0);
	gs_seq_info_t info[2];
	cr_assert_eq(gs_engine_seq_info(info, 2), 1);
	cr_expect_eq(info[0].state, GS_SEQ_ARMED);
	/* The last step: F[2] eagerly, the others from graphs. */
	size_t last = tb.nexec - 6;
	for (size_t i = last; i < tb.nexec; i++)
		cr_expect_eq(tb.exec[i].from_graph, tb.exec[i].func != F[2], "launch %zu of the last step", i - last);
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
