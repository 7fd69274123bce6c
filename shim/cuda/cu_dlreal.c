/*
 * The C library's own dlsym and dlvsym, found without asking either.
 * graphshim exports both (cu_procaddr.c), and any lookup by name, from
 * graphshim's own code too, finds graphshim's first: the usual bootstrap
 * (dlvsym(RTLD_NEXT, "dlsym", ...)) would come back into graphshim.  So the
 * symbols are read from libc's dynamic symbol table, reached through the
 * dynamic linker's list of loaded objects (_r_debug), which takes no call
 * at all.  That matters because a sanitizer runtime calls dlsym while it
 * initialises, before it can run instrumented code or its own interceptors
 * (dl_iterate_phdr is one): nothing here is instrumented or intercepted.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "cu_internal.h"

#define GS_CU_NOSAN __attribute__((no_sanitize("address", "thread", "undefined")))

/* An address the dynamic section gives: relocated in place by glibc, or not. */
GS_CU_NOSAN static const void *gs_cu_dyn_ptr(const struct link_map *m, ElfW(Addr) p)
{
	return (const void *)(p < m->l_addr ? m->l_addr + p : p);
}

/* The number of dynamic symbols, from the GNU hash table (no count is stored). */
GS_CU_NOSAN static size_t gs_cu_gnu_hash_nsyms(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2];
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;
	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return (size_t)last + 1;
}

GS_CU_NOSAN static bool gs_cu_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* True when the last component of path begins with prefix ("libc.so"). */
GS_CU_NOSAN static bool gs_cu_is_lib(const char *path, const char *prefix)
{
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			base = p + 1;
	while (*prefix && *base == *prefix)
		base++, prefix++;
	return !*prefix;
}

/* Find `name` (a function) in one object's dynamic symbol table, or NULL. */
GS_CU_NOSAN static void *gs_cu_elf_find(const struct link_map *m, const char *name)
{
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *hash = NULL, *gnu = NULL;
	for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = gs_cu_dyn_ptr(m, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = gs_cu_dyn_ptr(m, d->d_un.d_ptr); break;
		case DT_HASH: hash = gs_cu_dyn_ptr(m, d->d_un.d_ptr); break;
		case DT_GNU_HASH: gnu = gs_cu_dyn_ptr(m, d->d_un.d_ptr); break;
		}
	}
	if (!symtab || !strtab || (!hash && !gnu))
		return NULL;
	size_t n = hash ? hash[1] : gs_cu_gnu_hash_nsyms(gnu);
	for (size_t i = 1; i < n; i++) {
		const ElfW(Sym) *s = &symtab[i];
		if (s->st_value && s->st_shndx != SHN_UNDEF &&
		    (s->st_info & 0xf) == STT_FUNC &&
		    gs_cu_streq(strtab + s->st_name, name))
			return (void *)(m->l_addr + s->st_value);
	}
	return NULL;
}

/* libc.so.6 has dlsym and dlvsym since glibc 2.34; libdl.so.2 before. */
GS_CU_NOSAN void *gs_cu_libc_sym(const char *name)
{
	static const char *const libs[] = { "libc.so", "libdl.so" };
	for (unsigned i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next)
			if (m->l_name && gs_cu_is_lib(m->l_name, libs[i])) {
				void *p = gs_cu_elf_find(m, name);
				if (p)
					return p;
			}
	return NULL;
}
