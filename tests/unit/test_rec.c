/* Records: hashing, copying, comparing. */
#include "gs_rec.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static gs_rec_t *mk(uint64_t a0, uint64_t a1)
{
	static struct {
		gs_layout_t l;
		gs_arg_t a[2];
	} lay = {{2, 16}, {{0, 8}, {8, 8}}};
	gs_rec_t *r = calloc(1, gs_rec_size(16));
	r->cap = 16;
	r->nbytes = 16;
	r->kind = GS_REC_KERNEL;
	r->func = (void *)0x1234;
	r->grid[0] = r->grid[1] = r->grid[2] = 1;
	r->block[0] = 64;
	r->block[1] = r->block[2] = 1;
	r->layout = &lay.l;
	memcpy(r->args, &a0, 8);
	memcpy(r->args + 8, &a1, 8);
	gs_rec_seal(r);
	return r;
}

Test(rec, shape_ignores_args_hash_does_not)
{
	gs_rec_t *a = mk(1, 2), *b = mk(1, 3);
	cr_expect_eq(a->shape, b->shape);
	cr_expect_neq(a->hash, b->hash);
	cr_expect(gs_rec_same_shape(a, b));
	free(a);
	free(b);
}

Test(rec, shape_covers_every_structural_field)
{
	gs_rec_t *a = mk(1, 2), *b = mk(1, 2);
	b->flags = 4;
	gs_rec_seal(b);
	cr_expect_neq(a->shape, b->shape);
	cr_expect_not(gs_rec_same_shape(a, b));
	cr_expect_str_eq(gs_rec_diff_field(a, b), "operation");
	b->flags = 0;
	b->aux[3] = 0x77; /* a backend's structural word (the CUDA backend's launch attributes) */
	gs_rec_seal(b);
	cr_expect_neq(a->shape, b->shape);
	cr_expect_not(gs_rec_same_shape(a, b));
	b->aux[3] = 0;
	b->ctx = (void *)0x5;
	gs_rec_seal(b);
	cr_expect_not(gs_rec_same_shape(a, b));
	cr_expect_str_eq(gs_rec_diff_field(a, b), "context");
	free(a);
	free(b);
}

Test(rec, function_and_geometry_are_operands)
{
	gs_rec_t *a = mk(1, 2), *b = mk(1, 2);
	cr_expect_not(gs_rec_differs(a, b));
	const char *want[] = { "grid", "block", "shmem", "function" };
	for (int k = 0; k < 4; k++) {
		gs_rec_t *c = mk(1, 2);
		if (k == 0)
			c->grid[2] = 2;
		else if (k == 1)
			c->block[0] = 128;
		else if (k == 2)
			c->shmem = 16;
		else
			c->func = (void *)0x99;
		gs_rec_seal(c);
		/* The same shape (a node takes it), another operand (a patch). */
		cr_expect_eq(a->shape, c->shape, "%s", want[k]);
		cr_expect(gs_rec_same_shape(a, c), "%s", want[k]);
		cr_expect_neq(a->hash, c->hash, "%s", want[k]);
		cr_expect(gs_rec_differs(a, c), "%s", want[k]);
		cr_expect_str_eq(gs_rec_diff_field(a, c), want[k]);
		free(c);
	}
	free(a);
	free(b);
}

Test(rec, a_copy_size_is_an_operand_its_kind_is_not)
{
	gs_rec_t *a = mk(1, 2), *b = mk(1, 2);
	a->kind = b->kind = GS_REC_COPY;
	a->layout = b->layout = NULL;
	a->aux[0] = 256, b->aux[0] = 512; /* the size */
	a->aux[1] = b->aux[1] = 3;        /* the copy's kind */
	gs_rec_seal(a);
	gs_rec_seal(b);
	cr_expect(gs_rec_same_shape(a, b));
	cr_expect(gs_rec_differs(a, b));
	cr_expect_str_eq(gs_rec_diff_field(a, b), "size");
	b->aux[0] = 256;
	b->aux[1] = 1;
	gs_rec_seal(b);
	cr_expect_not(gs_rec_same_shape(a, b));
	cr_expect_str_eq(gs_rec_diff_field(a, b), "operation");
	free(a);
	free(b);
}

Test(rec, first_diff_names_the_parameter)
{
	gs_rec_t *a = mk(1, 2), *b = mk(1, 3), *c = mk(7, 2);
	cr_expect_eq(gs_rec_first_diff(a, a), -1);
	cr_expect_eq(gs_rec_first_diff(a, b), 1);
	cr_expect_eq(gs_rec_first_diff(a, c), 0);
	free(a);
	free(b);
	free(c);
}

Test(rec, first_diff_sees_a_change_in_the_last_byte)
{
	gs_rec_t *a = mk(1, 2), *b = mk(1, 2 | (1ULL << 63));
	cr_expect_eq(gs_rec_first_diff(a, b), 1);
	free(a);
	free(b);
}

Test(rec, copy_grows_and_drops_orig)
{
	gs_rec_t *a = mk(5, 6);
	a->orig = a;
	gs_rec_t *d = NULL;
	cr_assert(!gs_rec_copy(&d, a));
	cr_expect_eq(d->hash, a->hash);
	cr_expect_null(d->orig);
	cr_expect_eq(gs_rec_first_diff(a, d), -1);
	gs_rec_t *big = gs_rec_scratch(4000);
	memcpy(big, a, sizeof(*a));
	big->cap = 4000;
	big->nbytes = 4000;
	memset(big->args, 0xab, 4000);
	gs_rec_seal(big);
	cr_assert(!gs_rec_copy(&d, big));
	cr_expect_geq(d->cap, 4000);
	cr_expect_eq(d->args[3999], 0xab);
	free(a);
	free(d);
}

Test(rec, scratch_is_zeroed_and_reused)
{
	gs_rec_t *r = gs_rec_scratch(32);
	r->kind = 7;
	r->args[5] = 1;
	gs_rec_t *s = gs_rec_scratch(16);
	cr_expect_eq(r, s);
	cr_expect_eq(s->kind, 0);
	cr_expect_eq(s->nbytes, 16);
}

Test(rec, hash_bytes_sees_the_tail)
{
	unsigned char x[11] = {0}, y[11] = {0};
	y[10] = 1;
	cr_expect_neq(gs_hash_bytes(0, x, 11), gs_hash_bytes(0, y, 11));
	cr_expect_neq(gs_hash_bytes(0, x, 10), gs_hash_bytes(0, x, 11));
}

/*
 * A large image is sealed in lanes (gs_rec_seal): a change in any of its
 * words, in its tail, or two words swapped between lanes still changes the
 * hash, and the shape never.
 */
Test(rec, a_large_image_is_sealed_in_every_word)
{
	enum { N = 656 };
	gs_rec_t *a = calloc(1, gs_rec_size(N)), *b = calloc(1, gs_rec_size(N));
	a->kind = b->kind = GS_REC_KERNEL;
	a->nbytes = b->nbytes = a->cap = b->cap = N;
	for (uint32_t i = 0; i < N; i++)
		a->args[i] = (unsigned char)(i * 7 + 1);
	gs_rec_seal(a);
	for (uint32_t at = 0; at < N; at += 8) {
		memcpy(b->args, a->args, N);
		b->args[at + (at / 8) % 8] ^= 0x10;
		gs_rec_seal(b);
		cr_expect_neq(a->hash, b->hash, "byte %u", at + (at / 8) % 8);
		cr_expect_eq(a->shape, b->shape);
	}
	memcpy(b->args, a->args, N);
	uint64_t w0, w1;
	memcpy(&w0, b->args, 8);
	memcpy(&w1, b->args + 8, 8);
	memcpy(b->args, &w1, 8); /* words 0 and 1: lanes 0 and 1 */
	memcpy(b->args + 8, &w0, 8);
	gs_rec_seal(b);
	cr_expect_neq(a->hash, b->hash, "two words swapped between lanes");
	memcpy(b->args, a->args, N);
	memcpy(&w0, b->args + 32, 8);
	memcpy(&w1, b->args, 8);
	memcpy(b->args, &w0, 8); /* words 0 and 4: both in lane 0 */
	memcpy(b->args + 32, &w1, 8);
	gs_rec_seal(b);
	cr_expect_neq(a->hash, b->hash, "two words of one lane swapped");
	free(a);
	free(b);
}
