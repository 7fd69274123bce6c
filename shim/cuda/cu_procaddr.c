/*
 * How programs that reach the driver through the CUDA runtime are caught.
 * The runtime dlopens libcuda.so.1, fetches cuGetProcAddress(_v2) with dlsym
 * on that handle, and every other entry point through it (by unsuffixed
 * name, a CUDA version and per-thread-stream flags).  So we export dlsym,
 * dlvsym and cuGetProcAddress: each calls the real function, and when what
 * it returns is one of libcuda's functions we wrap, hands out our wrapper
 * instead.  Mapping the real pointer (rather than the requested name) keeps
 * the driver's own choice of version and stream semantics exactly, and
 * works whatever handle the lookup was made on (libcuda opened by soname or
 * by path, RTLD_DEFAULT, a library that depends on libcuda).
 */
#include <dlfcn.h>

#include "cu_internal.h"

typedef void *(*gs_cu_dlsym_fn)(void *, const char *);

/*
 * A sanitizer runtime calls dlsym while it initialises, before its shadow
 * memory exists, and our dlsym comes first in the lookup order: the code on
 * that path must not be instrumented (it crashed in every sanitizer build).
 */
#define GS_CU_NOSAN __attribute__((no_sanitize("address", "thread", "undefined")))

/* Read by the assembly entry below, hence not static. */
gs_cu_dlsym_fn gs_cu_real_dlsym_ptr;

/*
 * The C library's function `name`, cached in *slot.  Not a lookup by name
 * through dlsym or dlvsym: both are ours (cu_dlreal.c).
 */
GS_CU_NOSAN static void *gs_cu_libc_once(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!f) {
		f = gs_cu_libc_sym(name);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

void *gs_cu_dlsym_resolve(void);
GS_CU_NOSAN void *gs_cu_dlsym_resolve(void)
{
	return gs_cu_libc_once((void **)&gs_cu_real_dlsym_ptr, "dlsym");
}

GS_CU_NOSAN void *gs_cu_dlsym_real(void *handle, const char *name)
{
	gs_cu_dlsym_fn f = (gs_cu_dlsym_fn)gs_cu_dlsym_resolve();
	return f ? f(handle, name) : NULL;
}

typedef void *(*gs_cu_dlvsym_fn)(void *, const char *, const char *);
/* Read by the assembly entry below, hence not static. */
gs_cu_dlvsym_fn gs_cu_real_dlvsym_ptr;

void *gs_cu_dlvsym_resolve(void);
GS_CU_NOSAN void *gs_cu_dlvsym_resolve(void)
{
	return gs_cu_libc_once((void **)&gs_cu_real_dlvsym_ptr, "dlvsym");
}

/* A real libcuda pointer -> our wrapper; anything else unchanged. */
static void *gs_cu_swap(void *p, const char *name, const char *via)
{
	if (!p)
		return p;
	GS_CU_READY();
	void *w = gs_cu_wrapper_for(p);
	if (w)
		return w;
	if (__atomic_load_n(&gs_cu_lane.state, __ATOMIC_ACQUIRE) != GS_CU_NONE) {
		/* Unknown to cuda.h: a newer driver's entry point, not wrapped. */
		Dl_info di;
		if (dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, "libcuda"))
			gs_log_once(GS_LOG_DEBUG, "cuda: %s(%s) returned an "
				    "entry point graphshim does not wrap", via, name);
	}
	return p;
}

void *gs_cu_dlsym_impl(void *handle, const char *name);
GS_CU_NOSAN void *gs_cu_dlsym_impl(void *handle, const char *name)
{
	void *p = gs_cu_dlsym_real(handle, name);
	/* gs_cu_name_is_cu() spelled out: an instrumented helper would not be
	 * inlined here. */
	if (!p || !name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
		return p;
	return gs_cu_swap(p, name, "dlsym");
}

void *gs_cu_dlvsym_impl(void *handle, const char *name, const char *version);
GS_CU_NOSAN void *gs_cu_dlvsym_impl(void *handle, const char *name, const char *version)
{
	gs_cu_dlvsym_fn f = (gs_cu_dlvsym_fn)gs_cu_dlvsym_resolve();
	void *p = f ? f(handle, name, version) : NULL;
	if (!p || !name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
		return p;
	return gs_cu_swap(p, name, "dlvsym");
}

/*
 * dlsym and dlvsym themselves.  glibc resolves RTLD_NEXT relative to the caller's return
 * address, so for RTLD_NEXT we must tail-jump into the real dlsym with the
 * caller's return address intact; a C wrapper would make every RTLD_NEXT
 * lookup relative to libgraphshim (and could hand a later library its own
 * symbol back).  Other handles go through gs_cu_dlsym_impl.
 */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	cmpq $-1, %rdi\n" /* RTLD_NEXT is ((void *)-1l) */
	"	jne gs_cu_dlsym_impl\n"
	"	movq gs_cu_real_dlsym_ptr(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	call gs_cu_dlsym_resolve\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	jmp *%rax\n"
	"2:	ret\n"
	".size dlsym, .-dlsym\n"
	".globl dlvsym\n"
	".type dlvsym, @function\n"
	"dlvsym:\n"
	"	cmpq $-1, %rdi\n"
	"	jne gs_cu_dlvsym_impl\n"
	"	movq gs_cu_real_dlvsym_ptr(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	pushq %rdi\n" /* three pushes keep the stack 16-byte aligned */
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	call gs_cu_dlvsym_resolve\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	jmp *%rax\n"
	"2:	ret\n"
	".size dlvsym, .-dlvsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, %function\n"
	"dlsym:\n"
	"	cmn x0, #1\n"
	"	b.ne gs_cu_dlsym_impl\n"
	"	adrp x16, gs_cu_real_dlsym_ptr\n"
	"	ldr x16, [x16, :lo12:gs_cu_real_dlsym_ptr]\n"
	"	cbz x16, 1f\n"
	"	br x16\n"
	"1:	stp x0, x1, [sp, #-32]!\n"
	"	str x30, [sp, #16]\n"
	"	bl gs_cu_dlsym_resolve\n"
	"	mov x16, x0\n"
	"	ldr x30, [sp, #16]\n"
	"	ldp x0, x1, [sp], #32\n"
	"	cbz x16, 2f\n"
	"	br x16\n"
	"2:	mov x0, #0\n"
	"	ret\n"
	".size dlsym, .-dlsym\n"
	".globl dlvsym\n"
	".type dlvsym, %function\n"
	"dlvsym:\n"
	"	cmn x0, #1\n"
	"	b.ne gs_cu_dlvsym_impl\n"
	"	adrp x16, gs_cu_real_dlvsym_ptr\n"
	"	ldr x16, [x16, :lo12:gs_cu_real_dlvsym_ptr]\n"
	"	cbz x16, 1f\n"
	"	br x16\n"
	"1:	stp x0, x1, [sp, #-32]!\n"
	"	stp x2, x30, [sp, #16]\n"
	"	bl gs_cu_dlvsym_resolve\n"
	"	mov x16, x0\n"
	"	ldp x2, x30, [sp, #16]\n"
	"	ldp x0, x1, [sp], #32\n"
	"	cbz x16, 2f\n"
	"	br x16\n"
	"2:	mov x0, #0\n"
	"	ret\n"
	".size dlvsym, .-dlvsym\n");
#else
/* Elsewhere RTLD_NEXT lookups through us are relative to libgraphshim. */
GS_EXPORT void *dlsym(void *handle, const char *name)
{
	return gs_cu_dlsym_impl(handle, name);
}
GS_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
	return gs_cu_dlvsym_impl(handle, name, version);
}
#endif

CUresult gs_cu_x_cuGetProcAddress(int pt, const char *symbol, void **pfn,
				  int cudaVersion, cuuint64_t flags)
{
	GS_CU_READY();
	if (GS_UNLIKELY(!gs_cu_real.cuGetProcAddress))
		return gs_cu_missing(GS_CU_IDX_cuGetProcAddress);
	CUresult r = gs_cu_real.cuGetProcAddress(symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = gs_cu_swap(*pfn, symbol, "cuGetProcAddress");
	return r;
}

CUresult gs_cu_x_cuGetProcAddress_v2(int pt, const char *symbol, void **pfn,
				     int cudaVersion, cuuint64_t flags,
				     CUdriverProcAddressQueryResult *symbolStatus)
{
	GS_CU_READY();
	if (GS_UNLIKELY(!gs_cu_real.cuGetProcAddress_v2))
		return gs_cu_missing(GS_CU_IDX_cuGetProcAddress_v2);
	CUresult r = gs_cu_real.cuGetProcAddress_v2(symbol, pfn, cudaVersion,
						    flags, symbolStatus);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = gs_cu_swap(*pfn, symbol, "cuGetProcAddress");
	return r;
}
