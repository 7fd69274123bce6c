/*
 * Simulated memory.  Device memory comes from one large reserved mapping
 * (pages are committed only when touched), so a device address is always
 * distinguishable from a host one and the simulator can classify every
 * pointer as device, pinned host or pageable host.  Pinned host memory is
 * ordinary heap memory recorded in a table.  Freed device memory is zeroed,
 * so fresh allocations read as zero: runs are deterministic.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim_core.h"

#define DEV_ALIGN 256u
#define BIG_BLOCK (1u << 20)

typedef struct blk {
	size_t off, size;
	size_t req;                /* size asked for: bounds checks use it */
	bool used;
	gs_sim_ctx_t *ctx;
} blk_t;

typedef struct hrange {
	unsigned char *base;
	size_t size;
	unsigned flags;
	bool registered;
} hrange_t;

static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *arena;
static size_t arena_size, arena_used;
static blk_t *blks;        /* sorted by off, covering the arena */
static size_t nblk, capblk;
static hrange_t *hr;       /* pinned ranges, sorted by base */
static size_t nhr, caphr;

static bool arena_init_locked(void)
{
	static const size_t sizes[] = { (size_t)64 << 30, (size_t)16 << 30, (size_t)4 << 30,
					(size_t)1 << 30 };
	if (arena)
		return false;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			arena = p;
			arena_size = sizes[i];
			break;
		}
	}
	if (!arena)
		return true;
	blks = malloc(16 * sizeof(*blks));
	if (!blks)
		return true;
	capblk = 16;
	nblk = 1;
	blks[0] = (blk_t){ 0, arena_size, 0, false, NULL };
	return false;
}

static bool blk_insert(size_t at, blk_t b)
{
	if (nblk == capblk) {
		blk_t *nb = realloc(blks, capblk * 2 * sizeof(*blks));
		if (!nb)
			return true;
		blks = nb;
		capblk *= 2;
	}
	memmove(blks + at + 1, blks + at, (nblk - at) * sizeof(*blks));
	blks[at] = b;
	nblk++;
	return false;
}

static void blk_remove(size_t at)
{
	memmove(blks + at, blks + at + 1, (nblk - at - 1) * sizeof(*blks));
	nblk--;
}

/* Index of the block containing offset off. */
static size_t blk_find(size_t off)
{
	size_t lo = 0, hi = nblk;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (blks[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

gs_sim_err_t gs_sim_mem_alloc(void **out, size_t size, gs_sim_ctx_t *ctx)
{
	gs_sim_err_t err = GS_SIM_ENOMEM;
	if (!size)
		return GS_SIM_EINVAL;
	if (gs_sim_fault(GS_SIM_F_ALLOC))
		return GS_SIM_ENOMEM;
	size_t req = size;
	size = (size + DEV_ALIGN - 1) & ~(size_t)(DEV_ALIGN - 1);
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	if (arena_init_locked())
		goto out;
	for (size_t i = 0; i < nblk; i++) {
		if (blks[i].used || blks[i].size < size)
			continue;
		if (blks[i].size > size) {
			blk_t rest = { blks[i].off + size, blks[i].size - size, 0, false, NULL };
			if (blk_insert(i + 1, rest))
				goto out;
			blks[i].size = size;
		}
		blks[i].used = true;
		blks[i].req = req;
		blks[i].ctx = ctx;
		arena_used += size;
		*out = arena + blks[i].off;
		err = GS_SIM_OK;
		break;
	}
out:
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	return err;
}

static void zero_range(unsigned char *p, size_t n)
{
	if (n < BIG_BLOCK) {
		memset(p, 0, n);
		return;
	}
	/* Large blocks: hand the pages back instead of touching them. */
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
	memset(p, 0, a - (uintptr_t)p);
	madvise((void *)a, e - a, MADV_DONTNEED);
	memset((void *)e, 0, (uintptr_t)p + n - e);
}

/* Like the real cuMemFree, waits for the owning context's work first: a
 * kernel still queued may use the memory. */
gs_sim_err_t gs_sim_mem_free(void *p)
{
	gs_sim_ctx_t *ctx = NULL;
	size_t size;
	void *base;
	if (gs_sim_mem_kind(p, &base, &size, &ctx, NULL) != GS_SIM_M_DEVICE || base != p)
		return GS_SIM_EINVAL;
	if (ctx && gs_sim_reg_is(ctx, GS_SIM_H_CTX))
		gs_sim_ctx_sync(ctx);
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	size_t off = (size_t)((unsigned char *)p - arena);
	size_t i = blk_find(off);
	if (blks[i].off != off || !blks[i].used) {
		GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
		return GS_SIM_EINVAL;
	}
	zero_range(p, blks[i].size);
	arena_used -= blks[i].size;
	blks[i].used = false;
	blks[i].ctx = NULL;
	if (i + 1 < nblk && !blks[i + 1].used) {
		blks[i].size += blks[i + 1].size;
		blk_remove(i + 1);
	}
	if (i > 0 && !blks[i - 1].used) {
		blks[i - 1].size += blks[i].size;
		blk_remove(i);
	}
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	return GS_SIM_OK;
}

static size_t hr_find_locked(const unsigned char *p)
{
	/* Index of the last range with base <= p, or nhr if none. */
	size_t lo = 0, hi = nhr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (hr[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : nhr;
}

static gs_sim_err_t hr_add(unsigned char *base, size_t size, unsigned flags, bool registered)
{
	gs_sim_err_t err = GS_SIM_OK;
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	size_t i = hr_find_locked(base);
	if (i < nhr && base < hr[i].base + hr[i].size) {
		err = GS_SIM_EINVAL; /* already pinned */
		goto out;
	}
	if (nhr == caphr) {
		size_t nc = caphr ? caphr * 2 : 16;
		hrange_t *n = realloc(hr, nc * sizeof(*hr));
		if (!n) {
			err = GS_SIM_ENOMEM;
			goto out;
		}
		hr = n;
		caphr = nc;
	}
	size_t at = i == nhr ? 0 : i + 1;
	memmove(hr + at + 1, hr + at, (nhr - at) * sizeof(*hr));
	hr[at] = (hrange_t){ base, size, flags, registered };
	nhr++;
out:
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	return err;
}

static gs_sim_err_t hr_del(unsigned char *base, bool registered)
{
	gs_sim_err_t err = GS_SIM_EINVAL;
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	size_t i = hr_find_locked(base);
	if (i < nhr && hr[i].base == base && hr[i].registered == registered) {
		memmove(hr + i, hr + i + 1, (nhr - i - 1) * sizeof(*hr));
		nhr--;
		err = GS_SIM_OK;
	}
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	return err;
}

gs_sim_err_t gs_sim_host_alloc(void **out, size_t size, unsigned flags)
{
	void *p;
	if (posix_memalign(&p, 4096, size ? size : 1))
		return GS_SIM_ENOMEM;
	gs_sim_err_t err = hr_add(p, size ? size : 1, flags, false);
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	return GS_SIM_OK;
}

gs_sim_err_t gs_sim_host_free(void *p)
{
	gs_sim_err_t err = hr_del(p, false);
	if (!err)
		free(p);
	return err;
}

gs_sim_err_t gs_sim_host_register(void *p, size_t size, unsigned flags)
{
	if (!p || !size)
		return GS_SIM_EINVAL;
	return hr_add(p, size, flags, true);
}

gs_sim_err_t gs_sim_host_unregister(void *p)
{
	return hr_del(p, true);
}

int gs_sim_mem_kind(const void *p, void **base, size_t *size, gs_sim_ctx_t **ctx,
		    unsigned *flags)
{
	const unsigned char *c = p;
	int kind = GS_SIM_M_PAGEABLE;
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	if (arena && c >= arena && c < arena + arena_size) {
		size_t i = blk_find((size_t)(c - arena));
		if (blks[i].used && (size_t)(c - arena) < blks[i].off + blks[i].req) {
			kind = GS_SIM_M_DEVICE;
			if (base)
				*base = arena + blks[i].off;
			if (size)
				*size = blks[i].req;
			if (ctx)
				*ctx = blks[i].ctx;
			if (flags)
				*flags = 0;
		}
	} else {
		size_t i = hr_find_locked(c);
		if (i < nhr && c < hr[i].base + hr[i].size) {
			kind = GS_SIM_M_PINNED;
			if (base)
				*base = hr[i].base;
			if (size)
				*size = hr[i].size;
			if (ctx)
				*ctx = NULL;
			if (flags)
				*flags = hr[i].flags;
		}
	}
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	return kind;
}

void gs_sim_mem_info(size_t *free_b, size_t *total_b)
{
	size_t f = 0, t = 0;
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	if (!arena_init_locked() || arena) {
		t = arena_size;
		f = arena_size - arena_used;
	}
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	if (free_b)
		*free_b = f;
	if (total_b)
		*total_b = t;
}

/*
 * The stream-ordered pool (cuMemAllocAsync, cuMemFreeAsync; one for every
 * context, as a device's default pool).  A free is work on its stream:
 * when the stream reaches it the block is filled with GS_SIM_POOL_POISON
 * (a kernel that reads a block after its free, which graphshim must never
 * make happen, reads that) and any stream may have it again.  Before that
 * only an allocation on the freeing stream may (stream order makes its
 * use follow the free, as the real driver allows).  The block freed last
 * is reused first, so a program's pointers repeat from step to step as
 * they do on a GPU.  A reused block holds the poison: programs write what
 * they allocate before they read it.  cuMemFree takes a block out of the
 * pool and frees it as any other (synchronizing).
 */
#define GS_SIM_POOL_POISON 0xa5

enum { POOL_USED = 1, POOL_PENDING, POOL_FREE };

typedef struct pool_blk {
	unsigned char *p;
	size_t size;              /* rounded to DEV_ALIGN */
	gs_sim_ctx_t *ctx;
	int state;
	const gs_sim_stream_t *fs; /* the freeing stream, compared only */
	uint64_t gen;             /* counts frees: a free's work checks it */
	uint64_t age;             /* when freed, for last-freed-first reuse */
} pool_blk_t;

static pool_blk_t *pool;
static size_t npool, cappool;
static uint64_t pool_clock;
/*
 * Held by a free from marking its block pending until its work is on the
 * stream, and by an allocation while it picks a block: a pending block
 * another thread takes on the freeing stream (the legacy stream and a
 * shared one are) is then always behind its free there, never before it
 * (whose poison would land on the new owner's data).  Taken before mem_mu
 * and before the submission's ctx->mu; a stream's worker never takes it.
 */
static pthread_mutex_t pool_order_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct pool_free_job {
	unsigned char *p;
	uint64_t gen;
} pool_free_job_t;

static pool_blk_t *pool_find_locked(const unsigned char *p)
{
	for (size_t i = 0; i < npool; i++)
		if (pool[i].p == p)
			return &pool[i];
	return NULL;
}

gs_sim_err_t gs_sim_pool_alloc(void **out, size_t size, gs_sim_ctx_t *ctx,
			       const gs_sim_stream_t *s)
{
	if (!out || !size)
		return GS_SIM_EINVAL;
	size_t want = (size + DEV_ALIGN - 1) & ~(size_t)(DEV_ALIGN - 1);
	GS_SIM_PT(pthread_mutex_lock(&pool_order_mu));
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	pool_blk_t *best = NULL;
	for (size_t i = 0; i < npool; i++) {
		pool_blk_t *b = &pool[i];
		if (b->ctx != ctx || b->size != want ||
		    !(b->state == POOL_FREE || (b->state == POOL_PENDING && b->fs == s)))
			continue;
		if (!best || b->age > best->age)
			best = b;
	}
	if (best) {
		best->state = POOL_USED;
		*out = best->p;
		GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
		GS_SIM_PT(pthread_mutex_unlock(&pool_order_mu));
		return GS_SIM_OK;
	}
	GS_SIM_PT(pthread_mutex_unlock(&pool_order_mu));
	if (npool == cappool) {
		size_t nc = cappool ? cappool * 2 : 64;
		pool_blk_t *np = realloc(pool, nc * sizeof(*np));
		if (!np) {
			GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
			return GS_SIM_ENOMEM;
		}
		pool = np;
		cappool = nc;
	}
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	void *p;
	gs_sim_err_t e = gs_sim_mem_alloc(&p, want, ctx);
	if (e)
		return e;
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	pool[npool++] = (pool_blk_t){ p, want, ctx, POOL_USED, NULL, 0, 0 };
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	*out = p;
	return GS_SIM_OK;
}

/* The free's work, on its stream. */
static void pool_free_run(void *arg)
{
	pool_free_job_t *j = arg;
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	pool_blk_t *b = pool_find_locked(j->p);
	if (b && b->gen == j->gen) {
		memset(b->p, GS_SIM_POOL_POISON, b->size);
		if (b->state == POOL_PENDING)
			b->state = POOL_FREE;
	}
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
}

gs_sim_err_t gs_sim_pool_free(void *p, gs_sim_stream_t *s)
{
	pool_free_job_t *j = malloc(sizeof(*j));
	if (!j)
		return GS_SIM_ENOMEM;
	GS_SIM_PT(pthread_mutex_lock(&pool_order_mu));
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	pool_blk_t *b = pool_find_locked(p);
	if (!b || b->state != POOL_USED) {
		GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
		GS_SIM_PT(pthread_mutex_unlock(&pool_order_mu));
		free(j);
		return GS_SIM_EINVAL;
	}
	b->state = POOL_PENDING;
	b->fs = s;
	b->gen++;
	b->age = ++pool_clock;
	j->p = b->p;
	j->gen = b->gen;
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	double us = gs_sim_pool_free_us();
	if (us > 0)
		usleep((useconds_t)us);
	gs_sim_work_t w = { .kind = GS_SIM_W_HOST, .u.host = { pool_free_run, j }, .owned = j };
	gs_sim_err_t err = gs_sim_submit(s, &w, NULL, 0, NULL);
	GS_SIM_PT(pthread_mutex_unlock(&pool_order_mu));
	return err;
}

gs_sim_err_t gs_sim_pool_free_now(void *p)
{
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	pool_blk_t *b = pool_find_locked(p);
	bool used = b && b->state == POOL_USED;
	if (used)
		*b = pool[--npool];
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	return used ? gs_sim_mem_free(p) : GS_SIM_EINVAL;
}

bool gs_sim_pool_owns(const void *p)
{
	GS_SIM_PT(pthread_mutex_lock(&mem_mu));
	bool r = pool_find_locked(p) != NULL;
	GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
	return r;
}

void gs_sim_pool_drop(gs_sim_ctx_t *ctx)
{
	for (;;) {
		void *p = NULL;
		GS_SIM_PT(pthread_mutex_lock(&mem_mu));
		for (size_t i = 0; i < npool; i++) {
			if (pool[i].ctx == ctx) {
				p = pool[i].p;
				pool[i] = pool[--npool];
				break;
			}
		}
		GS_SIM_PT(pthread_mutex_unlock(&mem_mu));
		if (!p)
			return;
		gs_sim_mem_free(p);
	}
}
