/* Variants: more graphs of a chunk, for operands that recur (gs_variant.c). */
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <unistd.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)

static void sync_s1(void)
{
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/*
 * One step of 8 launches and a sync; launch i's first argument is a buffer
 * from `set` (an allocator's address for it), its second `pos` when i is
 * `posat` (a position that grows every step; -1: none).
 */
static void step(uint64_t set, int posat, uint64_t pos)
{
	for (int i = 0; i < 8; i++)
		tb_launch(S1, F[i], set * 0x10000 + (uint64_t)i * 0x100, i == posat ? pos : 0);
	sync_s1();
}

/* An allocator that hands out two sets of addresses in turn: two graphs, no patches. */
Test(variant, a_rotation_of_two_settles_on_two_graphs)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (uint64_t t = 0; t < 40; t++)
		step(1 + t % 2, -1, 0);
	cr_expect_eq(gs_stats.variants, 1, "the one other set");
	cr_expect_geq(gs_stats.variant_replays, 16);
	int patches = tb.patches;
	for (uint64_t t = 40; t < 60; t++)
		step(1 + t % 2, -1, 0);
	cr_expect_eq(tb.patches, patches, "settled: each set replays its own graph");
	tb_check();
}

/* A rotation of three, and a position that grows at one launch: only it is patched. */
Test(variant, a_rotation_of_three_with_a_growing_position)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (uint64_t t = 0; t < 60; t++)
		step(1 + t % 3, 5, t);
	cr_expect_eq(gs_stats.variants, 2);
	int patches = tb.patches;
	for (uint64_t t = 60; t < 90; t++)
		step(1 + t % 3, 5, t);
	cr_expect_eq(tb.patches, patches + 30, "one patch a step: the position");
	tb_check();
}

/* Operands that never come back (every buffer moved every step): nothing is built. */
Test(variant, operands_that_never_recur_build_nothing)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (uint64_t t = 0; t < 60; t++)
		step(1 + t, -1, 0);
	cr_expect_eq(gs_stats.variants, 0);
	cr_expect_geq(gs_stats.replays, 55, "patched and replayed");
	tb_check();
}

/*
 * Operands that drift every step but now and then meet an earlier step's
 * at one launch (a caching allocator behind a growing KV cache hands out
 * an address again here and there): a graph kept for that would save one
 * patch and never be picked, so nothing is built.
 */
Test(variant, operands_that_recur_only_here_and_there_build_nothing)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (uint64_t t = 0; t < 60; t++)
		for (int i = 0; i < 8; i++) {
			/* Launch t % 8 takes the address it had four steps ago. */
			uint64_t set = i == (int)(t % 8) && t >= 4 ? 1 + t - 4 : 1 + t;
			tb_launch(S1, F[i], set * 0x10000 + (uint64_t)i * 0x100, 0);
			if (i == 7)
				sync_s1();
		}
	cr_expect_eq(gs_stats.variants, 0);
	cr_expect_geq(gs_stats.replays, 55, "patched and replayed");
	tb_check();
}

/*
 * Twelve layers of one structure with their own weights, a boundary after
 * each: one sequence met twelve times a step.  It settles on a graph per
 * layer (GRAPHSHIM_VARIANTS of them, at most).
 */
Test(variant, layers_of_one_structure_each_get_a_graph)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (uint64_t t = 0; t < 20; t++)
		for (uint64_t layer = 0; layer < 12; layer++)
			step(100 + layer, -1, 0);
	cr_expect_eq(gs_stats.variants, 11);
	int patches = tb.patches;
	for (uint64_t t = 0; t < 5; t++)
		for (uint64_t layer = 0; layer < 12; layer++)
			step(100 + layer, -1, 0);
	cr_expect_eq(tb.patches, patches);
	tb_check();
}

Test(variant, the_count_is_bounded)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_VARIANTS", "4", NULL);
	for (uint64_t t = 0; t < 20; t++)
		for (uint64_t layer = 0; layer < 12; layer++)
			step(100 + layer, -1, 0);
	cr_expect_eq(gs_stats.variants, 3, "four graphs a chunk: the sequence's and three");
	tb_check();
}

Test(variant, one_graph_a_chunk_turns_them_off)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_VARIANTS", "1", NULL);
	for (uint64_t t = 0; t < 40; t++)
		step(1 + t % 2, -1, 0);
	cr_expect_eq(gs_stats.variants, 0);
	cr_expect_geq(tb.patches, 8 * 30);
	tb_check();
}

/* Built on the background thread, attached on the stream's next call.  The
 * builder runs under SCHED_BATCH: on a loaded machine (the test suite run
 * with -j2 beside the simulator's workloads) it may wait tens of
 * milliseconds for a CPU, so the steps go on for up to some seconds. */
Test(variant, built_in_the_background)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	for (uint64_t t = 0; t < 20000 && !gs_stats.variant_replays; t++) {
		step(1 + t % 2, -1, 0);
		usleep(200);
	}
	cr_expect_eq(gs_stats.variants, 1);
	cr_expect_gt(gs_stats.variant_replays, 0);
	tb_check();
}

/*
 * The sequence goes (retired, or its stream forgotten) while its variant is
 * being built: the build is cancelled and freed, nothing launches from it.
 */
Test(variant, a_sequence_dropped_while_its_variant_builds)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	tb.build_sleep_ms = 0;
	step(1, -1, 0);
	step(2, -1, 0);
	while (!__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE))
		usleep(100);
	step(1, -1, 0); /* publishes the sequence */
	tb.build_sleep_ms = 50; /* the variant's build takes its time */
	step(2, -1, 0);
	step(1, -1, 0);
	step(2, -1, 0); /* the recurrence: a variant is queued */
	gs_engine_forget_funcs("test");
	tb.build_sleep_ms = 0;
	gs_engine_fini();
	cr_expect_eq(tb.live_graphs, 0, "every graph destroyed, the variant's too");
	tb_check();
}
