/* Learning: boundaries, repetitions, periods, several sequences. */
#include "gs_testbe.h"

#include <criterion/criterion.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)
#define S2 ((uintptr_t)0x5002)

static void sync_stream(uintptr_t s)
{
	gs_engine_flush_stream(s, NULL, 0, GS_FLUSH_SYNC, "sync");
}

Test(learn, graph_built_after_two_repetitions_and_replayed_on_the_third)
{
	tb_start("GRAPHSHIM_LEARN_REPS", "2", NULL);
	tb_step(S1, F, 6, 0);
	sync_stream(S1);
	cr_expect_eq(tb.builds, 0);
	tb_step(S1, F, 6, 0);
	sync_stream(S1);
	cr_expect_eq(tb.builds, 1);
	cr_expect_eq(gs_stats.replayed, 0);
	tb_step(S1, F, 6, 0);
	cr_expect_eq(gs_stats.replayed, 6, "the third step replays as soon as it is complete");
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

Test(learn, repetitions_are_configurable)
{
	tb_start("GRAPHSHIM_LEARN_REPS", "4", NULL);
	for (int i = 0; i < 3; i++) {
		tb_step(S1, F, 6, 0);
		sync_stream(S1);
	}
	cr_expect_eq(tb.builds, 0);
	tb_step(S1, F, 6, 0);
	sync_stream(S1);
	cr_expect_eq(tb.builds, 1);
	tb_check();
}

Test(learn, short_sequences_are_not_learned)
{
	tb_start("GRAPHSHIM_MIN_SEQ", "8", NULL);
	for (int i = 0; i < 10; i++) {
		tb_step(S1, F, 6, 0);
		sync_stream(S1);
	}
	cr_expect_eq(tb.builds, 0);
	cr_expect_eq(gs_stats.held, 0);
	tb_check();
}

Test(learn, three_launches_before_a_read_back_are_a_step)
{
	/* A request's tail: a matmul, a top-k and a sort, then the results read
	 * back (twotower's default stream).  Three launches are worth a graph
	 * at the default GRAPHSHIM_MIN_SEQ; two are not. */
	tb_start(NULL);
	for (int i = 0; i < 4; i++) {
		tb_step(S1, F, 3, 0);
		sync_stream(S1);
	}
	cr_expect_eq(tb.builds, 1);
	cr_expect_eq(gs_stats.replayed, 6, "the third and fourth replay");
	for (int i = 0; i < 4; i++) {
		tb_step(S2, F, 2, 0);
		sync_stream(S2);
	}
	cr_expect_eq(tb.builds, 1, "two launches stay eager");
	tb_check();
}

Test(learn, period_without_boundaries)
{
	tb_start(NULL);
	for (int i = 0; i < 50; i++)
		tb_step(S1, F, 5, 0);
	cr_expect_eq(tb.builds, 1);
	cr_expect_eq(gs_stats.periods, 1);
	cr_expect_geq(gs_stats.replayed, 5 * 47, "replayed %llu", (unsigned long long)gs_stats.replayed);
	tb_check();
}

Test(learn, period_detection_can_be_turned_off)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 50; i++)
		tb_step(S1, F, 5, 0);
	cr_expect_eq(tb.builds, 0);
	tb_check();
}

Test(learn, repeated_layers_with_different_args_are_not_a_period)
{
	/* A step of 4 layers of the same 3 kernels with per-layer weights, then a
	 * tail; the step repeats exactly.  The period found must be the step. */
	tb_start(NULL);
	for (int step = 0; step < 20; step++) {
		for (int layer = 0; layer < 4; layer++)
			for (int k = 0; k < 3; k++)
				tb_launch(S1, F[k], 100 * layer + k, 0);
		tb_launch(S1, F[7], 0, 0);
	}
	cr_expect_eq(tb.builds, 1);
	gs_seq_info_t info[4];
	cr_assert_eq(gs_engine_seq_info(info, 4), 1);
	cr_expect_eq(info[0].length, 13);
	cr_expect(info[0].periodic);
	tb_check();
}

/*
 * A loop with no boundary whose step passes its position by value (one
 * launch of eight, a new argument every step; a sampler's coefficient, a
 * learning rate): the full hashes never repeat, but the step does, but for
 * that argument.  Learned as a period whose first launch is one the step
 * issues once (the step launches F[0] three times: a match begun at each
 * would mismatch at the next launch), replayed with that node patched.
 */
Test(learn, a_step_whose_position_drifts_is_a_period)
{
	tb_start("GRAPHSHIM_PERIOD_AFTER", "26", NULL); /* detection starts mid-step */
	static const uintptr_t G[] = {0xf1, 0xf2, 0xf1, 0xf3, 0xf1, 0xf4, 0xf5, 0xf6};
	for (int step = 0; step < 50; step++)
		for (int k = 0; k < 8; k++)
			tb_launch(S1, G[k], 1000 + k, k == 5 ? (uint64_t)step : 0);
	cr_expect_eq(gs_stats.periods, 1);
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_geq(gs_stats.replayed, 8 * 44, "replayed %llu", (unsigned long long)gs_stats.replayed);
	cr_expect_geq(gs_stats.patches, 44);
	gs_seq_info_t info[4];
	cr_assert_eq(gs_engine_seq_info(info, 4), 1);
	cr_expect_eq(info[0].length, 8);
	cr_expect(info[0].periodic);
	tb_check();
}

/*
 * The same, with a history too short for two periods (GRAPHSHIM_MAX_SEQ 48:
 * 49 records, a step of 40): the rotated sequence would begin a step back,
 * where the history holds newer records; the period is taken as found.
 */
Test(learn, a_period_is_not_rotated_past_the_history)
{
	tb_start("GRAPHSHIM_MAX_SEQ", "48", "GRAPHSHIM_PERIOD_AFTER", "26", NULL);
	for (int step = 0; step < 60; step++)
		for (int k = 0; k < 40; k++)
			tb_launch(S1, k % 2 ? F[k % 8] : F[0], 1000 + k, k == 5 ? (uint64_t)step : 0);
	cr_expect_eq(gs_stats.periods, 1);
	gs_seq_info_t info[4];
	cr_assert_eq(gs_engine_seq_info(info, 4), 1);
	cr_expect_eq(info[0].length, 40);
	cr_expect_geq(gs_stats.replayed, 40 * 50, "replayed %llu", (unsigned long long)gs_stats.replayed);
	tb_check();
}

Test(learn, several_sequences_on_one_stream)
{
	/* A host-side branch: every third step runs a different tail. */
	tb_start(NULL);
	for (int step = 0; step < 30; step++) {
		tb_step(S1, F, 4, 0);
		if (step % 3 == 2)
			tb_step(S1, F + 5, 3, 0);
		else
			tb_step(S1, F + 4, 2, 0);
		sync_stream(S1);
	}
	cr_expect_eq(tb.builds, 2);
	cr_expect_geq(gs_stats.replays, 20);
	tb_check();
}

Test(learn, interleaved_streams_learn_separately)
{
	tb_start(NULL);
	for (int step = 0; step < 10; step++) {
		for (int i = 0; i < 5; i++) {
			tb_launch(S1, F[i], i, 1);
			tb_launch(S2, F[7 - i], i, 2);
		}
		sync_stream(S1);
		sync_stream(S2);
	}
	cr_expect_eq(tb.builds, 2);
	cr_expect_eq(gs_stats.replayed, 2 * 5 * 8);
	tb_check();
}

Test(learn, copies_are_sequence_elements)
{
	tb_start(NULL);
	for (int step = 0; step < 6; step++) {
		tb_launch(S1, F[0], 1, 0);
		tb_copy(S1, 0x1000, 0x2000, 64);
		tb_launch(S1, F[1], 1, 0);
		tb_copy(S1, 0x3000, 0x1000, 64);
		sync_stream(S1);
	}
	cr_expect_eq(tb.builds, 1);
	cr_expect_eq(gs_stats.replayed, 4 * 4);
	tb_check();
}

Test(learn, a_failed_launch_is_not_learned)
{
	tb_start(NULL);
	for (int step = 0; step < 6; step++) {
		tb_step(S1, F, 4, 0);
		tb.submit_status = 700; /* the vendor refuses this launch */
		cr_expect_eq(tb_launch(S1, F[5], 0, 0), 700, "the vendor's status reaches the caller");
		tb.submit_status = 0;
		sync_stream(S1);
	}
	cr_expect_eq(tb.builds, 0);
}

Test(learn, disabled_engine_passes_everything)
{
	tb_start("GRAPHSHIM_ENABLE", "0", NULL);
	for (int step = 0; step < 6; step++) {
		tb_step(S1, F, 5, 0);
		sync_stream(S1);
	}
	cr_expect_eq(tb.builds, 0);
	cr_expect_eq(tb.nexec, 30);
}

Test(learn, period_detection_starts_late_and_is_fed_the_segment_so_far)
{
	tb_start("GRAPHSHIM_PERIOD_AFTER", "100", NULL);
	for (int i = 0; i < 19; i++)
		tb_step(S1, F, 5, 0); /* 95 launches, no boundary */
	cr_expect_eq(gs_stats.periods, 0, "nothing detected before 100 launches");
	tb_step(S1, F, 5, 0); /* the 100th: the history's 99 and this one are fed */
	cr_expect_eq(gs_stats.periods, 1);
	cr_expect_eq(tb.builds, 1);
	for (int i = 0; i < 10; i++)
		tb_step(S1, F, 5, 0);
	cr_expect_geq(gs_stats.replayed, 5 * 9);
	tb_check();
}

Test(learn, short_segments_never_start_period_detection)
{
	tb_start("GRAPHSHIM_PERIOD_AFTER", "100", NULL);
	for (int i = 0; i < 50; i++) {
		/* 60 launches of a period of 5, then a sync */
		for (int k = 0; k < 12; k++)
			tb_step(S1, F, 5, (uint64_t)i);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
	cr_expect_eq(gs_stats.periods, 0);
	tb_check();
}

Test(learn, the_history_grows_with_the_segments)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	/* Steps of 300 launches: longer than the first history, learned by
	 * their boundaries all the same. */
	static uintptr_t G[300];
	for (int k = 0; k < 300; k++)
		G[k] = 0x1000 + (uintptr_t)(k % 7);
	for (int i = 0; i < 5; i++) {
		tb_step(S1, G, 300, 0);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
	cr_expect_eq(gs_stats.graphs, 1);
	cr_expect_geq(gs_stats.replayed, 300 * 3);
	tb_check();
}

/* One step of `layers` layers of the same 3 kernels with per-layer weights
 * (no period in it), then a read-back. */
static void deep_step(uintptr_t s, int layers)
{
	for (int layer = 0; layer < layers; layer++)
		for (int k = 0; k < 3; k++)
			tb_launch(s, F[k], 100 * (uintptr_t)layer + (uintptr_t)k, 0);
	sync_stream(s);
}

Test(learn, a_step_longer_than_the_history_is_learned_in_pieces)
{
	/* 13 layers, 39 launches a step, a history of 16: from the first
	 * boundary on, a step ends at its 16th and 32nd launches (long cuts)
	 * and at its read-back, three sequences anchored at the same places
	 * every step.  Before, nothing was learned: its oldest records were
	 * overwritten before it ended.  The first step, which began no
	 * boundary, is not cut: it is learned from the second. */
	tb_start("GRAPHSHIM_MAX_SEQ", "16", "GRAPHSHIM_MIN_SEQ", "3", NULL);
	for (int i = 0; i < 8; i++)
		deep_step(S1, 13);
	cr_expect_eq(tb.builds, 3);
	gs_seq_info_t info[8];
	cr_assert_eq(gs_engine_seq_info(info, 8), 3);
	uint32_t lens = 0;
	for (int i = 0; i < 3; i++) {
		cr_expect_leq(info[i].length, 16);
		cr_expect_not(info[i].periodic);
		lens += info[i].length;
	}
	cr_expect_eq(lens, 39);
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_eq(gs_stats.replayed, 39 * 5, "from the fourth step on, replayed %llu",
		     (unsigned long long)gs_stats.replayed);
	tb_check();
}

Test(learn, a_stream_that_never_synchronizes_is_not_cut)
{
	/* No boundary, no period (every launch a new argument, like shapes):
	 * nothing is learned, as before long cuts; pieces cut every 16 launches
	 * would be alike in shape and replayed with every node patched. */
	tb_start("GRAPHSHIM_MAX_SEQ", "16", "GRAPHSHIM_PERIOD_AFTER", "3", NULL);
	for (int i = 0; i < 200; i++)
		tb_launch(S1, F[0], (uint64_t)i, 0);
	cr_expect_eq(gs_stats.sequences, 0);
	cr_expect_eq(tb.builds, 0);
	tb_check();
}

/*
 * GRAPHSHIM_SIBLINGS: a step first seen as long as an armed one and unlike
 * it at one place (a framework's kernel variant: another elementwise kernel
 * where a pointer's alignment changed) is learned at its first sighting, so
 * its second replays.  Unlike at two places in 16, it is another step.
 */
static void variant_step(int at, int at2)
{
	uintptr_t f[16];
	for (int i = 0; i < 16; i++)
		f[i] = i == at || i == at2 ? 0x900 + (uintptr_t)i : 0x100 + (uintptr_t)i;
	tb_step(S1, f, 16, 0);
	sync_stream(S1);
}

static int variant_second_sighting(const char *siblings, int at2)
{
	tb_start("GRAPHSHIM_SIBLINGS", siblings, "GRAPHSHIM_ASYNC_BUILD", "0", NULL);
	variant_step(-1, -1);
	variant_step(-1, -1); /* learned */
	variant_step(-1, -1);
	cr_expect_eq(tb_from_graph_in_last(16), 16);
	variant_step(9, at2); /* first seen: the armed step mismatches at 9 */
	variant_step(9, at2);
	return tb_from_graph_in_last(16);
}

Test(learn, a_variant_of_an_armed_step_is_learned_at_its_first_sighting)
{
	cr_expect_eq(variant_second_sighting("1", -1), 16, "the variant's second sighting replays");
	cr_expect_eq(gs_stats.siblings, 1);
	variant_step(-1, -1);
	cr_expect_eq(tb_from_graph_in_last(16), 16, "the step it varies replays as before");
	variant_step(9, -1);
	cr_expect_eq(tb_from_graph_in_last(16), 16);
	tb_check();
}

Test(learn, without_siblings_a_variant_is_learned_at_its_second_sighting)
{
	cr_expect_eq(variant_second_sighting("0", -1), 0);
	cr_expect_eq(gs_stats.siblings, 0);
	variant_step(9, -1);
	cr_expect_eq(tb_from_graph_in_last(16), 16, "and replays from its third");
	tb_check();
}

Test(learn, a_step_unlike_an_armed_one_at_two_places_in_sixteen_is_no_variant)
{
	cr_expect_eq(variant_second_sighting("1", 3), 0);
	cr_expect_eq(gs_stats.siblings, 0);
	tb_check();
}

/*
 * GRAPHSHIM_LEARN_LONG: a step of at least that many operations is learned
 * at its first sighting, so its second replays; a shorter one waits for
 * GRAPHSHIM_LEARN_REPS sightings.  A long step that never comes back cost
 * one build: a step beginning like it mismatches, and what it held goes in
 * order.
 */
static void long_step(int n, uintptr_t diverge_at)
{
	uintptr_t f[32];
	for (int i = 0; i < n; i++)
		f[i] = (uintptr_t)i == diverge_at ? 0x900 + (uintptr_t)i : 0x100 + (uintptr_t)i;
	tb_step(S1, f, (size_t)n, 0);
	sync_stream(S1);
}

/* Launches of an n-launch step that replayed at its second sighting. */
static int second_sighting(const char *learn_long, int n)
{
	tb_start("GRAPHSHIM_LEARN_LONG", learn_long, "GRAPHSHIM_PERIOD", "0", NULL);
	long_step(n, UINTPTR_MAX);
	long_step(n, UINTPTR_MAX);
	return tb_from_graph_in_last((size_t)n);
}

Test(learn, a_long_step_is_learned_at_its_first_sighting)
{
	cr_expect_eq(second_sighting("16", 16), 16, "the second sighting replays");
	cr_expect_eq(tb.builds, 1, "built once, at the end of the first");
	cr_expect_eq(gs_stats.learned_long, 1);
	tb_check();
}

Test(learn, a_step_shorter_than_learn_long_waits_for_its_repeat)
{
	cr_expect_eq(second_sighting("17", 16), 0);
	cr_expect_eq(tb.builds, 1, "learned at its second sighting");
	long_step(16, UINTPTR_MAX);
	cr_expect_eq(tb_from_graph_in_last(16), 16);
	cr_expect_eq(gs_stats.learned_long, 0);
	tb_check();
}

Test(learn, zero_learns_every_step_at_its_repeats)
{
	cr_expect_eq(second_sighting("0", 32), 0);
	cr_expect_eq(gs_stats.learned_long, 0);
	tb_check();
}

Test(learn, a_long_step_seen_once_costs_a_build_and_changes_nothing)
{
	tb_start("GRAPHSHIM_LEARN_LONG", "16", "GRAPHSHIM_PERIOD", "0", NULL);
	long_step(24, UINTPTR_MAX); /* learned, never seen again */
	for (int k = 0; k < 4; k++)
		long_step(24, 12); /* begins like it: held to its 12th launch, then mismatches */
	cr_expect_eq(gs_stats.learned_long, 2, "the second step too, at its first sighting");
	cr_expect_eq(tb_from_graph_in_last(24), 24, "which replays from its second");
	cr_expect_eq(gs_stats.retirements, 0);
	tb_check(); /* every launch ran once, in order */
}
