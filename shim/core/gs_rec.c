/*
 * Launch records: sealing (the shape's hash; the operands' on demand),
 * copying, and comparing.  The
 * comparisons here are what every replay's revalidation is made of.
 */
#include "gs_rec.h"

#include <pthread.h>
#include <stdlib.h>

/*
 * One multiply and a fold a word, one full mix at the end: sealing (the
 * shape) runs on every launch, including those passed straight through;
 * the operands' hash where something asks for it.  The hashes only pick
 * candidates; every match is confirmed field by field and byte by byte.
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

/* The shape's hash chain, before its final mix: the operands' hash goes on from it. */
static uint64_t gs_rec_shape_chain(const gs_rec_t *r)
{
	/* The shape: what no patch of a graph node can change. */
	uint64_t h = 0x6773687368617065ULL ^ r->kind;
	h = gs_seal_step(h, (uintptr_t)r->ctx);
	h = gs_seal_step(h, ((uint64_t)r->flags << 32) ^ r->nbytes);
	h = gs_seal_step(h, (uintptr_t)r->layout);
	for (int i = gs_rec_aux_first(r); i < 4; i++)
		h = gs_seal_step(h, r->aux[i]);
	return h;
}

void gs_rec_seal(gs_rec_t *r)
{
	r->shape = gs_mix64(gs_rec_shape_chain(r));
	r->hashed = 0;
}

/*
 * The operands' hash is linear in the argument words: the XOR of a strong
 * mix of each 8-byte word with its index, XORed with a chain over the
 * shape and the geometry (the function, grid, block, shared memory, a
 * copy's size).  A record that differs from a hashed one of the same size
 * in a few words is then hashed from that one's hash by those words alone
 * (gs_rec_hash_diff): a drifting PyTorch launch changes two or three of
 * its 82 words, and its rebake and the variants' history need its hash
 * every pass.  The words' mixes are independent, so a full hash overlaps
 * them as the four lanes did before.
 */
static inline uint64_t gs_rec_word(uint64_t w, uint32_t i)
{
	return gs_mix64(w ^ ((uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL));
}

/* Word i of r's arguments (the tail zero-padded and marked with its length). */
static inline uint64_t gs_rec_word_at(const gs_rec_t *r, uint32_t i)
{
	uint32_t at = i * 8, n = r->nbytes - at;
	if (n >= 8)
		return gs_load_u64(r->args + at);
	uint64_t w = 0;
	memcpy(&w, r->args + at, n);
	return w ^ ((uint64_t)n << 56);
}

static inline uint32_t gs_rec_nwords(const gs_rec_t *r)
{
	return (r->nbytes + 7) / 8;
}

/* The hash's part from the shape (its hash, made when sealed) and the geometry. */
static uint64_t gs_rec_hash_fixed(const gs_rec_t *r)
{
	uint64_t h = gs_seal_step(r->shape, (uintptr_t)r->func);
	h = gs_seal_step(h, ((uint64_t)r->grid[0] << 32) | r->grid[1]);
	h = gs_seal_step(h, ((uint64_t)r->grid[2] << 32) | r->block[0]);
	h = gs_seal_step(h, ((uint64_t)r->block[1] << 32) | r->block[2]);
	h = gs_seal_step(h, ((uint64_t)r->shmem << 32) ^ (gs_rec_aux_first(r) ? r->aux[0] : 0));
	return gs_mix64(h ^ r->nbytes);
}

static void gs_rec_hash_set(const gs_rec_t *cr, uint64_t h)
{
	gs_rec_t *r = (gs_rec_t *)cr; /* a cache in the record (gs_rec_hash) */
	r->hash = h;
	r->hashed = 1;
}

uint64_t gs_rec_hash_slow(const gs_rec_t *r)
{
	uint64_t h = gs_rec_hash_fixed(r);
	uint32_t n = gs_rec_nwords(r), full = r->nbytes / 8, i = 0;
	for (; i + 4 <= full; i += 4) { /* four at a time: the mixes overlap */
		h ^= gs_rec_word(gs_load_u64(r->args + i * 8), i) ^
		     gs_rec_word(gs_load_u64(r->args + i * 8 + 8), i + 1) ^
		     gs_rec_word(gs_load_u64(r->args + i * 8 + 16), i + 2) ^
		     gs_rec_word(gs_load_u64(r->args + i * 8 + 24), i + 3);
	}
	for (; i < n; i++)
		h ^= gs_rec_word(gs_rec_word_at(r, i), i);
	gs_rec_hash_set(r, h);
	return h;
}

/* The operands other than the bytes: function, geometry, a copy's or memset's size. */
static bool gs_rec_same_geometry(const gs_rec_t *a, const gs_rec_t *b)
{
	return a->func == b->func && a->shmem == b->shmem &&
	       !memcmp(a->grid, b->grid, sizeof(a->grid)) &&
	       !memcmp(a->block, b->block, sizeof(a->block)) &&
	       (!gs_rec_aux_first(a) || a->aux[0] == b->aux[0]);
}

uint64_t gs_rec_hash_diff(const gs_rec_t *r, const gs_rec_t *base)
{
	if (r->hashed)
		return r->hash;
	if (!base->hashed || base->nbytes != r->nbytes || base->shape != r->shape)
		return gs_rec_hash_slow(r);
	uint64_t h = base->hash;
	if (!gs_rec_same_geometry(r, base))
		h ^= gs_rec_hash_fixed(base) ^ gs_rec_hash_fixed(r);
	const unsigned char *pa = base->args, *pb = r->args;
	uint32_t n = gs_rec_nwords(r), full = r->nbytes / 8, i = 0;
	for (; i + 4 <= full; i += 4) { /* four words compared at once, most of them equal */
		uint64_t a0 = gs_load_u64(pa + i * 8), a1 = gs_load_u64(pa + i * 8 + 8),
			 a2 = gs_load_u64(pa + i * 8 + 16), a3 = gs_load_u64(pa + i * 8 + 24);
		uint64_t b0 = gs_load_u64(pb + i * 8), b1 = gs_load_u64(pb + i * 8 + 8),
			 b2 = gs_load_u64(pb + i * 8 + 16), b3 = gs_load_u64(pb + i * 8 + 24);
		if (GS_LIKELY(!((a0 ^ b0) | (a1 ^ b1) | (a2 ^ b2) | (a3 ^ b3))))
			continue;
		for (uint32_t k = 0; k < 4; k++) {
			uint64_t x = gs_load_u64(pa + (i + k) * 8), y = gs_load_u64(pb + (i + k) * 8);
			if (x != y)
				h ^= gs_rec_word(x, i + k) ^ gs_rec_word(y, i + k);
		}
	}
	for (; i < n; i++) {
		uint64_t x = gs_rec_word_at(base, i), y = gs_rec_word_at(r, i);
		if (x != y)
			h ^= gs_rec_word(x, i) ^ gs_rec_word(y, i);
	}
	gs_rec_hash_set(r, h);
	return h;
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

bool gs_rec_differs(const gs_rec_t *a, const gs_rec_t *b)
{
	/* Unequal hashes prove a difference; equal ones are confirmed.  Where
	 * either has none, the bytes alone decide (cheaper than hashing). */
	if (a->hashed && b->hashed && a->hash != b->hash)
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
