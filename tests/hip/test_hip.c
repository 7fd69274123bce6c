/*
 * CPU-only tests of the HIP backend's pure parts: kernel metadata from real
 * code objects built by hipcc (tests/hip/data, offsets checked against the
 * kernels' source signatures), the packed `extra` form, and the grid of
 * hipExtModuleLaunchKernel.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "hip_internal.h"

static char *slurp(const char *name, size_t *n)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/hip/data/%s", getenv("top_srcdir") ? getenv("top_srcdir") : ".", name);
	FILE *f = fopen(path, "rb");
	cr_assert(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	char *b = malloc(*n);
	cr_assert(fread(b, 1, *n, f) == *n);
	fclose(f);
	return b;
}

static void expect(const gs_layout_t *l, uint32_t nargs, const uint32_t *off, const uint32_t *size)
{
	cr_assert(l, "no layout");
	cr_assert_eq(l->nargs, nargs);
	for (uint32_t i = 0; i < nargs; i++) {
		cr_expect_eq(l->arg[i].off, off[i], "arg %u offset %u, want %u", i, l->arg[i].off, off[i]);
		cr_expect_eq(l->arg[i].size, size[i], "arg %u size %u, want %u", i, l->arg[i].size, size[i]);
	}
}

/* The four kernels of data/kernels.hip. */
static void check_kernels(const gs_hip_codeobj_t *co)
{
	/* axpy(float a, const float *x, float *y, int n) */
	expect(gs_hip_codeobj_find(co, "axpy"), 4, (uint32_t[]){0, 8, 16, 24}, (uint32_t[]){4, 8, 8, 4});
	cr_expect_eq(gs_hip_codeobj_find(co, "axpy")->total, 28);
	/* mixed(char, pair{double,char}, short, long long, const int *, float4) */
	expect(gs_hip_codeobj_find(co, "mixed"), 6, (uint32_t[]){0, 8, 24, 32, 40, 48},
	       (uint32_t[]){1, 16, 2, 8, 8, 16});
	/* noargs(void) */
	expect(gs_hip_codeobj_find(co, "noargs"), 0, NULL, NULL);
	/* bigarg(char, big{int[33]}, double *) */
	expect(gs_hip_codeobj_find(co, "bigarg"), 3, (uint32_t[]){0, 4, 136}, (uint32_t[]){1, 132, 8});
	/* The symbol spelling (".kd") finds the same kernel; unknown names find nothing. */
	cr_expect_eq(gs_hip_codeobj_find(co, "axpy.kd"), gs_hip_codeobj_find(co, "axpy"));
	cr_expect_null(gs_hip_codeobj_find(co, "axp"));
	cr_expect_null(gs_hip_codeobj_find(co, "nosuch"));
}

Test(hip_codeobj, offload_bundle)
{
	size_t n;
	char *b = slurp("kernels.co", &n);
	cr_expect_eq(gs_hip_codeobj_span(b), n, "span %zu of %zu", gs_hip_codeobj_span(b), n);
	gs_hip_codeobj_t co;
	cr_assert(!gs_hip_codeobj_parse(b, n, &co));
	check_kernels(&co);
	gs_hip_codeobj_free(&co);
	free(b);
}

Test(hip_codeobj, elf)
{
	size_t n;
	char *b = slurp("kernels-gfx90a.elf", &n);
	cr_expect_eq(gs_hip_codeobj_span(b), n);
	gs_hip_codeobj_t co;
	cr_assert(!gs_hip_codeobj_parse(b, n, &co));
	check_kernels(&co);
	gs_hip_codeobj_free(&co);
	free(b);
}

Test(hip_codeobj, file)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/hip/data/kernels.co", getenv("top_srcdir") ? getenv("top_srcdir") : ".");
	gs_hip_codeobj_t co;
	cr_assert(!gs_hip_codeobj_parse_file(path, &co));
	check_kernels(&co);
	gs_hip_codeobj_free(&co);
	cr_expect(gs_hip_codeobj_parse_file("/nonexistent", &co));
}

Test(hip_codeobj, rejects_garbage)
{
	gs_hip_codeobj_t co;
	char junk[256];
	memset(junk, 0x5a, sizeof(junk));
	cr_expect(gs_hip_codeobj_parse(junk, sizeof(junk), &co));
	cr_expect_eq(gs_hip_codeobj_span(junk), 0);
	size_t n;
	char *b = slurp("kernels.co", &n);
	/* A truncated bundle: the amdgcn entry lies past the end. */
	cr_expect(gs_hip_codeobj_parse(b, 200, &co));
	/* A corrupted ELF inside the bundle. */
	memset(b + 4096, 0, 64);
	cr_expect(gs_hip_codeobj_parse(b, n, &co));
	free(b);
}

Test(hip_extra, round_trip)
{
	unsigned char img[40];
	for (size_t i = 0; i < sizeof(img); i++)
		img[i] = (unsigned char)(i * 7 + 1);
	size_t sz = sizeof(img);
	/* The caller may put SIZE before POINTER. */
	void *caller[] = {HIP_LAUNCH_PARAM_BUFFER_SIZE, &sz, HIP_LAUNCH_PARAM_BUFFER_POINTER, img,
			  HIP_LAUNCH_PARAM_END};
	const void *got;
	size_t n;
	cr_assert(!gs_hip_extra_parse(caller, &got, &n));
	cr_expect_eq(got, img);
	cr_expect_eq(n, sizeof(img));

	/* A record copies the image; submit re-packs around the copy. */
	unsigned char copy[40];
	memcpy(copy, got, n);
	gs_hip_extra_t e;
	gs_hip_extra_pack(&e, copy, n);
	cr_expect_eq(e.v[0], HIP_LAUNCH_PARAM_BUFFER_POINTER);
	cr_expect_eq(e.v[1], (void *)copy);
	cr_expect_eq(e.v[2], HIP_LAUNCH_PARAM_BUFFER_SIZE);
	cr_expect_eq(*(size_t *)e.v[3], sizeof(img));
	cr_expect_eq(e.v[4], HIP_LAUNCH_PARAM_END);
	const void *again;
	size_t n2;
	cr_assert(!gs_hip_extra_parse(e.v, &again, &n2));
	cr_expect_eq(n2, n);
	cr_expect(!memcmp(again, img, n));
}

Test(hip_extra, odd_forms_pass_through)
{
	unsigned char img[8] = {0};
	size_t sz = 8, huge = (size_t)1 << 30;
	const void *got;
	size_t n;
	void *no_end[16] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, img, HIP_LAUNCH_PARAM_BUFFER_SIZE, &sz};
	for (int i = 4; i < 16; i++)
		no_end[i] = (void *)0x77;
	void *unknown[] = {(void *)0x42, img, HIP_LAUNCH_PARAM_END};
	void *no_size[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, img, HIP_LAUNCH_PARAM_END};
	void *too_big[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, img, HIP_LAUNCH_PARAM_BUFFER_SIZE, &huge,
			   HIP_LAUNCH_PARAM_END};
	cr_expect(gs_hip_extra_parse(no_end, &got, &n));
	cr_expect(gs_hip_extra_parse(unknown, &got, &n));
	cr_expect(gs_hip_extra_parse(no_size, &got, &n));
	cr_expect(gs_hip_extra_parse(too_big, &got, &n));
}

Test(hip_ext, global_sizes)
{
	uint32_t grid[3];
	cr_assert(!gs_hip_ext_grid((uint32_t[]){1024, 6, 1}, (uint32_t[]){256, 3, 1}, grid));
	cr_expect(grid[0] == 4 && grid[1] == 2 && grid[2] == 1);
	/* Not a multiple: no grid node can express it, so the launch is a boundary. */
	cr_expect(gs_hip_ext_grid((uint32_t[]){1000, 1, 1}, (uint32_t[]){256, 1, 1}, grid));
	cr_expect(gs_hip_ext_grid((uint32_t[]){256, 5, 1}, (uint32_t[]){256, 2, 1}, grid));
	cr_expect(gs_hip_ext_grid((uint32_t[]){256, 1, 1}, (uint32_t[]){0, 1, 1}, grid));
}
