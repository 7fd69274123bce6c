/* The gate: eager or replay by GPU timing, per sequence (gs_gate.c). */
#include "gs_gate.h"
#include "gs_self.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)
#define N 8

/* One step of the eight launches, then a sync; a1 = v for every launch. */
static void step(uint64_t v)
{
	for (int i = 0; i < N; i++)
		tb_launch(S1, F[i], 1000 + i, v);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/* Start with the gate on, the given GPU costs (ns) and up to two more settings. */
static void gate_start_with(uint64_t eager, uint64_t node, uint64_t graph, const char *k,
			    const char *v, const char *k2, const char *v2)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_GATE", "auto", "GRAPHSHIM_GATE_SAMPLES", "3",
		 "GRAPHSHIM_GATE_AFTER", "1", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_GATE_MARGIN",
		 "0.05", k, v, k2 ? k2 : k, k2 ? v2 : v, NULL);
	tb.timers = true;
	tb.cost_eager = eager;
	tb.cost_node = node;
	tb.cost_graph = graph;
}

static void gate_start(uint64_t eager, uint64_t node, uint64_t graph, const char *k, const char *v)
{
	gate_start_with(eager, node, graph, k, v, NULL, NULL);
}

/* The figures of the N-launch sequence, as the statistics file reports them. */
static gs_seq_info_t seq_info(void)
{
	gs_seq_info_t i[8];
	size_t n = gs_engine_seq_info(i, 8);
	for (size_t k = 0; k < n && k < 8; k++)
		if (i[k].length == N)
			return i[k];
	cr_assert_fail("no sequence of %d launches", N);
	return i[0];
}

/* Records of the last step that ran from a graph. */
static int last_step_from_graph(void)
{
	int n = 0;
	for (size_t i = tb.nexec - N; i < tb.nexec; i++)
		n += tb.exec[i].from_graph;
	return n;
}

/* Steps of `one` until the gate has made `n` decisions, at most `limit`:
 * how many it took. */
static int steps_to_decision_with(void (*one)(void), uint64_t n, int limit)
{
	int steps = 0;
	while (gs_stats.gate_decisions < n && steps < limit) {
		one();
		steps++;
	}
	return steps;
}

static void step0(void)
{
	step(0);
}

static int steps_to_decision(uint64_t n, int limit)
{
	return steps_to_decision_with(step0, n, limit);
}

/*
 * Learn (2 steps), warm-up replay (1), then eager and replayed passes in
 * turn, three of each: the decision is made when the 10th step begins.
 */
#define STEPS_TO_DECIDE 10

Test(gate, a_losing_sequence_goes_eager_with_the_times_reported)
{
	gate_start(1000, 1000, 20000, NULL, NULL); /* eager 8 us, replay 28 us */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_eq(gs_stats.gate_eager, 1);
	gs_seq_info_t q = seq_info();
	cr_expect_str_eq(q.gate, "eager");
	cr_expect_eq(q.eager_ns, 8000);
	cr_expect_eq(q.replay_ns, 28000);
	uint64_t replays = gs_stats.replays;
	for (int i = 0; i < 20; i++) {
		step(0);
		cr_expect_eq(last_step_from_graph(), 0);
	}
	cr_expect_eq(gs_stats.replays, replays, "no graph launched once eager was chosen");
	/* Matched as eager passes, or (the stream quiet: test_cold.c) passed by the cold lane. */
	cr_expect_geq(seq_info().eager_passes * N + gs_stats.cold_quiet_passed, 20 * N);
	tb_check();
}

Test(gate, a_winning_sequence_keeps_replaying)
{
	gate_start(5000, 500, 2000, NULL, NULL); /* eager 40 us, replay 6 us */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_eq(gs_stats.gate_eager, 0);
	gs_seq_info_t q = seq_info();
	cr_expect_str_eq(q.gate, "replay");
	cr_expect_eq(q.eager_ns, 40000);
	cr_expect_eq(q.replay_ns, 6000);
	for (int i = 0; i < 5; i++) {
		step(0);
		cr_expect_eq(last_step_from_graph(), N);
	}
	tb_check();
}

Test(gate, the_trial_takes_turns_in_thue_morse_order)
{
	/* E R R E R E E R: every four passes two of each kind, one at an even
	 * place and one at an odd one (the default, four samples of each). */
	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_SAMPLES", "4");
	step(0);
	step(0);
	step(0);
	cr_expect_eq(last_step_from_graph(), N, "the warm-up pass replays, untimed");
	cr_expect_eq(tb.live_timers, 0);
	int want[] = {0, N, N, 0, N, 0, 0, N};
	for (int i = 0; i < 8; i++) {
		step(0);
		cr_expect_eq(last_step_from_graph(), want[i], "trial pass %d", i);
	}
	tb_check();
}

/* Steps whose eager launches cost alt_eager[k % 2] ns, k counting steps:
 * a program whose passes alternate in cost (twotower's batches of 16 and
 * 32 requests in turn). */
static uint64_t alt_eager[2];
static unsigned alt_k;
static void alternating_step(void)
{
	tb.cost_eager = alt_eager[alt_k++ % 2];
	step(0);
}

/* The gate's verdict on a step that replay makes 40% cheaper, whose every
 * other pass does three times the work, the dear ones from pass `phase`. */
static const char *alternating_verdict(unsigned phase)
{
	gate_start(1000, 600, 0, "GRAPHSHIM_GATE_SAMPLES", "4");
	alt_eager[0] = 1000, alt_eager[1] = 3000;
	alt_k = phase;
	for (int i = 0; i < 40 && !gs_stats.gate_decisions; i++) {
		tb.cost_node = alt_eager[alt_k % 2] * 6 / 10;
		alternating_step();
	}
	cr_expect_eq(gs_stats.gate_decisions, 1);
	return seq_info().gate;
}

Test(gate, passes_that_alternate_in_cost_fall_on_both_kinds)
{
	/* Strict turns (E R E R) timed every eager pass on the cheap steps and
	 * every replayed one on the dear ones, or the other way round, as the
	 * phase fell: eager in one phase.  In Thue-Morse order each kind has
	 * two of each, in either phase. */
	for (unsigned phase = 0; phase < 2; phase++) {
		cr_expect_str_eq(alternating_verdict(phase), "replay", "phase %u", phase);
		cr_expect_eq(gs_stats.gate_eager, 0, "phase %u", phase);
		tb_check();
		gs_engine_fini();
	}
}

Test(gate, a_tie_within_the_margin_keeps_the_graph)
{
	/* Replay 3% slower than eager: inside the 5% margin. */
	gate_start(1000, 1000, 240, NULL, NULL); /* eager 8000, replay 8240 */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
}

/* Steps whose graph launch costs noisy_graph[k % 3] ns, k counting steps:
 * replayed passes that vary from one to the next (an interpreter's). */
static uint64_t noisy_graph[3];
static unsigned noisy_k;
static void noisy_step(void)
{
	/* By replayed passes, so that the three samples take the three costs
	 * whatever the order of the kinds. */
	tb.cost_graph = noisy_graph[gs_stats.replays % 3];
	noisy_k++;
	step(0);
}

/* A fresh engine whose replayed passes take 8000 + g0, g1, g2 ns in turn
 * (eager ones 8000): steps until the gate decides (at most 60). */
static int noisy_decision(uint64_t g0, uint64_t g1, uint64_t g2)
{
	gate_start(1000, 1000, 0, NULL, NULL);
	noisy_graph[0] = g0, noisy_graph[1] = g1, noisy_graph[2] = g2;
	noisy_k = 0;
	return steps_to_decision_with(noisy_step, 1, 60);
}

/*
 * Replayed passes of 8000, 9000 and 9200 ns against eager ones of 8000:
 * the medians say replay is 12.5% slower, past twice the 5% margin, but
 * the samples overlap (a replayed pass as short as the eager ones): not
 * beyond the noise, so the trial goes on to nine of each and, still
 * overlapping, keeps the graph.  Replayed passes of 20-28 us lie apart
 * from the eager ones: eager at once.  8.75% slower, inside twice the
 * margin and the noise: the graph at once, no more eager passes.
 */
Test(gate, eager_needs_a_difference_beyond_the_noise)
{
	int steps = noisy_decision(0, 1000, 1200);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_geq(steps, STEPS_TO_DECIDE + 12, "nine samples of each kind");
	cr_expect_eq(gs_stats.gate_eager, 0);
	cr_expect_str_eq(seq_info().gate, "replay");
	cr_expect_eq(seq_info().replay_ns, 9000, "the medians say 12.5%% slower");
	tb_check();
	gs_engine_fini();

	cr_expect_eq(noisy_decision(12000, 20000, 16000), STEPS_TO_DECIDE, "three of each");
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
	gs_engine_fini();

	cr_expect_eq(noisy_decision(0, 700, 900), STEPS_TO_DECIDE, "three of each");
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
}

Test(gate, a_change_of_conditions_is_noticed_at_the_recheck)
{
	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE_RECHECK", "10");
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_expect_str_eq(seq_info().gate, "replay");
	gs_seq_info_t first = seq_info();
	/* The graph now costs far more (another process shares the GPU, say). */
	tb.cost_graph = 100000;
	for (int i = 0; i < 10 + 7; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 2);
	cr_expect_str_eq(seq_info().gate, "eager");
	cr_expect_eq(seq_info().gate_trials, 2);
	/* The first decision's figures are kept beside the second's. */
	gs_seq_info_t now = seq_info();
	cr_expect_not(now.first.eager, "the first decision was replay");
	cr_expect_eq(now.first.eager_ns, first.eager_ns);
	cr_expect_eq(now.first.replay_ns, first.replay_ns);
	cr_expect_neq(now.replay_ns, first.replay_ns, "the second trial's own medians");
	tb_check();
}

Test(gate, timers_not_complete_are_never_waited_for)
{
	gate_start(1000, 1000, 20000, NULL, NULL);
	tb.timer_lag = 3; /* each timer reads "not ready" three times */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 0, "nothing read yet");
	for (int i = 0; i < 12 && !gs_stats.gate_decisions; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_str_eq(seq_info().gate, "eager");
	cr_expect_leq(tb.live_timers, 4, "at most four timers a sequence");
	tb_check();
}

/* A stream whose GPU never catches up with the host (no sync, timers that
 * never complete) spends one eager pass on its trial, not one per turn. */
Test(gate, an_eager_pass_waits_for_the_one_still_out)
{
	gate_start(1000, 1000, 20000, NULL, NULL);
	tb.timer_lag = 1000000;
	for (int i = 0; i < 40; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 0);
	cr_expect_eq(seq_info().eager_passes, 1);
	cr_expect_eq(gs_stats.gated, N);
	cr_expect_eq(last_step_from_graph(), N);
	tb_check();
}

Test(gate, a_timer_failure_leaves_the_sequence_replaying)
{
	for (int at = 1; at <= 6; at++) {
		gs_engine_fini();
		gate_start(1000, 1000, 20000, NULL, NULL);
		tb.fail_timer_at = at;
		for (int i = 0; i < 15; i++)
			step(0);
		cr_expect_str_eq(seq_info().gate, "off", "timer call %d failed", at);
		cr_expect_eq(last_step_from_graph(), N);
		tb_check();
	}
}

Test(gate, a_backend_without_timers_replays)
{
	static gs_ops_t notimers; /* the engine keeps the pointer until exit */
	notimers = tb_ops;
	notimers.timer_create = NULL;
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_GATE", "auto", NULL);
	gs_engine_fini();
	gs_engine_init(&notimers);
	for (int i = 0; i < 12; i++)
		step(0);
	cr_expect_str_eq(seq_info().gate, "off");
	cr_expect_eq(last_step_from_graph(), N);
	tb_check();
}

Test(gate, forced_eager_never_launches_a_graph_and_forced_replay_never_times)
{
	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE", "eager");
	for (int i = 0; i < 12; i++)
		step(0);
	cr_expect_eq(tb.launches, 0);
	cr_expect_geq(gs_stats.gated + gs_stats.cold_quiet_passed, 9 * N);
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
	gs_engine_fini();

	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE", "replay");
	for (int i = 0; i < 12; i++)
		step(0);
	cr_expect_eq(tb.timer_calls, 0);
	cr_expect_eq(last_step_from_graph(), N);
	cr_expect_eq(gs_stats.gate_decisions, 0);
	tb_check();
}

Test(gate, cut_passes_drop_their_timing_and_keep_the_order)
{
	gate_start(1000, 1000, 20000, NULL, NULL);
	for (int k = 0; k < 40; k++) {
		/* Every third step is cut after five launches by a sync. */
		int n = k % 3 == 2 ? 5 : N;
		for (int i = 0; i < n; i++)
			tb_launch(S1, F[i], 1000 + i, (uint64_t)k);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
	/* The cut passes make a sequence of five launches too, timed on its own. */
	cr_expect_geq(gs_stats.gate_decisions, 1);
	cr_expect_eq(gs_stats.gate_eager, gs_stats.gate_decisions);
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
}

Test(gate, drift_in_eager_passes_runs_the_new_values)
{
	gate_start(1000, 1000, 20000, NULL, NULL);
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_assert_str_eq(seq_info().gate, "eager");
	for (int i = 1; i <= 5; i++) {
		step((uint64_t)i * 7);
		cr_expect_eq(tb.exec[tb.nexec - 1].a1, (uint64_t)i * 7);
	}
	cr_expect_eq(gs_stats.mismatches, 0);
	tb_check();
}

Test(gate, a_retired_sequence_frees_its_timers)
{
	gate_start(5000, 500, 2000, "GRAPHSHIM_MISMATCH_LIMIT", "1");
	for (int i = 0; i < 5; i++)
		step(0);
	cr_expect_gt(tb.live_timers, 0);
	/* A different function at launch 3: a structural mismatch retires it. */
	for (int i = 0; i < N; i++)
		tb_launch(S1, i == 3 ? 0xee : F[i], 1000 + i, 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	cr_expect_eq(gs_stats.retirements, 1);
	cr_expect_eq(tb.live_timers, 0);
	tb_check();
}

Test(gate, the_first_timing_waits_for_gate_after_replays)
{
	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_AFTER", "5");
	for (int i = 0; i < 2 + 5; i++)
		step(0);
	cr_expect_eq(tb.timer_calls, 0, "nothing timed during the first five replays");
	cr_expect_eq(last_step_from_graph(), N);
	for (int i = 0; i < 7; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
}

Test(gate, passes_cut_by_other_streams_alternate_and_then_give_up)
{
	/* (the 5-launch segments below are too short to be learned themselves) */
	gate_start(1000, 1000, 20000, "GRAPHSHIM_MIN_SEQ", "6");
	step(0);
	step(0);
	step(0); /* the untimed replay */
	/* Every later pass is cut after five launches by another stream's
	 * flush (no mismatch is charged): no timed pass ever completes. */
	for (int k = 0; k < 40; k++) {
		for (int i = 0; i < 5; i++)
			tb_launch(S1, F[i], 1000 + i, 0);
		gs_engine_flush_all(GS_FLUSH_SYNC, "another thread's sync");
	}
	cr_expect_eq(gs_stats.gate_decisions, 0);
	/* Eager and replayed attempts in turn, 24 in all (8 x 3 samples):
	 * 12 eager ones sent their 5 launches eagerly, then it gave up. */
	cr_expect_eq(gs_stats.gated, 12 * 5, "gated %llu", (unsigned long long)gs_stats.gated);
	cr_expect_str_eq(seq_info().gate, "replay");
	step(0);
	cr_expect_eq(last_step_from_graph(), N, "it keeps its graph");
	tb_check();
}

/* A step in which a monitor thread polls S1 after the third launch: whether it was answered "not ready". */
static bool step_polled(void)
{
	bool busy = false;
	for (int i = 0; i < N; i++) {
		tb_launch(S1, F[i], 1000 + i, 0);
		if (i == 2)
			busy = tb_query_elsewhere(S1);
	}
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	return busy;
}

/*
 * A monitor thread polling the worker's stream in every pass.  A replayed
 * pass holds its launches: "not ready", and its timing goes on.  An eager
 * pass holds nothing unsubmitted: the driver answers, and its timing must
 * go on as well.  It was dropped, so that under a monitor only eager
 * passes no poll fell in were timed, the short ones (threads-monitor on an
 * H200 timed a replay 1.1-1.3x faster at 0.59x, and went eager).  Here no
 * eager pass was timed at all: no decision in 40 steps.
 */
Test(gate, a_monitors_polls_keep_both_kinds_of_pass_timed)
{
	gate_start_with(5000, 500, 2000, "GRAPHSHIM_IDLE_US", "1000000", NULL, NULL);
	step(0);
	step(0);
	int polled = 0, not_ready = 0;
	while (gs_stats.gate_decisions < 1 && polled < 40) {
		not_ready += step_polled();
		polled++;
	}
	cr_expect_eq(gs_stats.gate_decisions, 1, "decided in %d polled steps", polled);
	cr_expect_leq(polled, STEPS_TO_DECIDE - 2, "as soon as without the polls");
	cr_expect_eq(gs_stats.interrupted, 0, "nothing to submit at an eager pass's poll");
	cr_expect_geq(tb.timer_ends, 6, "three samples of each kind");
	cr_expect_gt(not_ready, 0, "the replayed passes' polls were answered by graphshim");
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
}

/*
 * Without the idle watchdog a query is not answered "not ready": the held
 * work goes, and a replayed pass it falls in is interrupted, its timing
 * dropped.  So an eager pass's is dropped too: no sample of either kind,
 * no decision, the sequence keeps its graph (the helper's experiment:
 * with an eager pass kept, 37 replayed passes were dropped and every eager
 * one timed).
 */
Test(gate, without_the_watchdog_a_monitors_polls_drop_both_kinds_alike)
{
	gate_start_with(5000, 500, 2000, "GRAPHSHIM_IDLE_US", "0", NULL, NULL);
	step(0);
	step(0);
	int not_ready = 0;
	for (int k = 0; k < 40; k++)
		not_ready += step_polled();
	cr_expect_eq(not_ready, 0, "no watchdog: the driver answers every poll");
	cr_expect_gt(gs_stats.interrupted, 0, "replayed passes were interrupted");
	cr_expect_eq(tb.timer_ends, 0, "no pass of either kind was timed to its end");
	cr_expect_eq(gs_stats.gate_decisions, 0);
	step(0);
	cr_expect_eq(last_step_from_graph(), N, "it gave up timing and keeps its graph");
	tb_check();
}

/* A step in which another thread synchronizes every stream after the third launch, if the pass went eagerly. */
static void step_eager_ones_synced(void)
{
	size_t start = tb.nexec;
	for (int i = 0; i < N; i++) {
		tb_launch(S1, F[i], 1000 + i, 0);
		if (i == 2 && tb.nexec - start == 3)
			tb_flush_all_elsewhere(GS_FLUSH_SYNC);
	}
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/*
 * Another thread's synchronization falls in the eager passes only.  A
 * replayed pass it fell in would have its held launches sent and its
 * timing dropped; so is an eager pass's, though it had nothing to send:
 * kept, the eager samples would be every pass and the replayed ones those
 * no synchronization fell in, the shorter ones.  Here no eager sample is
 * taken until the synchronizations stop; then the gate decides.
 */
Test(gate, another_threads_sync_drops_an_eager_pass_as_it_would_a_replayed_one)
{
	gate_start_with(5000, 500, 2000, "GRAPHSHIM_IDLE_US", "1000000", NULL, NULL);
	step(0);
	step(0);
	for (int k = 0; k < 2 * STEPS_TO_DECIDE; k++)
		step_eager_ones_synced();
	cr_expect_eq(gs_stats.gate_decisions, 0, "no eager pass was timed");
	cr_expect_eq(gs_stats.interrupted, 0, "nothing to submit");
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_str_eq(seq_info().gate, "trial");
	int more = steps_to_decision(1, 3 * STEPS_TO_DECIDE);
	cr_expect_eq(gs_stats.gate_decisions, 1, "undisturbed, decided in %d steps", more);
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
}

/* Step B: the same first launch as step(), then the other functions in reverse. */
static void step_b(void)
{
	tb_launch(S1, F[0], 1000, 0);
	for (int i = N - 1; i > 0; i--)
		tb_launch(S1, F[i], 2000 + i, 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/*
 * Two steps that begin alike and alternate (a framework's even and odd
 * tokens): each pass is told apart only at its second launch, so each
 * sequence's trial must be timed and counted for the sequence the pass
 * turned out to be, not for the candidate first in line.
 */
Test(gate, alternating_sequences_that_start_alike_are_each_timed)
{
	gate_start(1000, 1000, 20000, NULL, NULL); /* eager 8 us, replay 28 us */
	for (int i = 0; i < 2 * (STEPS_TO_DECIDE + 4); i++)
		i % 2 ? step_b() : step(0);
	cr_expect_eq(gs_stats.gate_decisions, 2, "one decision for each sequence");
	cr_expect_eq(gs_stats.gate_eager, 2);
	gs_seq_info_t info[8];
	size_t n = gs_engine_seq_info(info, 8);
	for (size_t k = 0; k < n && k < 8; k++) {
		cr_expect_str_eq(info[k].gate, "eager", "sequence %zu", k);
		cr_expect_eq(info[k].eager_ns, 8000);
		cr_expect_eq(info[k].replay_ns, 28000);
	}
	uint64_t replays = gs_stats.replays;
	for (int i = 0; i < 8; i++)
		i % 2 ? step_b() : step(0);
	cr_expect_eq(gs_stats.replays, replays);
	cr_expect_leq(tb.live_timers, 8);
	tb_check();
}

/* Eager passes of every sequence, in all. */
static uint64_t eager_passes(void)
{
	gs_seq_info_t info[8];
	size_t n = gs_engine_seq_info(info, 8);
	uint64_t e = 0;
	for (size_t k = 0; k < n && k < 8; k++)
		e += info[k].eager_passes;
	return e;
}

/*
 * Two like steps (eight launches each) in turn: one first trial at a time.
 * The second waits, replaying, while the first is tried; the first's
 * verdict of replay, by far on both clocks, decides for the second: three
 * eager passes in all, not six.  So does a tie; a verdict of eager decides
 * nothing for the other, which is tried on its own.
 */
Test(gate, a_like_sequence_takes_a_clear_verdict_of_replay)
{
	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE_AFTER", "4"); /* eager 40 us, replay 6 us */
	for (int i = 0; i < 2 * 20; i++)
		i % 2 ? step_b() : step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1, "one trial");
	cr_expect_eq(gs_stats.gate_inherited, 1);
	cr_expect_eq(eager_passes(), 3);
	gs_seq_info_t info[8];
	size_t n = gs_engine_seq_info(info, 8);
	cr_expect_eq(n, 2);
	for (size_t k = 0; k < n && k < 8; k++)
		cr_expect_str_eq(info[k].gate, "replay", "sequence %zu", k);
	step_b();
	cr_expect_eq(last_step_from_graph(), N);
	tb_check();
	gs_engine_fini();

	gate_start(10000, 10000, 0, "GRAPHSHIM_GATE_AFTER", "4"); /* a tie: 80 us either way */
	for (int i = 0; i < 2 * 30; i++)
		i % 2 ? step_b() : step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1, "a tie decides too");
	cr_expect_eq(gs_stats.gate_inherited, 1);
	cr_expect_eq(eager_passes(), 3);
	tb_check();
	gs_engine_fini();

	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_AFTER", "4"); /* replay loses: 8 us, 28 us */
	for (int i = 0; i < 2 * 30; i++)
		i % 2 ? step_b() : step(0);
	cr_expect_eq(gs_stats.gate_decisions, 2, "a verdict of eager: each tried on its own");
	cr_expect_eq(gs_stats.gate_inherited, 0);
	cr_expect_eq(gs_stats.gate_eager, 2);
	tb_check();
}

/*
 * Two like steps tie (80 us either way): the first is tried, the second
 * inherits its verdict.  Then every pass gets five times shorter, still a
 * tie: the first, whose tie saved nothing, is tried again; the second,
 * whose inherited verdict the stream's prior still holds, keeps it without
 * a trial (gate_kept): three eager passes for the new trial, none for it.
 */
Test(gate, an_inherited_decision_follows_the_stream_s_prior_when_passes_shorten)
{
	gate_start(10000, 10000, 0, "GRAPHSHIM_GATE_AFTER", "4"); /* a tie: 80 us either way */
	for (int i = 0; i < 2 * 30; i++)
		i % 2 ? step_b() : step(0);
	cr_assert_eq(gs_stats.gate_decisions, 1);
	cr_assert_eq(gs_stats.gate_inherited, 1);
	cr_assert_eq(eager_passes(), 3);
	tb.cost_eager = tb.cost_node = 2000; /* 16 us either way */
	for (int i = 0; i < 2 * 60; i++)
		i % 2 ? step_b() : step(0);
	cr_expect_eq(gs_stats.gate_decisions, 2, "the first step tried again, the second not");
	cr_expect_eq(eager_passes(), 6);
	cr_expect_geq(gs_stats.gate_kept, 1);
	tb_check();
}

/* Step C: three launches of their own, a sequence unlike the others. */
static void step_c(void)
{
	for (int i = 5; i < 8; i++)
		tb_launch(S1, F[i], 3000 + i, 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/*
 * A graph launch dear enough that the three-launch step loses (eager 15 us,
 * replay 31.5 us) and the eight-launch one wins by 15%: the short step's
 * verdict of eager says nothing of long ones, and a long one armed after
 * both verdicts still takes the long one's.
 */
Test(gate, an_unlike_sequences_verdict_of_eager_leaves_the_stream_s_verdict)
{
	gate_start(5000, 500, 30000, "GRAPHSHIM_MIN_SEQ", "3"); /* 8: 40 vs 34 us; 3: 15 vs 31.5 */
	for (int i = 0; i < 2 * 16; i++)
		i % 2 ? step_c() : step(0);
	cr_assert_eq(gs_stats.gate_decisions, 2);
	cr_expect_eq(gs_stats.gate_eager, 1, "the short step lost");
	for (int i = 0; i < 16; i++)
		step_b();
	cr_expect_eq(gs_stats.gate_decisions, 2, "no trial for the long step armed later");
	cr_expect_eq(gs_stats.gate_inherited, 1);
	step_b();
	cr_expect_eq(last_step_from_graph(), N);
	tb_check();
}

/*
 * Replay 8% slower than eager, past the 5% margin but inside twice it: the
 * first three samples of each kind do not settle it; the trial goes on to
 * nine of each (eager and replayed passes in turn), then decides.
 */
Test(gate, a_close_call_takes_more_samples_before_it_decides)
{
	gate_start(1000, 1000, 640, NULL, NULL); /* eager 8000, replay 8640 */
	for (int i = 0; i < STEPS_TO_DECIDE + 1; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 0, "three of each are not enough");
	cr_expect_str_eq(seq_info().gate, "trial");
	int steps = steps_to_decision(1, 40);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_geq(steps, 11, "six more of each kind");
	cr_expect_str_eq(seq_info().gate, "eager");
	cr_expect_eq(seq_info().replay_ns, 8640);
	tb_check();
}

/*
 * The first trial falls in a phase unlike the rest (a framework's first
 * call, slow for eager and replayed passes alike: a tie keeps the graph);
 * afterwards the graph loses.  Right after a decision every 4th replayed
 * pass is timed; two in a row under half the decision's median start a
 * trial (its eight timed passes and a read or two): about 17 passes, where
 * a watch of every 16th pass took 41.  A change later than the first 32
 * passes is noticed at every 16th pass, long before the re-check (1000).
 */
static void conditions_change_after(int passes, int most)
{
	gate_start(10000, 10000, 0, NULL, NULL); /* a tie: eager 80000, replay 80000 */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_assert_eq(gs_stats.gate_decisions, 1);
	cr_expect_str_eq(seq_info().gate, "replay");
	for (int i = 0; i < passes; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1, "nothing changed yet");
	tb.cost_eager = tb.cost_node = 1000;
	tb.cost_graph = 20000; /* now eager 8000, replay 28000 */
	int steps = steps_to_decision(2, 100);
	cr_expect_eq(gs_stats.gate_decisions, 2);
	cr_expect_leq(steps, most, "changed after %d passes: two watched passes, then a trial (%d)",
		      passes, steps);
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
	gs_engine_fini();
}

Test(gate, a_decision_whose_conditions_change_is_timed_again)
{
	conditions_change_after(0, 2 * 4 + 12);
	conditions_change_after(40, 3 * 16 + 8);
}

/*
 * The first trial falls in a slow phase (a framework's first call: a
 * launch's work takes 10 us, eager or replayed) where replay saves 8 us a
 * pass; afterwards every pass is five times shorter and replay still
 * saves those 8 us, more than the margin of a pass of the new length.
 * The two watched passes under half the median keep the decision: no
 * trial, no eager pass.  Where the trial's saving would be inside the
 * margin of the shorter pass, it is timed again.
 */
Test(gate, a_saving_that_outlasts_a_slow_start_keeps_the_decision)
{
	gate_start(10000, 9000, 0, NULL, NULL); /* eager 80000, replay 72000 */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_assert_eq(gs_stats.gate_decisions, 1);
	cr_expect_str_eq(seq_info().gate, "replay");
	uint64_t gated = gs_stats.gated;
	tb.cost_eager = 2000;
	tb.cost_node = 1000; /* now eager 16000, replay 8000 */
	for (int i = 0; i < 100; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1, "no trial");
	cr_expect_eq(gs_stats.gate_kept, 1);
	cr_expect_eq(gs_stats.gated, gated, "no eager pass");
	cr_expect_eq(seq_info().replay_ns, 72000, "the decision's medians are reported");
	tb_check();
	gs_engine_fini();

	gate_start(10000, 9950, 0, NULL, NULL); /* eager 80000, replay 79600: 400 saved */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_assert_eq(gs_stats.gate_decisions, 1);
	tb.cost_eager = 1050;
	tb.cost_node = 1000; /* now eager 8400, replay 8000: 400 is the 5% margin */
	int steps = steps_to_decision(2, 100);
	cr_expect_eq(gs_stats.gate_decisions, 2, "timed again");
	cr_expect_leq(steps, 3 * 16 + 8);
	cr_expect_eq(gs_stats.gate_kept, 0);
	tb_check();
}

/* Conditions that do not change cost no eager pass after the decision. */
Test(gate, a_steady_decision_is_watched_without_eager_passes)
{
	gate_start(5000, 500, 2000, NULL, NULL); /* eager 40 us, replay 6 us */
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_assert_eq(gs_stats.gate_decisions, 1);
	uint64_t gated = gs_stats.gated;
	for (int i = 0; i < 300; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_eq(gs_stats.gated, gated, "no eager pass");
	cr_expect_leq(tb.live_timers, 4);
	tb_check();
}

/* The gate's host clock in the tests of the host's time: a step takes it
 * host_eager_ns eagerly and host_replay_ns replayed (host_step), of which
 * host_own_ns of each eager step is graphshim's own (gs_self.h). */
static uint64_t host_ns, host_eager_ns, host_replay_ns, host_own_ns;
static uint64_t host_clock(void)
{
	return host_ns;
}

static void host_clock_start(uint64_t eager, uint64_t replay)
{
	host_ns = 0;
	host_eager_ns = eager;
	host_replay_ns = replay;
	host_own_ns = 0;
	gs_gate_clock = host_clock;
}

static void host_step(void)
{
	step(0);
	bool eager = !last_step_from_graph();
	host_ns += eager ? host_eager_ns : host_replay_ns;
	if (eager)
		gs_self_tl.own_ns += host_own_ns;
}

/*
 * The GPU's span says replay is slower (the held launches' wait), but the
 * host's time from one pass to the next is the same either way: the
 * program would not be faster eager, so the graph is kept (a tie).  With
 * GRAPHSHIM_GATE_HOST=0 the GPU's span alone decides: eager.
 */
Test(gate, eager_needs_the_host_to_agree)
{
	gate_start(1000, 1000, 20000, NULL, NULL); /* GPU: eager 8 us, replay 28 us */
	host_clock_start(200000, 200000);         /* host-bound: 200 us a step either way */
	for (int i = 0; i < STEPS_TO_DECIDE + 2; i++)
		host_step();
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_eq(gs_stats.gate_eager, 0);
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
	gs_engine_fini();

	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_HOST", "0");
	host_clock_start(200000, 200000);
	for (int i = 0; i < STEPS_TO_DECIDE + 2; i++)
		host_step();
	cr_expect_eq(gs_stats.gate_eager, 1);
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
}

/* The GPU's span ties, the host's time says eager by far: eager. */
Test(gate, the_host_decides_where_the_gpu_ties)
{
	gate_start(1000, 1000, 0, NULL, NULL); /* GPU: eager 8000, replay 8000 */
	/* The host: 200 us a step eagerly, 300 us replayed (patches, say, that
	 * the GPU's span does not show). */
	host_clock_start(200000, 300000);
	for (int i = 0; i < STEPS_TO_DECIDE + 2; i++)
		host_step();
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_eq(gs_stats.gate_eager, 1);
	cr_expect_str_eq(seq_info().gate, "eager");
	cr_expect_eq(seq_info().eager_host_ns, 200000, "the host's medians are kept for the statistics");
	cr_expect_eq(seq_info().replay_host_ns, 300000);
	tb_check();
}

/*
 * With GRAPHSHIM_SELFTIME the statistics also give the eager passes less
 * graphshim's own time in them (what its launch calls spent on its own,
 * gs_self.h): eager without graphshim, as near as one process tells.  The
 * decision is the host's time as before.  Here graphshim's own time is 40
 * us of each 200 us eager pass.
 */
Test(gate, the_eager_passes_are_reported_less_graphshims_own_time)
{
	gate_start(1000, 1000, 0, "GRAPHSHIM_SELFTIME", "1"); /* GPU: eager 8000, replay 8000 */
	host_clock_start(200000, 150000);
	host_own_ns = 40000;
	for (int i = 0; i < STEPS_TO_DECIDE + 2; i++)
		host_step();
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_str_eq(seq_info().gate, "replay");
	cr_expect_eq(seq_info().eager_host_ns, 200000);
	cr_expect_eq(seq_info().eager_less_ns, 160000, "eager less graphshim's own: %u",
		     seq_info().eager_less_ns);
	cr_expect_eq(seq_info().replay_host_ns, 150000);
	tb_check();
	gs_engine_fini();

	/* Without GRAPHSHIM_SELFTIME, nothing to report. */
	gate_start(1000, 1000, 0, "GRAPHSHIM_SELFTIME", "0");
	host_clock_start(200000, 150000);
	for (int i = 0; i < STEPS_TO_DECIDE + 2; i++)
		host_step();
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_eq(seq_info().eager_less_ns, 0);
	tb_check();
}

/*
 * GRAPHSHIM_GATE_LESS_OWN: the eager passes count for their time less
 * graphshim's own in them (its matching, which a quiet stream does not
 * pay).  Eager 200 us a pass, 40 of them graphshim's; replayed 180 us:
 * as timed, replay wins (180 < 200); less graphshim's own, eager is 160 us
 * and replay slower by more than the margin (5% here): eager.
 */
/* A trial with setting k=v, the GPU's span a tie, the host's passes eager
 * and replayed, own of each eager one graphshim's: decided once. */
static void host_trial(const char *k, const char *v, uint64_t eager, uint64_t replay, uint64_t own)
{
	gate_start(1000, 1000, 0, k, v);
	host_clock_start(eager, replay);
	host_own_ns = own;
	for (int i = 0; i < STEPS_TO_DECIDE + 2; i++)
		host_step();
	cr_expect_eq(gs_stats.gate_decisions, 1);
}

Test(gate, with_less_own_the_eager_passes_count_without_graphshims_time)
{
	host_trial("GRAPHSHIM_GATE_LESS_OWN", "1", 200000, 180000, 40000);
	cr_expect_str_eq(seq_info().gate, "eager");
	cr_expect_eq(seq_info().eager_less_ns, 160000, "less own: %u", seq_info().eager_less_ns);
	cr_expect_eq(gs_stats.host_held_calls + gs_stats.host_eager_calls, 0,
		     "timed for the gate alone: no GRAPHSHIM_SELFTIME counters");
	tb_check();
	gs_engine_fini();

	/* Without it the same passes keep the graph. */
	host_trial("GRAPHSHIM_GATE_LESS_OWN", "0", 200000, 180000, 40000);
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
}

/* The gate asks for its launch calls to be timed through a trial's pass
 * (a count, spent call by call), and only while it has a pass to time. */
Test(gate, less_own_times_a_trials_passes_only)
{
	gate_start(1000, 1000, 0, "GRAPHSHIM_GATE_LESS_OWN", "1");
	cr_expect_eq(gs_self_tl.want, 0);
	host_clock_start(200000, 180000);
	for (int i = 0; i < STEPS_TO_DECIDE + 2 && !gs_stats.gate_decisions; i++)
		host_step();
	cr_expect_gt(gs_self_tl.want, 0, "a trial's pass began: its calls are to be timed");
	gs_self_call_t c;
	unsigned w = gs_self_tl.want;
	gs_self_call_begin(&c);
	gs_self_call_end(&c);
	cr_expect_eq(gs_self_tl.want, w - 1, "each launch call spends one");
	gs_self_want(0);
	tb_check();
}

/*
 * The GPU ties; the host's time says eager, past the 5% margin but inside
 * twice it: as on the GPU's span, three samples of each kind do not settle
 * it, nine do.
 */
Test(gate, a_close_call_on_the_host_takes_more_samples)
{
	gate_start(1000, 1000, 0, NULL, NULL); /* GPU: eager 8000, replay 8000 */
	host_clock_start(200000, 215000);         /* the host: 7.5% more replayed */
	for (int i = 0; i < STEPS_TO_DECIDE + 2; i++)
		host_step();
	cr_expect_eq(gs_stats.gate_decisions, 0, "three of each are not enough");
	int steps = steps_to_decision_with(host_step, 1, 40);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_geq(steps, 10, "six more of each kind");
	cr_expect_str_eq(seq_info().gate, "eager");
	cr_expect_eq(seq_info().replay_host_ns, 215000);
	tb_check();
}

/*
 * Four samples of each kind (the default): where every replayed pass beats
 * every eager one after E R R E, replay wins there -- two eager passes, not
 * four -- by far or by less than the margin (5% here) alike.  A replayed
 * pass as slow as the eager ones (one slow graph launch), or eager
 * winning, takes the whole trial.
 */
Test(gate, a_clear_win_for_replay_decides_at_half_the_samples)
{
	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE_SAMPLES", "4"); /* eager 40 us, replay 6 us */
	for (int i = 0; i < 3 + 4; i++) /* learn 2, warm 1, E R R E */
		step(0);
	cr_expect_eq(gs_stats.gate_decisions, 0, "read when the next pass begins");
	step(0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_str_eq(seq_info().gate, "replay");
	cr_expect_eq(seq_info().eager_passes, 2);
	cr_expect_eq(seq_info().eager_ns, 40000);
	cr_expect_eq(seq_info().replay_ns, 6000);
	cr_expect_eq(last_step_from_graph(), N);
	tb_check();
	gs_engine_fini();

	gate_start(1000, 980, 0, "GRAPHSHIM_GATE_SAMPLES", "4"); /* eager 8000, replay 7840: 2% */
	int steps = steps_to_decision(1, 20);
	cr_expect_eq(steps, 3 + 4 + 1, "decided when the fifth pass of the trial begins");
	cr_expect_eq(seq_info().eager_passes, 2);
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
	gs_engine_fini();

	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE_SAMPLES", "4");
	for (int i = 0; i < 3 + 1; i++) /* learn 2, warm 1, E */
		step(0);
	tb.cost_graph = 40000; /* the first replayed pass: 44 us, slower than eager */
	step(0);
	tb.cost_graph = 2000;
	steps = steps_to_decision(1, 20);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_geq(steps, 4, "the rest of the trial: R E E R");
	cr_expect_str_eq(seq_info().gate, "replay", "the medians still say replay");
	cr_expect_eq(seq_info().eager_passes, 4);
	tb_check();
	gs_engine_fini();

	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_SAMPLES", "4"); /* eager 8 us, replay 28 us */
	steps = steps_to_decision(1, 20);
	cr_expect_geq(steps, 3 + 8, "eager never wins early");
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
}

/*
 * With the host's samples the host must show the clear win, and the GPU's
 * span must not say replay is slower by the margin: here the host saves
 * half a step replayed but the GPU's span is 3.5 times longer, so the
 * trial runs whole (and the host decides: replay).
 */
Test(gate, a_clear_win_on_the_host_needs_the_gpu_not_to_disagree)
{
	gate_start(1000, 1000, 0, "GRAPHSHIM_GATE_SAMPLES", "4"); /* GPU: a tie */
	host_clock_start(200000, 100000);
	int steps = steps_to_decision_with(host_step, 1, 20);
	cr_expect_leq(steps, 3 + 5, "the host and a GPU tie: decided at half");
	cr_expect_eq(seq_info().eager_passes, 2);
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
	gs_engine_fini();

	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_SAMPLES", "4"); /* GPU: eager 8 us, replay 28 us */
	host_clock_start(200000, 100000);
	steps = steps_to_decision_with(host_step, 1, 20);
	cr_expect_geq(steps, 3 + 8, "the whole trial");
	cr_expect_eq(seq_info().eager_passes, 4);
	cr_expect_str_eq(seq_info().gate, "replay");
	tb_check();
}

/* Steps whose every launch's argument changes each time: each pass patches all. */
static uint64_t drift_v;
static void step_drift(void)
{
	step(++drift_v);
}

/*
 * GRAPHSHIM_GATE_TRUST: a sequence that long, whose untimed replays
 * patched little, replays from its first trial on with no eager pass; one
 * whose replays patched every launch is tried as before; at the re-check
 * a trusted sequence has a trial of its own, which can send it eager.
 */
Test(gate, a_long_clean_sequence_replays_without_a_first_trial)
{
	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_TRUST", "8"); /* replay would lose */
	for (int i = 0; i < 3 * STEPS_TO_DECIDE; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_trusted, 1);
	cr_expect_eq(gs_stats.gate_decisions, 0);
	gs_seq_info_t q = seq_info();
	cr_expect_str_eq(q.gate, "replay");
	cr_expect_eq(q.eager_passes, 0);
	cr_expect_eq(last_step_from_graph(), N);
	tb_check();
}

Test(gate, a_sequence_that_patches_every_launch_is_tried)
{
	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_TRUST", "8");
	drift_v = 0;
	cr_expect_leq(steps_to_decision_with(step_drift, 1, 4 * STEPS_TO_DECIDE), 4 * STEPS_TO_DECIDE);
	cr_expect_eq(gs_stats.gate_trusted, 0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_eq(gs_stats.gate_eager, 1);
	tb_check();
}

Test(gate, a_trusted_sequence_is_tried_at_the_recheck)
{
	/* eager 8 us, replay 28 us */
	gate_start_with(1000, 1000, 20000, "GRAPHSHIM_GATE_TRUST", "8", "GRAPHSHIM_GATE_RECHECK", "10");
	int steps = steps_to_decision(1, 60);
	cr_expect_eq(gs_stats.gate_trusted, 1);
	cr_expect_eq(gs_stats.gate_decisions, 1, "decided after %d steps", steps);
	cr_expect_eq(gs_stats.gate_eager, 1);
	cr_expect_str_eq(seq_info().gate, "eager");
	tb_check();
}

Test(gate, trust_off_tries_every_sequence)
{
	gate_start(1000, 1000, 20000, "GRAPHSHIM_GATE_TRUST", "0");
	for (int i = 0; i < STEPS_TO_DECIDE; i++)
		step(0);
	cr_expect_eq(gs_stats.gate_trusted, 0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	tb_check();
}

/* Start with trust at 8 launches and 8 untimed replays before the first trial. */
static void trust_start(void)
{
	gate_start_with(5000, 500, 2000, "GRAPHSHIM_GATE_AFTER", "8", "GRAPHSHIM_GATE_TRUST", "8");
}

/* Only the last untimed replays' patches count: the first ones patched every launch. */
Test(gate, trust_looks_at_the_last_untimed_replays)
{
	trust_start();
	drift_v = 0;
	for (int i = 0; i < 6; i++) /* learning, and the first replays, all patched */
		step_drift();
	for (int i = 0; i < 20; i++)
		step(drift_v);
	cr_expect_eq(gs_stats.gate_trusted, 1);
	cr_expect_eq(gs_stats.gate_decisions, 0);
	cr_expect_gt(gs_stats.patches, 0);
	cr_expect_eq(seq_info().eager_passes, 0);
	tb_check();
}

Test(gate, a_sequence_patched_in_its_last_untimed_replays_is_tried)
{
	trust_start();
	drift_v = 0;
	for (int i = 0; i < 30 && !gs_stats.gate_decisions; i++)
		step_drift();
	cr_expect_eq(gs_stats.gate_trusted, 0);
	cr_expect_eq(gs_stats.gate_decisions, 1);
	tb_check();
}

/*
 * GRAPHSHIM_GATE_PERIOD: a solver whose every iteration ends in a host
 * function.  On the GPU a replayed pass is far shorter (6 us against 40),
 * and so it is on the host (10 us against 30), but after each replayed
 * pass the stream waits 70 us for the host function against 23 us after
 * an eager one.  The span and the host say replay; the period (76 us
 * against 63) says eager.  Without the setting the graph is kept.
 */
static uint64_t gap_eager_ns, gap_replay_ns;
static void gap_step(void)
{
	host_step();
	tb.clock += last_step_from_graph() ? gap_replay_ns : gap_eager_ns;
}

static void period_trial(const char *on, uint64_t gap_e, uint64_t gap_r)
{
	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE_PERIOD", on); /* GPU: eager 40 us, replay 6 us */
	host_clock_start(30000, 10000);
	gap_eager_ns = gap_e;
	gap_replay_ns = gap_r;
	steps_to_decision_with(gap_step, 1, 40);
	cr_assert_eq(gs_stats.gate_decisions, 1);
}

Test(gate, with_period_the_wait_after_a_pass_counts)
{
	period_trial("1", 23000, 70000);
	gs_seq_info_t q = seq_info();
	cr_expect_str_eq(q.gate, "eager");
	cr_expect_eq(q.eager_ns, 63000, "eager period %llu", (unsigned long long)q.eager_ns);
	cr_expect_eq(q.replay_ns, 76000, "replay period %llu", (unsigned long long)q.replay_ns);
	cr_expect_eq(q.eager_host_ns, 30000, "the host's medians are still reported");
	cr_expect_eq(q.replay_host_ns, 10000);
	tb_check();
	gs_engine_fini();

	period_trial("0", 23000, 70000);
	q = seq_info();
	cr_expect_str_eq(q.gate, "replay");
	cr_expect_eq(q.eager_ns, 40000, "the span: %llu", (unsigned long long)q.eager_ns);
	cr_expect_eq(q.replay_ns, 6000);
	tb_check();
}

/* The same waits after both kinds: the period says replay, as the span does. */
Test(gate, with_period_an_even_wait_keeps_the_graph)
{
	period_trial("1", 23000, 23000);
	gs_seq_info_t q = seq_info();
	cr_expect_str_eq(q.gate, "replay");
	cr_expect_eq(q.eager_ns, 63000);
	cr_expect_eq(q.replay_ns, 29000);
	/* Watched afterwards with periods too: no move, no timer left behind. */
	for (int i = 0; i < 300; i++)
		gap_step();
	cr_expect_eq(gs_stats.gate_decisions, 1);
	cr_expect_leq(tb.live_timers, 4);
	tb_check();
}

/*
 * A regime: the wait after a pass depends on the pass before it (the host
 * ahead of the GPU after a replayed pass, a host function's round trip then
 * 70 us; behind it after an eager one, 23 us), not on the pass's own kind.
 * Passes in turn, timed by their periods, see each kind in the other's
 * wake and keep the graph; in blocks of three (one settling pass, two
 * timed) the eager passes follow eager ones and the replayed passes
 * replayed ones: eager 63 us a period against 76, eager.
 */
static bool regime_after_replay;
static void regime_step(void)
{
	host_step();
	tb.clock += regime_after_replay ? 70000 : 23000;
	regime_after_replay = last_step_from_graph();
}

static void regime_trial(const char *block)
{
	gate_start_with(5000, 500, 2000, "GRAPHSHIM_GATE_PERIOD", "1", "GRAPHSHIM_GATE_BLOCK", block);
	host_clock_start(30000, 10000);
	regime_after_replay = false;
	steps_to_decision_with(regime_step, 1, 60);
	cr_assert_eq(gs_stats.gate_decisions, 1);
}

Test(gate, in_blocks_each_kind_is_timed_in_its_own_regime)
{
	regime_trial("1");
	cr_expect_str_eq(seq_info().gate, "replay", "passes in turn: each in the other's wake");
	tb_check();
	gs_engine_fini();

	regime_trial("3");
	gs_seq_info_t q = seq_info();
	cr_expect_str_eq(q.gate, "eager");
	cr_expect_eq(q.eager_ns, 63000, "eager period %llu", (unsigned long long)q.eager_ns);
	cr_expect_eq(q.replay_ns, 76000, "replay period %llu", (unsigned long long)q.replay_ns);
	tb_check();
}

/* The kinds of a trial's passes, one letter a step (E eager, R replayed),
 * until the first decision (at most 40 steps). */
static void trial_kinds(char *out)
{
	int n = 0;
	while (!gs_stats.gate_decisions && n < 40) {
		step(0);
		out[n++] = last_step_from_graph() ? 'R' : 'E';
	}
	out[n] = 0;
}

/* In blocks of three: three eager passes in a row, then three replayed;
 * passes in turn never run three of a kind. */
Test(gate, blocks_run_each_kind_in_a_row)
{
	char k[41];
	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE_BLOCK", "3"); /* replay wins: 40 us against 6 */
	trial_kinds(k);
	cr_assert_eq(gs_stats.gate_decisions, 1);
	cr_expect(strstr(k, "EEERRR") != NULL, "kinds %s", k);
	gs_seq_info_t q = seq_info();
	cr_expect_str_eq(q.gate, "replay");
	cr_expect_eq(q.eager_ns, 40000);
	cr_expect_eq(q.replay_ns, 6000);
	tb_check();
	gs_engine_fini();

	gate_start(5000, 500, 2000, "GRAPHSHIM_GATE_BLOCK", "1");
	trial_kinds(k);
	cr_expect(strstr(k, "EEE") == NULL, "kinds %s", k);
	tb_check();
}

/*
 * A step whose GPU span differs with a period of its own: every fourth
 * pass waits 100 us more inside (a read-back, a host function), at each
 * of the four phases.  Where the watched passes (every 4th, then every
 * 16th) fall on the long phase, every one of them is "moved" and each
 * watch started a trial that gave back replay: 27 trials and 664 eager
 * launches in 440 passes.  After two trials of the watch in a row that
 * confirm their verdict it rests until the re-check.
 */
static int period_phase, period_k;
static void periodic_step(void)
{
	for (int i = 0; i < N; i++) {
		tb_launch(S1, F[i], 1000 + i, 0);
		if (i == 3 && period_k % 4 == period_phase)
			tb.clock += 100000;
	}
	period_k++;
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

Test(gate, a_watch_whose_trials_confirm_the_verdict_rests)
{
	for (int ph = 0; ph < 4; ph++) {
		gate_start(5000, 500, 2000, NULL, NULL); /* eager 40 us, replay 6 us, +100 every 4th */
		period_phase = ph;
		period_k = 0;
		for (int i = 0; i < 440; i++)
			periodic_step();
		cr_expect_leq(gs_stats.gate_decisions, 3, "phase %d: the first trial, two of the watch's", ph);
		cr_expect_eq(gs_stats.gate_eager, 0);
		cr_expect_leq(gs_stats.gated, 3 * 3 * N, "phase %d: %llu launches sent eagerly", ph,
			      (unsigned long long)gs_stats.gated);
		cr_expect_str_eq(seq_info().gate, "replay");
		tb_check();
		gs_engine_fini();
	}
}
