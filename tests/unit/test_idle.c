/*
 * The idle watchdog (gs_idle.h): launches held when the program stops
 * calling reach the GPU without its next call.  These tests run the real
 * watchdog thread against the recording backend, with waits of a few
 * milliseconds.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "gs_clock.h"
#include "gs_sig.h"
#include "gs_testbe.h"

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S1 ((uintptr_t)0x5001)

static void step(int n)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	tb_sync(S1, 0);
}

static void nap_us(long us)
{
	struct timespec t = {us / 1000000, (us % 1000000) * 1000};
	nanosleep(&t, NULL);
}

/* What the backend ran so far (the watchdog's thread appends to it). */
static size_t ran(void)
{
	return __atomic_load_n(&tb.nexec, __ATOMIC_ACQUIRE);
}

/* Wait until the backend has run `want` records, 200 ms at most. */
static void wait_ran(size_t want)
{
	for (int t = 0; t < 2000 && ran() < want; t++)
		nap_us(100);
}

/* An 8-launch step learned and armed, the watchdog at idle_us. */
static void learn_with(const char *idle_us)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", idle_us, NULL);
	step(8);
	step(8);
	cr_assert_eq(tb.builds, 1);
}

/*
 * A program that waits for its GPU without a CUDA call (it spins on mapped
 * host memory the step's third kernel writes) after three launches of a
 * replayed step: they are held, waiting for the chunk, and without the
 * watchdog the program would wait forever.  The watchdog submits them
 * within GRAPHSHIM_IDLE_US (2 ms here; 200 ms allowed), as another
 * thread's synchronize would: the match goes on, the rest of the chunk
 * goes eagerly, nothing is charged, and the next step replays.
 */
Test(idle, held_launches_go_when_the_program_stops_calling)
{
	learn_with("2000");
	size_t before = ran();
	for (int i = 0; i < 3; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	cr_expect_eq(ran(), before, "held, waiting for their chunk");
	wait_ran(before + 3);
	cr_expect_eq(ran(), before + 3, "the held launches ran without another call");
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 1);
	cr_expect_eq(gs_stats.interrupted, 1);
	for (int i = 3; i < 8; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	tb_sync(S1, 0);
	cr_expect_eq(gs_stats.mismatches, 0, "an idle stream is not a mismatch");
	cr_expect_eq(gs_stats.released, 8, "the rest of its chunk went eagerly too");
	step(8);
	cr_expect_eq(gs_stats.replays, 1, "the next step replays");
	tb_check();
}

/* GRAPHSHIM_IDLE_US=0: no watchdog; held launches wait for the next call. */
Test(idle, zero_turns_the_watchdog_off)
{
	learn_with("0");
	size_t before = ran();
	for (int i = 0; i < 3; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	nap_us(20000);
	cr_expect_eq(ran(), before, "still held");
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 0);
	for (int i = 3; i < 8; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	tb_sync(S1, 0);
	cr_expect_eq(gs_stats.replays, 1);
	cr_expect_eq(gs_stats.released, 0);
	tb_check();
}

/*
 * A stream that keeps holding launches, one every 0.2 ms, is not idle:
 * 40 ms of them with the watchdog looking every 10 ms (GRAPHSHIM_IDLE_US
 * 20 ms) submit nothing early.  That holds for a thread that does keep
 * calling: on a loaded machine (a sanitizer build beside other work on
 * two cores) this one was once switched out for longer than the
 * watchdog's looks, and then the watchdog is right.  Such a run says
 * nothing and is run again, three times at most.
 */
Test(idle, a_stream_that_keeps_calling_is_not_idle)
{
	learn_with("20000");
	uint64_t longest = 0, idle0 = 0, replays0 = 0, released0 = 0;
	for (int t = 0; t < 3 && (t == 0 || longest >= 10000000u); t++) {
		idle0 = gs_stats.flush_by[GS_FLUSH_IDLE];
		replays0 = gs_stats.replays;
		released0 = gs_stats.released;
		longest = 0;
		uint64_t last = gs_clock_ns();
		for (int k = 0; k < 25; k++) {
			for (int i = 0; i < 8; i++) {
				tb_launch(S1, F[i], 1000 + i, 0);
				nap_us(200);
				uint64_t n = gs_clock_ns();
				longest = n - last > longest ? n - last : longest;
				last = n;
			}
			tb_sync(S1, 0);
		}
	}
	/* (A paused run may also have cut its step where it paused.) */
	if (longest >= 10000000u || gs_stats.idle_cuts)
		cr_skip_test("the thread paused %llu us between two launches in each of three runs",
			     (unsigned long long)(longest / 1000));
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE] - idle0, 0);
	cr_expect_eq(gs_stats.replays - replays0, 25);
	cr_expect_eq(gs_stats.released - released0, 0);
	tb_check();
}

/*
 * One step of 8 launches in which the program waits without a call after
 * each launch whose bit is set in `waits` (as tiny --spin does halfway),
 * until what it launched so far has run: by the watchdog's doing, or
 * because a chunk's graph went already.  200 ms allowed a wait.
 */
static void step_waiting_at(unsigned waits, int at, uint64_t v)
{
	size_t start = ran();
	for (int i = 0; i < 8; i++) {
		tb_launch(S1, F[i], i == at ? v : 1000 + (uint64_t)i, 0);
		if (!(waits >> i & 1))
			continue;
		wait_ran(start + i + 1);
		cr_expect_eq(ran(), start + i + 1, "launches 0-%d ran within 200 ms of the wait", i);
	}
	tb_sync(S1, 0);
}

static void step_waiting_last(unsigned waits, uint64_t last)
{
	step_waiting_at(waits, 7, last);
}

static void step_waiting(unsigned waits)
{
	step_waiting_last(waits, 1007);
}

/*
 * A program that waits at the same place every step: the first two waits
 * are the watchdog's (1-2 ms each, the rest of the chunk eager); then a
 * chunk ends there (GRAPHSHIM_IDLE_CUT, 2), its graph goes as its last
 * launch arrives, and the wait costs nothing more.  Every launch still runs
 * once, in order.
 */
Test(idle, a_wait_at_one_place_every_step_ends_a_chunk_there)
{
	learn_with("2000");
	step_waiting(1u << 2);
	cr_expect_eq(gs_stats.idle_cuts, 0, "one wait cuts nothing yet");
	step_waiting(1u << 2);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 2);
	cr_expect_eq(gs_stats.idle_cuts, 1);
	uint64_t replays = gs_stats.replays;
	for (int k = 0; k < 5; k++)
		step_waiting(1u << 2);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 2, "no wait for the watchdog once cut");
	cr_expect_eq(tb.builds, 3, "built once, then again as two chunks (a graph each)");
	cr_expect_eq(gs_stats.replays - replays, 10, "two graph launches a step");
	cr_expect_eq(gs_stats.released, 16, "only the first two steps' chunks went eagerly");
	cr_expect_eq(gs_stats.mismatches, 0);
	tb_check();
}

/*
 * The same where the launch before the wait drifts every step (a caching
 * allocator's new address): its record is patched every pass, and the
 * passes that waited after it are counted on the baked record, which a
 * patch must not reset (it did: such a place was never cut, and the
 * watchdog waited 1-2 ms there every step).
 */
Test(idle, a_wait_after_a_launch_that_drifts_every_step_is_cut_too)
{
	learn_with("2000");
	tb.devpatch = true; /* its drift builds the step again: the cut must stay */
	for (int k = 0; k < 7; k++)
		step_waiting_at(1u << 2, 2, 7000 + (uint64_t)k);
	cr_expect_eq(gs_stats.idle_cuts, 1);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 2, "no wait for the watchdog once cut");
	cr_expect_eq(gs_stats.mismatches, 0);
	tb_check();
}

/*
 * A wait before the step's last launch leaves that launch a chunk of its
 * own, too short for any patch: when its argument drifts every step (an
 * optimizer's last foreach kernel, its tensor list reallocated), it goes
 * eagerly at its place, uncharged, and the rest of the step keeps
 * replaying (train-deep's tail retired after three such steps).  A pass
 * whose every chunk is spared so and launches no graph is still charged:
 * see drift_in_short_chunks_alone_still_retires below.
 */
Test(idle, a_lone_launch_after_a_wait_may_drift_without_retiring_its_step)
{
	learn_with("2000");
	for (int k = 0; k < 4; k++)
		step_waiting(1u << 6);
	cr_assert_eq(gs_stats.idle_cuts, 1);
	uint64_t replays = gs_stats.replays, released = gs_stats.released;
	for (int k = 0; k < 6; k++)
		step_waiting_last(1u << 6, 5000 + (uint64_t)k);
	cr_expect_eq(gs_stats.mismatches, 0, "a lone drifting launch charges nothing");
	cr_expect_eq(gs_stats.retirements, 0);
	cr_expect_eq(gs_stats.replays - replays, 6, "the first seven launches replay every step");
	cr_expect_eq(gs_stats.released - released, 6, "the last launch goes eagerly every step");
	step_waiting(1u << 6);
	cr_expect_eq(gs_stats.replays - replays, 8, "back to two graphs when it stops drifting");
	tb_check();
}

/*
 * GRAPHSHIM_IDLE_CUT 4 (the default until the thirty-fourth session): the
 * same place cut after four steps in a row that waited there; three in a
 * row, one elsewhere and three again cut nothing.
 */
Test(idle, the_passes_before_a_cut_are_configurable)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "2000", "GRAPHSHIM_IDLE_CUT", "4", NULL);
	step(8);
	step(8);
	cr_assert_eq(tb.builds, 1);
	for (int k = 0; k < 7; k++)
		step_waiting(1u << (k == 3 ? 5 : 2));
	cr_expect_eq(gs_stats.idle_cuts, 0, "no four in a row");
	step_waiting(1u << 2);
	cr_expect_eq(gs_stats.idle_cuts, 1, "the fourth in a row");
	uint64_t idle = gs_stats.flush_by[GS_FLUSH_IDLE];
	cr_expect_eq(idle, 8);
	for (int k = 0; k < 3; k++)
		step_waiting(1u << 2);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], idle, "no wait for the watchdog once cut");
	tb_check();
}

/* Two places a step, each cut after two steps that waited there. */
Test(idle, two_waits_a_step_are_each_cut)
{
	learn_with("2000");
	for (int k = 0; k < 4; k++)
		step_waiting(1u << 1 | 1u << 5);
	cr_expect_eq(gs_stats.idle_cuts, 2);
	uint64_t idle = gs_stats.flush_by[GS_FLUSH_IDLE], replays = gs_stats.replays;
	for (int k = 0; k < 3; k++)
		step_waiting(1u << 1 | 1u << 5);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], idle);
	cr_expect_eq(gs_stats.replays - replays, 9, "three graph launches a step");
	tb_check();
}

/*
 * Waits that move (the interpreter paused here one step, there the next)
 * cut nothing: each is the watchdog's, and the step stays one chunk.
 */
Test(idle, waits_at_changing_places_cut_nothing)
{
	learn_with("2000");
	for (int k = 0; k < 6; k++)
		step_waiting(1u << (k % 2 ? 5 : 2));
	/* Never two in a row at one place (the default cuts at two). */
	for (int k = 0; k < 7; k++)
		step_waiting(1u << (k % 2 ? 5 : 2));
	cr_expect_eq(gs_stats.idle_cuts, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 13);
	cr_expect_eq(tb.builds, 1);
	tb_check();
}

/*
 * The first n launches of the 8-launch step, then no call: they run within
 * 200 ms all the same (the watchdog's doing).
 */
static void launch_and_stop(int n)
{
	size_t before = ran();
	for (int i = 0; i < n; i++)
		tb_launch(S1, F[i], 1000 + i, 0);
	wait_ran(before + (size_t)n);
	cr_expect_eq(ran(), before + (size_t)n, "the held launches ran without another call");
}

/*
 * Two steps that begin alike (their first three launches the same), both
 * armed: three launches in, both are still candidates when the program
 * stops calling.  The watchdog submits the three and the match ends there,
 * uncharged (going on with both, the three drained as at a mark, lost on
 * an H100: gs_match_interrupt says why); the rest of the step goes
 * eagerly, and the next step replays.
 */
Test(idle, a_wait_while_two_steps_are_candidates_ends_the_match)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "2000", NULL);
	uintptr_t B[8] = {F[0], F[1], F[2], 0xb4, 0xb5, 0xb6, 0xb7, 0xb8};
	for (int k = 0; k < 2; k++) {
		step(8);
		for (int i = 0; i < 8; i++)
			tb_launch(S1, B[i], 1000 + i, 0);
		tb_sync(S1, 0);
	}
	cr_assert_eq(tb.builds, 2);
	uint64_t mism = gs_stats.mismatches, rel = gs_stats.released, inter = gs_stats.interrupted;
	launch_and_stop(3);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 1);
	cr_expect_eq(gs_stats.interrupted, inter, "the match ended");
	cr_expect_eq(gs_stats.released - rel, 3);
	for (int i = 3; i < 8; i++)
		tb_launch(S1, B[i], 1000 + i, 0);
	tb_sync(S1, 0);
	cr_expect_eq(gs_stats.mismatches, mism, "uncharged");
	uint64_t replays = gs_stats.replays;
	step(8);
	cr_expect_eq(gs_stats.replays, replays + 1, "the next step replays");
	tb_check();
}

/*
 * The same, but the launches held are a whole step of their own (a 4-launch
 * step, and an 8-launch one that begins with it): ending the match there
 * replays the complete one as its graph.
 */
Test(idle, a_wait_where_a_shorter_step_is_complete_replays_it)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "2000", NULL);
	for (int k = 0; k < 2; k++) {
		step(8);
		step(4);
	}
	cr_assert_eq(tb.builds, 2);
	uint64_t replays = gs_stats.replays, rel = gs_stats.released, inter = gs_stats.interrupted;
	launch_and_stop(4);
	cr_expect(tb.exec[tb.nexec - 1].from_graph, "as the 4-launch step's graph");
	cr_expect_eq(gs_stats.replays, replays + 1);
	cr_expect_eq(gs_stats.released, rel);
	cr_expect_eq(gs_stats.interrupted, inter, "the match ended there");
	tb_sync(S1, 0);
	tb_check();
}

/*
 * hf-llama's pause (an H100 trace, twenty-fourth session): once a call, the
 * program stops for 1-2 ms after the first launches of a step whose start
 * several armed steps share.  Each pause ends the match and the segment
 * there, so the launches before it are learned as a step of their own; from
 * then on that step is a complete candidate at the pause and ending the
 * match replays it: the pause's launches run from a graph, not eagerly.
 */
Test(idle, a_pause_where_steps_are_candidates_is_learned_as_a_step_end)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "2000", NULL);
	uintptr_t B[8] = {F[0], F[1], F[2], F[3], 0xb5, 0xb6, 0xb7, 0xb8};
	for (int k = 0; k < 2; k++) {
		step(8);
		for (int i = 0; i < 8; i++)
			tb_launch(S1, B[i], 1000 + i, 0);
		tb_sync(S1, 0);
	}
	uint64_t rel = 0;
	for (int k = 0; k < 6; k++) {
		rel = gs_stats.released;
		launch_and_stop(4); /* both steps are candidates here */
		for (int i = 4; i < 8; i++)
			tb_launch(S1, B[i], 1000 + i, 0);
		tb_sync(S1, 0);
	}
	cr_expect_eq(gs_stats.released, rel, "the last pause's launches were not sent eagerly");
	cr_expect(tb.exec[tb.nexec - 5].from_graph, "they ran from the graph of a step that ends there");
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 6);
	tb_check();
}

/*
 * Waits that move, pass after pass, are paid every pass (no cut), and the
 * gate does not time an interrupted pass: GRAPHSHIM_IDLE_EAGER replayed
 * passes in a row of them (4 here) send the sequence eagerly until its next
 * re-check, so the launches before the wait run while the program waits.
 * A forced GRAPHSHIM_GATE=replay keeps replaying.
 */
static void moving_waits(const char *gate)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "2000", "GRAPHSHIM_IDLE_EAGER", "4",
		 "GRAPHSHIM_GATE", gate, "GRAPHSHIM_GATE_RECHECK", "6", NULL);
	step(8);
	step(8);
	for (int k = 0; k < 4; k++)
		step_waiting(1u << (k % 2 ? 5 : 2));
	cr_expect_eq(gs_stats.idle_cuts, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 4);
}

Test(idle, a_step_that_keeps_waiting_at_moving_places_goes_eager)
{
	moving_waits("auto");
	cr_expect_eq(gs_stats.idle_eager, 1);
	uint64_t gated = gs_stats.gated;
	for (int k = 0; k < 6; k++)
		step_waiting(1u << (k % 2 ? 5 : 2));
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 4, "nothing held to wait for");
	cr_expect_eq(gs_stats.gated - gated, 48, "six steps sent eagerly");
	step_waiting(1u << 2);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 5, "tried again after GRAPHSHIM_GATE_RECHECK passes");
	tb_check();
}

Test(idle, a_forced_replay_keeps_replaying_through_moving_waits)
{
	moving_waits("replay");
	cr_expect_eq(gs_stats.idle_eager, 0);
	step_waiting(1u << 2);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_IDLE], 5);
	tb_check();
}

/*
 * A terminating signal deferred on the application's thread (it held a
 * stream) is raised again by that thread alone.  The watchdog holds streams
 * too, with every signal blocked: when the deferral was one flag for the
 * process, the watchdog's release took it and raised the signal on itself,
 * where it stayed pending, and the program ran on (t-outputs' "SIGTERM
 * inside a launch" hung so in CI).
 */
static bool sig_term_now(int sig)
{
	(void)sig;
	return false; /* nothing to write: end now */
}

static atomic_int sig_cycles;

/* As the watchdog: every signal blocked, a stream held and released over and over. */
static void *sig_blocked_holder(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	for (;;) {
		gs_sig_hold();
		gs_sig_release();
		atomic_fetch_add(&sig_cycles, 1);
		nap_us(100);
	}
	return NULL;
}

Test(idle, a_signal_deferred_on_one_thread_is_not_taken_by_the_watchdogs, .signal = SIGTERM)
{
	gs_sig_install(sig_term_now);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, sig_blocked_holder, NULL), 0);
	gs_sig_hold();
	pthread_kill(pthread_self(), SIGTERM); /* deferred: this thread holds */
	int seen = atomic_load(&sig_cycles);
	while (atomic_load(&sig_cycles) < seen + 20)
		nap_us(100);
	gs_sig_release(); /* raises it again, here: the process ends */
	nap_us(200 * 1000);
	cr_assert_fail("SIGTERM was lost: the process ran on");
}
