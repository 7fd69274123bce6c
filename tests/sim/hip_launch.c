/*
 * HIP front: modules, functions, parameter layouts and kernel launches
 * (hipModuleLaunchKernel with kernelParams or the packed `extra` buffer,
 * the hip_ext.h launches with global work sizes and optional events, and
 * hipLaunchKernel with a host stub registered from a fat binary).
 * hipModuleLoad("dir/k.hsaco") loads "dir/k.sim.so" when that exists (the
 * core's rule), so HIP programs keep their file names.  Arguments are
 * copied at call time.
 */
#include <stdlib.h>
#include <string.h>

#include "hip_front.h"

gs_sim_func_t *gs_hip_func(const void *f)
{
	return gs_sim_reg_is(f, GS_SIM_H_FUNC) ? (gs_sim_func_t *)f : NULL;
}

/* ---- modules ---- */
hipError_t hipModuleLoad(hipModule_t *module, const char *fname)
{
	gs_sim_module_t *m = NULL;
	if (!module || !fname)
		GS_HIP_RET(hipErrorInvalidValue);
	if (!gs_hip_ctx())
		GS_HIP_RET(hipErrorOutOfMemory);
	hipError_t r = gs_hip_err(gs_sim_module_load_file(&m, fname));
	if (!r)
		*module = (hipModule_t)m;
	GS_HIP_RET(r);
}

hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
	gs_sim_module_t *m = NULL;
	if (!module || !image)
		GS_HIP_RET(hipErrorInvalidValue);
	if (!gs_hip_ctx())
		GS_HIP_RET(hipErrorOutOfMemory);
	hipError_t r = gs_hip_err(gs_sim_module_load_image(&m, image));
	if (!r)
		*module = (hipModule_t)m;
	GS_HIP_RET(r);
}

hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image, unsigned int numOptions,
			       hipJitOption *options, void **optionValues)
{
	return hipModuleLoadData(module, image);
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname)
{
	if (!function || !kname)
		GS_HIP_RET(hipErrorInvalidValue);
	if (!gs_sim_reg_is(module, GS_SIM_H_MODULE))
		GS_HIP_RET(hipErrorInvalidHandle);
	gs_sim_func_t *f = gs_sim_module_func((gs_sim_module_t *)module, kname);
	if (!f)
		GS_HIP_RET(hipErrorNotFound);
	*function = (hipFunction_t)f;
	return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module)
{
	if (!gs_sim_reg_is(module, GS_SIM_H_MODULE))
		GS_HIP_RET(hipErrorInvalidHandle);
	/* Queued launches may still use the module's code. */
	gs_sim_ctx_t *ctx = gs_hip_ctx();
	if (ctx)
		gs_sim_ctx_sync(ctx);
	gs_sim_module_unload((gs_sim_module_t *)module);
	return hipSuccess;
}

/* ---- parameter layout (not in 5.2: see README) ---- */
hipError_t hipFuncGetParamInfo(hipFunction_t func, size_t paramIndex, size_t *paramOffset,
			       size_t *paramSize)
{
	gs_sim_func_t *f = gs_hip_func(func);
	if (!f)
		GS_HIP_RET(hipErrorInvalidHandle);
	if (!paramOffset && !paramSize)
		GS_HIP_RET(hipErrorInvalidValue);
	if (gs_sim_fault(GS_SIM_F_PARAM_INFO))
		GS_HIP_RET(hipErrorInvalidValue);
	if (paramIndex >= f->k->nparams)
		GS_HIP_RET(hipErrorInvalidValue);
	if (paramOffset)
		*paramOffset = f->off[paramIndex];
	if (paramSize)
		*paramSize = f->k->size[paramIndex];
	return hipSuccess;
}

hipError_t hipKernelGetParamInfo(hipFunction_t kernel, size_t paramIndex, size_t *paramOffset,
				 size_t *paramSize)
{
	return hipFuncGetParamInfo(kernel, paramIndex, paramOffset, paramSize);
}

hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attrib, hipFunction_t hfunc)
{
	gs_sim_func_t *f = gs_hip_func(hfunc);
	if (!value)
		GS_HIP_RET(hipErrorInvalidValue);
	if (!f)
		GS_HIP_RET(hipErrorInvalidHandle);
	switch (attrib) {
	case HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
	case HIP_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
	default: *value = 0; break;
	}
	return hipSuccess;
}

/* ---- launches ---- */
/* This vendor's launch limits (only threads a block and shared memory) and `extra` markers. */
static const gs_sim_launch_abi_t gs_hip_launch_abi = {
	.max_grid_y = UINT_MAX, .max_grid_z = UINT_MAX, .max_block = { UINT_MAX, UINT_MAX, UINT_MAX },
	.max_threads = 1024, .max_shmem = 65536, .m_ptr = HIP_LAUNCH_PARAM_BUFFER_POINTER,
	.m_size = HIP_LAUNCH_PARAM_BUFFER_SIZE, .m_end = HIP_LAUNCH_PARAM_END,
};

/* The kernel work item of a launch (sim_front.h); no function is hipErrorInvalidResourceHandle. */
hipError_t gs_hip_kernel_work(gs_sim_work_t *w, gs_sim_func_t *fn, const unsigned grid[3],
			      const unsigned block[3], unsigned shmem, void **params, void **extra)
{
	return gs_hip_err(gs_sim_front_kernel_work(w, fn, grid, block, shmem, params, extra,
						   &gs_hip_launch_abi));
}

/* One launch: optional events around the kernel, all on the same stream. */
static hipError_t launch(hipFunction_t f, const unsigned grid[3], const unsigned block[3],
			 size_t shmem, hipStream_t h, void **params, void **extra, hipEvent_t start,
			 hipEvent_t stop, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	gs_sim_work_t w;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		return r;
	if ((start && !gs_sim_reg_is(start, GS_SIM_H_EVENT)) ||
	    (stop && !gs_sim_reg_is(stop, GS_SIM_H_EVENT)))
		return hipErrorInvalidHandle;
	if (shmem > UINT32_MAX)
		return hipErrorInvalidValue;
	if ((r = gs_hip_kernel_work(&w, gs_hip_func(f), grid, block, (unsigned)shmem, params, extra)))
		return r;
	gs_sim_spin_us(gs_sim_launch_us());
	if (start && (r = gs_hip_err(gs_sim_event_record((gs_sim_event_t *)start, s)))) {
		gs_sim_work_fini(&w);
		return r;
	}
	if ((r = gs_hip_err(gs_sim_submit(s, &w, NULL, 0, NULL))))
		return r;
	if (stop)
		r = gs_hip_err(gs_sim_event_record((gs_sim_event_t *)stop, s));
	return r;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
				 unsigned int gridDimZ, unsigned int blockDimX,
				 unsigned int blockDimY, unsigned int blockDimZ,
				 unsigned int sharedMemBytes, hipStream_t stream, void **kernelParams,
				 void **extra)
{
	const unsigned grid[3] = { gridDimX, gridDimY, gridDimZ };
	const unsigned block[3] = { blockDimX, blockDimY, blockDimZ };
	GS_HIP_RET(launch(f, grid, block, sharedMemBytes, stream, kernelParams, extra, NULL, NULL,
			  GS_HIP_NULL));
}

/* The host-stub launches (<<<>>>, hipLaunchKernelGGL): stubs registered
 * from a fat binary (hip_fatbin.c); args as kernelParams. */
static hipError_t stub_launch(const void *stub, dim3 g, dim3 b, void **args, size_t shmem,
			      hipStream_t stream, gs_hip_dflt_t d)
{
	gs_sim_func_t *fn = gs_hip_stub_func(stub);
	if (!fn)
		return hipErrorInvalidDeviceFunction;
	const unsigned grid[3] = { g.x, g.y, g.z };
	const unsigned block[3] = { b.x, b.y, b.z };
	return launch((hipFunction_t)fn, grid, block, shmem, stream, args, NULL, NULL, NULL, d);
}

#define X(d) gs_hip_ret(stub_launch(function_address, numBlocks, dimBlocks, args, sharedMemBytes, \
				       stream, d))
GS_HIP_PAIR(hipLaunchKernel, (const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			      void **args, size_t sharedMemBytes, hipStream_t stream), X)
#undef X

/*
 * Global sizes count work-items.  A global size that is not a multiple of
 * the local one gives a partial last work-group on a GPU; the simulator's
 * kernels see whole groups (grid rounded up), which the workloads' bounds
 * checks make harmless.
 */
static hipError_t ext_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
			     uint32_t ly, uint32_t lz, size_t shmem, hipStream_t h, void **params,
			     void **extra, hipEvent_t start, hipEvent_t stop)
{
	const uint32_t global[3] = { gx, gy, gz }, local[3] = { lx, ly, lz };
	unsigned grid[3];
	for (int i = 0; i < 3; i++) {
		if (!global[i] || !local[i])
			return hipErrorInvalidValue;
		grid[i] = global[i] / local[i] + (global[i] % local[i] != 0);
	}
	return launch(f, grid, local, shmem, h, params, extra, start, stop, GS_HIP_NULL);
}

hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
				    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
				    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
				    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
				    void **kernelParams, void **extra, hipEvent_t startEvent,
				    hipEvent_t stopEvent, uint32_t flags)
{
	/* hipExtAnyOrderLaunch (1) only relaxes ordering; nothing else is known. */
	if (flags & ~1u)
		GS_HIP_RET(hipErrorInvalidValue);
	GS_HIP_RET(ext_launch(f, globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ, localWorkSizeX,
			      localWorkSizeY, localWorkSizeZ, sharedMemBytes, hStream, kernelParams,
			      extra, startEvent, stopEvent));
}

hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
				    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
				    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
				    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
				    void **kernelParams, void **extra, hipEvent_t startEvent,
				    hipEvent_t stopEvent)
{
	GS_HIP_RET(ext_launch(f, globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ, localWorkSizeX,
			      localWorkSizeY, localWorkSizeZ, sharedMemBytes, hStream, kernelParams,
			      extra, startEvent, stopEvent));
}

/* 5.2 exports these two under their C++ names only (hip_ext.h has no
 * extern "C"); the C names are exported too, as later runtimes do. */
hipError_t gs_hip_ext_mangled(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			      uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			      hipEvent_t, uint32_t)
	__asm__("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j")
	__attribute__((alias("hipExtModuleLaunchKernel")));
hipError_t gs_hip_hcc_mangled(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			      uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t, hipEvent_t)
	__asm__("_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_")
	__attribute__((alias("hipHccModuleLaunchKernel")));
