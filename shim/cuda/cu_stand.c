/*
 * Stand-ins (gs_ops_t.graph_build).  The driver checks a copy's or a
 * memset's pointers when it makes the node, where a kernel node's are only
 * bytes: a pointer into memory the program freed after its pass (a
 * library's workspace, allocated and freed around each call, as MAGMA's in
 * torch.linalg) is refused, though in the step's next pass, when the graph
 * runs, it is allocated again.  Such a node is made on graphshim's own
 * memory of the context instead, and the core patches it to the held
 * pointers before its first launch (gs_rec_t.stale): no launch runs the
 * stand-in, so that memory is never written.
 *
 * One block of GS_CU_STAND_SIZE a context, allocated on the application's
 * thread when it first holds a copy or memset there (gs_cu_stand_ensure)
 * and kept while the context lives: a node made on it may wait for its
 * patch.  After a call that may destroy a context (gs_cu_forget) the
 * blocks are checked and a context's slot whose block went is freed, so a
 * program that makes and destroys many contexts (the fuzzer's runner) has
 * stand-ins in each.
 * Graph builds only look it up (no allocation on the builder).  The hang
 * once blamed on allocating it there was the driver spinning in
 * cuGraphInstantiate on a graph with a node on freed memory, which no build
 * makes now (cu_ops.c, gs_build.c: the twenty-seventh session in
 * docs/performance.md).  Elements are taken only while no capture is
 * open anywhere (gs_cu_elements_ok), so the allocation falls outside the
 * application's captures but for one another thread begins at that moment,
 * once per thread and context.
 */
#include <pthread.h>

#include "cu_internal.h"

#define GS_CU_STAND_CTXS 8

static struct {
	CUcontext ctx;
	CUdeviceptr p; /* 0: none (not yet, or its allocation failed) */
} gs_cu_stand[GS_CU_STAND_CTXS];
static pthread_mutex_t gs_cu_stand_lock = PTHREAD_MUTEX_INITIALIZER;
/* Bumped when a context may have gone (gs_cu_stand_forget). */
static unsigned gs_cu_stand_gen;
/* The context this thread last made sure of, and when: the common case
 * takes no lock. */
static _Thread_local CUcontext gs_cu_stand_seen GS_TLS_IE;
static _Thread_local unsigned gs_cu_stand_seen_gen GS_TLS_IE;

/* The slot of ctx, else (with `free_too`) the first free one, else -1.  Lock held. */
static int gs_cu_stand_slot(CUcontext ctx, bool free_too)
{
	for (int i = 0; i < GS_CU_STAND_CTXS; i++)
		if (gs_cu_stand[i].ctx == ctx)
			return i;
	for (int i = 0; free_too && i < GS_CU_STAND_CTXS; i++)
		if (!gs_cu_stand[i].ctx)
			return i;
	return -1;
}

/* Whether block p is allocated and belongs to ctx (a context destroyed took
 * its block; a new one may have its handle). */
static bool gs_cu_stand_owned(CUcontext ctx, CUdeviceptr p)
{
	CUcontext owner = NULL;
	return p && gs_cu_real.cuPointerGetAttribute &&
	       gs_cu_real.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p) == CUDA_SUCCESS &&
	       owner == ctx;
}

void gs_cu_stand_ensure(CUcontext ctx)
{
	unsigned gen = __atomic_load_n(&gs_cu_stand_gen, __ATOMIC_ACQUIRE);
	if (!ctx || (ctx == gs_cu_stand_seen && gen == gs_cu_stand_seen_gen) ||
	    !gs_cu_real.cuMemAlloc_v2)
		return;
	pthread_mutex_lock(&gs_cu_stand_lock);
	int at = gs_cu_stand_slot(ctx, true);
	if (at >= 0 && gs_cu_stand[at].ctx != ctx) {
		CUdeviceptr p = 0;
		if (gs_cu_real.cuMemAlloc_v2(&p, GS_CU_STAND_SIZE) != CUDA_SUCCESS)
			p = 0; /* no stand-ins there: such nodes are refused as before */
		gs_cu_stand[at].ctx = ctx;
		gs_cu_stand[at].p = p;
	}
	pthread_mutex_unlock(&gs_cu_stand_lock);
	gs_cu_stand_seen = ctx; /* past the table's contexts too: asked once */
	gs_cu_stand_seen_gen = gen;
}

void gs_cu_stand_forget(void)
{
	if (!gs_cu_real.cuPointerGetAttribute)
		return;
	pthread_mutex_lock(&gs_cu_stand_lock);
	for (int i = 0; i < GS_CU_STAND_CTXS; i++) {
		unsigned api = 0;
		if (gs_cu_stand[i].ctx &&
		    (!gs_cu_stand_owned(gs_cu_stand[i].ctx, gs_cu_stand[i].p) ||
		     (gs_cu_real.cuCtxGetApiVersion &&
		      gs_cu_real.cuCtxGetApiVersion(gs_cu_stand[i].ctx, &api) != CUDA_SUCCESS)))
			gs_cu_stand[i].ctx = NULL, gs_cu_stand[i].p = 0;
	}
	__atomic_add_fetch(&gs_cu_stand_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&gs_cu_stand_lock);
}

CUdeviceptr gs_cu_stand_mem(CUcontext ctx, size_t need)
{
	CUdeviceptr p = 0;
	if (!need || need > GS_CU_STAND_SIZE)
		return 0;
	pthread_mutex_lock(&gs_cu_stand_lock);
	int at = gs_cu_stand_slot(ctx, false);
	if (at >= 0)
		p = gs_cu_stand[at].p;
	pthread_mutex_unlock(&gs_cu_stand_lock);
	return gs_cu_stand_owned(ctx, p) ? p : 0;
}

bool gs_cu_dead(CUdeviceptr p)
{
	unsigned t = 0;
	return gs_cu_real.cuPointerGetAttribute &&
	       gs_cu_real.cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS;
}
