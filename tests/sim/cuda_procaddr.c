/*
 * cuGetProcAddress: how the CUDA runtime (and graphshim) reach the driver.
 * Symbols are asked for without a version suffix; the answer is the newest
 * implementation whose version does not exceed the caller's cudaVersion,
 * and its _ptsz/_ptds variant when the per-thread-default-stream flag is
 * given.  The table comes from the single list in cuda_syms.h.
 */
#include <string.h>

#include "cuda_front.h"
#include "cuda_syms.h"

typedef struct sym {
	const char *name;
	int version;
	void *fn, *ptds;
} sym_t;

static const sym_t syms[] = {
#define GS_CU_SYM_ENTRY(name, ver, fn, pt) { #name, ver, (void *)&fn, (void *)&pt },
	GS_CU_SYMS(GS_CU_SYM_ENTRY)
#undef GS_CU_SYM_ENTRY
};

static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
		       CUdriverProcAddressQueryResult *status)
{
	const sym_t *best = NULL;
	bool found = false;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!symbol || !pfn || (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
						    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (strcmp(syms[i].name, symbol) != 0)
			continue;
		found = true;
		if (syms[i].version <= cudaVersion && (!best || syms[i].version > best->version))
			best = &syms[i];
	}
	if (!best) {
		if (found && status)
			*status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
		return CUDA_ERROR_NOT_FOUND;
	}
	*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? best->ptds : best->fn;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus)
{
	return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult cuGetProcAddress_v1(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return lookup(symbol, pfn, cudaVersion, flags, NULL);
}
