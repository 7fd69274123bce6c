/*
 * Launch records: sealing (the two hashes), copying, and comparing.  The
 * comparisons here are what every replay's revalidation is made of.
 */
#include "gs_rec.h"

#include <pthread.h>
#include <stdlib.h>

/*
 * One multiply and a fold a word, one full mix at the end: sealing runs on
 * every launch, including those passed straight through.  The hashes only
 * pick candidates; every match is confirmed field by field and byte by byte.
 */
static inline uint64_t gs_seal_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9fb21c651e98df25ULL;
	return h ^ (h >> 29);
}

/*
 * aux[0] of a copy or a memset is its size, an operand a graph node takes
 * new like any argument; every other aux word is structural.
 */
static inline int gs_rec_aux_first(const gs_rec_t *r)
{
	return r->kind == GS_REC_COPY || r->kind == GS_REC_SET;
}

/* Images of at least this many bytes are sealed in four lanes. */
#define GS_SEAL_LANES_FROM 64

void gs_rec_seal(gs_rec_t *r)
{
	/* The shape: what no patch of a graph node can change. */
	uint64_t h = 0x6773687368617065ULL ^ r->kind;
	h = gs_seal_step(h, (uintptr_t)r->ctx);
	h = gs_seal_step(h, ((uint64_t)r->flags << 32) ^ r->nbytes);
	h = gs_seal_step(h, (uintptr_t)r->layout);
	for (int i = gs_rec_aux_first(r); i < 4; i++)
		h = gs_seal_step(h, r->aux[i]);
	r->shape = gs_mix64(h);
	/* The operands: the function, the launch geometry, a size, the bytes. */
	h = gs_seal_step(h, (uintptr_t)r->func);
	h = gs_seal_step(h, ((uint64_t)r->grid[0] << 32) | r->grid[1]);
	h = gs_seal_step(h, ((uint64_t)r->grid[2] << 32) | r->block[0]);
	h = gs_seal_step(h, ((uint64_t)r->block[1] << 32) | r->block[2]);
	h = gs_seal_step(h, ((uint64_t)r->shmem << 32) ^ (gs_rec_aux_first(r) ? r->aux[0] : 0));
	const unsigned char *b = r->args;
	uint32_t n = r->nbytes;
	if (n >= GS_SEAL_LANES_FROM) {
		/*
		 * Large images (PyTorch's elementwise kernels take 656 bytes, its
		 * foreach kernels 3 KB) in four lanes, each a chain over every
		 * fourth word, folded into the hash after: the lanes' multiplies
		 * overlap.  In one chain a 656-byte image took 400 ns to seal on
		 * the development machine, the most of any part of a replayed
		 * launch's host time (tools/bench-hook.sh, its 656-byte line:
		 * 390-510 ns a launch, 280-380 ns in lanes).  Two lanes of 128-bit
		 * products took a quarter fewer instructions and no less time.
		 */
		uint64_t l0 = h, l1 = h ^ 0x243f6a8885a308d3ULL, l2 = h ^ 0x13198a2e03707344ULL,
			 l3 = h ^ 0xa4093822299f31d0ULL;
		for (; n >= 32; n -= 32, b += 32) {
			uint64_t w[4];
			memcpy(w, b, 32);
			l0 = gs_seal_step(l0, w[0]);
			l1 = gs_seal_step(l1, w[1]);
			l2 = gs_seal_step(l2, w[2]);
			l3 = gs_seal_step(l3, w[3]);
		}
		h = gs_seal_step(gs_seal_step(gs_seal_step(gs_seal_step(h, l0), l1), l2), l3);
	}
	for (; n >= 8; n -= 8, b += 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		h = gs_seal_step(h, w);
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, b, n);
		h = gs_seal_step(h, w ^ ((uint64_t)n << 56));
	}
	r->hash = gs_mix64(h ^ r->nbytes);
}

/*
 * Scratch records are per thread and live for the thread's lifetime; a
 * thread-specific key frees the buffer when the thread exits (it leaked
 * once per thread before).  A launch from a later destructor of the same
 * thread allocates again, and the key's destructor runs again for it.
 */
static _Thread_local gs_rec_t *gs_rec_tls GS_TLS_IE;
static pthread_key_t gs_rec_key;
static pthread_once_t gs_rec_key_once = PTHREAD_ONCE_INIT;
static bool gs_rec_key_ok;

static void gs_rec_tls_free(void *p)
{
	free(p);
	gs_rec_tls = NULL;
}

static void gs_rec_key_make(void)
{
	gs_rec_key_ok = pthread_key_create(&gs_rec_key, gs_rec_tls_free) == 0;
}

gs_rec_t *gs_rec_scratch(uint32_t nbytes)
{
	gs_rec_t *r = gs_rec_tls;
	if (GS_UNLIKELY(!r || r->cap < nbytes)) {
		uint32_t cap = nbytes < 256 ? 256 : nbytes;
		gs_rec_t *n = realloc(r, gs_rec_size(cap));
		if (!n)
			return NULL;
		r = gs_rec_tls = n;
		r->cap = cap;
		pthread_once(&gs_rec_key_once, gs_rec_key_make);
		if (gs_rec_key_ok)
			pthread_setspecific(gs_rec_key, r);
	}
	uint32_t cap = r->cap;
	memset(r, 0, sizeof(*r));
	r->cap = cap;
	r->nbytes = nbytes;
	return r;
}

bool gs_rec_copy(gs_rec_t **dst, const gs_rec_t *src)
{
	gs_rec_t *d = *dst;
	if (!d || d->cap < src->nbytes) {
		uint32_t cap = src->nbytes < 64 ? 64 : src->nbytes;
		gs_rec_t *n = realloc(d, gs_rec_size(cap));
		if (!n)
			return true;
		d = *dst = n;
		d->cap = cap;
	}
	uint32_t cap = d->cap;
	memcpy(d, src, gs_rec_size(src->nbytes));
	d->cap = cap;
	d->orig = NULL; /* the caller's arguments die with its call */
	return false;
}

/* Kinds count from 1: entry 0 (no kind) is a name of none. */
static const char *const gs_rec_kind_names[] = {"unknown", GS_REC_KINDS(GS_NAME_STR)};

const char *gs_rec_kind_name(uint32_t kind)
{
	return gs_name_at(gs_rec_kind_names, GS_REC_NKINDS, kind, "unknown");
}

bool gs_rec_same_shape(const gs_rec_t *a, const gs_rec_t *b)
{
	int f = gs_rec_aux_first(a);
	return a->shape == b->shape && a->kind == b->kind && a->ctx == b->ctx &&
	       a->nbytes == b->nbytes && a->layout == b->layout && a->flags == b->flags &&
	       !memcmp(a->aux + f, b->aux + f, (4 - f) * sizeof(a->aux[0]));
}

/* The operands other than the bytes: function, geometry, a copy's or memset's size. */
static bool gs_rec_same_geometry(const gs_rec_t *a, const gs_rec_t *b)
{
	return a->func == b->func && a->shmem == b->shmem &&
	       !memcmp(a->grid, b->grid, sizeof(a->grid)) &&
	       !memcmp(a->block, b->block, sizeof(a->block)) &&
	       (!gs_rec_aux_first(a) || a->aux[0] == b->aux[0]);
}

bool gs_rec_differs(const gs_rec_t *a, const gs_rec_t *b)
{
	/* Unequal hashes prove a difference; equal ones are confirmed. */
	if (a->hash != b->hash)
		return true;
	return !gs_rec_same_geometry(a, b) || a->nbytes != b->nbytes ||
	       memcmp(a->args, b->args, a->nbytes) != 0;
}

int gs_rec_first_diff(const gs_rec_t *a, const gs_rec_t *b)
{
	if (a->nbytes == b->nbytes && !memcmp(a->args, b->args, a->nbytes))
		return -1;
	uint32_t n = a->nbytes < b->nbytes ? a->nbytes : b->nbytes;
	uint32_t at = 0;
	while (at < n && a->args[at] == b->args[at])
		at++;
	if (a->kind != GS_REC_KERNEL || !a->layout)
		return a->kind == GS_REC_KERNEL ? 0 : (int)(at / 8);
	for (uint32_t i = 0; i < a->layout->nargs; i++)
		if (at < a->layout->arg[i].off + a->layout->arg[i].size)
			return (int)i;
	return (int)a->layout->nargs;
}

const char *gs_rec_diff_field(const gs_rec_t *a, const gs_rec_t *b)
{
	if (a->kind != b->kind)
		return "kind";
	if (a->ctx != b->ctx)
		return "context";
	if (a->nbytes != b->nbytes || a->layout != b->layout)
		return "layout";
	if (a->flags != b->flags ||
	    memcmp(a->aux + gs_rec_aux_first(a), b->aux + gs_rec_aux_first(a),
		   (4 - gs_rec_aux_first(a)) * sizeof(a->aux[0])))
		return "operation";
	if (a->func != b->func)
		return "function";
	if (memcmp(a->grid, b->grid, sizeof(a->grid)))
		return "grid";
	if (memcmp(a->block, b->block, sizeof(a->block)))
		return "block";
	if (a->shmem != b->shmem)
		return "shmem";
	if (gs_rec_aux_first(a) && a->aux[0] != b->aux[0])
		return "size";
	return "args";
}
