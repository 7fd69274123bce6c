/*
 * The operations the engine calls: submit one record eagerly, build and
 * instantiate a graph of records (each node depending on the previous),
 * launch it, patch one node, destroy it.  Everything here calls the real
 * libamdhip64 functions with the hook depth raised, so a runtime that calls
 * its own exported functions never re-enters the engine.
 *
 * Patch policy: ROCm graphs have had node updates that report success and
 * are ignored, and kernel-argument pools that run out after thousands of
 * updates.  A graph therefore takes at most GRAPHSHIM_HIP_MAX_PATCHES
 * patches (default 1000; 0: no limit); the next one rebuilds and
 * re-instantiates the graph from the records this object keeps, the patched
 * one included, so the new executable graph starts with a fresh pool.
 */
#include <stdlib.h>

#include "hip_internal.h"
#include "gs_submit.h"
#include "gs_self.h"
#include "gs_log.h"

typedef struct gs_hip_graph {
	hipGraph_t g;
	hipGraphExec_t exec;
	size_t n;
	hipGraphNode_t *nodes;
	gs_rec_t **recs; /* the baked record of every node, for rebuilds */
	long long patches;
} gs_hip_graph_t;

#define GS_REAL(fn) (gs_hip_real.fn ? gs_hip_real.fn : NULL)

hipError_t gs_hip_free_async(void *p, hipStream_t s)
{
	if (!gs_hip_real.hipFreeAsync)
		return hipErrorNotSupported;
	/* No graph is instantiated meanwhile (gs_engine_free_begin), also
	 * when the engine submits a held free (gs_hip_depth is not 0 then). */
	bool on = gs_engine_free_begin();
	hipError_t rc = gs_hip_real.hipFreeAsync(p, s);
	gs_engine_free_end(on);
	return rc;
}

static hipError_t gs_hip_call_orig_raw(const gs_hip_orig_t *o)
{
	hipError_t rc = hipErrorNotSupported;
	gs_hip_real_t *R = &gs_hip_real;
	gs_hip_depth++;
	switch (o->api) {
	case GS_HIP_API_MODULE:
		rc = R->hipModuleLaunchKernel(o->k.f, o->k.g[0], o->k.g[1], o->k.g[2], o->k.b[0], o->k.b[1],
					      o->k.b[2], (unsigned int)o->k.shmem, o->stream, o->k.params,
					      o->k.extra);
		break;
	case GS_HIP_API_EXT:
		if (R->hipExtModuleLaunchKernel)
			rc = R->hipExtModuleLaunchKernel(o->k.f, o->k.g[0], o->k.g[1], o->k.g[2], o->k.b[0],
							 o->k.b[1], o->k.b[2], o->k.shmem, o->stream,
							 o->k.params, o->k.extra, o->k.start, o->k.stop,
							 o->k.flags);
		break;
	case GS_HIP_API_LAUNCH:
		if (R->hipLaunchKernel)
			rc = R->hipLaunchKernel(o->l.f, o->l.grid, o->l.block, o->l.args, o->l.shmem, o->stream);
		break;
	case GS_HIP_API_LAUNCH_SPT:
		if (R->hipLaunchKernel_spt)
			rc = R->hipLaunchKernel_spt(o->l.f, o->l.grid, o->l.block, o->l.args, o->l.shmem,
						    o->stream);
		break;
	case GS_HIP_API_MEMCPY:
		if (R->hipMemcpyAsync)
			rc = R->hipMemcpyAsync(o->c.dst, o->c.src, o->c.bytes, o->c.kind, o->stream);
		break;
	case GS_HIP_API_MEMCPY_SPT:
		if (R->hipMemcpyAsync_spt)
			rc = R->hipMemcpyAsync_spt(o->c.dst, o->c.src, o->c.bytes, o->c.kind, o->stream);
		break;
	case GS_HIP_API_HTOD:
		if (R->hipMemcpyHtoDAsync)
			rc = R->hipMemcpyHtoDAsync(o->c.dst, (void *)o->c.src, o->c.bytes, o->stream);
		break;
	case GS_HIP_API_DTOH:
		if (R->hipMemcpyDtoHAsync)
			rc = R->hipMemcpyDtoHAsync(o->c.dst, (void *)o->c.src, o->c.bytes, o->stream);
		break;
	case GS_HIP_API_DTOD:
		if (R->hipMemcpyDtoDAsync)
			rc = R->hipMemcpyDtoDAsync(o->c.dst, (void *)o->c.src, o->c.bytes, o->stream);
		break;
	case GS_HIP_API_MEMSET:
		if (R->hipMemsetAsync)
			rc = R->hipMemsetAsync(o->s.dst, (int)o->s.value, o->s.count, o->stream);
		break;
	case GS_HIP_API_MEMSET8:
		if (R->hipMemsetD8Async)
			rc = R->hipMemsetD8Async(o->s.dst, (unsigned char)o->s.value, o->s.count, o->stream);
		break;
	case GS_HIP_API_MEMSET16:
		if (R->hipMemsetD16Async)
			rc = R->hipMemsetD16Async(o->s.dst, (unsigned short)o->s.value, o->s.count, o->stream);
		break;
	case GS_HIP_API_MEMSET32:
		if (R->hipMemsetD32Async)
			rc = R->hipMemsetD32Async(o->s.dst, (int)o->s.value, o->s.count, o->stream);
		break;
	case GS_HIP_API_EVRECORD:
		if (R->hipEventRecord)
			rc = R->hipEventRecord(o->e.ev, o->stream);
		break;
	case GS_HIP_API_WAIT:
		if (R->hipStreamWaitEvent)
			rc = R->hipStreamWaitEvent(o->stream, o->e.ev, o->e.flags);
		break;
	case GS_HIP_API_WAIT_SPT:
		if (R->hipStreamWaitEvent_spt)
			rc = R->hipStreamWaitEvent_spt(o->stream, o->e.ev, o->e.flags);
		break;
	case GS_HIP_API_FREE:
		rc = gs_hip_free_async(o->f.p, o->stream);
		break;
	}
	gs_hip_depth--;
	return rc;
}

hipError_t gs_hip_call_orig(const gs_hip_orig_t *o)
{
	gs_submit_drain(); /* after what was posted before it (gs_submit.h) */
	uint64_t t = gs_self_drv_begin();
	hipError_t rc = gs_hip_call_orig_raw(o);
	gs_self_drv_end(t, GS_SELF_SUBMIT);
	return rc;
}

/* Kernel parameters of a record, in the form its launch API takes. */
typedef struct gs_hip_kargs {
	void *ptrs[64];
	void **params; /* ptrs, or heap when the layout is long */
	gs_hip_extra_t extra;
	bool use_extra;
} gs_hip_kargs_t;

static bool gs_hip_kargs(const gs_rec_t *r, gs_hip_kargs_t *a)
{
	a->params = NULL;
	a->use_extra = false;
	if (r->flags & GS_HIP_F_EXTRA) {
		gs_hip_extra_pack(&a->extra, r->args, r->nbytes);
		a->use_extra = true;
		return false;
	}
	if ((r->flags & GS_HIP_F_NOARGS) || !r->layout)
		return false;
	uint32_t n = r->layout->nargs;
	a->params = n <= GS_ARRAY_SIZE(a->ptrs) ? a->ptrs : malloc(n * sizeof(void *));
	if (!a->params)
		return true;
	for (uint32_t i = 0; i < n; i++)
		a->params[i] = (void *)(r->args + r->layout->arg[i].off);
	if (!n)
		a->params[0] = NULL;
	return false;
}

static void gs_hip_kargs_done(gs_hip_kargs_t *a)
{
	if (a->params && a->params != a->ptrs)
		free(a->params);
}

static int gs_hip_submit_rec(const gs_rec_t *r, uintptr_t stream)
{
	hipStream_t s = (hipStream_t)stream;
	hipError_t rc = hipErrorNotSupported;
	gs_hip_real_t *R = &gs_hip_real;
	gs_hip_depth++;
	if (r->kind == GS_REC_KERNEL) {
		gs_hip_kargs_t a;
		if (gs_hip_kargs(r, &a)) {
			gs_hip_depth--;
			return hipErrorOutOfMemory;
		}
		void **extra = a.use_extra ? a.extra.v : NULL;
		switch (r->flags & GS_HIP_F_API_MASK) {
		case GS_HIP_F_MODULE:
			rc = R->hipModuleLaunchKernel(r->func, r->grid[0], r->grid[1], r->grid[2], r->block[0],
						      r->block[1], r->block[2], r->shmem, s, a.params, extra);
			break;
		case GS_HIP_F_EXT:
			if (R->hipExtModuleLaunchKernel)
				rc = R->hipExtModuleLaunchKernel(
					r->func, r->grid[0] * r->block[0], r->grid[1] * r->block[1],
					r->grid[2] * r->block[2], r->block[0], r->block[1], r->block[2], r->shmem, s,
					a.params, extra, NULL, NULL, 0);
			break;
		case GS_HIP_F_STUB: {
			dim3 g = {r->grid[0], r->grid[1], r->grid[2]}, b = {r->block[0], r->block[1], r->block[2]};
			if (R->hipLaunchKernel)
				rc = R->hipLaunchKernel(r->func, g, b, a.params, r->shmem, s);
			break;
		}
		}
		gs_hip_kargs_done(&a);
	} else if (r->kind == GS_REC_MARK) {
		hipEvent_t ev = (hipEvent_t)(uintptr_t)gs_rec_u64(r, 0);
		if (r->aux[0] == GS_HIP_MARK_RECORD && R->hipEventRecord)
			rc = R->hipEventRecord(ev, s);
		else if (r->aux[0] == GS_HIP_MARK_WAIT && R->hipStreamWaitEvent)
			rc = R->hipStreamWaitEvent(s, ev, (unsigned)r->aux[1]);
		else if (r->aux[0] == GS_HIP_MARK_FREE)
			rc = gs_hip_free_async((void *)ev, s);
	} else if (r->kind == GS_REC_COPY && R->hipMemcpyAsync) {
		rc = R->hipMemcpyAsync((void *)(uintptr_t)gs_rec_u64(r, 0), (const void *)(uintptr_t)gs_rec_u64(r, 8),
				       r->aux[0], (hipMemcpyKind)r->aux[1], s);
	} else if (r->kind == GS_REC_SET) {
		void *d = (void *)(uintptr_t)gs_rec_u64(r, 0);
		uint64_t v = gs_rec_u64(r, 8);
		if ((r->flags & GS_HIP_F_SETB) && R->hipMemsetAsync)
			rc = R->hipMemsetAsync(d, (int)(uint32_t)v, r->aux[0], s);
		else if ((r->flags & GS_HIP_F_SET8) && R->hipMemsetD8Async)
			rc = R->hipMemsetD8Async(d, (unsigned char)v, r->aux[0], s);
		else if ((r->flags & GS_HIP_F_SET16) && R->hipMemsetD16Async)
			rc = R->hipMemsetD16Async(d, (unsigned short)v, r->aux[0], s);
		else if ((r->flags & GS_HIP_F_SET32) && R->hipMemsetD32Async)
			rc = R->hipMemsetD32Async(d, (int)(uint32_t)v, r->aux[0], s);
	}
	gs_hip_depth--;
	return rc;
}

static int gs_hip_submit(const gs_rec_t *r, uintptr_t stream)
{
	if (r->orig)
		return gs_hip_call_orig(r->orig);
	uint64_t t = gs_self_drv_begin();
	int rc = gs_hip_submit_rec(r, stream);
	gs_self_drv_end(t, GS_SELF_SUBMIT);
	return rc;
}

static void gs_hip_memset_params(const gs_rec_t *r, hipMemsetParams *p)
{
	memset(p, 0, sizeof(*p));
	uint64_t v = gs_rec_u64(r, 8);
	p->dst = (void *)(uintptr_t)gs_rec_u64(r, 0);
	p->elementSize = (unsigned int)r->aux[1];
	p->width = r->aux[0];
	p->height = 1;
	/* hipMemsetAsync takes an int and sets bytes: the node gets that byte. */
	p->value = (r->flags & GS_HIP_F_SETB) || (r->flags & GS_HIP_F_SET8) ? (unsigned char)v
	           : (r->flags & GS_HIP_F_SET16) ? (unsigned short)v : (unsigned int)v;
}

static void gs_hip_kernel_params(const gs_rec_t *r, gs_hip_kargs_t *a, hipKernelNodeParams *p)
{
	memset(p, 0, sizeof(*p));
	p->func = r->func;
	p->gridDim = (dim3){r->grid[0], r->grid[1], r->grid[2]};
	p->blockDim = (dim3){r->block[0], r->block[1], r->block[2]};
	p->sharedMemBytes = r->shmem;
	p->kernelParams = a->params;
	p->extra = a->use_extra ? a->extra.v : NULL;
}

/* Add node i of g after `dep` (NULL for the first). */
static hipError_t gs_hip_add_node(gs_hip_graph_t *g, size_t i, hipGraphNode_t dep)
{
	const gs_rec_t *r = g->recs[i];
	gs_hip_real_t *R = &gs_hip_real;
	size_t nd = dep ? 1 : 0;
	hipError_t rc = hipErrorNotSupported;
	if (r->kind == GS_REC_KERNEL && R->hipGraphAddKernelNode) {
		gs_hip_kargs_t a;
		hipKernelNodeParams p;
		if (gs_hip_kargs(r, &a))
			return hipErrorOutOfMemory;
		gs_hip_kernel_params(r, &a, &p);
		rc = R->hipGraphAddKernelNode(&g->nodes[i], g->g, &dep, nd, &p);
		gs_hip_kargs_done(&a);
	} else if (r->kind == GS_REC_COPY && R->hipGraphAddMemcpyNode1D) {
		rc = R->hipGraphAddMemcpyNode1D(&g->nodes[i], g->g, &dep, nd, (void *)(uintptr_t)gs_rec_u64(r, 0),
						(const void *)(uintptr_t)gs_rec_u64(r, 8), r->aux[0],
						(hipMemcpyKind)r->aux[1]);
	} else if (r->kind == GS_REC_SET && R->hipGraphAddMemsetNode) {
		hipMemsetParams p;
		gs_hip_memset_params(r, &p);
		rc = R->hipGraphAddMemsetNode(&g->nodes[i], g->g, &dep, nd, &p);
	} else if (r->kind == GS_REC_MARK && R->hipGraphAddEmptyNode) {
		/* An absorbed event record or wait: the core submits it itself. */
		rc = R->hipGraphAddEmptyNode(&g->nodes[i], g->g, &dep, nd);
	}
	return rc;
}

/*
 * (Re)create g->g and g->exec from g->recs; on failure leaves neither, and
 * *refused (where given) is the node the runtime would not add, or g->n
 * when the failure was no node's.
 */
static hipError_t gs_hip_instantiate(gs_hip_graph_t *g, size_t *refused)
{
	gs_hip_real_t *R = &gs_hip_real;
	hipError_t rc = hipErrorNotSupported;
	size_t i = 0;
	g->g = NULL;
	g->exec = NULL;
	if (refused)
		*refused = g->n;
	if (!R->hipGraphCreate || !R->hipGraphDestroy || (rc = R->hipGraphCreate(&g->g, 0)) != hipSuccess)
		return rc;
	for (; i < g->n && rc == hipSuccess; i++)
		rc = gs_hip_add_node(g, i, i ? g->nodes[i - 1] : NULL);
	if (rc != hipSuccess && refused)
		*refused = i - 1;
	if (rc == hipSuccess) {
		/* hipGraphInstantiate kept its 5-argument form through ROCm 7; WithFlags is simpler. */
		if (R->hipGraphInstantiateWithFlags)
			rc = R->hipGraphInstantiateWithFlags(&g->exec, g->g, 0);
		else if (R->hipGraphInstantiate)
			rc = R->hipGraphInstantiate(&g->exec, g->g, NULL, NULL, 0);
		else
			rc = hipErrorNotSupported;
	}
	if (rc != hipSuccess) {
		R->hipGraphDestroy(g->g);
		g->g = NULL;
		g->exec = NULL;
	}
	return rc;
}

/*
 * graphshim's own calls that fail (a refused patch, a graph that cannot be
 * launched) must not leave an error behind for the application's
 * hipGetLastError, which is the calling thread's: each op notes whether
 * one was pending before it, and clears what its failure left otherwise.
 */
static bool gs_hip_quiet_begin(void)
{
	return gs_hip_real.hipPeekAtLastError && gs_hip_real.hipGetLastError &&
	       GS_HIP_REAL(gs_hip_real.hipPeekAtLastError()) == hipSuccess;
}

static int gs_hip_quiet_end(bool clean, hipError_t rc)
{
	if (clean && rc != hipSuccess)
		GS_HIP_REAL(gs_hip_real.hipGetLastError());
	return rc;
}

static void gs_hip_graph_free(gs_hip_graph_t *g)
{
	for (size_t i = 0; g->recs && i < g->n; i++)
		free(g->recs[i]);
	free(g->recs);
	free(g->nodes);
	free(g);
}

static int gs_hip_graph_build(const gs_rec_t *const *recs, size_t n, void **graph, size_t *refused,
			      uint8_t *stand_in)
{
	(void)stand_in; /* no stand-ins: a node on freed memory is refused (docs/limits.md) */
	*refused = n;
	gs_hip_graph_t *g = calloc(1, sizeof(*g));
	if (!g)
		return hipErrorOutOfMemory;
	g->n = n;
	g->nodes = calloc(n ? n : 1, sizeof(*g->nodes));
	g->recs = calloc(n ? n : 1, sizeof(*g->recs));
	bool bad = !g->nodes || !g->recs;
	for (size_t i = 0; !bad && i < n; i++) {
		bad = gs_rec_copy(&g->recs[i], recs[i]);
		if (!bad)
			g->recs[i]->orig = NULL;
	}
	if (bad) {
		gs_hip_graph_free(g);
		return hipErrorOutOfMemory;
	}
	bool clean = gs_hip_quiet_begin();
	gs_hip_depth++;
	hipError_t rc = gs_hip_instantiate(g, refused);
	gs_hip_depth--;
	if (rc != hipSuccess) {
		gs_hip_graph_free(g);
		return gs_hip_quiet_end(clean, rc);
	}
	*graph = g;
	return hipSuccess;
}

static int gs_hip_graph_launch(void *graph, uintptr_t stream)
{
	gs_hip_graph_t *g = graph;
	if (!gs_hip_real.hipGraphLaunch)
		return hipErrorNotSupported;
	bool clean = gs_hip_quiet_begin();
	uint64_t t = gs_self_drv_begin();
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipGraphLaunch(g->exec, (hipStream_t)stream));
	gs_self_drv_end(t, GS_SELF_GRAPH);
	return gs_hip_quiet_end(clean, rc);
}

/* Rebuild from the kept records; the old graph stays if the new one fails. */
static hipError_t gs_hip_rebuild(gs_hip_graph_t *g)
{
	hipGraph_t og = g->g;
	hipGraphExec_t oe = g->exec;
	hipError_t rc = gs_hip_instantiate(g, NULL);
	if (rc != hipSuccess) {
		g->g = og;
		g->exec = oe;
		return rc;
	}
	/* Launches already made from the old executable graph still complete. */
	if (gs_hip_real.hipGraphExecDestroy)
		gs_hip_real.hipGraphExecDestroy(oe);
	gs_hip_real.hipGraphDestroy(og);
	g->patches = 0;
	return hipSuccess;
}

static int gs_hip_graph_patch_raw(void *graph, size_t node, const gs_rec_t *rec)
{
	gs_hip_graph_t *g = graph;
	gs_hip_real_t *R = &gs_hip_real;
	if (node >= g->n || gs_rec_copy(&g->recs[node], rec))
		return hipErrorInvalidValue;
	g->recs[node]->orig = NULL;
	const gs_rec_t *r = g->recs[node];
	long long max = gs_hip_max_patches();
	hipError_t rc = hipErrorNotSupported;
	bool clean = gs_hip_quiet_begin();
	gs_hip_depth++;
	if (max && g->patches >= max) {
		rc = gs_hip_rebuild(g);
		gs_hip_depth--;
		return gs_hip_quiet_end(clean, rc);
	}
	if (r->kind == GS_REC_KERNEL && R->hipGraphExecKernelNodeSetParams) {
		gs_hip_kargs_t a;
		hipKernelNodeParams p;
		if (!gs_hip_kargs(r, &a)) {
			gs_hip_kernel_params(r, &a, &p);
			rc = R->hipGraphExecKernelNodeSetParams(g->exec, g->nodes[node], &p);
			gs_hip_kargs_done(&a);
		}
	} else if (r->kind == GS_REC_COPY && R->hipGraphExecMemcpyNodeSetParams1D) {
		rc = R->hipGraphExecMemcpyNodeSetParams1D(g->exec, g->nodes[node], (void *)(uintptr_t)gs_rec_u64(r, 0),
							  (const void *)(uintptr_t)gs_rec_u64(r, 8), r->aux[0],
							  (hipMemcpyKind)r->aux[1]);
	} else if (r->kind == GS_REC_SET && R->hipGraphExecMemsetNodeSetParams) {
		hipMemsetParams p;
		gs_hip_memset_params(r, &p);
		rc = R->hipGraphExecMemsetNodeSetParams(g->exec, g->nodes[node], &p);
	}
	if (rc == hipSuccess)
		g->patches++;
	gs_hip_depth--;
	return gs_hip_quiet_end(clean, rc);
}

static int gs_hip_graph_patch(void *graph, size_t node, const gs_rec_t *rec, const gs_rec_t *old)
{
	(void)old; /* nodes are patched whole from the host */
	uint64_t t = gs_self_drv_begin();
	int rc = gs_hip_graph_patch_raw(graph, node, rec);
	gs_self_drv_end(t, GS_SELF_PATCH);
	return rc;
}

static void gs_hip_graph_destroy(void *graph)
{
	gs_hip_graph_t *g = graph;
	gs_hip_depth++;
	if (g->exec && gs_hip_real.hipGraphExecDestroy)
		gs_hip_real.hipGraphExecDestroy(g->exec);
	if (g->g && gs_hip_real.hipGraphDestroy)
		gs_hip_real.hipGraphDestroy(g->g);
	gs_hip_depth--;
	gs_hip_graph_free(g);
}

/* No node of a HIP graph is patched on the GPU. */
static int gs_hip_graph_node_patching(void *graph, size_t node, const gs_rec_t *rec)
{
	(void)graph;
	(void)node;
	(void)rec;
	return GS_PATCH_HOST;
}

/* An event the application destroyed while it was held (gs_ops.h), and
 * the gate's timer events. */
static void gs_hip_event_destroy(uint64_t ev)
{
	if (gs_hip_real.hipEventDestroy)
		GS_HIP_REALV(gs_hip_real.hipEventDestroy((hipEvent_t)(uintptr_t)ev));
}

/* The gate's GPU timers: two timing events (one device per process here). */
typedef struct gs_hip_timer {
	hipEvent_t ev[2];
} gs_hip_timer_t;

static void gs_hip_timer_destroy(void *timer)
{
	gs_hip_timer_t *t = timer;
	for (int i = 0; i < 2; i++)
		if (t->ev[i])
			gs_hip_event_destroy((uint64_t)(uintptr_t)t->ev[i]);
	free(t);
}

static int gs_hip_timer_create(void *graph, void **timer)
{
	gs_hip_real_t *R = &gs_hip_real;
	(void)graph;
	*timer = NULL;
	if (!R->hipEventCreate || !R->hipEventRecord || !R->hipEventQuery || !R->hipEventElapsedTime)
		return hipErrorNotSupported;
	gs_hip_timer_t *t = calloc(1, sizeof(*t));
	if (!t)
		return hipErrorOutOfMemory;
	hipError_t rc = GS_HIP_REAL(R->hipEventCreate(&t->ev[0]));
	if (rc == hipSuccess)
		rc = GS_HIP_REAL(R->hipEventCreate(&t->ev[1]));
	if (rc != hipSuccess) {
		gs_hip_timer_destroy(t);
		return rc;
	}
	*timer = t;
	return hipSuccess;
}

static int gs_hip_timer_mark(void *timer, int which, uintptr_t stream)
{
	gs_hip_timer_t *t = timer;
	return GS_HIP_REAL(gs_hip_real.hipEventRecord(t->ev[which != 0], (hipStream_t)stream));
}

static int gs_hip_timer_read(void *timer, uint64_t *ns)
{
	gs_hip_timer_t *t = timer;
	float ms = 0;
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipEventQuery(t->ev[1]));
	if (rc == hipSuccess)
		rc = GS_HIP_REAL(gs_hip_real.hipEventElapsedTime(&ms, t->ev[0], t->ev[1]));
	return gs_ops_timer_read_result(rc, hipErrorNotReady, ms, ns);
}

/* A kernel's name, for the trace (gs_ops.h): the code object's, kept by hip_module.c. */
static const char *gs_hip_func_name(const gs_rec_t *r)
{
	if (!r || r->kind != GS_REC_KERNEL || !r->func)
		return NULL;
	return gs_hip_name_of(r->func);
}

const gs_ops_t gs_hip_ops = GS_OPS_TABLE("hip", gs_hip_);
