/*
 * Test-only preload: makes allocations fail, but only those made by
 * libgraphshim.so itself (the caller's return address is looked up with
 * dladdr), so the program and the driver keep working while graphshim runs
 * short of memory.  R_FAILMALLOC="START EVERY": from graphshim's START-th
 * allocation on, every EVERY-th one fails (EVERY 1: all of them).
 * Uses glibc's __libc_* allocators, so it needs no dlsym at start-up.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long r_start = -1, r_every = 1, r_count;
static int r_busy;
static void *r_base; /* libgraphshim's load address, once known */

static int r_from_graphshim(void *ra)
{
	if (r_start < 0 || r_busy)
		return 0;
	r_busy = 1; /* dladdr may allocate */
	Dl_info di;
	int hit = 0;
	if (dladdr(ra, &di) && di.dli_fname) {
		if (!r_base && strstr(di.dli_fname, "libgraphshim"))
			r_base = di.dli_fbase;
		hit = r_base && di.dli_fbase == r_base;
	}
	r_busy = 0;
	if (!hit)
		return 0;
	long n = __atomic_add_fetch(&r_count, 1, __ATOMIC_RELAXED);
	return n >= r_start && (n - r_start) % r_every == 0;
}

__attribute__((constructor)) static void r_init(void)
{
	const char *v = getenv("R_FAILMALLOC");
	if (v && sscanf(v, "%ld %ld", &r_start, &r_every) < 1)
		r_start = -1;
	if (r_every < 1)
		r_every = 1;
}

void *malloc(size_t n)
{
	if (r_from_graphshim(__builtin_return_address(0)))
		return NULL;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	if (r_from_graphshim(__builtin_return_address(0)))
		return NULL;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (r_from_graphshim(__builtin_return_address(0)))
		return NULL;
	return __libc_realloc(p, n);
}
