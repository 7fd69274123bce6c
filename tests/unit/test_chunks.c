/* Chunked replay: the GPU starts on the first chunk while the rest arrives. */
#include "gs_testbe.h"

#include <criterion/criterion.h>

#define S1 ((uintptr_t)0x5001)

static void step(int n, int diverge_at, int drift_at)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, i == diverge_at ? 0xdead : 0x100 + (uintptr_t)i, i, i == drift_at ? 5 : 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

/* Launches [from, to) of the step, no sync. */
static void launches(int from, int to)
{
	for (int i = from; i < to; i++)
		tb_launch(S1, 0x100 + (uintptr_t)i, i, 0);
}

/* Launches [0, to) of a replayed pass; how many of them the GPU ran by then. */
static size_t ran_by(int to)
{
	size_t before = tb.nexec;
	launches(0, to);
	return tb.nexec - before;
}

static void learn100(void)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_MAX", "32", NULL);
	step(100, -1, -1);
	step(100, -1, -1);
	/* 8, 16, 32, 32 and a tail of 12 (< 16) merged into the last: 4 graphs. */
	cr_assert_eq(tb.builds, 4);
}

Test(chunks, the_first_chunk_runs_before_the_step_is_complete)
{
	learn100();
	size_t before = tb.nexec;
	launches(0, 8);
	cr_expect_eq(tb.nexec, before + 8, "chunk 0 was launched at its 8th launch");
	cr_expect(tb.exec[before].from_graph);
	launches(8, 100);
	cr_expect_eq(gs_stats.replays, 4);
	cr_expect_eq(gs_stats.replayed, 100);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	tb_check();
}

/*
 * A step of n launches learned as a slow host's (GRAPHSHIM_HOST_BOUND_US 0:
 * any host), its chunks from the front growing by `growth`, those from the
 * back halving down to `last`.
 */
static void learn_slow(const char *first, const char *last, const char *growth, int n)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", first, "GRAPHSHIM_CHUNK_MAX", "64",
		 "GRAPHSHIM_CHUNK_LAST", last, "GRAPHSHIM_HOST_BOUND_US", "0", "GRAPHSHIM_CHUNK_GROWTH",
		 growth, NULL);
	step(n, -1, -1);
	step(n, -1, -1);
}

/* The rest of a pass of n launches from launch `from`: every launch replayed. */
static void finish_pass(int from, int n)
{
	launches(from, n);
	cr_expect_eq(gs_stats.replayed, (uint64_t)n);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	tb_check();
}

/*
 * GRAPHSHIM_CHUNK_GROWTH, where the host is slow: each chunk from the front
 * 1.5 times the one before, so the GPU does not wait for the host to issue
 * a chunk twice as long as the one it ran.  100 launches: 8, 12, 24 (the
 * last front piece, 6, joined) from the front, 32, 16, 8 from the back;
 * doubling, the second chunk would end at 24.
 */
Test(chunks, the_growth_of_front_chunks_is_configurable)
{
	learn_slow("8", "8", "1.5", 100);
	cr_assert_eq(tb.builds, 6);
	size_t before = tb.nexec;
	launches(0, 19);
	cr_expect_eq(tb.nexec, before + 8, "only the first chunk (8) has gone");
	launches(19, 20);
	cr_expect_eq(tb.nexec, before + 20, "the second (12) went at its last launch");
	cr_expect_eq(gs_stats.replays, 2);
	finish_pass(20, 100);
	cr_expect_eq(gs_stats.replays, 6);
}

/* A growth of 1: every front chunk the first's size (8, 8, 8 from the front). */
Test(chunks, a_growth_of_one_keeps_every_front_chunk_the_first_size)
{
	learn_slow("8", "8", "1", 64);
	size_t before = tb.nexec;
	launches(0, 16);
	cr_expect_eq(tb.nexec, before + 16, "two chunks of 8");
	launches(16, 24);
	cr_expect_eq(tb.nexec, before + 24, "and a third");
	finish_pass(24, 64);
}

/* Growth 1.5 from a first chunk of 1 still grows (1, 2, 3, 4 from the front,
 * 8, 4, 2, 1 from the back for 25 launches), where 1.5 times 1 rounded down
 * would have kept every front chunk 1 launch long (4 of 6 gone at the 6th). */
Test(chunks, a_first_chunk_of_one_still_grows)
{
	learn_slow("1", "1", "1.5", 25);
	cr_expect_eq(tb.builds, 8);
	size_t before = tb.nexec;
	launches(0, 6);
	cr_expect_eq(tb.nexec, before + 6, "chunks of 1, 2 and 3 gone");
	finish_pass(6, 25);
}

/* Where the host is fast, chunks double whatever the setting (the C
 * workloads: nothing for the GPU to wait for, and fewer graph launches). */
Test(chunks, a_fast_host_doubles_whatever_the_growth)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_MAX", "32",
		 "GRAPHSHIM_HOST_BOUND_US", "1000000", "GRAPHSHIM_CHUNK_GROWTH", "1.5", NULL);
	step(100, -1, -1);
	step(100, -1, -1);
	cr_expect_eq(tb.builds, 4, "8, 16, 32, 44 as with the default");
	tb_check();
}

Test(chunks, divergence_after_launched_chunks_keeps_order)
{
	learn100();
	step(100, 60, -1);
	cr_expect_eq(gs_stats.replayed, 56, "chunks ending at 8, 24 and 56 ran from graphs");
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_STRUCTURE], 1);
	tb_check();
}

Test(chunks, a_flush_inside_a_later_chunk)
{
	learn100();
	launches(0, 30);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	cr_expect_eq(gs_stats.replayed, 24);
	cr_expect_eq(gs_stats.released, 6);
	cr_expect_eq(gs_stats.mismatch_by[GS_MISMATCH_CUT], 1);
	tb_check();
}

Test(chunks, drift_is_patched_in_the_right_chunk)
{
	learn100();
	step(100, -1, 70);
	cr_expect_eq(gs_stats.patches, 1);
	cr_expect_eq(gs_stats.replayed, 100);
	tb_check();
}

Test(chunks, a_clean_pass_resets_after_chunked_mismatches)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "4", "GRAPHSHIM_CHUNK_MAX", "4",
		 "GRAPHSHIM_MISMATCH_LIMIT", "2", NULL);
	step(16, -1, -1);
	step(16, -1, -1);
	/* Each divergence at another place, so no diverging step repeats and
	 * becomes a sequence of its own. */
	step(16, 10, -1); /* mismatch 1 */
	step(16, -1, -1); /* clean: reset */
	step(16, 13, -1); /* mismatch 1 again */
	cr_expect_eq(gs_stats.retirements, 0, "mismatches %llu replays %llu", (unsigned long long)gs_stats.mismatches, (unsigned long long)gs_stats.replays);
	step(16, 14, -1); /* mismatch 2: retired */
	cr_expect_eq(gs_stats.retirements, 1);
	tb_check();
}

Test(chunks, one_chunk_when_the_first_covers_it)
{
	tb_start("GRAPHSHIM_PERIOD", "0", NULL); /* first chunk 32 */
	step(20, -1, -1);
	step(20, -1, -1);
	cr_expect_eq(tb.builds, 1);
	step(20, -1, -1);
	cr_expect_eq(gs_stats.replays, 1);
	tb_check();
}

Test(chunks, a_slow_host_gets_small_chunks_at_the_end)
{
	/* Host time per launch above the threshold (0 here): chunks double from
	 * the front and halve towards the end, so little GPU work is left after
	 * the last launch arrives. 100 launches: 8 16 32 16 | 16 8 4. */
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_LAST", "4",
		 "GRAPHSHIM_CHUNK_MAX", "64", "GRAPHSHIM_HOST_BOUND_US", "0", NULL);
	step(100, -1, -1);
	step(100, -1, -1);
	cr_assert_eq(tb.builds, 7);
	cr_expect_eq(ran_by(96), 96, "every chunk before the last 4 launches already ran");
	launches(96, 100);
	cr_expect_eq(gs_stats.replays, 7);
	cr_expect_eq(gs_stats.replayed, 100);
	tb_check();
}

/*
 * GRAPHSHIM_CHUNK_SHORT: a slow host's 32-launch step (the first chunk's
 * size) is 24 and 8 launches, so the GPU runs the 24 while the host issues
 * the rest; without it, one chunk launched with the step's last launch.
 */
static void short_step(const char *on, int n)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_HOST_BOUND_US", "0", "GRAPHSHIM_CHUNK_SHORT", on,
		 NULL); /* first chunk 32, last 8 */
	step(n, -1, -1);
	step(n, -1, -1);
}

Test(chunks, a_slow_hosts_short_step_ends_in_a_last_chunk)
{
	short_step("1", 32);
	cr_assert_eq(tb.builds, 2);
	cr_expect_eq(ran_by(24), 24, "the first 24 launches ran before the last 8 arrived");
	finish_pass(24, 32);
	cr_expect_eq(gs_stats.replays, 2);
}

Test(chunks, without_the_setting_a_short_step_is_one_chunk)
{
	short_step("0", 32);
	cr_assert_eq(tb.builds, 1);
	cr_expect_eq(ran_by(31), 0, "nothing ran before the step's last launch");
	finish_pass(31, 32);
	cr_expect_eq(gs_stats.replays, 1);
}

/* Shorter than twice the last chunk (15 < 16): still one chunk. */
Test(chunks, a_step_under_twice_the_last_chunk_stays_whole)
{
	short_step("1", 15);
	cr_expect_eq(tb.builds, 1);
	finish_pass(0, 15);
}

/* A fast host's short step is one chunk whatever the setting. */
Test(chunks, a_fast_hosts_short_step_stays_whole)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_HOST_BOUND_US", "1000000", "GRAPHSHIM_CHUNK_SHORT",
		 "1", NULL);
	step(32, -1, -1);
	step(32, -1, -1);
	cr_expect_eq(tb.builds, 1);
	finish_pass(0, 32);
}

Test(chunks, a_fast_host_keeps_large_chunks)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_LAST", "4",
		 "GRAPHSHIM_CHUNK_MAX", "64", "GRAPHSHIM_HOST_BOUND_US", "1000000", NULL);
	step(100, -1, -1);
	step(100, -1, -1);
	cr_expect_eq(tb.builds, 4, "8 16 32 44");
	step(100, -1, -1);
	cr_expect_eq(gs_stats.replays, 4);
	tb_check();
}

/*
 * Steps that begin alike (a decoder's tokens that differ near their end):
 * while both still match, the chunks they share, cut at the same places,
 * run as they complete; the one left goes on from there.
 */
static void alike_on(int n, int differ_at, uintptr_t f, uint64_t a1)
{
	for (int i = 0; i < n; i++)
		tb_launch(S1, i == differ_at ? f : 0x100 + (uintptr_t)i, i, a1);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
}

static void alike(int n, int differ_at, uintptr_t f)
{
	alike_on(n, differ_at, f, 0);
}

/* Two 100-launch steps, A and B, that differ at launch 90: both armed. */
static void learn_alike(const char *share)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_MAX", "32",
		 "GRAPHSHIM_SHARE", share, NULL);
	for (int k = 0; k < 2; k++)
		alike(100, 90, 0xa);
	for (int k = 0; k < 2; k++)
		alike(100, 90, 0xb);
	cr_assert_eq(tb.builds, 8, "chunks ending at 8, 24, 56 and 100, for each");
}

Test(chunks, steps_that_begin_alike_run_their_shared_chunks_at_once)
{
	learn_alike("1");
	uint64_t replayed = gs_stats.replayed;
	size_t before = tb.nexec;
	launches(0, 8);
	cr_expect_eq(tb.nexec, before + 8, "chunk 0 ran at its 8th launch, both steps still candidates");
	cr_expect(tb.exec[before].from_graph);
	launches(8, 89);
	cr_expect_eq(tb.nexec, before + 56, "the three chunks both steps share ran");
	cr_expect_eq(gs_stats.shared_chunks, 3);
	for (int i = 89; i < 100; i++)
		tb_launch(S1, i == 90 ? 0xb : 0x100 + (uintptr_t)i, i, 0);
	cr_expect_eq(tb.nexec, before + 100, "step B's last chunk ran from its graph");
	cr_expect_eq(gs_stats.replayed - replayed, 100);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	tb_check();
}

Test(chunks, without_sharing_steps_that_begin_alike_hold_until_they_differ)
{
	learn_alike("0");
	size_t before = tb.nexec;
	launches(0, 90);
	cr_expect_eq(tb.nexec, before, "held while both are candidates");
	cr_expect_eq(gs_stats.shared_chunks, 0);
	alike(0, -1, 0); /* the sync: 90 launches released */
	tb_check();
}

Test(chunks, a_step_unlike_both_after_shared_chunks_keeps_order)
{
	learn_alike("1");
	uint64_t released = gs_stats.released, replayed = gs_stats.replayed;
	alike(100, 70, 0xc); /* unlike both at 70, inside their fourth chunk */
	cr_expect_eq(gs_stats.replayed - replayed, 56);
	cr_expect_eq(gs_stats.released - released, 14, "launches 56-69 held, then released in order");
	tb_check();
}

/*
 * Another thread synchronizes right after the chunks two alike steps share
 * went: nothing is held unsubmitted, so the match goes on with both
 * candidates, and step B's own chunks replay once it differs.  Until the
 * forty-seventh session the match ended there (only a match of one
 * sequence could be interrupted), and launches 24-99 went eagerly.
 */
Test(chunks, another_threads_sync_after_shared_chunks_leaves_both_candidates)
{
	learn_alike("1");
	uint64_t replayed = gs_stats.replayed, released = gs_stats.released;
	uint64_t mismatches = gs_stats.mismatches;
	size_t before = tb.nexec;
	launches(0, 24);
	cr_assert_eq(tb.nexec, before + 24, "the two shared chunks went");
	tb_flush_all_elsewhere(GS_FLUSH_SYNC);
	cr_expect_eq(tb.nexec, before + 24, "nothing else to send");
	for (int i = 24; i < 100; i++)
		tb_launch(S1, i == 90 ? 0xb : 0x100 + (uintptr_t)i, i, 0);
	gs_engine_flush_stream(S1, NULL, 0, GS_FLUSH_SYNC, "sync");
	cr_expect_eq(gs_stats.replayed - replayed, 100, "the whole step from graphs");
	cr_expect_eq(gs_stats.released - released, 0);
	cr_expect_eq(gs_stats.interrupted, 0);
	cr_expect_eq(gs_stats.mismatches, mismatches);
	tb_check();
}

Test(chunks, steps_cut_at_other_places_share_only_the_chunks_cut_alike)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_MAX", "32", NULL);
	for (int k = 0; k < 2; k++)
		alike(100, -1, 0);
	for (int k = 0; k < 2; k++)
		alike(60, 50, 0xb); /* chunks end at 8, 24 and 60 */
	uint64_t replayed = gs_stats.replayed;
	alike(100, -1, 0);
	cr_expect_eq(gs_stats.shared_chunks, 2, "the chunks ending at 8 and 24; not 56 (60 in the other)");
	cr_expect_eq(gs_stats.replayed - replayed, 100);
	alike(60, 50, 0xb);
	cr_expect_eq(gs_stats.shared_chunks, 4);
	tb_check();
}

Test(chunks, a_step_sent_eager_shares_nothing)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_MAX", "32",
		 "GRAPHSHIM_GATE", "eager", NULL);
	for (int k = 0; k < 2; k++)
		alike(100, 90, 0xa);
	for (int k = 0; k < 2; k++)
		alike(100, 90, 0xb);
	alike(100, 90, 0xa);
	cr_expect_eq(gs_stats.shared_chunks, 0);
	cr_expect_eq(gs_stats.replays, 0);
	tb_check();
}

/*
 * hf-llama's shape: a short step (the first launches of a generate() call,
 * where the program pauses) that is also how the long steps begin.  The
 * short one, complete, shares its chunk; past its end it no longer holds
 * the others back.
 */
Test(chunks, a_shorter_step_at_the_start_of_alike_steps_shares_its_chunk)
{
	learn_alike("1");
	for (int k = 0; k < 2; k++)
		alike(8, -1, 0);
	cr_assert_eq(tb.builds, 9);
	uint64_t replayed = gs_stats.replayed, shared = gs_stats.shared_chunks, released = gs_stats.released;
	size_t before = tb.nexec;
	launches(0, 8);
	cr_expect_eq(tb.nexec, before + 8, "its chunk went at its last launch, three steps candidates");
	alike(0, -1, 0); /* the sync: the short step was the one */
	cr_expect_eq(gs_stats.replayed - replayed, 8);
	alike(100, 90, 0xa);
	cr_expect_eq(gs_stats.shared_chunks - shared, 4, "8 for the short step, then 8, 24 and 56");
	cr_expect_eq(gs_stats.replayed - replayed, 108);
	cr_expect_eq(gs_stats.released, released, "nothing went eagerly");
	tb_check();
}

/*
 * Alike steps that alternate with other operands (a parity's buffers): a
 * shared chunk goes with the graph that needs no patch, whichever
 * candidate's it is.
 */
Test(chunks, a_shared_chunk_goes_with_the_graph_that_needs_no_patch)
{
	tb_start("GRAPHSHIM_PERIOD", "0", "GRAPHSHIM_CHUNK_FIRST", "8", "GRAPHSHIM_CHUNK_MAX", "32",
		 "GRAPHSHIM_VARIANTS", "1", NULL);
	for (int k = 0; k < 2; k++)
		alike_on(100, 90, 0xa, 1);
	for (int k = 0; k < 2; k++)
		alike_on(100, 90, 0xb, 2);
	/* B's second sighting matched A's armed step and patched its chunks
	 * to B's operands: one pass of A bakes them back. */
	alike_on(100, 90, 0xa, 1);
	uint64_t patches = gs_stats.patches, replayed = gs_stats.replayed, shared = gs_stats.shared_chunks;
	/* Not strictly in turn: the step used last is not always the other one. */
	static const int order[] = {1, 0, 0, 1, 1, 0, 1, 0, 0, 0};
	for (int k = 0; k < 10; k++)
		alike_on(100, 90, order[k] ? 0xb : 0xa, order[k] ? 2 : 1);
	cr_expect_eq(gs_stats.shared_chunks - shared, 30);
	cr_expect_eq(gs_stats.replayed - replayed, 1000);
	cr_expect_eq(gs_stats.patches, patches, "each shared chunk went with the graph baked from its operands (%llu patches)", (unsigned long long)(gs_stats.patches - patches));
	tb_check();
}
