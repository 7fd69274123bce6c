/* GRAPHSHIM_SELFTIME (gs_self.h): launch calls over 16 us of graphshim's own
 * time are counted, with what they did. */
#include "gs_self.h"
#include "gs_stats.h"
#include "gs_stream.h"
#include "gs_testbe.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>

static void spin_ns(uint64_t ns)
{
	uint64_t t0 = gs_clock_ns();
	while (gs_clock_ns() - t0 < ns)
		;
}

/* One launch call of `own` ns of graphshim's own work, `drv` ns of which
 * inside a timed driver call of kind `kind` (0: none), having done `did`. */
static void call(uint64_t own, uint64_t drv, unsigned kind, unsigned did)
{
	gs_self_call_t c;
	gs_self_call_begin(&c);
	gs_self_did(did);
	spin_ns(own);
	if (kind) {
		uint64_t t = gs_self_drv_begin();
		spin_ns(drv);
		gs_self_drv_end(t, kind);
	}
	gs_self_call_end(&c);
}

Test(self, slow_calls_are_counted_with_what_they_did)
{
	tb_start("GRAPHSHIM_SELFTIME", "1", NULL);
	call(1000, 0, 0, 0);                                     /* quick: not slow */
	call(40000, 0, 0, GS_SELF_DID_ARM | GS_SELF_DID_LAYOUT);  /* slow, armed, read a layout */
	call(40000, 0, GS_SELF_SUBMIT, 0);                       /* slow, eager, nothing else */
	call(1000, 60000, GS_SELF_SUBMIT, GS_SELF_DID_RELEASE);  /* the driver's time is not its own */
	cr_expect_eq(gs_stats.host_slow_calls, 2, "slow %llu", (unsigned long long)gs_stats.host_slow_calls);
	cr_expect_geq(gs_stats.host_slow_own_ns, 80000);
	cr_expect_eq(gs_stats.host_slow_arm, 1);
	cr_expect_eq(gs_stats.host_slow_layout, 1);
	cr_expect_eq(gs_stats.host_slow_eager, 1);
	cr_expect_eq(gs_stats.host_slow_plain, 1, "the eager call that did nothing else");
	cr_expect_eq(gs_stats.host_slow_release, 0);
	cr_expect_eq(gs_stats.host_eager_calls, 2);
	cr_expect_eq(gs_stats.host_held_calls, 2);
}

Test(self, nothing_is_counted_without_the_setting)
{
	tb_start("GRAPHSHIM_SELFTIME", "0", NULL);
	call(40000, 0, 0, GS_SELF_DID_ARM);
	cr_expect_eq(gs_stats.host_slow_calls, 0);
	cr_expect_eq(gs_stats.host_held_calls, 0);
}

/* A nested call (a hook's own hook) is part of the outer one: one call. */
Test(self, a_nested_call_is_the_outer_ones)
{
	tb_start("GRAPHSHIM_SELFTIME", "1", NULL);
	gs_self_call_t c;
	gs_self_call_begin(&c);
	call(20000, 0, 0, GS_SELF_DID_GATE);
	gs_self_call_end(&c);
	cr_expect_eq(gs_stats.host_slow_calls, 1);
	cr_expect_eq(gs_stats.host_slow_gate, 1);
	cr_expect_eq(gs_stats.host_held_calls, 1);
}

/* Timed for the gate alone (gs_self_want): own time accrues, no counters;
 * a call nested in a timed one is part of it even when the count ran out
 * at the outer call (it must not end the outer call's timing). */
Test(self, calls_timed_for_the_gate_alone)
{
	tb_start("GRAPHSHIM_SELFTIME", "0", NULL);
	uint64_t own0 = gs_self_tl.own_ns;
	gs_self_want(1);
	gs_self_call_t outer;
	gs_self_call_begin(&outer);
	cr_expect_eq(gs_self_tl.want, 0);
	call(1000, 0, 0, 0); /* nested, the count spent */
	spin_ns(30000);
	gs_self_call_end(&outer);
	cr_expect_eq(gs_self_tl.depth, 0);
	cr_expect_geq(gs_self_tl.own_ns - own0, 30000, "the outer call's time after the nested one counts");
	cr_expect_eq(gs_stats.host_held_calls + gs_stats.host_slow_calls, 0, "no GRAPHSHIM_SELFTIME counters");
	uint64_t own1 = gs_self_tl.own_ns;
	call(30000, 0, 0, 0); /* the count spent: untimed */
	cr_expect_eq(gs_self_tl.own_ns, own1);
}

/* One launch on (stream, flags) timed as a launch call: what it did. */
static unsigned timed_launch(uintptr_t stream, unsigned sflags, uintptr_t func, uint64_t a0)
{
	gs_self_call_t c;
	gs_self_call_begin(&c);
	tb_launch_on(stream, sflags, func, a0, 0);
	unsigned k = gs_self_tl.kinds;
	gs_self_call_end(&c);
	return k;
}

/* "Peers flushed" is a call that flushed another stream tied to its own (the
 * legacy stream and a blocking one), not every launch on the legacy stream
 * while something is held: PyTorch's default stream holding its own step
 * made nearly every slow call count so (vi-bnn on an H200). */
Test(self, peers_are_counted_only_where_another_stream_was_flushed)
{
	tb_start("GRAPHSHIM_SELFTIME", "1", "GRAPHSHIM_PERIOD", "0", NULL);
	const uintptr_t LEG = 0, BLK = 0x7100;
	for (int i = 0; i < 3; i++) {
		for (int k = 0; k < 4; k++)
			tb_launch_on(LEG, GS_STREAM_LEGACY, 0x9100 + k, k, 0);
		tb_sync(LEG, GS_STREAM_LEGACY);
	}
	tb_launch_on(LEG, GS_STREAM_LEGACY, 0x9100, 0, 0);
	cr_assert_gt(gs_stats.held, 0, "the legacy stream holds its step");
	unsigned k = timed_launch(LEG, GS_STREAM_LEGACY, 0x9101, 1);
	cr_expect_eq(k & GS_SELF_DID_PEERS, 0, "only its own stream held");
	k = timed_launch(BLK, GS_STREAM_BLOCKING, 0x9200, 7);
	cr_expect_neq(k & GS_SELF_DID_PEERS, 0, "the legacy stream's held launches went first");
	cr_expect_eq(gs_stats.flush_by[GS_FLUSH_LEGACY], 1);
	tb_check();
}

/* A launch whose match ends on a mismatch says so (a step of 4 learned, a
 * fifth sighting that diverges at its third launch). */
Test(self, a_mismatch_is_what_the_call_did)
{
	tb_start("GRAPHSHIM_SELFTIME", "1", "GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_GATE", "replay", NULL);
	const uintptr_t S = 0x7200;
	const uintptr_t F[4] = { 0x9300, 0x9301, 0x9302, 0x9303 };
	for (int i = 0; i < 4; i++) {
		tb_step(S, F, 4, 0);
		tb_sync(S, 0);
	}
	cr_assert_gt(gs_stats.replays, 0, "the step replays");
	tb_launch(S, F[0], 1000, 0);
	tb_launch(S, F[1], 1001, 0);
	unsigned k = timed_launch(S, 0, 0x9399, 1002); /* not the step's third launch */
	cr_expect_neq(k & GS_SELF_DID_MISMATCH, 0);
	cr_expect_eq(gs_stats.mismatches, 1);
	tb_sync(S, 0);
	tb_check();
}

/* Another thread holding the stream's lock: the launch that waited for it
 * says so (the watchdog, the builder's hand-off, a second thread). */
static pthread_mutex_t *held_lock;
static int lock_taken;
static void *hold_a_while(void *arg)
{
	(void)arg;
	pthread_mutex_lock(held_lock);
	__atomic_store_n(&lock_taken, 1, __ATOMIC_RELEASE);
	spin_ns(200000000); /* the launch below comes well before this ends */
	pthread_mutex_unlock(held_lock);
	return NULL;
}

Test(self, a_lock_another_thread_holds_is_what_the_call_did)
{
	tb_start("GRAPHSHIM_SELFTIME", "1", NULL);
	const uintptr_t S = 0x7300;
	tb_launch(S, 0x9400, 0, 0); /* the stream's state exists */
	gs_stream_table_lock();
	gs_stream_t *s = gs_stream_first();
	while (s && s->key.handle != S)
		s = s->hh.next;
	gs_stream_table_unlock();
	cr_assert_not_null(s);
	held_lock = &s->lock;
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, hold_a_while, NULL), 0);
	while (!__atomic_load_n(&lock_taken, __ATOMIC_ACQUIRE))
		sched_yield(); /* the other thread has it */
	unsigned k = timed_launch(S, 0, 0x9400, 1);
	pthread_join(t, NULL);
	cr_expect_neq(k & GS_SELF_DID_LOCK, 0);
	k = timed_launch(S, 0, 0x9400, 2);
	cr_expect_eq(k & GS_SELF_DID_LOCK, 0, "a free lock is no wait");
	tb_check();
}
