/* Thrift (gs_thrift.h): a stream whose graph builds go unreplayed learns more slowly. */
#include "gs_build.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <string.h>

#define S1 ((uintptr_t)0x5001)

/* Step k: every step begins with the same launch (0x100), then n - 1 of its own. */
static void step_k(int k, int n)
{
	tb_launch(S1, 0x100, 0, 0);
	for (int i = 1; i < n; i++)
		tb_launch(S1, 0x1000 * (uintptr_t)(k + 1) + (uintptr_t)i, (uint64_t)i, 0);
	tb_sync(S1, 0);
}

/* Distinct steps that all begin alike: each one's sighting is followed by a
 * step beginning like it, so each is built on a guess that never repeats. */
static void distinct_steps(const char *thrift, int nsteps)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_COLD_AFTER", "0",
		 "GRAPHSHIM_THRIFT", thrift, NULL);
	for (int k = 0; k < nsteps; k++) {
		step_k(k, 8);
		gs_build_wait();
	}
}

Test(thrift, guesses_that_never_repeat_stop_speculation)
{
	distinct_steps("8", 30);
	cr_expect_eq(gs_stats.guesses_missed, 8, "missed %llu", (unsigned long long)gs_stats.guesses_missed);
	cr_expect_eq(gs_stats.speculated, 8, "speculated %llu", (unsigned long long)gs_stats.speculated);
	cr_expect_eq(gs_stats.thrift_on, 1);
	cr_expect_eq(tb.builds, 8, "graphs built for steps that never repeat: %d", tb.builds);
	cr_expect_eq(gs_stats.replays, 0);
	tb_check();
}

Test(thrift, zero_never_holds_back)
{
	distinct_steps("0", 30);
	cr_expect_eq(gs_stats.speculated, 29);
	cr_expect_eq(gs_stats.guesses_missed, 29, "counted without thrift too");
	cr_expect_eq(gs_stats.thrift_on, 0);
	cr_expect_eq(tb.builds, 29);
	tb_check();
}

/* Thrifty, a step is armed at its fourth sighting, not its second. */
Test(thrift, a_thrifty_stream_needs_twice_the_sightings)
{
	distinct_steps("8", 10);
	cr_assert_eq(gs_stats.thrift_on, 1);
	int built = tb.builds;
	for (int i = 0; i < 4; i++) {
		step_k(100, 8);
		gs_build_wait();
		cr_expect_eq(tb_from_graph_in_last(8), 0, "sighting %d replayed", i + 1);
	}
	cr_expect_eq(tb.builds, built + 1, "armed at the fourth sighting");
	step_k(100, 8);
	cr_expect_eq(tb_from_graph_in_last(8), 8, "the fifth sighting replays");
	tb_check();
}

/* Builds that pay (replayed twice) bring the stream back: speculation and
 * learning at GRAPHSHIM_LEARN_REPS again. */
Test(thrift, builds_that_pay_end_thrift)
{
	distinct_steps("8", 10);
	cr_assert_eq(gs_stats.thrift_on, 1);
	for (int k = 100; k < 102; k++)
		for (int i = 0; i < 6; i++) { /* armed at 4, replayed at 5 and 6: paid */
			step_k(k, 8);
			gs_build_wait();
		}
	cr_assert_eq(gs_stats.replays, 4);
	/* Back to learning at the second sighting: the third replays. */
	uint64_t spec = gs_stats.speculated;
	for (int i = 0; i < 3; i++) {
		step_k(200, 8);
		gs_build_wait();
	}
	cr_expect_eq(tb_from_graph_in_last(8), 8, "the third sighting replays again");
	cr_expect_gt(gs_stats.speculated, spec, "it speculates again");
	tb_check();
}

/* Sequences armed and evicted before they replayed are wasted too. */
Test(thrift, armed_and_evicted_unreplayed_is_waste)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "0", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_COLD_AFTER", "0",
		 "GRAPHSHIM_MAX_SEQS", "2", "GRAPHSHIM_THRIFT", "4", NULL);
	/* Each step twice (armed at its second sighting), never again. */
	for (int k = 0; k < 12; k++) {
		step_k(k, 8);
		step_k(k, 8);
	}
	cr_expect_eq(gs_stats.thrift_on, 1);
	cr_expect_lt(tb.builds, 12, "builds went on: %d", tb.builds);
	cr_expect_eq(gs_stats.replays, 0);
	tb_check();
}

/* With GRAPHSHIM_COLD_REPLAY, a thrifty stream's cold segment wakes it at
 * its second repeat, not its first: work that churns repeats by chance. */
static void cold_repeats(const char *cold_replay)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_COLD_AFTER", "2",
		 "GRAPHSHIM_THRIFT", "1", "GRAPHSHIM_COLD_REPLAY", cold_replay, NULL);
	step_k(0, 8);
	gs_build_wait();
	step_k(1, 8); /* began like step 0: a guess, missed; thrifty; cold after it */
	gs_build_wait();
	cr_assert_eq(gs_stats.thrift_on, 1);
	cr_assert_eq(gs_stats.cold_streams, 1);
	for (int i = 0; i < 3; i++) { /* another step, three times, while cold */
		for (int k = 0; k < 6; k++)
			tb_launch(S1, 0x900 + (uintptr_t)k, (uint64_t)k, 0);
		tb_sync(S1, 0);
		if (i == 1)
			cr_expect_eq(gs_stats.cold_woken, !strcmp(cold_replay, "0"), "its first repeat");
	}
	cr_expect_eq(gs_stats.cold_woken, 1, "woken once");
	tb_check();
}

Test(thrift, a_thrifty_cold_stream_wakes_at_a_second_repeat)
{
	cold_repeats("1");
}

Test(thrift, without_cold_replay_a_first_repeat_wakes_it)
{
	cold_repeats("0");
}

/* A thrifty stream learns no step at its first sighting, however long. */
Test(thrift, a_thrifty_stream_waits_for_long_steps_to_repeat)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "0", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_COLD_AFTER", "0",
		 "GRAPHSHIM_MAX_SEQS", "2", "GRAPHSHIM_THRIFT", "4", "GRAPHSHIM_LEARN_LONG", "8", NULL);
	/* Each step once: learned at once for its length, evicted unreplayed. */
	int k = 0;
	for (; k < 12 && !gs_stats.thrift_on; k++)
		step_k(k, 8);
	cr_assert_eq(gs_stats.thrift_on, 1, "wasted builds made it thrifty");
	uint64_t learned = gs_stats.learned_long;
	int builds = tb.builds;
	step_k(k, 8);
	cr_expect_eq(tb.builds, builds, "a new long step is not built at its first sighting");
	cr_expect_eq(gs_stats.learned_long, learned);
	tb_check();
}
