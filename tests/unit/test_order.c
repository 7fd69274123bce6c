/* The ordering contract as the core sees it: legacy stream, flushes, capture. */
#include "gs_stream.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <unistd.h>

static const uintptr_t F[] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8};
#define LEG ((uintptr_t)0)
#define BLK ((uintptr_t)0xb10c)
#define NBK ((uintptr_t)0x0b1c)

/* Steps of F[0..n) on stream s, each ended by its sync. */
static void steps_on(uintptr_t s, unsigned flags, int n, int steps)
{
	for (int i = 0; i < steps; i++) {
		for (int k = 0; k < n; k++)
			tb_launch_on(s, flags, F[k], k, 0);
		tb_sync(s, flags);
	}
}

/* Arm F[0..4) on stream s and leave a step half held (2 launches). */
static void arm_and_hold(uintptr_t s, unsigned flags)
{
	steps_on(s, flags, 4, 2);
	cr_assert_eq(tb.builds, 1);
	tb_launch_on(s, flags, F[0], 0, 0);
	tb_launch_on(s, flags, F[1], 1, 0);
	cr_assert_eq(gs_stats.held, 2);
}

static size_t find_exec(uintptr_t stream, uintptr_t func, uint64_t a0)
{
	for (size_t i = 0; i < tb.nexec; i++)
		if (tb.exec[i].stream == stream && tb.exec[i].func == func && tb.exec[i].a0 == a0)
			return i;
	cr_assert_fail("no such record ran");
	return 0;
}

Test(order, legacy_launch_submits_held_work_of_blocking_streams_first)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(BLK, GS_STREAM_BLOCKING);
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[7], 77, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_LEGACY], 1);
	size_t held1 = find_exec(BLK, F[1], 1), leg = find_exec(LEG, F[7], 77);
	cr_expect_lt(held1, leg, "the blocking stream's held launch ran before the legacy one");
	tb_check();
}

Test(order, blocking_launch_submits_held_legacy_work_first)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(LEG, GS_STREAM_LEGACY);
	tb_launch_on(BLK, GS_STREAM_BLOCKING, F[7], 77, 0);
	size_t held1 = find_exec(LEG, F[1], 1), blk = find_exec(BLK, F[7], 77);
	cr_expect_lt(held1, blk);
	tb_check();
}

Test(order, non_blocking_streams_are_not_tied_to_legacy)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[7], 77, 0);
	cr_expect_eq(gs_stats.released, 0, "non-blocking held work stays held");
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_LEGACY], 0);
	tb_check();
}

Test(order, a_legacy_sync_flushes_blocking_streams)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(BLK, GS_STREAM_BLOCKING);
	tb_sync(LEG, GS_STREAM_LEGACY);
	cr_expect_eq(gs_stats.released, 2);
	tb_check();
}

Test(order, a_stream_flush_leaves_other_streams_held)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	tb_sync(0x777, 0);
	cr_expect_eq(gs_stats.released, 0);
	tb_check();
}

/*
 * Another thread synchronizes stream 0x777, waits on an event no stream
 * holds, or queries 0x777; the idle watchdog on (a second: it never fires
 * in a test) or off.
 */
static void *sync_0x777_elsewhere(void *arg)
{
	(void)arg;
	gs_engine_flush_synced(0x777, NULL, 0, GS_FLUSH_SYNC, "cuStreamSynchronize");
	return NULL;
}

static void *event_sync_elsewhere(void *arg)
{
	(void)arg;
	gs_engine_event_synced(0x999, "cuEventSynchronize");
	return NULL;
}

static void *query_0x777_elsewhere(void *arg)
{
	(void)arg;
	gs_engine_flush_synced(0x777, NULL, 0, GS_FLUSH_QUERY, "cuStreamQuery");
	return NULL;
}

Test(order, another_threads_waits_leave_this_threads_streams_held)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "1000000", NULL);
	arm_and_hold(NBK, 0);
	tb_elsewhere(sync_0x777_elsewhere, NULL);
	tb_elsewhere(event_sync_elsewhere, NULL);
	tb_elsewhere(query_0x777_elsewhere, NULL);
	cr_expect_eq(gs_stats.released + gs_stats.interrupted, 0,
		     "another thread's synchronizations and query: NBK's work is no part of them");
	tb_launch_on(NBK, 0, F[2], 2, 0);
	tb_launch_on(NBK, 0, F[3], 3, 0);
	gs_engine_flush_synced(NBK, NULL, 0, GS_FLUSH_SYNC, "cuStreamSynchronize");
	cr_expect_eq(gs_stats.replays, 1, "the step replays whole");
	cr_expect_eq(gs_stats.released, 0);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_SYNC], 0, "its own synchronization ends a replayed pass");
	tb_check();
}

Test(order, a_synchronization_ends_its_own_threads_other_segments)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "1000000", NULL);
	arm_and_hold(NBK, 0);
	gs_engine_flush_synced(0x777, NULL, 0, GS_FLUSH_SYNC, "cuStreamSynchronize");
	cr_expect_eq(gs_stats.released, 2, "the thread's side stream ends its segment, as before");
	tb_check();
}

Test(order, a_streams_synchronization_without_the_watchdog_submits_every_stream)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	tb_elsewhere(sync_0x777_elsewhere, NULL);
	find_exec(NBK, F[1], 1); /* a kernel of 0x777 could spin on what NBK held: submitted */
	cr_expect_eq(gs_stats.interrupted, 1, "NBK's match goes on");
	tb_check();
}

Test(order, an_event_synchronization_or_query_ends_its_own_threads_segments)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "1000000", NULL);
	arm_and_hold(NBK, 0);
	gs_engine_event_synced(0x999, "cuEventSynchronize");
	cr_expect_eq(gs_stats.released, 2, "the thread's stream ends its segment, as before");
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_EVENT], 1);
	tb_launch_on(NBK, 0, F[0], 0, 0);
	tb_launch_on(NBK, 0, F[1], 1, 0);
	gs_engine_flush_synced(0x777, NULL, 0, GS_FLUSH_QUERY, "cuStreamQuery");
	cr_expect_eq(gs_stats.released, 4, "a query of another stream: the same");
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_QUERY], 1);
	tb_check();
}

Test(order, an_event_synchronization_without_the_watchdog_submits_every_stream)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	tb_elsewhere(event_sync_elsewhere, NULL);
	find_exec(NBK, F[1], 1); /* the event's work could spin on what NBK held: submitted */
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_EVENT], 1, "every stream, as before");
	tb_check();
}

Test(order, a_legacy_synchronization_submits_held_work_of_blocking_streams)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(BLK, GS_STREAM_BLOCKING);
	gs_engine_flush_synced(LEG, NULL, GS_STREAM_LEGACY, GS_FLUSH_SYNC, "cuStreamSynchronize");
	cr_expect_eq(gs_stats.released, 2, "the legacy stream's: blocking streams first");
	tb_check();
}

Test(order, a_blocking_streams_synchronization_submits_held_legacy_work)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(LEG, GS_STREAM_LEGACY);
	gs_engine_flush_synced(BLK, NULL, GS_STREAM_BLOCKING, GS_FLUSH_SYNC, "cuStreamSynchronize");
	cr_expect_eq(gs_stats.released, 2, "a blocking stream's: the legacy stream's first");
	tb_check();
}

Test(order, a_streams_synchronization_reaches_it_in_any_context)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "1000000", NULL);
	tb.ctx = (void *)0xc1;
	arm_and_hold(NBK, 0);
	gs_engine_flush_synced(NBK, (void *)0xc2, 0, GS_FLUSH_SYNC, "cuStreamSynchronize");
	cr_expect_eq(gs_stats.released, 2, "its work held in the context it was made in goes");
	tb.ctx = NULL;
	tb_check();
}

Test(order, a_legacy_synchronization_ends_the_threads_segment_in_another_context)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_IDLE_US", "1000000", NULL);
	tb.ctx = (void *)0xc1;
	arm_and_hold(LEG, GS_STREAM_LEGACY);
	gs_engine_flush_synced(LEG, (void *)0xc2, GS_STREAM_LEGACY, GS_FLUSH_SYNC, "cuStreamSynchronize");
	cr_expect_eq(gs_stats.released, 2, "the thread's other stream, as any of its streams");
	tb.ctx = NULL;
	tb_check();
}

Test(order, flush_all_submits_every_stream)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	gs_engine_flush_all(GS_FLUSH_EVENT, "cuEventSynchronize");
	cr_expect_eq(gs_stats.released, 2);
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_EVENT], 1);
	tb_check();
}

Test(order, stream_destroy_submits_and_forgets)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	gs_engine_stream_destroy(NBK, NULL, "cuStreamDestroy");
	cr_expect_eq(gs_stats.released, 2);
	cr_expect_eq(tb.live_graphs, 0);
	/* A new stream with the same handle starts from nothing. */
	for (int k = 0; k < 4; k++)
		tb_launch_on(NBK, 0, F[k], k, 0);
	cr_expect_eq(gs_stats.held, 2);
	tb_check();
}

Test(order, passthru_streams_never_hold)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	for (int i = 0; i < 10; i++) {
		for (int k = 0; k < 4; k++)
			tb_launch_on(0x2, GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING, F[k], k, 0);
		tb_sync(0x2, GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING);
	}
	cr_expect_eq(tb.builds, 0);
	cr_expect_eq(gs_stats.held, 0);
	cr_expect_eq(gs_stats.unkept, 40, "every launch counted as on a stream not kept");
	tb_launch(NBK, F[0], 0, 0);
	cr_expect_eq(gs_stats.unkept, 40, "a kept stream's launch is not");
	tb_check();
}

Test(order, passthru_blocking_launch_flushes_legacy)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(LEG, GS_STREAM_LEGACY);
	tb_launch_on(0x2, GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING, F[7], 77, 0);
	cr_expect_lt(find_exec(LEG, F[1], 1), find_exec(0x2, F[7], 77));
	tb_check();
}

static int race_go; /* 1: the launch may go */

/* The stream's state found once (cached for this thread), then, when told, F0 on it. */
static void *launch_f0_on_nbk(void *arg)
{
	(void)arg;
	(void)gs_stream_get(NBK, tb.ctx, 0); /* (main asserts it found the state) */
	__atomic_store_n(&race_go, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&race_go, __ATOMIC_ACQUIRE) != 2)
		usleep(100);
	tb_launch_on(NBK, 0, F[0], 0, 0);
	return NULL;
}

static void *begin_capture(void *arg)
{
	(void)arg;
	gs_engine_capture_begin("cuStreamBeginCapture", NULL);
	return NULL;
}

/*
 * A launch that read "not capturing" and waits for its stream's lock while
 * another thread begins a capture: whichever takes the lock first, nothing
 * is held once both calls have returned.  (Before, the launch could take
 * the lock after the capture's flush had passed the stream and stay held
 * through the capture, behind later work on its stream.)
 */
Test(order, a_launch_racing_a_captures_beginning_is_not_held_through_it)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	steps_on(NBK, 0, 4, 2); /* armed, nothing held: F0 would begin a match */
	cr_assert_eq(tb.builds, 1);
	gs_stream_t *s = gs_stream_get(NBK, tb.ctx, 0);
	cr_assert(s);
	pthread_t a, c;
	race_go = 0;
	cr_assert_eq(pthread_create(&a, NULL, launch_f0_on_nbk, NULL), 0);
	while (!__atomic_load_n(&race_go, __ATOMIC_ACQUIRE))
		usleep(100);
	pthread_mutex_lock(&s->lock);
	cr_assert_eq(pthread_create(&c, NULL, begin_capture, NULL), 0);
	usleep(20000); /* the capture's flush waits for the stream's lock */
	__atomic_store_n(&race_go, 2, __ATOMIC_RELEASE);
	usleep(20000); /* the launch too, having read "not capturing" */
	pthread_mutex_unlock(&s->lock);
	pthread_join(a, NULL);
	pthread_join(c, NULL);
	cr_expect_eq(__atomic_load_n(&s->match.nheld, __ATOMIC_ACQUIRE), 0,
		     "nothing held while the capture lasts");
	find_exec(NBK, F[0], 0);
	gs_engine_capture_end("cuStreamEndCapture");
	tb_check();
}

Test(order, capture_flushes_and_suspends_everything)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	gs_engine_capture_begin("cuStreamBeginCapture", NULL);
	cr_expect_eq(gs_stats.released, 2, "held work is submitted before a capture begins");
	uint64_t held = gs_stats.held;
	for (int i = 0; i < 3; i++) {
		for (int k = 0; k < 4; k++)
			tb_launch_on(NBK, 0, F[k], k, 0);
		tb_sync(NBK, 0);
	}
	cr_expect_eq(gs_stats.held, held, "nothing is held during a capture");
	cr_expect_eq(gs_stats.replays, 0);
	gs_engine_capture_end("cuStreamEndCapture");
	for (int k = 0; k < 4; k++)
		tb_launch_on(NBK, 0, F[k], k, 0);
	cr_expect_eq(gs_stats.replays, 1, "after the capture the sequence replays again");
	tb_check();
}

Test(order, fini_submits_held_work)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	gs_engine_fini();
	cr_expect_eq(tb.nexec, 8 + 2);
	cr_expect_eq(tb.live_graphs, 0, "graphs are released at teardown");
}

Test(order, forget_funcs_drops_every_sequence)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(NBK, 0);
	gs_engine_forget_funcs("cuModuleUnload");
	cr_expect_eq(gs_stats.released, 2, "held work is submitted first");
	cr_expect_eq(tb.live_graphs, 0);
	gs_seq_info_t info[4];
	cr_expect_eq(gs_engine_seq_info(info, 4), 0);
	/* A function handle reused after the unload must not match old graphs. */
	for (int k = 0; k < 4; k++)
		tb_launch_on(NBK, 0, F[k], k, 0);
	cr_expect_eq(gs_stats.held, 2);
	tb_check();
}

Test(order, a_second_backend_passes_through)
{
	tb_start(NULL);
	gs_ops_t other = tb_ops;
	other.name = "other";
	cr_expect(gs_engine_init(&other), "a second backend is refused");
	cr_expect_not(gs_engine_init(&tb_ops), "the owner is still accepted");
}

static void *legacy_launch_elsewhere(void *arg)
{
	(void)arg;
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[7], 77, 0);
	return NULL;
}

/*
 * Another thread's legacy launch lands in the middle of a blocking
 * stream's step (two threads, one reading back on the legacy stream while
 * the other decodes): the two held launches go first, eagerly, and the
 * match goes on: the rest of their chunk goes eagerly too, the next chunk
 * replays, and the step's segment is not cut (no sequence is learned from
 * its pieces, the next step replays whole).
 */
Test(order, another_threads_legacy_launch_does_not_end_the_match)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "4", NULL);
	steps_on(BLK, GS_STREAM_BLOCKING, 8, 2);
	cr_assert_geq(tb.builds, 1);
	tb_launch_on(BLK, GS_STREAM_BLOCKING, F[0], 0, 0);
	tb_launch_on(BLK, GS_STREAM_BLOCKING, F[1], 1, 0);
	tb_elsewhere(legacy_launch_elsewhere, NULL);
	size_t held1 = find_exec(BLK, F[1], 1), leg = find_exec(LEG, F[7], 77);
	cr_expect_lt(held1, leg, "the held launches ran before the legacy one");
	cr_expect_eq(gs_stats.interrupted, 1);
	for (int k = 2; k < 8; k++)
		tb_launch_on(BLK, GS_STREAM_BLOCKING, F[k], k, 0);
	tb_sync(BLK, GS_STREAM_BLOCKING);
	cr_expect_eq(gs_stats.mismatches, 0);
	cr_expect_eq(gs_stats.replays, 1, "the second chunk replayed");
	cr_expect_eq(gs_stats.released, 4, "the first chunk went eagerly");
	cr_expect(tb.exec[tb.nexec - 1].from_graph);
	cr_expect_not(tb.exec[tb.nexec - 5].from_graph);
	cr_expect_eq(gs_stats.sequences, 1, "nothing learned from the pieces");
	steps_on(BLK, GS_STREAM_BLOCKING, 8, 1);
	cr_expect_eq(gs_stats.replays, 3, "the next step replays whole");
	tb_check();
}

/* The stream's own thread on the legacy stream ends the match, as before. */
Test(order, its_own_threads_legacy_launch_ends_the_match)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL);
	arm_and_hold(BLK, GS_STREAM_BLOCKING);
	tb_launch_on(LEG, GS_STREAM_LEGACY, F[7], 77, 0);
	cr_expect_eq(gs_stats.interrupted, 0);
	cr_expect_eq(gs_stats.released, 2);
	tb_check();
}
