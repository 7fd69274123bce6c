/* Period detection on its own. */
#include "gs_period.h"

#include <criterion/criterion.h>

/* Push a record whose full hash is its shape (nothing drifts). */
static uint32_t push(gs_period_t *p, uint64_t h, uint32_t min_len, uint32_t reps)
{
	return gs_period_push(p, h, h, min_len, reps);
}

/* Push hashes; return the position (1-based) of the first report, 0 if none. */
static uint64_t first_report(gs_period_t *p, const uint64_t *h, size_t n, uint32_t min_len,
			     uint32_t reps, uint32_t *len)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t l = push(p, h[i], min_len, reps);
		if (l) {
			*len = l;
			return i + 1;
		}
	}
	return 0;
}

Test(period, finds_a_period_after_two_repetitions)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	uint64_t h[40];
	for (int i = 0; i < 40; i++)
		h[i] = 100 + i % 5;
	uint32_t len = 0;
	cr_expect_eq(first_report(&p, h, 40, 4, 2, &len), 10);
	cr_expect_eq(len, 5);
	gs_period_free(&p);
}

Test(period, after_a_prologue)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	uint64_t h[50];
	for (int i = 0; i < 7; i++)
		h[i] = 900 + i;
	for (int i = 7; i < 50; i++)
		h[i] = 100 + (i - 7) % 6;
	uint32_t len = 0;
	cr_expect_eq(first_report(&p, h, 50, 4, 2, &len), 7 + 12);
	cr_expect_eq(len, 6);
	gs_period_free(&p);
}

Test(period, short_period_is_extended_to_min_len)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	uint64_t h[40];
	for (int i = 0; i < 40; i++)
		h[i] = 100 + i % 3;
	uint32_t len = 0;
	cr_expect_neq(first_report(&p, h, 40, 8, 2, &len), 0);
	cr_expect_eq(len, 9);
	gs_period_free(&p);
}

Test(period, reports_once_per_run)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	int reports = 0;
	for (int i = 0; i < 200; i++)
		reports += push(&p, 100 + i % 4, 4, 2) != 0;
	cr_expect_eq(reports, 1);
	gs_period_free(&p);
}

Test(period, no_period_in_distinct_hashes)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	for (int i = 0; i < 500; i++)
		cr_expect_eq(push(&p, 1000 + i, 4, 2), 0);
	gs_period_free(&p);
}

Test(period, reset_forgets_history)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	for (int i = 0; i < 9; i++) /* one short of two periods of 5 */
		cr_expect_eq(push(&p, 100 + i % 5, 4, 2), 0);
	gs_period_reset(&p);
	/* Without the reset the next push would complete the second period. */
	cr_expect_eq(push(&p, 104, 4, 2), 0);
	gs_period_free(&p);
}

Test(period, longer_than_history_is_not_reported)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 16));
	for (int i = 0; i < 200; i++)
		cr_expect_eq(push(&p, 100 + i % 20, 4, 2), 0);
	gs_period_free(&p);
}

/*
 * A step of ten records whose fourth takes a position that grows every
 * step (its shape repeats, its full hash never does): still a period of
 * ten, reported once the step has repeated.
 */
Test(period, a_drifting_operand_still_repeats)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	uint32_t len = 0;
	uint64_t at = 0;
	for (int i = 0; i < 60 && !at; i++) {
		uint64_t shape = 100 + i % 10;
		uint64_t full = i % 10 == 3 ? 5000 + (uint64_t)i : shape;
		if ((len = gs_period_push(&p, full, shape, 4, 2)))
			at = (uint64_t)i + 1;
	}
	cr_expect_eq(len, 10);
	cr_expect_leq(at, 21, "reported at %llu", (unsigned long long)at);
	gs_period_free(&p);
}

/* Half of each step's records differ from the step before (a loop over
 * ever new buffers, or layers whose weights differ): no period. */
Test(period, operands_that_mostly_drift_are_no_period)
{
	gs_period_t p;
	cr_assert(!gs_period_init(&p, 64));
	for (int i = 0; i < 300; i++) {
		uint64_t shape = 100 + i % 10;
		uint64_t full = i % 10 < 5 ? 5000 + (uint64_t)i : shape;
		cr_expect_eq(gs_period_push(&p, full, shape, 4, 2), 0, "at %d", i);
	}
	gs_period_free(&p);
}
