/* The sequence cache: bounds, eviction, statistics. */
#include "gs_testbe.h"

#include <criterion/criterion.h>

#define S1 ((uintptr_t)0x5001)

static void sync_s1(void)
{
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/* A step of n launches whose functions are base, base+1, ... */
static void kstep(uintptr_t base, int n)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, base + i, i, 0);
	sync_s1();
}

Test(cache, evicts_least_recently_used_past_the_count)
{
	tb_start("GRAPHSHIM_MAX_SEQS", "2", "GRAPHSHIM_PERIOD", "0", NULL);
	kstep(0x100, 4);
	kstep(0x100, 4); /* A armed */
	kstep(0x200, 4);
	kstep(0x200, 4); /* B armed */
	kstep(0x100, 4); /* A replayed: now most recent */
	cr_expect_eq(gs_stats.replays, 1);
	kstep(0x300, 4); /* C seen: evicts B, the least recent */
	cr_expect_eq(gs_stats.evictions, 1);
	cr_expect_eq(tb.destroys, 1);
	kstep(0x100, 4); /* A still armed */
	cr_expect_eq(gs_stats.replays, 2);
	kstep(0x200, 4); /* B must be learned again */
	cr_expect_eq(gs_stats.replays, 2);
	tb_check();
}

Test(cache, node_budget_evicts_armed_sequences)
{
	tb_start("GRAPHSHIM_MAX_NODES", "10", "GRAPHSHIM_PERIOD", "0", NULL);
	kstep(0x100, 6);
	kstep(0x100, 6); /* A: 6 nodes */
	kstep(0x200, 6);
	kstep(0x200, 6); /* B: 6 more would exceed 10: A evicted */
	cr_expect_eq(tb.builds, 2);
	cr_expect_eq(gs_stats.evictions, 1);
	cr_expect_eq(tb.live_graphs, 1);
	kstep(0x200, 6);
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

Test(cache, a_sequence_larger_than_the_budget_stays_eager)
{
	tb_start("GRAPHSHIM_MAX_NODES", "5", "GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 4; i++)
		kstep(0x100, 6);
	cr_expect_eq(tb.builds, 0);
	tb_check();
}

Test(cache, longer_than_max_seq_is_learned_in_pieces)
{
	/* No sequence is longer than GRAPHSHIM_MAX_SEQ: a 20-launch step is two
	 * (a long cut at its 16th launch, docs/how-it-works.md), from the
	 * first boundary on. */
	tb_start("GRAPHSHIM_MAX_SEQ", "16", "GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 4; i++)
		kstep(0x100, 20);
	cr_expect_eq(tb.builds, 2);
	cr_expect_eq(gs_stats.sequences, 2);
	gs_seq_info_t info[4];
	cr_assert_eq(gs_engine_seq_info(info, 4), 2);
	cr_expect_eq(info[0].length + info[1].length, 20);
	cr_expect(info[0].length == 16 || info[1].length == 16);
	cr_expect_eq(gs_stats.replayed, 20, "the fourth step");
	tb_check();
}

Test(cache, endless_distinct_sequences_stay_bounded)
{
	tb_start("GRAPHSHIM_MAX_SEQS", "8", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_COLD_AFTER", "0", NULL);
	for (int i = 0; i < 500; i++)
		kstep(0x1000 + 16 * (uintptr_t)i, 4);
	gs_seq_info_t info[16];
	cr_expect_leq(gs_engine_seq_info(info, 16), 8);
	cr_expect_geq(gs_stats.evictions, 492);
}

Test(cache, seq_info_reports_state_and_counts)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 5; i++)
		kstep(0x100, 4);
	gs_seq_info_t info[4];
	cr_assert_eq(gs_engine_seq_info(info, 4), 1);
	cr_expect_eq(info[0].length, 4);
	cr_expect_eq(info[0].state, GS_SEQ_ARMED);
	cr_expect_eq(info[0].replays, 3);
	cr_expect_eq(info[0].stream, S1);
	cr_expect_not(info[0].periodic);
}
