/*
 * Marks (gs_rec.h): event records and waits inside a step.  They end no
 * segment, take their place in the learned sequence, are never graph
 * nodes, and run at their own call after everything before them on the
 * stream, whatever the match is doing.  Stream-ordered frees are marks
 * too, held with the records before them on every stream: they cut no
 * chunk and go after its graph.
 */
#include "gs_arm.h"
#include "gs_event.h"
#include "gs_stream.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define S ((uintptr_t)0x5a)

/* A step's head, before its record: F0 F1.  `arg`: their second argument. */
static void step_head(uint64_t arg)
{
	tb_launch(S, F[0], 0, arg);
	tb_launch(S, F[1], 1, arg);
}

/* A step's tail after F2: F3, the wait, F4 F5; then a sync, where asked. */
static void step_tail(bool sync)
{
	tb_launch(S, F[3], 3, 0);
	tb_mark(S, 7, 2);
	tb_launch(S, F[4], 4, 0);
	tb_launch(S, F[5], 5, 0);
	if (sync)
		tb_sync(S, 0);
}

/*
 * One step: F0 F1, a record of one of three events, F2 F3, a wait, F4 F5;
 * then a sync.  `arg`: the first three launches' second argument.
 */
static void step(int i, uint64_t arg, bool sync)
{
	step_head(arg);
	tb_mark(S, 100 + (uint64_t)(i % 3), 1); /* an allocator's pool of events */
	tb_launch(S, F[2], 2, arg);
	step_tail(sync);
}

/* The rest of a step after its record (F2 F3, the wait, F4 F5) and the sync. */
static void step_rest(uint64_t arg)
{
	tb_launch(S, F[2], 2, arg);
	step_tail(true);
}

/* Absorbed marks, and six steps: the step is learned and replays. */
static void absorbing_steps(void)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	for (int i = 0; i < 6; i++)
		step(i, (uint64_t)i, true);
}

/* Whether a stream holds a record of event ev or a wait on it. */
static bool held(uint64_t ev)
{
	gs_stream_t *h;
	return gs_event_holders(ev, &h, 1) == 1;
}

/* Where record k of stream S's issue order ran, in the execution log. */
static size_t ran_at(size_t k)
{
	size_t seen = 0;
	for (size_t i = 0; i < tb.nexec; i++)
		if (tb.exec[i].stream == S && seen++ == k)
			return i;
	cr_assert_fail("record %zu never ran", k);
	return 0;
}

Test(marks, a_step_with_marks_is_one_sequence_and_replays_between_them)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "0", NULL);
	for (int i = 0; i < 8; i++)
		step(i, (uint64_t)i, true);
	tb_check();
	cr_expect_eq(gs_stats.sequences, 1, "one step, not three segments: %llu",
		     (unsigned long long)gs_stats.sequences);
	cr_expect_eq(gs_stats.launches, 48, "marks are not launches");
	/* Learned at the second step; steps 3-8 replay all six launches, as
	 * three graphs (the marks cut them), with the marks run in between. */
	cr_expect_eq(gs_stats.replayed, 36, "replayed %llu", (unsigned long long)gs_stats.replayed);
	cr_expect_eq(gs_stats.replays, 18);
	cr_expect_eq(gs_stats.held, 36, "a mark is never counted as held");
	/* The last step: each mark ran eagerly, after the graph before it. */
	size_t base = 7 * 8;
	for (size_t k = 0; k < 8; k++) {
		const tb_exec_t *e = &tb.exec[ran_at(base + k)];
		bool mark = k == 2 || k == 5;
		cr_expect_eq(e->func == TB_MARK, mark, "record %zu", k);
		cr_expect_eq(e->from_graph, !mark, "record %zu: from a graph %d", k, e->from_graph);
	}
}

Test(marks, a_mark_submits_what_several_candidates_hold_before_it)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	/* Two steps that begin alike, a mark after their common prefix. */
	for (int i = 0; i < 12; i++) {
		tb_launch(S, F[0], 0, 0);
		tb_launch(S, F[1], 1, 0);
		tb_mark(S, 9, 1);
		for (int k = 0; k < 4; k++)
			tb_launch(S, F[i % 2 ? 6 : 2 + k], 10 + (uint64_t)k, 0);
		tb_sync(S, 0);
	}
	tb_check(); /* the mark never overtook the held F0 F1 */
	cr_expect_eq(gs_stats.sequences, 2, "sequences %llu", (unsigned long long)gs_stats.sequences);
	cr_expect_gt(gs_stats.replayed, 0);
}

/*
 * A step and two longer ones that begin with it, a mark after their
 * shared part: the short one is complete (the match's `done`) while the
 * longer two hold on; the mark sends what is held, past the short one's
 * end; the next launch is neither longer step's.  The short step's
 * eager pass then set the count of submitted records back to its own
 * length, and the release that ends the match submitted F5 a second time
 * (the differential fuzzer, seed 10304640 under GRAPHSHIM_GATE=eager).
 */
static void shared_prefix(int tail)
{
	tb_launch(S, F[0], 0, 0);
	tb_launch(S, F[1], 1, 0);
	if (tail >= 0) {
		tb_launch(S, F[5], 5, 0);
		tb_mark(S, 9, 1);
		tb_launch(S, F[tail], 20 + (uint64_t)tail, 0);
	}
	tb_sync(S, 0);
}

Test(marks, a_shorter_step_passed_eagerly_after_a_mark_sends_nothing_twice)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_GATE", "eager", "GRAPHSHIM_MIN_SEQ", "2",
		 "GRAPHSHIM_ABSORB", "0", NULL);
	for (int i = 0; i < 2; i++) {
		shared_prefix(-1);
		shared_prefix(2);
		shared_prefix(3);
	}
	uint64_t exec = tb.nexec;
	shared_prefix(4); /* F0 F1 F5, the mark, then F4: neither longer step */
	cr_expect_eq(tb.nexec - exec, 5, "F0 F1 F5, the mark and F4 ran once each: %zu",
		     (size_t)(tb.nexec - exec));
	tb_check();
}

Test(marks, marks_alone_make_no_step)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 8; i++) {
		tb_launch(S, F[0], 0, 0);
		for (int k = 0; k < 6; k++)
			tb_mark(S, 50 + (uint64_t)k, 1);
		tb_sync(S, 0);
	}
	tb_check();
	cr_expect_eq(gs_stats.sequences, 0, "one launch and six marks is no step");
	cr_expect_eq(tb.builds, 0);
}

Test(marks, a_period_holds_marks)
{
	tb_start("GRAPHSHIM_PERIOD_AFTER", "16", NULL);
	/* No boundary; the events' rotation makes the period three steps. */
	for (int i = 0; i < 40; i++)
		step(i, 0, false);
	tb_check();
	cr_expect_gt(gs_stats.periods, 0);
	cr_expect_gt(gs_stats.replayed, 6 * 25, "replayed %llu of 240", (unsigned long long)gs_stats.replayed);
}

Test(marks, a_failed_mark_reaches_the_caller_and_ends_no_order)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "0", NULL);
	for (int i = 0; i < 4; i++)
		step(i, (uint64_t)i, true);
	/* The next step replays; its first mark's submission fails. */
	tb_launch(S, F[0], 0, 4);
	tb_launch(S, F[1], 1, 4);
	tb.fail_submit_at = tb.submits + 1;
	cr_expect_eq(tb_mark(S, 100, 1), 99, "the driver's status reaches the application");
	tb.fail_submit_at = 0;
	step_rest(4);
	/* What did run ran in order (the failed mark never ran). */
	tb.nissued--; /* tb_check compares with the issue log: drop the failed mark */
	for (size_t i = tb.nissued - 5; i < tb.nissued; i++)
		tb.issued[i] = tb.issued[i + 1];
	tb_check();
}

/* Where the n-th run of mark `event` on S is in the execution log. */
static size_t mark_ran_at(uint64_t event, size_t nth)
{
	for (size_t i = 0; i < tb.nexec; i++)
		if (tb.exec[i].stream == S && tb.exec[i].func == TB_MARK && tb.exec[i].a0 == event && !nth--)
			return i;
	return SIZE_MAX;
}

Test(marks, absorbed_marks_leave_one_graph_a_step)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	for (int i = 0; i < 8; i++)
		step(i, (uint64_t)i, true);
	tb_check(); /* records never before what preceded them, waits never after what followed */
	cr_expect_eq(gs_stats.sequences, 1);
	/* Steps 3-8 replay all six launches as one graph each. */
	cr_expect_eq(gs_stats.replayed, 36, "replayed %llu", (unsigned long long)gs_stats.replayed);
	cr_expect_eq(gs_stats.replays, 6, "graph launches %llu", (unsigned long long)gs_stats.replays);
	/* The last step: the wait (on an event recorded before the step) ran
	 * before the graph, the record after it. */
	size_t base = 7 * 8, first = ran_at(base), wait = mark_ran_at(7, 7), rec = mark_ran_at(101, 2);
	cr_expect(tb.exec[first].func == TB_MARK && first == wait, "the wait goes first");
	cr_expect_eq(rec, ran_at(base + 7), "the record goes after the whole graph: last of the step");
	cr_expect(tb.exec[ran_at(base + 6)].from_graph);
	cr_expect(!gs_event_any(), "no event is held once everything is submitted");
}

Test(marks, a_use_of_a_held_event_submits_it_first)
{
	absorbing_steps();
	/* The next step replays; between its record and the end of its chunk
	 * an allocator queries the recorded event. */
	step_head(6);
	tb_mark(S, 100, 1);
	cr_expect(held(100), "the record is held with the chunk");
	size_t before = tb.nexec;
	gs_engine_event_use(100, "query");
	cr_expect_eq(mark_ran_at(100, 2), before + 2, "F0 F1, then the record, ran at the query");
	cr_expect(!held(100));
	step_rest(6);
	tb_check();
	/* The step's match went on: the next one replays whole again. */
	uint64_t r0 = gs_stats.replayed;
	step(7, 7, true);
	cr_expect_eq(gs_stats.replayed - r0, 6);
	tb_check();
}

Test(marks, a_held_record_that_fails_later_keeps_the_order)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	for (int i = 0; i < 4; i++)
		step(i, (uint64_t)i, true);
	tb_launch(S, F[0], 0, 4);
	tb_launch(S, F[1], 1, 4);
	cr_expect_eq(tb_mark(S, 101, 1), 0, "held with its chunk: its call returns success, as a launch's");
	tb_launch(S, F[2], 2, 4);
	tb_launch(S, F[3], 3, 0);
	tb_mark(S, 7, 2);
	tb_launch(S, F[4], 4, 0);
	uint64_t fb = gs_stats.fallbacks;
	tb.fail_submit_at = tb.submits + 2; /* the wait goes first, then the record fails */
	tb_launch(S, F[5], 5, 0);
	tb.fail_submit_at = 0;
	tb_sync(S, 0);
	cr_expect_eq(gs_stats.fallbacks, fb + 1, "the failure is counted");
	/* Everything else ran in order; the failed record did not run. */
	for (size_t i = 0; i < tb.nissued; i++)
		if (tb.issued[i].func == TB_MARK && tb.issued[i].a0 == 101 && i > 4 * 8) {
			memmove(&tb.issued[i], &tb.issued[i + 1], (tb.nissued - i - 1) * sizeof(tb.issued[0]));
			tb.nissued--;
			break;
		}
	tb_check();
}

/* Move execution-log entry i (an engine-made one) out, so tb_check compares the program's. */
static void drop_exec(size_t i)
{
	memmove(&tb.exec[i], &tb.exec[i + 1], (tb.nexec - i - 1) * sizeof(tb.exec[0]));
	tb.nexec--;
}

Test(marks, a_held_event_destroyed_goes_after_its_record_and_the_match_goes_on)
{
	absorbing_steps();
	cr_expect(!gs_engine_event_destroy(100, "destroy"), "nothing holds it: destroyed at its call");
	/* A replayed step whose recorded event the program drops at once (torch's wait_stream). */
	uint64_t r0 = gs_stats.replayed, fl = gs_stats.flushes;
	step_head(6);
	tb_mark(S, 100, 1);
	size_t before = tb.nexec;
	cr_expect(gs_engine_event_destroy(100, "destroy"), "held: destroyed when its record has gone");
	cr_expect_eq(tb.nexec, before, "nothing submitted at the destruction");
	step_rest(6);
	cr_expect_eq(gs_stats.replayed - r0, 6, "the step replayed whole");
	cr_expect_eq(gs_stats.flushes, fl, "no flush");
	size_t rec = mark_ran_at(100, 2), gone = SIZE_MAX;
	for (size_t i = 0; i < tb.nexec; i++)
		if (tb.exec[i].func == TB_EVENT_DESTROYED) {
			cr_expect_eq(gone, SIZE_MAX, "destroyed once");
			gone = i;
			cr_expect_eq(tb.exec[i].a0, 100);
		}
	cr_assert_eq(gone, rec + 1, "destroyed right after its record ran (%zu, %zu)", gone, rec);
	cr_expect(!gs_event_any());
	drop_exec(gone);
	tb_check();
}

/*
 * A covered wait never runs (the graph's order does it): drop from what was
 * issued each wait that did not run at its place on its stream, so that
 * tb_check compares the rest.
 */
static void drop_covered_waits(void)
{
	gs_engine_flush_all(GS_FLUSH_SYNC, "test");
	size_t k = 0;
	for (size_t i = 0; i < tb.nissued; i++) {
		const tb_exec_t *w = &tb.issued[i];
		size_t seen = 0, nth = SIZE_MAX;
		for (size_t j = 0; j < k; j++) /* w's place among its stream's kept records */
			seen += tb.issued[j].stream == w->stream;
		for (size_t j = 0; j < tb.nexec && nth == SIZE_MAX; j++)
			if (tb.exec[j].stream == w->stream && !seen--)
				nth = j;
		bool ran = nth != SIZE_MAX && tb.exec[nth].func == w->func && tb.exec[nth].a0 == w->a0 &&
			   tb.exec[nth].a1 == w->a1;
		if (!ran && w->func == TB_MARK && w->a1 == 2)
			continue;
		tb.issued[k++] = *w;
	}
	tb.nissued = k;
}

/* F0, a record of `ev`, F1, a wait on it (the same stream's), F2 F3; a sync. */
static void same_stream_step(uint64_t arg, uint64_t ev)
{
	tb_launch(S, F[0], 0, arg);
	tb_mark(S, ev, 1);
	tb_launch(S, F[1], 1, arg);
	tb_mark(S, ev, 2);
	tb_launch(S, F[2], 2, 0);
	tb_launch(S, F[3], 3, 0);
	tb_sync(S, 0);
}

Test(marks, a_wait_its_chunk_covers_holds_its_event_no_longer)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	for (int i = 0; i < 6; i++)
		same_stream_step((uint64_t)i, 300);
	cr_expect_gt(gs_stats.replayed, 0);
	/* Its graph did the wait: nothing is held after the sync, so the first
	 * query of the event asks the driver (it is complete), and destroying
	 * it is not deferred. */
	cr_expect(!gs_event_any(), "no hold left behind");
	cr_expect(!gs_engine_event_query(300, "query"));
	cr_expect(!gs_engine_event_destroy(300, "destroy"));
	drop_covered_waits();
	tb_check();
}

Test(marks, a_destroyed_event_held_by_a_record_and_a_wait_goes_after_both)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	for (int i = 0; i < 6; i++)
		same_stream_step((uint64_t)i, 400 + (uint64_t)i);
	/* Replaying: the record of 406 and the wait on it are held; destroyed. */
	tb_launch(S, F[0], 0, 6);
	tb_mark(S, 406, 1);
	tb_launch(S, F[1], 1, 6);
	tb_mark(S, 406, 2);
	cr_expect(gs_engine_event_destroy(406, "destroy"));
	tb_launch(S, F[2], 2, 0);
	tb_launch(S, F[3], 3, 0);
	tb_sync(S, 0);
	size_t gone = SIZE_MAX, rec = mark_ran_at(406, 0);
	for (size_t i = 0; i < tb.nexec; i++)
		if (tb.exec[i].func == TB_EVENT_DESTROYED)
			gone = i;
	cr_assert_neq(gone, SIZE_MAX, "destroyed");
	cr_expect_gt(gone, rec, "after its record");
	cr_expect(!gs_event_any());
	drop_exec(gone);
	drop_covered_waits();
	tb_check();
}

/* Where the n-th run of mark `event` (`which`: 1 a record, 2 a wait) on stream s is in the execution log. */
static size_t mark_on_ran_at(uintptr_t s, uint64_t event, uint64_t which, size_t nth)
{
	for (size_t i = 0; i < tb.nexec; i++)
		if (tb.exec[i].stream == s && tb.exec[i].func == TB_MARK && tb.exec[i].a0 == event &&
		    tb.exec[i].a1 == which && !nth--)
			return i;
	return SIZE_MAX;
}

/*
 * A wait on an event has every stream holding a record of it submit, not
 * only the first found: a stale entry of the waiting stream's own (a wait
 * its graph covered, before that ended its hold) hid the stream really
 * holding the record, and the wait went to the driver naming an older
 * record (GRAPHSHIM_ADOPT with the crossing flag cleared by a stream's own
 * wait: the fuzzer's results changed, seed 49000264).
 */
Test(marks, a_wait_submits_every_stream_that_holds_its_event)
{
	const uintptr_t B = 0x5b, C = 0x5c;
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	/* S and B each replay a step that records event 100 and waits on it. */
	for (int i = 0; i < 6; i++) {
		same_stream_step((uint64_t)i, 100);
		tb_launch(B, F[0], 0, (uint64_t)i);
		tb_mark(B, 100, 1);
		tb_launch(B, F[1], 1, (uint64_t)i);
		tb_mark(B, 100, 2);
		tb_launch(B, F[2], 2, 0);
		tb_launch(B, F[3], 3, 0);
		tb_sync(B, 0);
	}
	/* S holds a record of 100 in a chunk; B's record has S submit, and B
	 * holds its own record in its chunk. */
	tb_launch(S, F[0], 0, 6);
	tb_mark(S, 100, 1);
	tb_launch(S, F[1], 1, 6);
	tb_launch(B, F[0], 0, 6);
	tb_mark(B, 100, 1);
	cr_expect(held(100), "B's record is held with its chunk");
	/* C waits on 100: it names B's record, which must reach the driver first. */
	tb_mark(C, 100, 2);
	size_t rec = mark_on_ran_at(B, 100, 1, 6), wait = mark_on_ran_at(C, 100, 2, 0);
	cr_expect(rec != SIZE_MAX && wait != SIZE_MAX && rec < wait,
		  "B's record (at %zd) ran before C's wait on it (at %zd)", (ssize_t)rec, (ssize_t)wait);
	tb_sync(S, 0);
	tb_sync(B, 0);
	tb_sync(C, 0);
	drop_covered_waits();
	tb_check();
	cr_expect(!gs_event_any());
}

/*
 * An event handle crossed streams once (a copy stream recorded it, S waited
 * on it) and is then used by S alone again, recorded and waited on in a
 * step learned without a cut there: the record is held with its chunk, as
 * learned, and the step replays whole.  The driver hands a destroyed
 * event's handle out again, so torch's wait_stream events and a copy
 * stream's share handles (twotower adopted on an H200: 2,101 launches
 * released a run, 4 without adoption).  Held, the record is still in the
 * table: had another stream waited on it, that wait would have had S
 * submit first.
 */
Test(marks, a_record_the_plan_did_not_cut_is_held_though_its_event_crossed_before)
{
	const uintptr_t C = 0x5c;
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", NULL);
	for (int i = 0; i < 6; i++)
		same_stream_step((uint64_t)i, 500);
	/* The handle crosses: C records it, S waits on it, between two steps. */
	tb_launch(C, F[6], 0, 0);
	tb_mark(C, 500, 1);
	tb_mark(S, 500, 2);
	tb_sync(C, 0);
	tb_sync(S, 0);
	uint64_t r0 = gs_stats.replayed, rel0 = gs_stats.released;
	same_stream_step(6, 500);
	cr_expect_eq(gs_stats.replayed - r0, 4, "the step replays whole: %llu",
		     (unsigned long long)(gs_stats.replayed - r0));
	cr_expect_eq(gs_stats.released - rel0, 0, "nothing released");
	drop_covered_waits();
	tb_check();
	cr_expect(!gs_event_any());
}

/*
 * A held record's query is answered "not ready" without the driver while
 * its holder goes on holding records (an allocator polling once a layer:
 * train-loader adopted flushed its step at the second poll, 26 times a
 * run), and for a few polls back to back; past those, a query with no
 * progress submits first, so a program spinning on it is not kept waiting.
 */
Test(marks, a_held_record_is_not_ready_while_its_holder_goes_on)
{
	absorbing_steps();
	step_head(6);
	tb_mark(S, 100, 1);
	size_t before = tb.nexec;
	cr_expect(gs_engine_event_query(100, "query"), "the first query: not ready");
	tb_launch(S, F[2], 2, 6);
	cr_expect(gs_engine_event_query(100, "query"), "the holder went on: not ready again");
	cr_expect_eq(tb.nexec, before, "nothing submitted");
	cr_expect(held(100));
	/* Polls back to back (GS_NOT_READY_SPINS: four answers without progress). */
	for (int k = 0; k < 3; k++)
		cr_expect(gs_engine_event_query(100, "query"), "poll %d without progress: not ready", k);
	cr_expect_eq(tb.nexec, before, "nothing submitted");
	cr_expect(!gs_engine_event_query(100, "query"), "still no progress: the driver answers");
	cr_expect(!held(100));
	cr_expect_eq(mark_ran_at(100, 2), before + 2, "F0 F1, then the record, ran at that query");
	step_tail(true);
	tb_check();
	uint64_t r0 = gs_stats.replayed;
	step(7, 7, true);
	cr_expect_eq(gs_stats.replayed - r0, 6, "the next step replays whole");
	tb_check();
}

/* Another thread synchronizes event 100 (the watchdog runs: the test's own stream is left alone). */
static void *sync_100(void *arg)
{
	(void)arg;
	gs_engine_event_synced(100, "cuEventSynchronize");
	return NULL;
}

/* Six steps absorbed, the watchdog on, then the next step's head and its record of 100, held. */
static size_t record_held_in_a_replayed_step(void)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", "GRAPHSHIM_IDLE_US", "1000000", NULL);
	for (int i = 0; i < 6; i++)
		step(i, (uint64_t)i, true);
	step_head(6);
	tb_mark(S, 100, 1);
	cr_expect(held(100), "the record is held with the chunk");
	return tb.nexec;
}

Test(marks, another_threads_synchronization_of_a_held_record_submits_it_and_the_match_goes_on)
{
	size_t before = record_held_in_a_replayed_step();
	tb_elsewhere(sync_100, NULL);
	cr_expect_eq(mark_ran_at(100, 2), before + 2, "F0 F1, then the record, ran before the wait");
	cr_expect(!held(100));
	step_rest(6);
	tb_check();
	uint64_t r0 = gs_stats.replayed;
	step(7, 7, true);
	cr_expect_eq(gs_stats.replayed - r0, 6, "the match went on: the next step replays whole");
	tb_check();
}

Test(marks, a_synchronization_of_a_held_record_on_its_own_thread_ends_the_segment)
{
	size_t before = record_held_in_a_replayed_step();
	gs_engine_event_synced(100, "cuEventSynchronize");
	cr_expect_eq(mark_ran_at(100, 2), before + 2, "F0 F1, then the record, ran before the wait");
	cr_expect(!held(100));
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_EVENT], 1, "a boundary of the thread's stream");
	step_rest(6);
	tb_check();
}

/*
 * An event shared with another process (its IPC handle taken) is never
 * held: that process may wait on it where no table of this one sees.  Its
 * record goes at its call, after what precedes it.
 */
Test(marks, a_record_of_an_event_shared_with_another_process_is_not_held)
{
	absorbing_steps();
	gs_engine_event_share(100, "ipc");
	step_head(6);
	size_t before = tb.nexec;
	tb_mark(S, 100, 1);
	cr_expect(!held(100), "not held");
	cr_expect_eq(mark_ran_at(100, 2), before + 2, "F0 F1, then the record, at its call");
	step_rest(6);
	tb_check();
	cr_expect(!gs_event_any());
}

/* The seam's stream that waits on event 600: any stream but S. */
static const gs_stream_t *waiter_600;

static void cross_600(void)
{
	gs_event_waited(600, waiter_600);
	gs_arm_split_seam = NULL;
}

/* F0 F1, a record of 600, F2 F3, a record of 601, F4 F5; a sync. */
static void two_record_step(void)
{
	step_head(0);
	tb_mark(S, 600, 1);
	tb_launch(S, F[2], 2, 0);
	tb_launch(S, F[3], 3, 0);
	tb_mark(S, 601, 1);
	tb_launch(S, F[4], 4, 0);
	tb_launch(S, F[5], 5, 0);
	tb_sync(S, 0);
}

/*
 * Whether a record cuts its chunk depends on what other threads change
 * without the stream's lock: another stream's wait makes its event cross.
 * A plan decides each record once.  Deciding again while it wrote the
 * chunk ends found one more cut than it had made room for, and wrote past
 * the array (a fuzz run, under an oversubscribed CPU: free(): invalid next
 * size).  Here 601 crosses before the step is learned (its record is a
 * chunk of its own) and 600 starts crossing while the plan is split: the
 * plan keeps the cut it decided, two graphs (600's cut comes with the next
 * plan); deciding again made three, writing five chunk ends where three
 * fit.
 */
Test(marks, a_plan_cuts_as_it_decided_when_an_event_starts_crossing_meanwhile)
{
	const uintptr_t C = 0x5c;
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "1", "GRAPHSHIM_CHUNK_FIRST", "64", NULL);
	tb_mark(S, 601, 1);
	tb_mark(C, 601, 2);
	tb_sync(S, 0);
	tb_sync(C, 0);
	waiter_600 = gs_stream_lookup(C, NULL, 0);
	cr_assert(gs_event_crosses(601) && !gs_event_crosses(600));
	two_record_step();
	gs_arm_split_seam = cross_600;
	two_record_step();
	cr_assert_null(gs_arm_split_seam, "the step was learned and its plan split");
	cr_expect(gs_event_crosses(600));
	cr_expect_eq(tb.builds, 2, "two graphs, around 601's record alone: %zu", (size_t)tb.builds);
	uint64_t r0 = gs_stats.replayed;
	two_record_step();
	cr_expect_eq(gs_stats.replayed - r0, 6, "the next step replays its six launches");
	tb_check();
}

/* A pool allocator's step: F0 F1, a free of one of two blocks, F2 F3, a free, F4; a sync. */
static void pool_step(int i)
{
	tb_launch(S, F[0], 0, 0);
	tb_launch(S, F[1], 1, 0);
	tb_mark(S, 0x1000 + (uint64_t)(i % 2) * 0x100, 3);
	tb_launch(S, F[2], 2, 0);
	tb_launch(S, F[3], 3, 0);
	tb_mark(S, 0x2000, 3);
	tb_launch(S, F[4], 4, 0);
	tb_sync(S, 0);
}

Test(marks, a_free_cuts_no_chunk_and_goes_after_its_graph)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_ABSORB", "0", "GRAPHSHIM_CHUNK_FIRST", "64", NULL);
	for (int i = 0; i < 8; i++)
		pool_step(i);
	tb_check(); /* each free ran after every launch issued before it */
	cr_expect_eq(gs_stats.sequences, 1, "sequences %llu", (unsigned long long)gs_stats.sequences);
	/* Learned at the second step; steps 3-8 replay all five launches as one
	 * graph each (the frees' addresses are operands: no mismatch). */
	cr_expect_eq(gs_stats.replayed, 30, "replayed %llu", (unsigned long long)gs_stats.replayed);
	cr_expect_eq(gs_stats.replays, 6, "graph launches %llu", (unsigned long long)gs_stats.replays);
	/* The last step ran its five launches from the graph, then both frees. */
	size_t base = 7 * 7;
	for (size_t k = 0; k < 7; k++) {
		const tb_exec_t *e = &tb.exec[ran_at(base + k)];
		cr_expect_eq(e->func == TB_MARK, k >= 5, "what ran %zu-th", k);
		cr_expect_eq(e->from_graph, k < 5, "what ran %zu-th: from a graph %d", k, e->from_graph);
	}
}

Test(marks, a_free_with_nothing_held_goes_at_its_call)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	tb_launch(S, F[0], 0, 0);
	size_t n = tb.nexec;
	tb_mark(S, 0x1000, 3);
	cr_expect_eq(tb.nexec, n + 1, "a free ran at its call when nothing was held");
	tb_check();
}

Test(marks, held_frees_go_in_order_when_their_step_goes_eagerly)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "64", NULL);
	for (int i = 0; i < 4; i++)
		pool_step(i);
	/* A pass that leaves the step after its second free: everything held
	 * goes eagerly, the frees in their places. */
	tb_launch(S, F[0], 0, 0);
	tb_launch(S, F[1], 1, 0);
	tb_mark(S, 0x1000, 3);
	tb_launch(S, F[2], 2, 0);
	tb_launch(S, F[3], 3, 0);
	tb_mark(S, 0x2000, 3);
	tb_launch(S, F[6], 6, 0);
	tb_sync(S, 0);
	tb_check();
	cr_expect_gt(gs_stats.mismatches, 0);
}
