/*
 * Reads kernel argument layouts from AMDGPU code objects with libelf and
 * msgpack-c.  The one container parsed by hand is the clang offload bundle
 * header ("__CLANG_OFFLOAD_BUNDLE__", a count, then offset/size/triple
 * entries), which is neither ELF nor msgpack.  Hidden arguments (value kinds
 * "hidden_*") are filled by the runtime, not the caller, so they are left
 * out of the layout: the layout describes what kernelParams[] points at.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <msgpack.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hip_codeobj.h"

#define GS_BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define GS_NT_AMDGPU_METADATA 32

/* Bundles are little-endian, as is every host HIP runs on: gs_load_u64 reads them. */
static size_t gs_elf_span(const unsigned char *p)
{
	if (memcmp(p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64)
		return 0;
	Elf64_Ehdr eh;
	memcpy(&eh, p, sizeof(eh));
	size_t end = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	size_t ph = eh.e_phoff + (size_t)eh.e_phnum * eh.e_phentsize;
	return end > ph ? end : ph;
}

/* The amdgcn entry of a bundle: its offset and size. */
static bool gs_bundle_find(const unsigned char *p, size_t size, size_t *off, size_t *len)
{
	size_t ml = sizeof(GS_BUNDLE_MAGIC) - 1;
	if (size < ml + 8 || memcmp(p, GS_BUNDLE_MAGIC, ml))
		return true;
	uint64_t n = gs_load_u64(p + ml), at = ml + 8;
	for (uint64_t i = 0; i < n && n < 4096; i++) {
		if (at + 24 > size)
			return true;
		uint64_t o = gs_load_u64(p + at), s = gs_load_u64(p + at + 8), tl = gs_load_u64(p + at + 16);
		at += 24;
		if (tl > 4096 || at + tl > size)
			return true;
		bool amd = memmem(p + at, tl, "amdgcn-amd-amdhsa", 17) != NULL;
		at += tl;
		if (amd && s && o + s <= size && o + s > o) {
			*off = o;
			*len = s;
			return false;
		}
	}
	return true;
}

size_t gs_hip_codeobj_span(const void *image)
{
	const unsigned char *p = image;
	if (!p)
		return 0;
	if (!memcmp(p, ELFMAG, SELFMAG))
		return gs_elf_span(p);
	size_t ml = sizeof(GS_BUNDLE_MAGIC) - 1;
	if (memcmp(p, GS_BUNDLE_MAGIC, ml))
		return 0;
	uint64_t n = gs_load_u64(p + ml), at = ml + 8, end = at;
	for (uint64_t i = 0; i < n && n < 4096; i++) {
		uint64_t o = gs_load_u64(p + at), s = gs_load_u64(p + at + 8), tl = gs_load_u64(p + at + 16);
		if (tl > 4096)
			return 0;
		at += 24 + tl;
		end = at > end ? at : end;
		if (o + s > end)
			end = o + s;
	}
	return end;
}

static bool gs_str_is(const msgpack_object *o, const char *s)
{
	size_t n = strlen(s);
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && !memcmp(o->via.str.ptr, s, n);
}

static const msgpack_object *gs_map_get(const msgpack_object *m, const char *key)
{
	if (m->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < m->via.map.size; i++)
		if (gs_str_is(&m->via.map.ptr[i].key, key))
			return &m->via.map.ptr[i].val;
	return NULL;
}

static bool gs_map_u64(const msgpack_object *m, const char *key, uint64_t *v)
{
	const msgpack_object *o = gs_map_get(m, key);
	if (!o || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return true;
	*v = o->via.u64;
	return false;
}

/* One kernel map -> name and layout; true when it is malformed. */
static bool gs_kernel_from(const msgpack_object *k, gs_hip_kernel_t *out)
{
	const msgpack_object *name = gs_map_get(k, ".name");
	const msgpack_object *args = gs_map_get(k, ".args");
	if (!name || name->type != MSGPACK_OBJECT_STR)
		return true;
	uint32_t na = args && args->type == MSGPACK_OBJECT_ARRAY ? args->via.array.size : 0;
	gs_layout_t *l = calloc(1, sizeof(*l) + na * sizeof(gs_arg_t));
	if (!l)
		return true;
	for (uint32_t i = 0; i < na; i++) {
		const msgpack_object *a = &args->via.array.ptr[i];
		const msgpack_object *vk = gs_map_get(a, ".value_kind");
		if (vk && vk->type == MSGPACK_OBJECT_STR && vk->via.str.size >= 7 &&
		    !memcmp(vk->via.str.ptr, "hidden_", 7))
			continue;
		uint64_t off, size;
		if (gs_map_u64(a, ".offset", &off) || gs_map_u64(a, ".size", &size) ||
		    off + size > UINT32_MAX) {
			free(l);
			return true;
		}
		l->arg[l->nargs].off = (uint32_t)off;
		l->arg[l->nargs].size = (uint32_t)size;
		l->nargs++;
		if (off + size > l->total)
			l->total = (uint32_t)(off + size);
	}
	out->name = strndup(name->via.str.ptr, name->via.str.size);
	if (!out->name) {
		free(l);
		return true;
	}
	out->layout = l;
	return false;
}

static bool gs_metadata_parse(const char *buf, size_t len, gs_hip_codeobj_t *co)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	bool bad = true;
	if (msgpack_unpack_next(&u, buf, len, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *ks = gs_map_get(&u.data, "amdhsa.kernels");
		if (ks && ks->type == MSGPACK_OBJECT_ARRAY) {
			co->k = calloc(ks->via.array.size + 1, sizeof(*co->k));
			bad = !co->k;
			for (uint32_t i = 0; !bad && i < ks->via.array.size; i++)
				if (!gs_kernel_from(&ks->via.array.ptr[i], &co->k[co->n]))
					co->n++;
		}
	}
	msgpack_unpacked_destroy(&u);
	return bad;
}

static bool gs_elf_parse(const unsigned char *p, size_t size, gs_hip_codeobj_t *co)
{
	static bool versioned;
	if (!__atomic_load_n(&versioned, __ATOMIC_ACQUIRE)) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return true;
		__atomic_store_n(&versioned, true, __ATOMIC_RELEASE);
	}
	Elf *e = elf_memory((char *)p, size);
	if (!e)
		return true;
	bool bad = true;
	Elf_Scn *scn = NULL;
	while (bad && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t at = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (d && bad && (at = gelf_getnote(d, at, &nh, &name_off, &desc_off)) != 0) {
			if (nh.n_type == GS_NT_AMDGPU_METADATA && nh.n_namesz >= 6 &&
			    !memcmp((char *)d->d_buf + name_off, "AMDGPU", 6))
				bad = gs_metadata_parse((char *)d->d_buf + desc_off, nh.n_descsz, co);
		}
	}
	elf_end(e);
	return bad;
}

bool gs_hip_codeobj_parse(const void *image, size_t size, gs_hip_codeobj_t *co)
{
	const unsigned char *p = image;
	memset(co, 0, sizeof(*co));
	if (!p || size < SELFMAG)
		return true;
	size_t off, len;
	if (!gs_bundle_find(p, size, &off, &len)) {
		p += off;
		size = len;
	}
	if (size < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG))
		return true; /* compressed bundles and anything else: no layout */
	if (gs_elf_parse(p, size, co)) {
		gs_hip_codeobj_free(co);
		return true;
	}
	return false;
}

bool gs_hip_codeobj_parse_file(const char *path, gs_hip_codeobj_t *co)
{
	memset(co, 0, sizeof(*co));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	struct stat st;
	bool bad = true;
	if (!fstat(fd, &st) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			bad = gs_hip_codeobj_parse(m, (size_t)st.st_size, co);
			munmap(m, (size_t)st.st_size);
		}
	}
	close(fd);
	return bad;
}

const gs_layout_t *gs_hip_codeobj_find(const gs_hip_codeobj_t *co, const char *name)
{
	size_t n = strlen(name);
	if (n > 3 && !strcmp(name + n - 3, ".kd"))
		n -= 3;
	for (size_t i = 0; i < co->n; i++)
		if (strlen(co->k[i].name) == n && !memcmp(co->k[i].name, name, n))
			return co->k[i].layout;
	return NULL;
}

void gs_hip_codeobj_free(gs_hip_codeobj_t *co)
{
	/* Function entries point at these layouts; they are dropped with their
	 * module, after the engine forgot every sequence (hipModuleUnload). */
	for (size_t i = 0; i < co->n; i++) {
		free(co->k[i].name);
		free((void *)co->k[i].layout);
	}
	free(co->k);
	memset(co, 0, sizeof(*co));
}
