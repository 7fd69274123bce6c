/*
 * The submission thread (GRAPHSHIM_SUBMIT_THREAD): replayed chunks are
 * patched and launched off the caller's thread, every record still runs
 * once and in its stream's order, and a refusal the thread meets ends as
 * it would on the caller's.
 */
#include "gs_submit.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>

static const uintptr_t F[] = { 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8 };
#define S1 ((uintptr_t)0x5001)
#define S2 ((uintptr_t)0x5002)

/* n steps of 6 launches on S1, F[2]'s and F[4]'s second arguments new each step when drift. */
static void steps(int n, bool drift)
{
	for (int s = 0; s < n; s++) {
		for (int i = 0; i < 6; i++)
			tb_launch(S1, F[i], 1000 + i, (drift && (i == 2 || i == 4)) ? (uint64_t)s : 0);
		gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	}
}

static void start(void)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_SUBMIT_THREAD", "1", NULL);
}

static bool idle(void)
{
	return !gs_submit_pending();
}

Test(submit, drifting_steps_replay_through_the_thread_in_order)
{
	start();
	uint64_t posted0 = gs_submit_posted;
	steps(20, true);
	cr_expect_gt(gs_stats.replays, 0);
	cr_expect_gt(gs_stats.patches, 0);
	cr_expect_eq(gs_submit_posted - posted0, gs_stats.posted);
	cr_expect_eq(gs_stats.posted, gs_stats.patched_replays, "every patched chunk was posted");
	cr_expect(idle(), "a stream's sync returns after what was posted ran");
	/* Every step ran in full: the last one's six launches, from its graph. */
	cr_assert_geq(tb.nexec, 6);
	for (size_t i = tb.nexec - 6; i < tb.nexec; i++)
		cr_expect(tb.exec[i].from_graph, "launch %zu of the last step", i);
	tb_check();
}

Test(submit, with_the_thread_off_nothing_is_posted)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_SUBMIT_THREAD", "0", NULL);
	uint64_t posted0 = gs_submit_posted;
	steps(20, true);
	cr_expect_gt(gs_stats.replays, 0);
	cr_expect_eq(gs_submit_posted, posted0);
	tb_check();
}

/*
 * A chunk posted on S1 and not yet synchronised: a pass-through launch on
 * S2 drains it first, so nothing the program issued later reaches the
 * vendor before it (the legacy stream's order, another stream's event).
 */
Test(submit, a_call_that_reaches_the_vendor_runs_posted_work_first)
{
	start();
	steps(12, true);
	for (int i = 0; i < 6; i++)
		tb_launch(S1, F[i], 1000 + i, 99);
	/* S2 passes through: its launch reaches the vendor after S1's graph. */
	tb_launch_on(S2, GS_STREAM_PASSTHRU, F[7], 1, 2);
	cr_assert(idle());
	cr_assert_geq(tb.nexec, 2);
	cr_expect_eq(tb.exec[tb.nexec - 1].func, F[7], "the pass-through ran last");
	cr_expect_eq(tb.exec[tb.nexec - 1].stream, S2);
	cr_expect_eq(tb.exec[tb.nexec - 2].func, F[5], "after the posted step's last launch");
	cr_expect(tb.exec[tb.nexec - 2].from_graph);
	tb_check();
}

/*
 * A patch the vendor refuses (the second, F[4]'s, of the first patched
 * pass; fail_at 3: F[2]'s of the second), met by the thread: the program
 * runs as it does with the thread off, launch for launch from the graphs
 * or eagerly alike at the end, one pass later.
 */
static void refused_patch(int fail_at)
{
	struct {
		uint64_t patches, fallbacks, replays, replayed, released, refused, patch_failed;
		size_t nexec;
		bool from_graph[64];
	} r[2];
	for (int on = 0; on < 2; on++) {
		tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_SUBMIT_THREAD", on ? "1" : "0", NULL);
		tb.fail_patch_at = fail_at;
		steps(20, true);
		tb_check();
		r[on].patches = gs_stats.patches;
		r[on].fallbacks = gs_stats.fallbacks;
		r[on].replays = gs_stats.replays;
		r[on].replayed = gs_stats.replayed;
		r[on].released = gs_stats.released;
		r[on].refused = gs_stats.refused;
		r[on].patch_failed = gs_stats.mismatch_by[GS_MISMATCH_PATCH_FAILED];
		r[on].nexec = tb.nexec;
		cr_assert_geq(tb.nexec, 64);
		for (size_t i = 0; i < 64; i++)
			r[on].from_graph[i] = tb.exec[tb.nexec - 64 + i].from_graph;
		if (on)
			cr_expect_gt(gs_stats.posted, 0, "the thread took the patched chunks");
		else
			cr_expect_eq(gs_stats.posted, 0);
		gs_engine_fini();
	}
	cr_expect_eq(r[1].patch_failed, 1);
	cr_expect_eq(r[1].refused, 1);
	cr_expect_eq(r[1].fallbacks, 1);
	/* The thread's refusal is acted on at the sequence's next pass, which
	 * then goes eagerly: one step's records (6) more released than off. */
	cr_expect_eq(r[1].replayed + r[1].released, r[0].replayed + r[0].released,
		     "replayed %lu + released %lu on, %lu + %lu off", (unsigned long)r[1].replayed,
		     (unsigned long)r[1].released, (unsigned long)r[0].replayed, (unsigned long)r[0].released);
	cr_expect_leq(r[1].released, r[0].released + 6);
	cr_expect_geq(r[1].patches + 2, r[0].patches);
	cr_expect_leq(r[1].patches, r[0].patches);
	cr_expect_eq(r[1].nexec, r[0].nexec);
	for (size_t i = 0; i < 64; i++)
		cr_expect_eq(r[1].from_graph[i], r[0].from_graph[i], "launch %zu of the last 64", i);
}

Test(submit, a_refused_patch_on_the_thread_ends_as_on_the_callers)
{
	refused_patch(2);
}

Test(submit, a_later_refused_patch_on_the_thread_ends_as_on_the_callers)
{
	refused_patch(3);
}

/* A graph launch the vendor refuses: its records ran eagerly, the sequence retires. */
Test(submit, a_refused_graph_launch_on_the_thread_retires_the_sequence)
{
	start();
	tb.fail_launch_at = 2;
	steps(12, false);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_LAUNCH_FAILED], 1);
	cr_expect_eq(gs_stats.fallbacks, 1);
	cr_expect_geq(gs_stats.retirements, 1);
	tb_check();
}

/* The engine's end drains and stops the thread; a later start posts again. */
Test(submit, the_engine_end_leaves_nothing_posted)
{
	start();
	steps(10, true);
	for (int i = 0; i < 6; i++)
		tb_launch(S1, F[i], 1000 + i, 77);
	gs_engine_fini();
	cr_expect(idle());
	cr_assert_geq(tb.nexec, 6);
	cr_expect_eq(tb.exec[tb.nexec - 4].func, F[2]);
	cr_expect_eq(tb.exec[tb.nexec - 4].a1, 77, "the last step ran, with its own operands");
	cr_expect_eq(tb.exec[tb.nexec - 1].func, F[5]);
}
