/*
 * Small definitions shared by every part of graphshim: visibility, branch
 * hints and the hash used for record shapes and argument bytes.  This file
 * and the rest of shim/core/ never include a vendor header.
 */
#ifndef GS_COMMON_H
#define GS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GS_EXPORT __attribute__((visibility("default")))
#define GS_LIKELY(x) __builtin_expect(!!(x), 1)
/*
 * Thread-locals read on every launch: the initial-exec model reads them
 * with no call to __tls_get_addr.  The library is preloaded (or linked),
 * never dlopen()ed late, so its TLS is in the static block.
 */
#define GS_TLS_IE __attribute__((tls_model("initial-exec")))
#define GS_UNLIKELY(x) __builtin_expect(!!(x), 0)
/*
 * The functions of a pass-through launch: the linker keeps .text.hot
 * together, so a launch that follows a real driver's (which evicts the
 * caller's code from the first-level cache) misses on fewer lines.
 */
#define GS_HOT __attribute__((hot))
#define GS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Name tables generated from X-lists of X(NAME, "name") entries:
 * { LIST(GS_NAME_STR) } is the names, { LIST(GS_NAME_ID) } the NAMEs as
 * strings.  gs_name_at() looks one up, `none` outside the table.
 */
#define GS_NAME_STR(n, s) s,
#define GS_NAME_ID(n, s) #n,

static inline const char *gs_name_at(const char *const *names, unsigned count, unsigned i,
				     const char *none)
{
	return i < count ? names[i] : none;
}

/* The 8 bytes at p, wherever they are aligned (host byte order). */
static inline uint64_t gs_load_u64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Raise *p to v when v is larger, atomically (relaxed). */
static inline void gs_atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
	/* A failed exchange reloads cur; stop once it is already large enough. */
	while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* A 64-bit mix (the murmur3 finaliser); good enough to spread handles. */
static inline uint64_t gs_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/*
 * A lock-free open-addressed table of nonzero 64-bit keys (nslots a power
 * of two), entries never removed: key's slot, probing at most `probes`
 * slots from `home`; with `make` an empty one is taken for it.  nslots when
 * it is not there (or, with `make`, no room): the caller decides.
 */
static inline uint32_t gs_probe_slot(uint64_t *keys, uint32_t nslots, uint32_t home,
				     uint32_t probes, uint64_t key, bool make)
{
	uint32_t i = home;
	for (uint32_t n = 0; n < probes; n++, i = (i + 1) & (nslots - 1)) {
		uint64_t k = __atomic_load_n(&keys[i], __ATOMIC_ACQUIRE);
		if (k == key)
			return i;
		if (k)
			continue;
		if (!make)
			return nslots;
		if (__atomic_compare_exchange_n(&keys[i], &k, key, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) ||
		    k == key)
			return i;
	}
	return nslots;
}

/* Combine a running hash with one more 64-bit word. */
static inline uint64_t gs_hash_step(uint64_t h, uint64_t v)
{
	return gs_mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* Hash a byte buffer 8 bytes at a time; the tail is zero padded. */
static inline uint64_t gs_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		h = gs_hash_step(h, w);
		b += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, b, n);
		h = gs_hash_step(h, w ^ ((uint64_t)n << 56));
	}
	return h;
}

#endif /* GS_COMMON_H */
