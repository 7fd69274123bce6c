/*
 * HIP front: what the compiler emits for a program's own kernels.  A hipcc
 * program's constructor registers its fat binary (__hipRegisterFatBinary)
 * and then each kernel's host stub under its device name
 * (__hipRegisterFunction); <<<>>> and hipLaunchKernelGGL become
 * hipLaunchKernel(stub, ...) (hip_launch.c), and the destructor calls
 * __hipUnregisterFatBinary.
 *
 * The simulator cannot run the AMDGPU code a fat binary holds, so the
 * wrapper's last field (clang's dummy1, which the compiler leaves NULL)
 * carries the fat binary's CPU twin: a gs_sim_kernel_t table
 * (gs_sim_kernel.h) in which __hipRegisterFunction looks up device names.
 * Programs that leave it NULL register, but launching their stubs fails
 * with hipErrorInvalidDeviceFunction, as an unregistered stub does.
 */
#include <pthread.h>
#include <stdlib.h>
#include <uthash.h>

#include "hip_front.h"

/* clang's __hip_fatbin_wrapper. */
typedef struct gs_hip_fatbin_wrapper {
	uint32_t magic;
	uint32_t version;
	const void *binary;
	const gs_sim_kernel_t *sim_kernels; /* dummy1: the simulator's twin */
} gs_hip_fatbin_wrapper_t;
#define GS_HIP_FATBIN_MAGIC 0x48495046u /* "HIPF" */

/*
 * What __hipRegisterFatBinary returns (the real runtime returns its vector
 * of per-device modules; callers only hand it back).  An unregistered fat
 * binary stays, with its module, on the list (marked dead): an executable
 * graph built before may still name its functions, and running the old
 * code there shows a stale replay as a wrong result rather than a crash.
 */
typedef struct gs_hip_fatbin {
	void *slot; /* what a void ** points at */
	gs_sim_module_t *mod;
	bool live;
	struct gs_hip_fatbin *next;
} gs_hip_fatbin_t;

typedef struct gs_hip_stub {
	const void *stub;
	gs_sim_func_t *fn;
	gs_hip_fatbin_t *fb;
	UT_hash_handle hh;
} gs_hip_stub_t;

static pthread_mutex_t stub_mu = PTHREAD_MUTEX_INITIALIZER;
static gs_hip_stub_t *stubs;
static gs_hip_fatbin_t *fatbins;

gs_sim_func_t *gs_hip_stub_func(const void *stub)
{
	gs_hip_stub_t *s;
	gs_sim_func_t *fn = NULL;
	if (!stub)
		return NULL;
	GS_SIM_PT(pthread_mutex_lock(&stub_mu));
	HASH_FIND_PTR(stubs, &stub, s);
	if (s)
		fn = s->fn;
	GS_SIM_PT(pthread_mutex_unlock(&stub_mu));
	return fn;
}

static bool fatbin_live(const gs_hip_fatbin_t *fb)
{
	for (const gs_hip_fatbin_t *f = fatbins; f; f = f->next)
		if (f == fb)
			return f->live;
	return false;
}

void **__hipRegisterFatBinary(const void *data)
{
	const gs_hip_fatbin_wrapper_t *w = data;
	if (!w || w->magic != GS_HIP_FATBIN_MAGIC || w->version != 1 || !w->binary)
		return NULL;
	gs_hip_fatbin_t *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return NULL;
	if (w->sim_kernels && gs_sim_module_from_table(&fb->mod, w->sim_kernels)) {
		free(fb);
		return NULL;
	}
	fb->live = true;
	GS_SIM_PT(pthread_mutex_lock(&stub_mu));
	fb->next = fatbins;
	fatbins = fb;
	GS_SIM_PT(pthread_mutex_unlock(&stub_mu));
	return &fb->slot;
}

void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
			   const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
			   void *blockDim, void *gridDim, int *wSize)
{
	gs_hip_fatbin_t *fb = (gs_hip_fatbin_t *)modules; /* slot is the first member */
	if (!hostFunction || !deviceName)
		return;
	GS_SIM_PT(pthread_mutex_lock(&stub_mu));
	gs_sim_func_t *fn = fatbin_live(fb) && fb->mod ? gs_sim_module_func(fb->mod, deviceName) : NULL;
	gs_hip_stub_t *s = NULL;
	HASH_FIND_PTR(stubs, &hostFunction, s);
	if (s) {
		HASH_DEL(stubs, s);
		free(s);
	}
	/* A name without a kernel: the stub stays unknown, as unregistered. */
	if (fn && (s = calloc(1, sizeof(*s)))) {
		s->stub = hostFunction;
		s->fn = fn;
		s->fb = fb;
		HASH_ADD_PTR(stubs, stub, s);
	}
	GS_SIM_PT(pthread_mutex_unlock(&stub_mu));
}

void __hipUnregisterFatBinary(void **modules)
{
	gs_hip_fatbin_t *fb = (gs_hip_fatbin_t *)modules;
	/* Queued launches may still run its kernels. */
	gs_sim_ctx_t *ctx = gs_hip_ctx();
	if (ctx)
		gs_sim_ctx_sync(ctx);
	GS_SIM_PT(pthread_mutex_lock(&stub_mu));
	if (fatbin_live(fb)) {
		fb->live = false;
		gs_hip_stub_t *s, *tmp;
		HASH_ITER(hh, stubs, s, tmp) {
			if (s->fb == fb) {
				HASH_DEL(stubs, s);
				free(s);
			}
		}
	}
	GS_SIM_PT(pthread_mutex_unlock(&stub_mu));
}
