/* Replay: revalidation, patching, the cost rule, retirement, cool-down. */
#include "gs_build.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <unistd.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)

static void sync_s1(void)
{
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/* Launches [from, to) of the step on S1, as step() makes them, undrifted. */
static void launches(int from, int to)
{
	for (int i = from; i < to; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
}

/* One step of n launches; launch `drift_at` (if >= 0) gets a1 = v. */
static void step(int n, int drift_from, int drift_to, uint64_t v)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, F[i], 1000 + i, (i >= drift_from && i < drift_to) ? v : 0);
	sync_s1();
}

/* The costs are those before they were measured (0.5, 2): a step of four
 * launches that all drift is then not worth patching, the simplest
 * mismatch for the tests of retirement and cool-down. */
static void learn_cold(int n, const char *limit, const char *cooldown, const char *cold_after)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_MISMATCH_LIMIT", limit, "GRAPHSHIM_COOLDOWN",
		 cooldown, "GRAPHSHIM_COLD_AFTER", cold_after, "GRAPHSHIM_FORGIVE", "1",
		 "GRAPHSHIM_PATCH_COST", "0.5", "GRAPHSHIM_GRAPH_COST", "2", NULL);
	step(n, 0, 0, 0);
	step(n, 0, 0, 0);
	cr_assert_eq(tb.builds, 1);
}

static void learn(int n, const char *limit, const char *cooldown)
{
	learn_cold(n, limit, cooldown, "16");
}

Test(replay, clean_replay_patches_nothing)
{
	learn(8, "3", "0");
	step(8, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 1);
	cr_expect_eq(tb.patches, 0);
	tb_check();
}

Test(replay, argument_drift_is_patched_and_runs_with_new_values)
{
	learn(8, "3", "0");
	step(8, 2, 3, 42);
	cr_expect_eq(gs_stats.replays, 1);
	cr_expect_eq(gs_stats.patches, 1);
	cr_expect_eq(gs_stats.patched_replays, 1);
	cr_expect_eq(tb.exec[16 + 2].a1, 42);
	cr_expect(tb.exec[16 + 2].from_graph);
	/* Drift back: patched again, to the old value. */
	step(8, 0, 0, 0);
	cr_expect_eq(gs_stats.patches, 2);
	cr_expect_eq(tb.exec[24 + 2].a1, 0);
	tb_check();
}

Test(replay, every_byte_is_compared_including_pointers)
{
	learn(8, "3", "0");
	step(8, 7, 8, 1ULL << 60); /* only the high byte of the last pointer changes */
	cr_expect_eq(gs_stats.patches, 1);
	cr_expect_eq(tb.exec[16 + 7].a1, 1ULL << 60);
	tb_check();
}

Test(replay, drift_past_the_cost_rule_goes_eager)
{
	/* 4 launches, all drifting: 2 + 4 * 0.5 = 4 is not cheaper than 4. */
	learn(4, "3", "0");
	step(4, 0, 4, 9);
	cr_expect_eq(gs_stats.replays, 0);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_DRIFT], 1);
	cr_expect_eq(gs_stats.released, 4);
	tb_check();
}

Test(replay, drift_within_the_cost_rule_is_patched)
{
	/* 4 launches, 3 drifting: 2 + 3 * 0.5 = 3.5 < 4. */
	learn(4, "3", "0");
	step(4, 0, 3, 9);
	cr_expect_eq(gs_stats.replays, 1);
	cr_expect_eq(gs_stats.patches, 3);
	tb_check();
}

/*
 * The defaults are measured (tools/gpu/costs.c on an H100: a node patch
 * 0.08-0.19 of an eager launch, a graph launch 0.5-0.6): a step of four
 * launches whose every argument changed is patched, 1 + 4 * 0.25 < 4.
 */
Test(replay, by_default_a_short_step_that_all_drifted_is_patched)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	step(4, 0, 0, 0);
	step(4, 0, 0, 0);
	step(4, 0, 4, 9);
	cr_expect_eq(gs_stats.replays, 1);
	cr_expect_eq(gs_stats.patches, 4);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_DRIFT], 0);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(tb.exec[8 + i].a1, 9);
	tb_check();
}

Test(replay, patch_cost_is_configurable)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_PATCH_COST", "10", NULL);
	step(8, 0, 0, 0);
	step(8, 0, 0, 0);
	step(8, 1, 2, 5); /* 2 + 10 > 8: eager */
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_DRIFT], 1);
	tb_check();
}

/*
 * A chunk too short for any patch (here every chunk: one launch each) that
 * drifted goes eagerly uncharged (test_idle.c), but a pass that then
 * launches no graph at all counts its drift once, at its end: a step that
 * drifts everywhere still retires, and nothing stays held for nothing.
 */
Test(replay, drift_in_short_chunks_alone_still_retires)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_MISMATCH_LIMIT", "3", "GRAPHSHIM_CHUNK_FIRST", "1",
		 "GRAPHSHIM_CHUNK_MAX", "1", NULL);
	step(4, 0, 0, 0);
	step(4, 0, 0, 0);
	cr_assert_eq(tb.builds, 4, "a graph a launch");
	step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 4, "four one-launch graphs while nothing drifts");
	step(4, 1, 2, 7);
	cr_expect_eq(gs_stats.replays, 7, "the drifting launch goes eagerly, the other three replay");
	cr_expect_eq(gs_stats.mismatches, 0);
	for (int i = 0; i < 3; i++)
		step(4, 0, 4, 100 + (uint64_t)i);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_DRIFT], 3, "one a pass, at its end");
	cr_expect_eq(gs_stats.retirements, 1);
	cr_expect_eq(gs_stats.replays, 7);
	tb_check();
}

Test(replay, consecutive_mismatches_retire_the_sequence)
{
	learn(4, "3", "0");
	for (int i = 0; i < 3; i++)
		step(4, 0, 4, 100 + i);
	cr_expect_eq(gs_stats.retirements, 1);
	cr_expect_eq(tb.destroys, 1, "the retired sequence's graph is released");
	cr_expect_eq(tb.live_graphs, 0);
	uint64_t held = gs_stats.held;
	step(4, 0, 0, 0);
	step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 0, "a retired sequence stays eager");
	cr_expect_eq(gs_stats.held, held, "nothing is held for a retired sequence");
	tb_check();
}

Test(replay, the_limit_is_configurable)
{
	learn(4, "1", "0");
	step(4, 0, 4, 100);
	cr_expect_eq(gs_stats.retirements, 1);
}

Test(replay, a_clean_replay_resets_the_count)
{
	learn(4, "3", "0");
	step(4, 0, 4, 100);
	step(4, 0, 4, 101);
	step(4, 0, 0, 0); /* clean */
	step(4, 0, 4, 102);
	step(4, 0, 4, 103);
	cr_expect_eq(gs_stats.retirements, 0);
	cr_expect_eq(gs_stats.mismatches, 4);
	step(4, 0, 4, 104);
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

Test(replay, a_patched_replay_also_resets_the_count)
{
	learn(4, "2", "0");
	step(4, 0, 4, 100); /* drift past the rule: mismatch 1 */
	step(4, 0, 1, 7);   /* patched: reset */
	step(4, 0, 4, 101); /* mismatch 1 again */
	cr_expect_eq(gs_stats.retirements, 0);
	tb_check();
}

Test(replay, cooldown_lets_a_retired_sequence_learn_again)
{
	learn(4, "1", "2");
	step(4, 0, 4, 100);
	cr_assert_eq(gs_stats.retirements, 1);
	step(4, 0, 0, 0); /* sighting 1 */
	step(4, 0, 0, 0); /* sighting 2: learning again, seen once */
	cr_expect_eq(gs_stats.relearned, 1);
	step(4, 0, 0, 0); /* seen twice: armed */
	cr_expect_eq(tb.builds, 2);
	step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

/* Steps of 6 launches that begin like A's and differ from launch 3 on
 * (a function of another parameter layout there: a new structure). */
static void sibling(uintptr_t f3)
{
	for (int i = 0; i < 6; i++)
		tb_launch(S1, i == 3 ? f3 : F[i], 1000 + i, 0);
	sync_s1();
}

/*
 * A first decoding step and the steps after it begin alike.  While the
 * other one learns, each of its sightings ends a match of the armed one;
 * a repeat of its own is no failure of the armed one, and neither step
 * retires: both replay.
 */
Test(replay, a_sibling_step_that_repeats_retires_nothing)
{
	learn(6, "3", "0");
	for (int i = 0; i < 8; i++)
		step(6, 0, 0, 0); /* a step that replays */
	for (int i = 0; i < 6; i++)
		sibling(0xa7);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 2, "until the sibling is armed");
	cr_expect_eq(gs_stats.forgiven, 2,
		     "new: the step replays 8 times as often; then a step seen before");
	cr_expect_eq(gs_stats.retirements, 0);
	uint64_t replays = gs_stats.replays;
	cr_expect_geq(replays, 8 + 3, "the sibling replays once armed");
	step(6, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, replays + 1, "and so does the first step");
	tb_check();
}

/* A step cut short by a read-back, every time at the same place, is a
 * step of its own: the longer one it began like is not charged. */
Test(replay, a_cut_that_repeats_is_a_step_of_its_own)
{
	learn(6, "3", "0");
	for (int i = 0; i < 8; i++)
		step(6, 0, 0, 0);
	for (int k = 0; k < 5; k++)
		step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.retirements, 0);
	cr_expect_geq(gs_stats.forgiven, 1);
	step(6, 0, 0, 0);
	cr_expect_eq(gs_stats.mismatches, gs_stats.mismatch_by[GS_MISMATCH_CUT]);
	cr_expect_geq(gs_stats.replays, 8 + 1);
	tb_check();
}

/* Another thread's sync: it submits this stream's held launches, and cuts
 * neither a match of one sequence nor a segment that holds nothing. */
static void another_threads_sync(void)
{
	tb_flush_all_elsewhere(GS_FLUSH_SYNC);
}

/* Another thread's cuMemFree: a flush of every stream that still ends
 * their segments. */
static void another_threads_free(void)
{
	tb_flush_all_elsewhere(GS_FLUSH_FREE);
}

/*
 * Another thread's sync (or synchronous copy) in the middle of a step: the
 * held launches go first, eagerly, and the match goes on: no mismatch, the
 * step's segment is not cut, and the pass counts as the step's.  Two
 * threads that each read back every step (decode --threads 2 on an H100)
 * cut each other's steps at random places: 294 sequences learned from the
 * pieces before.
 */
Test(replay, another_threads_sync_mid_step_does_not_end_the_match)
{
	learn(8, "3", "0");
	launches(0, 3);
	another_threads_sync();
	cr_expect_eq(gs_stats.released, 3, "the held launches went first");
	cr_expect_eq(gs_stats.interrupted, 1);
	launches(3, 8);
	sync_s1();
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_eq(gs_stats.released, 8, "the rest of its chunk went eagerly too");
	cr_expect_eq(gs_stats.sequences, 1, "nothing learned from the pieces");
	step(8, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 1, "the next step replays");
	tb_check();
}

/* learn(8, "3", "0") with the idle watchdog running (1 s: it never fires here). */
static void learn_watched(void)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_MISMATCH_LIMIT", "3", "GRAPHSHIM_COOLDOWN", "0",
		 "GRAPHSHIM_FORGIVE", "1", "GRAPHSHIM_PATCH_COST", "0.5", "GRAPHSHIM_GRAPH_COST", "2",
		 "GRAPHSHIM_IDLE_US", "1000000", NULL);
	step(8, 0, 0, 0);
	step(8, 0, 0, 0);
	cr_assert_eq(tb.builds, 1);
}

static void *sync_s1_elsewhere(void *why)
{
	gs_flush_reason_t r = *(const gs_flush_reason_t *)why;
	gs_engine_flush_synced(S1, NULL, 0, r, r == GS_FLUSH_QUERY ? "cuStreamQuery" : "cuStreamSynchronize");
	return NULL;
}

/*
 * Another thread's synchronization or query of this very stream, in the
 * middle of a step (a monitor thread polling a worker's stream): the held
 * launches go first, as the call needs, and the match goes on as for
 * another thread's synchronization of every stream.  It used to end the
 * match as a cut charged to the sequence, so a stream polled often enough
 * from elsewhere had its sequences retired.
 */
static void another_thread_syncs_s1_mid_step(gs_flush_reason_t why)
{
	learn_watched();
	for (int k = 0; k < 4; k++) {
		launches(0, 3);
		tb_elsewhere(sync_s1_elsewhere, &why);
		cr_expect_eq(gs_stats.released, 8 * k + 3, "the held launches went before the call");
		launches(3, 8);
		sync_s1();
	}
	cr_expect_eq(gs_stats.interrupted, 4);
	cr_expect_eq(gs_stats.mismatches, 0, "no cut charged to the sequence");
	cr_expect_eq(gs_stats.retirements, 0);
	cr_expect_eq(gs_stats.sequences, 1, "nothing learned from the pieces");
	step(8, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 1, "the next step replays");
	tb_check();
}

Test(replay, another_threads_sync_of_this_stream_does_not_end_the_match)
{
	another_thread_syncs_s1_mid_step(GS_FLUSH_SYNC);
}

Test(replay, another_threads_query_of_this_stream_does_not_end_the_match)
{
	another_thread_syncs_s1_mid_step(GS_FLUSH_QUERY);
}

/* Another thread's cuStreamQuery of S1: whether it was answered "not ready" without the driver. */
static bool another_thread_queries_s1(void)
{
	return tb_query_elsewhere(S1);
}

/*
 * A monitor thread's query of a stream holding launches of another
 * thread's step: "not ready", from graphshim (the work is not even
 * submitted), and the pass goes on whole: nothing released, nothing
 * interrupted, the step replays.
 */
Test(replay, another_threads_query_of_held_work_is_not_ready_and_the_pass_goes_on)
{
	learn_watched();
	for (int k = 0; k < 3; k++) {
		launches(0, 3);
		cr_expect(another_thread_queries_s1(), "held work: not ready");
		launches(3, 4);
		cr_expect(another_thread_queries_s1(), "the worker went on: not ready again");
		launches(4, 8);
		sync_s1();
		cr_expect_not(another_thread_queries_s1(), "nothing held: the driver answers");
	}
	cr_expect_eq(gs_stats.query_not_ready, 6);
	cr_expect_eq(gs_stats.replays, 3, "every pass replays whole");
	cr_expect_eq(gs_stats.released + gs_stats.interrupted + gs_stats.mismatches, 0);
	tb_check();
}

/*
 * A thread spinning on the query while the worker holds and issues
 * nothing more (waiting for that very thread, say) gets "not ready" four
 * times, then the held launches are submitted and the driver answers.
 */
Test(replay, a_query_spinning_on_held_work_has_it_submitted)
{
	learn_watched();
	launches(0, 3);
	for (int q = 0; q < 4; q++)
		cr_expect(another_thread_queries_s1(), "answer %d: not ready", q);
	cr_expect_eq(gs_stats.released, 0);
	cr_expect_not(another_thread_queries_s1(), "the fifth: submitted, the driver answers");
	cr_expect_eq(gs_stats.released, 3);
	cr_expect_eq(gs_stats.interrupted, 1, "the match goes on");
	launches(3, 8);
	sync_s1();
	cr_expect_eq(gs_stats.mismatches, 0);
	tb_check();
}

/* Without the idle watchdog nothing else would send what the polled work may wait for: every stream goes. */
Test(replay, without_the_watchdog_another_threads_query_submits)
{
	learn(8, "3", "0"); /* (the test backend's default: GRAPHSHIM_IDLE_US=0) */
	launches(0, 3);
	cr_expect_not(another_thread_queries_s1(), "the driver answers");
	cr_expect_eq(gs_stats.query_not_ready, 0);
	cr_expect_eq(gs_stats.released, 3, "what S1 held went first");
	tb_check();
}

#define S9 ((uintptr_t)0x5009)

/* The querying thread: a step of 4 launches of its own on S9, learned, three of them held, then a poll of S1. */
static void *hold_on_s9_then_query_s1(void *busy)
{
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < (k < 2 ? 4 : 3); i++)
			tb_launch(S9, F[i], 2000 + i, 0);
		if (k < 2)
			gs_engine_flush_stream(S9, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
	*(bool *)busy = gs_engine_stream_query(S1, NULL, 0, "cuStreamQuery");
	return NULL;
}

/*
 * The querying thread's own streams end their segments at the query, as
 * at any query the driver answers: a kernel of the polled stream may spin
 * on memory its held work writes.
 */
Test(replay, a_query_answered_not_ready_ends_the_callers_own_segments)
{
	learn_watched();
	launches(0, 3);
	bool busy = false;
	tb_elsewhere(hold_on_s9_then_query_s1, &busy);
	cr_expect(busy, "S1 held another thread's step: not ready");
	cr_expect_eq(gs_stats.released, 3, "the caller's three held on S9 went, S1's stayed");
	launches(3, 8);
	sync_s1();
	cr_expect_eq(gs_stats.mismatches, 0);
	tb_check();
}

/* The stream's own thread polling it waits for the answer: its held work goes. */
Test(replay, a_streams_own_query_submits_its_held_work)
{
	learn_watched();
	launches(0, 3);
	cr_expect_not(gs_engine_stream_query(S1, NULL, 0, "cuStreamQuery"));
	cr_expect_eq(gs_stats.query_not_ready, 0);
	cr_expect_eq(gs_stats.released, 3);
	tb_check();
}

/*
 * Nor, where the stream holds nothing (still learning), does another
 * thread's sync end its segment: the step is learned whole, not as the
 * pieces the sync happened to cut, and then replays.
 */
Test(replay, another_threads_sync_leaves_a_learning_step_whole)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (int k = 0; k < 2; k++) {
		launches(0, 3);
		another_threads_sync();
		launches(3, 8);
		sync_s1();
	}
	cr_expect_eq(gs_stats.sequences, 1);
	step(8, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 1, "the whole step replays");
	cr_expect_eq(gs_stats.replayed, 8);
	tb_check();
}

/* Steps of 6 launches like sibling(0xa7), but ended by another thread's free. */
static void sibling_cut_elsewhere(void)
{
	for (int i = 0; i < 6; i++)
		tb_launch(S1, i == 3 ? 0xa7 : F[i], 1000 + i, 0);
	another_threads_free();
}

/*
 * Pieces of a stream's work that another thread's calls cut (a free
 * flushes every stream, wherever it is) repeat by chance: they spare nothing, so
 * that a stream cut so, whose work never repeats, retires what it learned
 * by chance and goes cold (r_stress's cold worker).  The same siblings
 * ended by the stream's own syncs spare the step (above).
 */
Test(replay, a_sibling_another_thread_cut_spares_nothing)
{
	learn(6, "2", "0");
	for (int i = 0; i < 8; i++)
		step(6, 0, 0, 0);
	sibling_cut_elsewhere();
	sibling_cut_elsewhere(); /* a repeat: ended by the stream's own sync, it would spare */
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 2);
	cr_expect_eq(gs_stats.forgiven, 0);
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

/* Nor a short piece that begins where another thread's free cut the last. */
Test(replay, a_short_piece_after_another_threads_cut_spares_nothing)
{
	learn(6, "2", "0");
	for (int i = 0; i < 8; i++)
		step(6, 0, 0, 0);
	for (int k = 0; k < 2; k++) {
		tb_launch(S1, F[5], 1005, 0); /* the tail of the last step, cut elsewhere */
		another_threads_free();
		tb_launch(S1, F[0], 1000, 0); /* begins like the step, then a read-back */
		sync_s1();
	}
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_CUT], 2);
	cr_expect_eq(gs_stats.forgiven, 0);
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

/* With GRAPHSHIM_FORGIVE=0, a sibling's mismatches are charged as they come. */
Test(replay, without_forgive_a_sibling_retires_the_step)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_COOLDOWN", "0", "GRAPHSHIM_MISMATCH_LIMIT", "2",
		 "GRAPHSHIM_FORGIVE", "0", NULL);
	step(6, 0, 0, 0);
	step(6, 0, 0, 0);
	for (int i = 0; i < 8; i++)
		step(6, 0, 0, 0);
	sibling(0xa7);
	sibling(0xa7);
	sibling(0xa7);
	cr_expect_eq(gs_stats.forgiven, 0);
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

/* Structures that never repeat are charged as they come: the armed
 * sequence retires at the limit as it did. */
Test(replay, structure_that_never_repeats_still_retires)
{
	learn(6, "3", "0");
	sibling(0xa1);
	sibling(0xa2);
	cr_expect_eq(gs_stats.retirements, 0);
	sibling(0xa3);
	cr_expect_eq(gs_stats.retirements, 1);
	cr_expect_eq(gs_stats.forgiven, 0);
	tb_check();
}

/* A sequence that drifts past the cost rule whenever it is armed learns
 * again after GRAPHSHIM_COOLDOWN sightings, then after twice as many (the
 * stream kept warm: its only sequence's sightings are no repeats). */
Test(replay, each_retirement_doubles_the_cooldown)
{
	learn_cold(4, "1", "2", "0");
	step(4, 0, 4, 100); /* retired: 2 sightings to go */
	step(4, 0, 0, 0);
	step(4, 0, 0, 0);
	cr_assert_eq(gs_stats.relearned, 1);
	step(4, 0, 0, 0); /* armed again */
	step(4, 0, 4, 101); /* retired again: 4 sightings to go */
	cr_assert_eq(gs_stats.retirements, 2);
	for (int i = 0; i < 3; i++)
		step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.relearned, 1);
	step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.relearned, 2);
	tb_check();
}

/* After its sixth retirement a sequence stays eager for good. */
Test(replay, a_sequence_retired_six_times_stays_eager)
{
	learn_cold(4, "1", "1", "0");
	for (int r = 1; r <= 6; r++) {
		step(4, 0, 4, 100 + r); /* retired for the r-th time */
		cr_assert_eq(gs_stats.retirements, (uint64_t)r);
		int need = 1 << (r - 1);
		for (int i = 0; i < need + 1 && r < 6; i++)
			step(4, 0, 0, 0); /* cool down, learn again */
		if (r < 6)
			cr_assert_eq(gs_stats.relearned, (uint64_t)r);
	}
	for (int i = 0; i < 100; i++)
		step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.relearned, 5);
	tb_check();
}

/*
 * A retired sequence's sightings are no repeats while it cools down: a
 * stream of nothing else goes cold (a stream whose steps never repeat must,
 * whatever fragments of them were learned and retired), and wakes when a
 * cold segment repeats; the cool-down counts on while it is warm.
 */
Test(replay, a_stream_of_a_retired_sequence_goes_cold_while_it_cools_down)
{
	learn_cold(4, "1", "40", "4");
	step(4, 0, 4, 100);
	cr_assert_eq(gs_stats.retirements, 1);
	for (int i = 0; i < 8; i++)
		step(4, 0, 0, 0);
	cr_expect_geq(gs_stats.cold_streams, 1);
	for (int i = 0; i < 200 && !gs_stats.relearned; i++)
		step(4, 0, 0, 0);
	cr_expect_eq(gs_stats.relearned, 1, "learned again in the end");
	tb_check();
}

/* A compare and its read-back after a step that began like A's: too short
 * to be a sequence; A is not charged for it. */
Test(replay, a_segment_too_short_to_learn_is_not_charged)
{
	learn(6, "3", "0");
	for (int k = 0; k < 5; k++) {
		tb_launch(S1, F[0], 1000, 0);
		sync_s1();
	}
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_CUT], 5);
	cr_expect_eq(gs_stats.forgiven, 5);
	cr_expect_eq(gs_stats.retirements, 0);
	step(6, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

/*
 * A sequence that mismatches more than a quarter as often as it completes
 * a pass is not spared for a sibling: a fragment of a stream that never
 * repeats (cut by another thread's syncs, learned by chance) retires as
 * before, so that its stream may go cold.
 */
Test(replay, a_sequence_that_mostly_mismatches_is_charged)
{
	learn(6, "2", "0");
	sibling(0xa7); /* new, and no pass of its own yet: charged */
	sibling(0xa8); /* the same */
	cr_expect_eq(gs_stats.forgiven, 0);
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

/*
 * A step seen before is a step of its own, learning or armed: a candidate
 * of the next match it begins, so its mismatch does not come again, and it
 * is spared whatever the sequence's passes (here none).
 */
Test(replay, a_sibling_seen_before_is_spared_without_passes)
{
	learn(6, "2", "0");
	sibling(0xa7); /* new, no pass: charged */
	sibling(0xa7); /* seen before: spared */
	cr_expect_eq(gs_stats.forgiven, 1);
	cr_expect_eq(gs_stats.retirements, 0);
	tb_check();
}

/*
 * On a stream that evicted a sequence lately (its steps do not fit its
 * cache, and what repeats there may repeat by chance: a stream whose work
 * never repeats), a sibling seen before spares nothing by that alone.
 */
Test(replay, a_stream_that_evicts_spares_by_ratio_alone)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_MISMATCH_LIMIT", "3", "GRAPHSHIM_COOLDOWN", "0",
		 "GRAPHSHIM_COLD_AFTER", "0", "GRAPHSHIM_FORGIVE", "1", "GRAPHSHIM_MAX_SEQS", "4",
		 NULL);
	step(6, 0, 0, 0);
	step(6, 0, 0, 0);
	cr_assert_eq(tb.builds, 1);
	for (uintptr_t k = 0; k < 5; k++) { /* five other steps: the fifth evicts one */
		for (int i = 0; i < 3; i++)
			tb_launch(S1, 0xc0 + 4 * k + (uintptr_t)i, 3000 + i, 0);
		sync_s1();
		step(6, 0, 0, 0); /* the sequence stays recent */
	}
	cr_assert_geq(gs_stats.evictions, 1);
	sibling(0xa7); /* new: spared by the ratio (5 passes, 1 mismatch) */
	sibling(0xa7); /* seen before, but the stream evicts: 5 passes < 4 x 2 */
	cr_expect_eq(gs_stats.forgiven, 1);
	tb_check();
}

/*
 * A loop whose branches are read back: many steps between syncs that all
 * begin alike, in an order the data decides (JAX's NUTS under XLA).  Each
 * is a candidate of every match (not only the eight used last), and the
 * others learning around it retire none of them.
 */
Test(replay, many_steps_that_begin_alike_all_replay)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_COLD_AFTER", "0", NULL);
	enum { NB = 20, ROUNDS = 12 };
	uint32_t seed = 7;
	for (int r = 0; r < ROUNDS; r++) {
		int order[NB];
		for (int j = 0; j < NB; j++)
			order[j] = j;
		for (int j = NB - 1; j > 0; j--) {
			seed = seed * 1103515245u + 12345u;
			int k = (int)((seed >> 8) % (uint32_t)(j + 1)), x = order[j];
			order[j] = order[k];
			order[k] = x;
		}
		for (int j = 0; j < NB; j++) {
			/* branch b: F0 F1, b launches of 0xb0, F2 */
			int b = order[j];
			tb_launch(S1, F[0], 1000, 0);
			tb_launch(S1, F[1], 1001, 0);
			for (int m = 0; m < b; m++)
				tb_launch(S1, 0xb0, 2000 + m, 0);
			tb_launch(S1, F[2], 1002, 0);
			sync_s1();
		}
	}
	cr_expect_eq(gs_stats.retirements, 0);
	cr_expect_geq(gs_stats.replays, (uint64_t)NB * (ROUNDS - 3),
		      "every branch from its third sighting on: %llu",
		      (unsigned long long)gs_stats.replays);
	tb_check();
}

/*
 * A detector's request (torchvision's Faster R-CNN, `detect` in the real
 * suite): its post-processing comes as segments between syncs that begin
 * alike (the same four kernels) and go on differently, in the same order
 * every request, some of them several times.  The first armed was charged by each
 * sibling's first sighting and retired; a sibling armed at this very
 * sighting (still building) did not count as a step of its own; and a
 * sibling retired so spared nothing, so that as each came back from its
 * cool-down the others, retired, charged it again: 0.76 of the steady
 * state replayed on the H200, the family never all armed at once.  Here
 * the old rules replayed 11-23 of the second half's 1,960 launches (17
 * retirements); without either of the two new live siblings, 43-92 or
 * 1,918.
 */
static void branch(int b)
{
	for (int i = 0; i < 4; i++)
		tb_launch(S1, F[i], 1000 + (uint64_t)i, 0);
	for (int m = 0; m < 3 + b; m++)
		tb_launch(S1, 0xc0 + (uintptr_t)b, 3000 + (uint64_t)m, 0);
	sync_s1();
}

Test(replay, siblings_in_a_fixed_order_all_replay)
{
	/* Graphs built on the builder thread, a few milliseconds each, as on
	 * a GPU: a sequence is still building when the next sibling comes. */
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ASYNC_BUILD", "1", NULL);
	tb.build_sleep_ms = 2;
	static const int order[] = {0, 0, 0, 1, 2, 3, 4, 5, 6, 7};
	enum { NO = sizeof(order) / sizeof(order[0]), ROUNDS = 40 };
	uint64_t replayed = 0, launched = 0;
	for (int r = 0; r < ROUNDS; r++) {
		if (r == ROUNDS / 2) {
			replayed = gs_stats.replayed;
			launched = gs_stats.launches;
		}
		for (int j = 0; j < NO; j++) {
			branch(order[j]);
			usleep(500); /* the host's work between syncs */
		}
	}
	replayed = gs_stats.replayed - replayed;
	launched = gs_stats.launches - launched;
	cr_expect_eq(replayed, launched, "the second half replays whole: %llu of %llu",
		     (unsigned long long)replayed, (unsigned long long)launched);
	/* The first armed, charged by the first sightings of the rest (a
	 * stream whose segments never recur must still retire what it
	 * learned by chance); none after it (3-4 here before). */
	cr_expect_leq(gs_stats.retirements, 1, "%llu retirements, %llu forgiven",
		      (unsigned long long)gs_stats.retirements, (unsigned long long)gs_stats.forgiven);
	tb_check();
}

Test(replay, coverage_of_a_stable_loop)
{
	tb_start(NULL);
	for (int i = 0; i < 100; i++)
		step(8, 0, 0, 0);
	cr_expect_geq(gs_stats_coverage(&gs_stats), 0.97);
	tb_check();
}

/*
 * A KV cache that grows: the attention kernel's grid changes every few
 * steps, and a library picks another kernel of the same parameter layout
 * for some sizes.  Both are operands of a graph node: the step is learned
 * once and replays, the node patched, and what runs has the new grid and
 * function (tb_check compares both).
 */
Test(replay, grid_and_function_drift_is_patched_not_a_new_sequence)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	const uintptr_t attn[2] = { 0xa0 | TB_SAME_LAYOUT, 0xa1 | TB_SAME_LAYOUT };
	for (uint32_t t = 0; t < 40; t++) {
		for (int i = 0; i < 4; i++)
			tb_launch(S1, F[i], 1000 + i, 0);
		/* grid = positions / 8, rounded up; the kernel flips at 16 positions */
		tb_launch_grid(S1, attn[t >= 16], 1 + t / 8, 7, 0);
		tb_launch(S1, F[4], 1004, 0);
		sync_s1();
	}
	cr_expect_eq(gs_stats.sequences, 1, "one shape: learned once");
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_geq(gs_stats.replays, 37);
	/* The grid changes at steps 8, 16, 24 and 32, the kernel with it at 16. */
	cr_expect_eq(tb.patches, 4, "one patch at each change");
	tb_check();
}

/* The size of a copy is an operand too (a cache appended to, row by row). */
Test(replay, copy_size_drift_is_patched)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (uint64_t t = 0; t < 20; t++) {
		tb_launch(S1, F[0], 1, 0);
		tb_copy(S1, 0xd000, 0xe000, 64 * (t + 1));
		tb_launch(S1, F[1], 2, 0);
		tb_launch(S1, F[2], 3, 0);
		sync_s1();
	}
	cr_expect_eq(gs_stats.sequences, 1);
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_geq(gs_stats.replays, 17);
	tb_check();
}

/*
 * With GRAPHSHIM_MIN_SEQ 3 a three-launch segment that begins like a step
 * (ode-rk4: a compare, a copy and its read-back after its solver's steps,
 * in bursts of eight after sixteen steps; kernels of one parameter layout
 * are one shape) is learned, but is still too short to say anything
 * against the step it began like: the step is spared every time, as it
 * is where 3 is under the minimum, and replays after the bursts.  (Each
 * burst here ends differently, so none is armed and matched whole.)
 */
Test(replay, three_launch_bursts_spare_the_step_they_begin_like)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_MISMATCH_LIMIT", "3", "GRAPHSHIM_COOLDOWN", "0",
		 "GRAPHSHIM_FORGIVE", "1", "GRAPHSHIM_MIN_SEQ", "3", NULL);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 16; i++)
			step(6, 0, 0, 0);
		for (int k = 0; k < 8; k++) {
			tb_launch(S1, F[0], 1000, 0);
			tb_launch(S1, 0xa7, 2000, 0); /* another structure at launch 1 */
			tb_launch(S1, 0xb0 + (uintptr_t)(8 * round + k), 3000, 0);
			sync_s1();
		}
	}
	cr_expect_eq(gs_stats.retirements, 0);
	cr_expect_eq(gs_stats.forgiven, 24);
	uint64_t replays = gs_stats.replays;
	step(6, 0, 0, 0);
	cr_expect_eq(gs_stats.replays, replays + 1, "the step still replays");
	tb_check();
}

/*
 * Device patches chosen by drift (gs_ops_t.graph_node_patching): a
 * sequence is built with plain nodes, and again after the match where a
 * patch shows a node whose parameters drift (it then takes its patches on
 * the GPU) or a node on the GPU whose function drifts (then plain again).
 */
static const uintptr_t SL[] = {0xc1 | TB_SAME_LAYOUT, 0xc2 | TB_SAME_LAYOUT, 0xc3 | TB_SAME_LAYOUT,
			       0xc4 | TB_SAME_LAYOUT, 0xc5 | TB_SAME_LAYOUT, 0xc6 | TB_SAME_LAYOUT,
			       0xc7 | TB_SAME_LAYOUT, 0xc8 | TB_SAME_LAYOUT, 0xc9 | TB_SAME_LAYOUT};

/* A step of 8 launches of SL[0..7], launch `at` with a1 = v and, when
 * `other`, the function SL[8] instead of its own. */
static void step_sl(int at, uint64_t v, bool other)
{
	for (int i = 0; i < 8; i++)
		tb_launch(S1, i == at && other ? SL[8] : SL[i], 1000 + i, i == at ? v : 0);
	sync_s1();
}

static void learn_devpatch(bool on)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_MISMATCH_LIMIT", "3", "GRAPHSHIM_COOLDOWN", "0",
		 "GRAPHSHIM_FORGIVE", "1", "GRAPHSHIM_PATCH_COST", "0.5", "GRAPHSHIM_GRAPH_COST", "2", NULL);
	tb.devpatch = on;
	step_sl(-1, 0, false);
	step_sl(-1, 0, false);
	cr_assert_eq(tb.builds, 1);
	cr_assert_eq(tb.dev_nodes, 0, "nothing has drifted yet: no node on the GPU");
}

Test(replay, a_node_whose_arguments_drift_is_built_again_to_patch_on_the_gpu)
{
	learn_devpatch(true);
	step_sl(2, 42, false);
	cr_expect_eq(gs_stats.patches, 1);
	cr_expect_eq(gs_stats.drift_rebuilds, 1);
	cr_expect_eq(tb.builds, 2);
	cr_expect_eq(tb.dev_nodes, 1);
	/* It drifts again: patched where it is, no build. */
	step_sl(2, 43, false);
	step_sl(2, 44, false);
	cr_expect_eq(gs_stats.replays, 3);
	cr_expect_eq(tb.builds, 2);
	cr_expect_eq(gs_stats.drift_rebuilds, 1);
	/* Its function drifts: plain again (the second build made no node on the GPU). */
	step_sl(2, 45, true);
	cr_expect_eq(gs_stats.drift_rebuilds, 2);
	cr_expect_eq(tb.builds, 3);
	step_sl(2, 46, true);
	step_sl(2, 47, false);
	cr_expect_eq(tb.builds, 3, "a node whose geometry drifts stays plain");
	cr_expect_eq(tb.dev_nodes, 1);
	/* The statistics say which nodes drifted, and how (gs_seq_info_t). */
	gs_seq_info_t info[4];
	size_t n = gs_engine_seq_info(info, 4);
	cr_assert_eq(n, 1);
	cr_expect_eq(info[0].length, 8);
	cr_expect_eq(info[0].drift_args, 1);
	cr_expect_eq(info[0].drift_shape, 1);
	cr_expect_eq(info[0].rebuilds, 2);
	tb_check();
}

/*
 * A sequence replays its ready chunks while the rest is being built: drift
 * first seen there asks for a build again that cannot happen then (the
 * sequence is not armed when the match ends), and the build under way was
 * planned before the mark.  Its later patches ask again.  On the H200 the
 * main step of hf-beam, hf-t5 and hf-mistral stayed so, every node patched
 * from the host (docs/performance.md, forty-second session).
 */
Test(replay, drift_seen_while_the_rest_is_built_is_built_for_once_armed)
{
	tb_start("GRAPHSHIM_ASYNC_BUILD", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "4",
		 "GRAPHSHIM_MISMATCH_LIMIT", "3", "GRAPHSHIM_COOLDOWN", "0", "GRAPHSHIM_FORGIVE", "1",
		 "GRAPHSHIM_PATCH_COST", "0.5", "GRAPHSHIM_GRAPH_COST", "2", NULL);
	tb.devpatch = true;
	tb.hold_builds_after = 1; /* the first chunk's graph, then the builder stalls */
	step_sl(-1, 0, false);
	step_sl(-1, 0, false);
	for (int i = 0; i < 20000 && __atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE) < 1; i++)
		usleep(500);
	cr_assert_geq(__atomic_load_n(&tb.builds_done, __ATOMIC_ACQUIRE), 1, "the builder never built");
	step_sl(1, 42, false); /* drifts in the ready chunk */
	cr_expect_eq(gs_stats.patches, 1);
	cr_expect_eq(gs_stats.drift_unarmed, 1, "the match ended while the rest was built");
	__atomic_store_n(&tb.release_builds, 1, __ATOMIC_RELEASE);
	gs_build_wait();
	cr_expect_eq(tb.dev_nodes, 0, "the build under way was planned before the drift");
	step_sl(1, 43, false);
	gs_build_wait();
	step_sl(1, 44, false);
	gs_build_wait();
	cr_expect_eq(gs_stats.drift_rebuilds, 1);
	cr_expect_eq(tb.dev_nodes, 1, "built again for the drift seen while it was building");
	step_sl(1, 45, false);
	gs_build_wait();
	cr_expect_eq(gs_stats.drift_rebuilds, 1, "and once only");
	tb_check();
}

Test(replay, without_patches_on_the_gpu_drift_builds_nothing_again)
{
	learn_devpatch(false);
	step_sl(2, 42, false);
	step_sl(3, 42, true);
	step_sl(-1, 0, false);
	cr_expect_eq(gs_stats.patches, 4);
	cr_expect_eq(gs_stats.drift_rebuilds, 0);
	cr_expect_eq(tb.builds, 1);
	tb_check();
}

Test(replay, builds_for_drift_are_bounded)
{
	/* A new position drifts every step: four builds again, then patches
	 * where the nodes are. */
	learn_devpatch(true);
	for (int i = 0; i < 8; i++)
		step_sl(i, 100 + (uint64_t)i, false);
	cr_expect_eq(gs_stats.drift_rebuilds, 4);
	cr_expect_eq(tb.builds, 5);
	cr_expect_eq(gs_stats.replays, 8);
	tb_check();
}
