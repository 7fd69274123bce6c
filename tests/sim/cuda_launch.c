/*
 * CUDA front: modules, libraries, functions/kernels, parameter layout
 * queries and kernel launches.  A CUkernel may be passed where a CUfunction
 * is expected (cuLaunchKernel, kernel nodes); the handle registry tells the
 * two apart.  Arguments are copied at call time.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_front.h"

gs_sim_func_t *gs_cu_func(CUfunction f)
{
	if (gs_sim_reg_is(f, GS_SIM_H_FUNC))
		return (gs_sim_func_t *)f;
	if (gs_sim_reg_is(f, GS_SIM_H_KERN))
		return ((gs_sim_kern_t *)f)->fn;
	return NULL;
}

/* ---- modules ---- */
static CUresult module_out(gs_sim_err_t e, gs_sim_module_t *m, void **out, bool library)
{
	if (e)
		return gs_cu_err(e);
	m->library = library;
	*out = m;
	return CUDA_SUCCESS;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	gs_sim_module_t *m = NULL;
	GS_CU_CHECK_INIT();
	if (!module || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	gs_sim_err_t e = gs_sim_module_load_file(&m, fname);
	return module_out(e, m, (void **)module, false);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	gs_sim_module_t *m = NULL;
	GS_CU_CHECK_INIT();
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	gs_sim_err_t e = gs_sim_module_load_image(&m, image);
	return module_out(e, m, (void **)module, false);
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
			    CUjit_option *options, void **optionValues)
{
	return cuModuleLoadData(module, image);
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	GS_CU_CHECK_INIT();
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_sim_reg_is(hmod, GS_SIM_H_MODULE) || ((gs_sim_module_t *)hmod)->library)
		return CUDA_ERROR_INVALID_HANDLE;
	gs_sim_func_t *f = gs_sim_module_func((gs_sim_module_t *)hmod, name);
	if (!f)
		return CUDA_ERROR_NOT_FOUND;
	*hfunc = (CUfunction)f;
	return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hmod, GS_SIM_H_MODULE) || ((gs_sim_module_t *)hmod)->library)
		return CUDA_ERROR_INVALID_HANDLE;
	gs_sim_module_unload((gs_sim_module_t *)hmod);
	return CUDA_SUCCESS;
}

/* ---- libraries (context-independent modules) ---- */
CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
			       void **jitOptionsValues, unsigned int numJitOptions,
			       CUlibraryOption *libraryOptions, void **libraryOptionValues,
			       unsigned int numLibraryOptions)
{
	gs_sim_module_t *m = NULL;
	GS_CU_CHECK_INIT();
	if (!library || !fileName)
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_err_t e = gs_sim_module_load_file(&m, fileName);
	return module_out(e, m, (void **)library, true);
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
			   void **jitOptionsValues, unsigned int numJitOptions,
			   CUlibraryOption *libraryOptions, void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	gs_sim_module_t *m = NULL;
	GS_CU_CHECK_INIT();
	if (!library || !code)
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_err_t e = gs_sim_module_load_image(&m, code);
	return module_out(e, m, (void **)library, true);
}

CUresult cuLibraryUnload(CUlibrary library)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(library, GS_SIM_H_MODULE) || !((gs_sim_module_t *)library)->library)
		return CUDA_ERROR_INVALID_HANDLE;
	gs_sim_module_unload((gs_sim_module_t *)library);
	return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	GS_CU_CHECK_INIT();
	if (!pKernel || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_sim_reg_is(library, GS_SIM_H_MODULE) || !((gs_sim_module_t *)library)->library)
		return CUDA_ERROR_INVALID_HANDLE;
	gs_sim_module_t *m = (gs_sim_module_t *)library;
	gs_sim_func_t *f = gs_sim_module_func(m, name);
	if (!f)
		return CUDA_ERROR_NOT_FOUND;
	*pKernel = (CUkernel)&m->kerns[f - m->funcs];
	return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	GS_CU_CHECK_INIT();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_sim_reg_is(lib, GS_SIM_H_MODULE))
		return CUDA_ERROR_INVALID_HANDLE;
	*count = (unsigned)((gs_sim_module_t *)lib)->n;
	return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	GS_CU_CHECK_INIT();
	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_sim_reg_is(kernel, GS_SIM_H_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*pFunc = (CUfunction)((gs_sim_kern_t *)kernel)->fn;
	return CUDA_SUCCESS;
}

/* ---- parameter layout and attributes ---- */

/*
 * What an injected parameter-query fault answers: CUDA_ERROR_INVALID_VALUE
 * (a query that failed once, as the end of the list also answers), or the
 * status in GS_SIM_PARAM_INFO_STATUS (801, CUDA_ERROR_NOT_SUPPORTED: a
 * driver that cannot say).  A driver answering INVALID_VALUE at index 0 of
 * a function it knows says the function takes no parameters.
 */
static CUresult param_info_fault_status(void)
{
	static int st = -1;
	if (st < 0) {
		const char *v = getenv("GS_SIM_PARAM_INFO_STATUS");
		st = v && *v ? atoi(v) : (int)CUDA_ERROR_INVALID_VALUE;
	}
	return (CUresult)st;
}

static CUresult param_info(gs_sim_func_t *f, size_t i, size_t *off, size_t *size)
{
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!off && !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (gs_sim_fault(GS_SIM_F_PARAM_INFO))
		return param_info_fault_status();
	if (i >= f->k->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	if (off)
		*off = f->off[i];
	if (size)
		*size = f->k->size[i];
	return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
	GS_CU_CHECK_INIT();
	return param_info(gs_sim_reg_is(func, GS_SIM_H_FUNC) ? (gs_sim_func_t *)func : NULL,
			  paramIndex, paramOffset, paramSize);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
	GS_CU_CHECK_INIT();
	return param_info(gs_sim_reg_is(kernel, GS_SIM_H_KERN) ? ((gs_sim_kern_t *)kernel)->fn : NULL,
			  paramIndex, paramOffset, paramSize);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	GS_CU_CHECK_INIT();
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_sim_reg_is(hfunc, GS_SIM_H_FUNC))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = ((gs_sim_func_t *)hfunc)->k->name;
	return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	GS_CU_CHECK_INIT();
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_sim_reg_is(hfunc, GS_SIM_H_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = ((gs_sim_kern_t *)hfunc)->fn->k->name;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	GS_CU_CHECK_INIT();
	gs_sim_func_t *f = gs_cu_func(hfunc);
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 49152; break;
	default: *pi = 0; break;
	}
	return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	GS_CU_CHECK_INIT();
	return gs_cu_func(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	GS_CU_CHECK_INIT();
	return gs_cu_func(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- launches ---- */
/* This vendor's launch limits and `extra` markers (an H100's). */
static const gs_sim_launch_abi_t gs_cu_launch_abi = {
	.max_grid_y = 65535, .max_grid_z = 65535, .max_block = { 1024, 1024, 64 },
	.max_threads = 1024, .max_shmem = UINT_MAX, .m_ptr = CU_LAUNCH_PARAM_BUFFER_POINTER,
	.m_size = CU_LAUNCH_PARAM_BUFFER_SIZE, .m_end = CU_LAUNCH_PARAM_END,
};

/* The kernel work item of a launch (sim_front.h). */
CUresult gs_cu_kernel_work(gs_sim_work_t *w, gs_sim_func_t *fn, const unsigned grid[3],
			   const unsigned block[3], unsigned shmem, void **params, void **extra)
{
	return gs_cu_err(gs_sim_front_kernel_work(w, fn, grid, block, shmem, params, extra,
						  &gs_cu_launch_abi));
}

/*
 * The simulated device: GS_CU_SIM_SMS multiprocessors, each running up to
 * 2048 threads, 32 blocks and 228 KB of shared memory at once.  A
 * cooperative grid must fit whole.
 */
static int coop_per_sm(uint64_t threads, size_t shmem)
{
	if (!threads || threads > 1024)
		return 0;
	uint64_t n = 2048 / threads;
	if (n > 32)
		n = 32;
	if (shmem && 228u * 1024 / shmem < n)
		n = 228u * 1024 / shmem;
	return (int)n;
}

static bool gs_cu_coop_fits(const gs_sim_dim_t *d)
{
	uint64_t threads = (uint64_t)d->block[0] * d->block[1] * d->block[2];
	uint64_t blocks = (uint64_t)d->grid[0] * d->grid[1] * d->grid[2];
	return blocks <= (uint64_t)coop_per_sm(threads, d->shmem) * GS_CU_SIM_SMS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
						     size_t dynamicSMemSize)
{
	GS_CU_CHECK_INIT();
	if (!numBlocks || !gs_cu_func(func) || blockSize <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	*numBlocks = coop_per_sm((uint64_t)blockSize, dynamicSMemSize);
	return CUDA_SUCCESS;
}

CUresult gs_cu_kernel_attr(gs_sim_dim_t *dim, CUlaunchAttributeID id, const CUlaunchAttributeValue *v,
			   bool launch)
{
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
		const unsigned c[3] = { v->clusterDim.x, v->clusterDim.y, v->clusterDim.z };
		for (int i = 0; i < 3; i++)
			if (!c[i] || dim->grid[i] % c[i])
				return CUDA_ERROR_INVALID_VALUE; /* a cluster must divide the grid */
		memcpy(dim->cluster, c, sizeof(c));
		return CUDA_SUCCESS;
	}
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		dim->priority = v->priority;
		return CUDA_SUCCESS;
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
		if (v->cooperative && !gs_cu_coop_fits(dim))
			return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
		dim->cooperative = v->cooperative != 0;
		return CUDA_SUCCESS;
	case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
		/* Graphs only: a launch outside a capture is refused. */
		return launch ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		return CUDA_ERROR_INVALID_VALUE; /* streams only */
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
	case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
		return launch ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* launches only */
	default:
		/* Scheduling hints and serialization change nothing a serial CPU
		 * execution computes. */
		return CUDA_SUCCESS;
	}
}

/*
 * A launch: the kernel work, its attributes (cfg, for cuLaunchKernelEx),
 * then the events the attributes record.  A programmatic or
 * launch-completion event may trigger before the kernel completes on a GPU;
 * here it is recorded after it, which satisfies every wait on it.
 */
static CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shmem,
		       CUstream h, void **params, void **extra, gs_cu_dflt_t d, const CUlaunchConfig *cfg)
{
	gs_sim_stream_t *s;
	gs_sim_work_t w;
	GS_CU_CHECK_INIT();
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	if ((r = gs_cu_kernel_work(&w, gs_cu_func(f), grid, block, shmem, params, extra)))
		return r;
	for (unsigned i = 0; cfg && i < cfg->numAttrs; i++) {
		const CUlaunchAttribute *a = &cfg->attrs[i];
		if ((a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT &&
		     !gs_sim_reg_is(a->value.programmaticEvent.event, GS_SIM_H_EVENT)) ||
		    (a->id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT &&
		     !gs_sim_reg_is(a->value.launchCompletionEvent.event, GS_SIM_H_EVENT)))
			r = CUDA_ERROR_INVALID_HANDLE;
		else
			r = gs_cu_kernel_attr(&w.u.kern.dim, a->id, &a->value, true);
		if (r) {
			gs_sim_work_fini(&w);
			return r;
		}
	}
	gs_sim_spin_us(gs_sim_launch_us());
	if ((r = gs_cu_err(gs_sim_submit(s, &w, NULL, 0, NULL))))
		return r;
	for (unsigned i = 0; cfg && i < cfg->numAttrs; i++) {
		const CUlaunchAttribute *a = &cfg->attrs[i];
		CUevent ev = a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ? a->value.programmaticEvent.event
			   : a->id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT
				   ? a->value.launchCompletionEvent.event
				   : NULL;
		if (ev && (r = gs_cu_err(gs_sim_event_record((gs_sim_event_t *)ev, s))))
			return r;
	}
	return CUDA_SUCCESS;
}

static CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			      unsigned by, unsigned bz, unsigned shmem, CUstream h, void **params,
			      void **extra, gs_cu_dflt_t d)
{
	const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	return launch(f, grid, block, shmem, h, params, extra, d, NULL);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			void **kernelParams, void **extra)
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			     sharedMemBytes, hStream, kernelParams, extra, GS_CU_LEGACY);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			     void **kernelParams, void **extra)
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			     sharedMemBytes, hStream, kernelParams, extra, GS_CU_PTDS);
}

/* A cooperative launch: a launch with the cooperative attribute. */
static CUresult launch_coop(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			    unsigned by, unsigned bz, unsigned shmem, CUstream h, void **params,
			    gs_cu_dflt_t d)
{
	const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	CUlaunchAttribute a;
	memset(&a, 0, sizeof(a));
	a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	a.value.cooperative = 1;
	CUlaunchConfig c;
	memset(&c, 0, sizeof(c));
	c.attrs = &a;
	c.numAttrs = 1;
	return launch(f, grid, block, shmem, h, params, NULL, d, &c);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				   unsigned int gridDimZ, unsigned int blockDimX,
				   unsigned int blockDimY, unsigned int blockDimZ,
				   unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
	return launch_coop(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			   sharedMemBytes, hStream, kernelParams, GS_CU_LEGACY);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
					unsigned int gridDimZ, unsigned int blockDimX,
					unsigned int blockDimY, unsigned int blockDimZ,
					unsigned int sharedMemBytes, CUstream hStream,
					void **kernelParams)
{
	return launch_coop(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			   sharedMemBytes, hStream, kernelParams, GS_CU_PTDS);
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
			  gs_cu_dflt_t d)
{
	if (!c || (c->numAttrs && !c->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	const unsigned grid[3] = { c->gridDimX, c->gridDimY, c->gridDimZ };
	const unsigned block[3] = { c->blockDimX, c->blockDimY, c->blockDimZ };
	return launch(f, grid, block, c->sharedMemBytes, c->hStream, params, extra, d, c);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
	return launch_ex(config, f, kernelParams, extra, GS_CU_LEGACY);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
			       void **extra)
{
	return launch_ex(config, f, kernelParams, extra, GS_CU_PTDS);
}
