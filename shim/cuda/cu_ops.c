/*
 * The operations the core asks of the CUDA backend: submit one record
 * eagerly, and build, launch, patch and destroy a graph of records.  All of
 * them call the real driver functions (never our hooks) in the record's
 * context, and return the driver's status as an int.
 */
#include <stdlib.h>

#include "cu_internal.h"
#include "cu_devupd.h"
#include "gs_self.h"
#include "gs_fmt.h"

/* Graph objects handed to the core. */
typedef struct gs_cu_graph {
	CUgraph g;
	CUgraphExec x;
	CUcontext ctx;
	gs_cu_du_t *du; /* patches made on the GPU (cu_devupd.c), or NULL */
	bool du_settled; /* no updater, built with its records' drift in view:
			  * none would be had by building again */
	size_t n;
	CUgraphNode node[];
} gs_cu_graph_t;

/* Up to this many parameters, pointer arrays live on the stack. */
#define GS_CU_STACK_PARAMS 64

/*
 * Kernel launch parameters for a record: either kernelParams pointing into
 * the image, or the `extra` buffer form.  kp must hold layout->nargs slots.
 */
typedef struct gs_cu_kargs {
	void **kp;
	void *extra[5];
	size_t size;
} gs_cu_kargs_t;

static void gs_cu_kargs_fill(const gs_rec_t *r, gs_cu_kargs_t *a, void **kp)
{
	a->kp = NULL;
	if (r->flags & GS_CU_RF_EXTRA) {
		a->size = r->nbytes;
		a->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		a->extra[1] = (void *)r->args;
		a->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		a->extra[3] = &a->size;
		a->extra[4] = CU_LAUNCH_PARAM_END;
		return;
	}
	if (r->layout) {
		for (uint32_t i = 0; i < r->layout->nargs; i++)
			kp[i] = (void *)(r->args + r->layout->arg[i].off);
		a->kp = kp;
	}
}

static void **gs_cu_kp_alloc(const gs_rec_t *r, void **stack)
{
	uint32_t n = (r->layout && !(r->flags & GS_CU_RF_EXTRA)) ? r->layout->nargs : 0;
	if (n <= GS_CU_STACK_PARAMS)
		return stack;
	return malloc(n * sizeof(void *));
}

static void gs_cu_kp_free(void **kp, void **stack)
{
	if (kp != stack)
		free(kp);
}

/* A held launch with attributes goes out as the application made it: cuLaunchKernelEx. */
static CUresult gs_cu_submit_kernel_ex(const gs_rec_t *r, CUstream s, const gs_cu_attrs_t *at,
				       void **kp, void **extra)
{
	CUlaunchAttribute attrs[GS_CU_MAX_ATTRS + 1];
	CUlaunchConfig cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = r->grid[0];
	cfg.gridDimY = r->grid[1];
	cfg.gridDimZ = r->grid[2];
	cfg.blockDimX = r->block[0];
	cfg.blockDimY = r->block[1];
	cfg.blockDimZ = r->block[2];
	cfg.sharedMemBytes = r->shmem;
	cfg.hStream = s;
	cfg.attrs = attrs;
	cfg.numAttrs = gs_cu_attrs_fill(at, attrs);
	return gs_cu_real.cuLaunchKernelEx
		? gs_cu_real.cuLaunchKernelEx(&cfg, (CUfunction)r->func, kp, extra)
		: CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult gs_cu_submit_kernel(const gs_rec_t *r, CUstream s)
{
	void *stack[GS_CU_STACK_PARAMS];
	void **kp = gs_cu_kp_alloc(r, stack);
	if (!kp)
		return CUDA_ERROR_OUT_OF_MEMORY;
	gs_cu_kargs_t a;
	gs_cu_kargs_fill(r, &a, kp);
	void **extra = (r->flags & GS_CU_RF_EXTRA) ? a.extra : NULL;
	const gs_cu_attrs_t *at = gs_cu_rec_attrs(r);
	CUresult st;
	uint64_t t = gs_self_drv_begin();
	if (at)
		st = gs_cu_submit_kernel_ex(r, s, at, a.kp, extra);
	else
		st = gs_cu_real.cuLaunchKernel
			? gs_cu_real.cuLaunchKernel((CUfunction)r->func, r->grid[0], r->grid[1],
						    r->grid[2], r->block[0], r->block[1], r->block[2],
						    r->shmem, s, a.kp, extra)
			: CUDA_ERROR_NOT_SUPPORTED;
	gs_self_drv_end(t, GS_SELF_SUBMIT);
	gs_cu_kp_free(kp, stack);
	return st;
}

/* Rebuild the call a held copy, memset or mark record came from. */
static void gs_cu_orig_from_rec(const gs_rec_t *r, CUstream s, gs_cu_orig_t *o)
{
	memset(o, 0, sizeof(*o));
	if (r->kind == GS_REC_COPY) {
		o->op = GS_CU_OP_COPY;
		o->u.c.kind = (int)r->aux[1];
		o->u.c.dst = gs_rec_u64(r, 0);
		o->u.c.src = gs_rec_u64(r, 8);
		o->u.c.n = r->aux[0];
		o->u.c.s = s;
	} else if (r->kind == GS_REC_MARK && r->aux[3] == GS_MARK_FREE) {
		o->op = GS_CU_OP_FREE;
		o->u.f.p = (CUdeviceptr)gs_rec_u64(r, 0);
		o->u.f.s = s;
	} else if (r->kind == GS_REC_MARK) {
		o->op = GS_CU_OP_MARK;
		o->u.e.which = (int)r->aux[0];
		o->u.e.flags = (unsigned)r->aux[1];
		o->u.e.ev = (CUevent)(uintptr_t)gs_rec_u64(r, 0);
		o->u.e.s = s;
	} else {
		o->op = GS_CU_OP_SET;
		o->u.m.width = (unsigned)r->aux[1];
		o->u.m.dst = gs_rec_u64(r, 0);
		o->u.m.value = (unsigned)gs_rec_u64(r, 8);
		o->u.m.n = r->aux[0];
		o->u.m.s = s;
	}
}

static int gs_cu_submit(const gs_rec_t *r, uintptr_t stream)
{
	/* A pass-through: exactly what the application called. */
	if (r->orig)
		return (int)gs_cu_orig_call((const gs_cu_orig_t *)r->orig);
	CUstream s = gs_cu_stream_of(stream, r->flags);
	bool pushed = gs_cu_ctx_enter((CUcontext)r->ctx);
	CUresult st;
	if (r->kind == GS_REC_KERNEL) {
		st = gs_cu_submit_kernel(r, s);
	} else {
		gs_cu_orig_t o;
		gs_cu_orig_from_rec(r, s, &o);
		st = gs_cu_orig_call(&o);
	}
	gs_cu_ctx_leave(pushed);
	return (int)st;
}

static void gs_cu_kernel_params(const gs_rec_t *r, const gs_cu_kargs_t *a,
				CUDA_KERNEL_NODE_PARAMS *p)
{
	memset(p, 0, sizeof(*p));
	if (r->flags & GS_CU_RF_KERNEL) {
		p->kern = (CUkernel)r->func;
		p->ctx = (CUcontext)r->ctx;
	} else {
		p->func = (CUfunction)r->func;
	}
	p->gridDimX = r->grid[0];
	p->gridDimY = r->grid[1];
	p->gridDimZ = r->grid[2];
	p->blockDimX = r->block[0];
	p->blockDimY = r->block[1];
	p->blockDimZ = r->block[2];
	p->sharedMemBytes = r->shmem;
	p->kernelParams = a->kp;
	p->extra = (r->flags & GS_CU_RF_EXTRA) ? (void **)a->extra : NULL;
}

static unsigned gs_cu_src_type(const gs_rec_t *r)
{
	switch (r->aux[1]) {
	case GS_CU_COPY_HTOD:
		return CU_MEMORYTYPE_HOST;
	case GS_CU_COPY_DTOH:
	case GS_CU_COPY_DTOD:
		return CU_MEMORYTYPE_DEVICE;
	default:
		return (unsigned)(r->aux[2] >> 8);
	}
}

static unsigned gs_cu_dst_type(const gs_rec_t *r)
{
	switch (r->aux[1]) {
	case GS_CU_COPY_DTOH:
		return CU_MEMORYTYPE_HOST;
	case GS_CU_COPY_HTOD:
	case GS_CU_COPY_DTOD:
		return CU_MEMORYTYPE_DEVICE;
	default:
		return (unsigned)(r->aux[2] & 0xff);
	}
}

static void gs_cu_copy_params(const gs_rec_t *r, CUDA_MEMCPY3D *c)
{
	memset(c, 0, sizeof(*c));
	uint64_t d = gs_rec_u64(r, 0), s = gs_rec_u64(r, 8);
	c->srcMemoryType = (CUmemorytype)gs_cu_src_type(r);
	if (c->srcMemoryType == CU_MEMORYTYPE_HOST)
		c->srcHost = (const void *)(uintptr_t)s;
	else
		c->srcDevice = (CUdeviceptr)s;
	c->dstMemoryType = (CUmemorytype)gs_cu_dst_type(r);
	if (c->dstMemoryType == CU_MEMORYTYPE_HOST)
		c->dstHost = (void *)(uintptr_t)d;
	else
		c->dstDevice = (CUdeviceptr)d;
	c->WidthInBytes = (size_t)r->aux[0];
	c->Height = 1;
	c->Depth = 1;
}

static void gs_cu_set_params(const gs_rec_t *r, CUDA_MEMSET_NODE_PARAMS *p)
{
	memset(p, 0, sizeof(*p));
	p->dst = (CUdeviceptr)gs_rec_u64(r, 0);
	p->value = (unsigned)gs_rec_u64(r, 8);
	p->elementSize = (unsigned)r->aux[1];
	p->width = (size_t)r->aux[0];
	p->height = 1;
}

/* Stand-ins for nodes on memory freed since the pass: see cu_stand.c. */

/*
 * Whether a copy's or memset's device pointer is dead now is asked before
 * the node is added: the driver refuses it, and on an H100 (driver 580)
 * cuGraphInstantiate spun forever on the builder (`decode --check
 * --workspace`, one run in three) on a graph that had one refused add of a
 * memset on freed memory and the same memset added again on a stand-in, or
 * whose node's memory was freed before the instantiation (gs_build.c keeps
 * frees and builds apart); which of the two was not told apart.  A node on
 * dead memory is never offered to the driver.
 */

/* Dead device pointers of the copy: bit 0 its destination, bit 1 its source. */
static unsigned gs_cu_copy_dead(const CUDA_MEMCPY3D *c)
{
	unsigned dead = 0;
	if (c->dstMemoryType == CU_MEMORYTYPE_DEVICE && gs_cu_dead(c->dstDevice))
		dead |= 1;
	if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && gs_cu_dead(c->srcDevice))
		dead |= 2;
	return dead;
}

/* Put stand-ins in c for the copy's dead device pointers (gs_cu_copy_dead); true if it could. */
static bool gs_cu_copy_stand(const gs_rec_t *r, CUDA_MEMCPY3D *c, unsigned dead)
{
	size_t g = gs_cu_granule(c->WidthInBytes);
	CUdeviceptr p = gs_cu_stand_mem((CUcontext)r->ctx, 2 * g);
	if (!p)
		return false;
	if (dead & 1)
		c->dstDevice = p;
	if (dead & 2)
		c->srcDevice = p + g;
	return true;
}

/* Put a stand-in in p for the memset's dead pointer; true if it could. */
static bool gs_cu_set_stand(const gs_rec_t *r, CUDA_MEMSET_NODE_PARAMS *p)
{
	if (p->width > SIZE_MAX / p->elementSize)
		return false;
	CUdeviceptr d = gs_cu_stand_mem((CUcontext)r->ctx, p->width * p->elementSize);
	if (d)
		p->dst = d;
	return d != 0;
}

/* Node from r; *stand (when given) is set where it was made on a stand-in. */
static CUresult gs_cu_add_node(CUgraph g, const CUgraphNode *dep, size_t ndep,
			       const gs_rec_t *r, CUgraphNode *out, uint8_t *stand)
{
	const gs_cu_real_t *R = &gs_cu_real;
	if (r->kind == GS_REC_KERNEL) {
		if (!R->cuGraphAddKernelNode_v2)
			return CUDA_ERROR_NOT_SUPPORTED;
		void *stack[GS_CU_STACK_PARAMS];
		void **kp = gs_cu_kp_alloc(r, stack);
		if (!kp)
			return CUDA_ERROR_OUT_OF_MEMORY;
		gs_cu_kargs_t a;
		CUDA_KERNEL_NODE_PARAMS p;
		gs_cu_kargs_fill(r, &a, kp);
		gs_cu_kernel_params(r, &a, &p);
		CUresult st = R->cuGraphAddKernelNode_v2(out, g, dep, ndep, &p);
		gs_cu_kp_free(kp, stack);
		if (st == CUDA_SUCCESS)
			st = gs_cu_attrs_apply(*out, gs_cu_rec_attrs(r));
		return st;
	}
	if (r->kind == GS_REC_COPY) {
		if (!R->cuGraphAddMemcpyNode)
			return CUDA_ERROR_NOT_SUPPORTED;
		CUDA_MEMCPY3D c;
		gs_cu_copy_params(r, &c);
		unsigned dead = gs_cu_copy_dead(&c);
		if (dead && !(stand && gs_cu_copy_stand(r, &c, dead)))
			return CUDA_ERROR_INVALID_VALUE; /* as the driver would say */
		CUresult st = R->cuGraphAddMemcpyNode(out, g, dep, ndep, &c, (CUcontext)r->ctx);
		if (dead)
			*stand = st == CUDA_SUCCESS;
		return st;
	}
	if (r->kind == GS_REC_SET) {
		if (!R->cuGraphAddMemsetNode || gs_cu_cupti_seen())
			return CUDA_ERROR_NOT_SUPPORTED;
		CUDA_MEMSET_NODE_PARAMS p;
		gs_cu_set_params(r, &p);
		bool dead = gs_cu_dead(p.dst);
		if (dead && !(stand && gs_cu_set_stand(r, &p)))
			return CUDA_ERROR_INVALID_VALUE; /* as the driver would say */
		CUresult st = R->cuGraphAddMemsetNode(out, g, dep, ndep, &p, (CUcontext)r->ctx);
		if (dead)
			*stand = st == CUDA_SUCCESS;
		return st;
	}
	if (r->kind == GS_REC_MARK) {
		/* An absorbed event record or wait: the core submits it itself. */
		return R->cuGraphAddEmptyNode ? R->cuGraphAddEmptyNode(out, g, dep, ndep)
					      : CUDA_ERROR_NOT_SUPPORTED;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/*
 * A launch with programmatic stream serialization may overlap the kernel
 * before it on its stream once that kernel triggers: between two kernel
 * nodes a graph says so with a programmatic edge.  After anything else (or
 * at a chunk's first node, whose predecessor is in the graph before) the
 * ordinary full dependency stands, which is always correct: the kernel's
 * own wait for its dependency then returns at once.
 */
static bool gs_cu_programmatic(const gs_rec_t *prev, const gs_rec_t *r)
{
	const gs_cu_attrs_t *at = r->kind == GS_REC_KERNEL ? gs_cu_rec_attrs(r) : NULL;
	return at && at->pss && prev->kind == GS_REC_KERNEL;
}

/* The edge from -> to, programmatic where the driver takes it, else ordinary. */
static CUresult gs_cu_edge_programmatic(CUgraph g, CUgraphNode from, CUgraphNode to)
{
	const gs_cu_real_t *R = &gs_cu_real;
	if (R->cuGraphAddDependencies_v2) {
		CUgraphEdgeData e;
		memset(&e, 0, sizeof(e));
		e.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
		e.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
		if (R->cuGraphAddDependencies_v2(g, &from, &to, &e, 1) == CUDA_SUCCESS)
			return CUDA_SUCCESS;
		gs_log_once(GS_LOG_INFO, "cuda: the driver refused a programmatic graph edge; "
			    "programmatic launches replay with full dependencies");
		return R->cuGraphAddDependencies_v2(g, &from, &to, NULL, 1);
	}
	return R->cuGraphAddDependencies ? R->cuGraphAddDependencies(g, &from, &to, 1)
					 : CUDA_ERROR_NOT_SUPPORTED;
}

static void gs_cu_graph_release(gs_cu_graph_t *G)
{
	if (G->x && gs_cu_real.cuGraphExecDestroy)
		gs_cu_real.cuGraphExecDestroy(G->x);
	if (G->g && gs_cu_real.cuGraphDestroy)
		gs_cu_real.cuGraphDestroy(G->g);
	gs_cu_du_free(G->du);
	free(G);
}

/*
 * Instantiate G.  Where the driver has cuGraphInstantiateWithParams it says
 * which node, if any, made instantiation fail (one it accepted but cannot
 * run in a graph): *refused becomes that node's index.
 */
static CUresult gs_cu_instantiate(gs_cu_graph_t *G, size_t *refused)
{
	const gs_cu_real_t *R = &gs_cu_real;
	if (!R->cuGraphInstantiateWithParams)
		return R->cuGraphInstantiateWithFlags(&G->x, G->g, 0);
	CUDA_GRAPH_INSTANTIATE_PARAMS p;
	memset(&p, 0, sizeof(p));
	CUresult st = R->cuGraphInstantiateWithParams(&G->x, G->g, &p);
	for (size_t i = 0; st != CUDA_SUCCESS && p.hErrNode_out && i < G->n; i++)
		if (G->node[i] == p.hErrNode_out)
			*refused = i;
	return st;
}

/* A kernel's name, for the trace (gs_ops.h): the driver's, for a CUfunction or a CUkernel. */
static const char *gs_cu_func_name(const gs_rec_t *r)
{
	if (!r || r->kind != GS_REC_KERNEL || !r->func)
		return NULL;
	return gs_cu_fn_name((CUfunction)r->func, (r->flags & GS_CU_RF_KERNEL) != 0);
}

/*
 * Why the driver may have refused a node (`what`: "node") or its update
 * ("node update"), logged for the first four refusals of a process: for a
 * copy or memset, what the driver knows of the pointer now (its context,
 * memory type, whether managed, its range: all failing for memory freed
 * since the call); for a kernel, its name, geometry and node attributes.
 * Only the driver can say why; this gives the facts a node depends on.
 */
static void gs_cu_refusal_note(const gs_rec_t *r, CUresult st, const char *what)
{
	static unsigned told;
	if (r->kind == GS_REC_SET && st == CUDA_ERROR_NOT_SUPPORTED && gs_cu_cupti_seen())
		return; /* not offered (cu_cupti.c) */
	if (!gs_log_first(&told, 4))
		return;
	if (r->kind == GS_REC_KERNEL) {
		/* A kernel node: what it carries besides its bytes. */
		const gs_cu_attrs_t *at = gs_cu_rec_attrs(r);
		const char *name = gs_cu_func_name(r);
		char attrs[160];
		gs_fmt_t f;
		gs_fmt_init(&f, attrs, sizeof(attrs));
		for (uint32_t i = 0; at && i < at->n; i++) {
			gs_fmt_char(&f, ' ');
			gs_fmt_str(&f, gs_cu_attr_name(at->a[i].id));
		}
		gs_log(GS_LOG_WARN,
		       "cuda: kernel %s refused (status %d): %s, grid %u,%u,%u block %u,%u,%u, "
		       "%u bytes of shared memory, %u of parameters%s%s; attributes:%s",
		       what, (int)st, name ? name : "(unnamed)", r->grid[0], r->grid[1], r->grid[2],
		       r->block[0], r->block[1], r->block[2], r->shmem, r->nbytes,
		       (r->flags & GS_CU_RF_EXTRA) ? " (an extra buffer)" : "",
		       (r->flags & GS_CU_RF_KERNEL) ? ", launched through its CUkernel handle" : "",
		       f.len ? attrs : " none");
		return;
	}
	if (!gs_cu_real.cuPointerGetAttribute)
		return;
	CUdeviceptr p = (CUdeviceptr)gs_rec_u64(r, 0), start = 0;
	CUcontext pctx = NULL;
	unsigned type = 0, managed = 0;
	size_t size = 0;
	int ord = -1;
	gs_cu_real.cuPointerGetAttribute(&pctx, CU_POINTER_ATTRIBUTE_CONTEXT, p);
	gs_cu_real.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
	gs_cu_real.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
	gs_cu_real.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p);
	gs_cu_real.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p);
	gs_cu_real.cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
	gs_log(GS_LOG_WARN,
	       "cuda: %s %s refused (status %d): dst 0x%llx, %llu elements of %u bytes; "
	       "the pointer's context %s the record's, memory type %u, managed %u, device %d, "
	       "range 0x%llx + %llu",
	       r->kind == GS_REC_SET ? "memset" : "copy", what, (int)st, (unsigned long long)p,
	       (unsigned long long)r->aux[0], r->kind == GS_REC_SET ? (unsigned)r->aux[1] : 1u,
	       pctx == (CUcontext)r->ctx ? "is" : "is not", type, managed, ord,
	       (unsigned long long)start, (unsigned long long)size);
}

/* The graph of recs; `plain`: without the device updater (cu_devupd.c). */
static int gs_cu_graph_make(const gs_rec_t *const *recs, size_t n, void **graph, size_t *refused,
			    uint8_t *stand_in, bool plain)
{
	const gs_cu_real_t *R = &gs_cu_real;
	*graph = NULL;
	*refused = n;
	if (!n || !R->cuGraphCreate || !R->cuGraphInstantiateWithFlags)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* One graph, one context: a sequence that spans two stays eager. */
	for (size_t i = 1; i < n; i++)
		if (recs[i]->ctx != recs[0]->ctx)
			return CUDA_ERROR_NOT_SUPPORTED;
	gs_cu_graph_t *G = calloc(1, sizeof(*G) + n * sizeof(CUgraphNode));
	if (!G)
		return CUDA_ERROR_OUT_OF_MEMORY;
	G->ctx = (CUcontext)recs[0]->ctx;
	G->n = n;
	bool pushed = gs_cu_ctx_enter(G->ctx);
	CUresult st = R->cuGraphCreate(&G->g, 0);
	CUgraphNode root = NULL;
	if (st == CUDA_SUCCESS && !plain)
		G->du = gs_cu_du_begin(G->g, G->ctx, recs, n, &root);
	G->du_settled = !G->du && gs_config.device_patch && (plain || gs_cu_du_wanted(recs, n));
	for (size_t i = 0; st == CUDA_SUCCESS && i < n; i++) {
		if (i && gs_cu_programmatic(recs[i - 1], recs[i])) {
			st = gs_cu_add_node(G->g, NULL, 0, recs[i], &G->node[i],
					    stand_in ? &stand_in[i] : NULL);
			if (st == CUDA_SUCCESS)
				st = gs_cu_edge_programmatic(G->g, G->node[i - 1], G->node[i]);
		} else {
			const CUgraphNode *dep = i ? &G->node[i - 1] : root ? &root : NULL;
			st = gs_cu_add_node(G->g, dep, dep ? 1 : 0, recs[i], &G->node[i],
					    stand_in ? &stand_in[i] : NULL);
		}
		if (st == CUDA_SUCCESS)
			gs_cu_du_node(G->du, i, recs[i], G->node[i]);
		if (st != CUDA_SUCCESS) {
			*refused = i; /* the driver would not take this one as a node */
			gs_cu_refusal_note(recs[i], st, "node");
		}
	}
	if (st == CUDA_SUCCESS) {
		st = gs_cu_instantiate(G, refused);
		if (st == CUDA_SUCCESS && G->du && !gs_cu_du_ready(G->du, G->x))
			st = CUDA_ERROR_NOT_SUPPORTED;
		if (st != CUDA_SUCCESS && G->du && (*refused == n || gs_cu_du_opted(G->du, *refused))) {
			/* The updater, or a node made device-updatable, may be what
			 * the driver would not take: the graph goes again without
			 * them.  A record's own refusal is not retried (it would
			 * be refused again, after a second build). */
			gs_cu_graph_release(G);
			gs_cu_ctx_leave(pushed);
			return gs_cu_graph_make(recs, n, graph, refused, stand_in, true);
		}
		if (st != CUDA_SUCCESS && *refused < n)
			gs_cu_refusal_note(recs[*refused], st, "node (at instantiation)");
	}
	if (st != CUDA_SUCCESS) {
		gs_cu_graph_release(G);
		gs_cu_ctx_leave(pushed);
		return (int)st;
	}
	gs_cu_ctx_leave(pushed);
	*graph = G;
	return CUDA_SUCCESS;
}

static int gs_cu_graph_build(const gs_rec_t *const *recs, size_t n, void **graph, size_t *refused,
			     uint8_t *stand_in)
{
	return gs_cu_graph_make(recs, n, graph, refused, stand_in, false);
}

static int gs_cu_graph_launch(void *graph, uintptr_t stream)
{
	gs_cu_graph_t *G = graph;
	if (!gs_cu_real.cuGraphLaunch)
		return CUDA_ERROR_NOT_SUPPORTED;
	bool pushed = gs_cu_ctx_enter(G->ctx);
	CUstream s = gs_cu_stream_of(stream, 0);
	CUresult st = G->du ? gs_cu_du_prepare(G->du, G->x, s) : CUDA_SUCCESS;
	if (st == CUDA_SUCCESS) {
		uint64_t t = gs_self_drv_begin();
		st = gs_cu_real.cuGraphLaunch(G->x, s);
		gs_self_drv_end(t, GS_SELF_GRAPH);
	}
	if (st == CUDA_SUCCESS && G->du)
		gs_cu_du_launched(G->du);
	gs_cu_ctx_leave(pushed);
	return (int)st;
}

static int gs_cu_graph_patch(void *graph, size_t node, const gs_rec_t *r, const gs_rec_t *old)
{
	gs_cu_graph_t *G = graph;
	const gs_cu_real_t *R = &gs_cu_real;
	if (node >= G->n)
		return CUDA_ERROR_INVALID_VALUE;
	if (G->du && gs_cu_du_defer(G->du, node, r, old))
		return CUDA_SUCCESS; /* written on the GPU at the next launch */
	bool pushed = gs_cu_ctx_enter(G->ctx);
	CUresult st = CUDA_ERROR_NOT_SUPPORTED;
	uint64_t t = gs_self_drv_begin();
	if (r->kind == GS_REC_KERNEL && R->cuGraphExecKernelNodeSetParams_v2) {
		void *stack[GS_CU_STACK_PARAMS];
		void **kp = gs_cu_kp_alloc(r, stack);
		if (kp) {
			gs_cu_kargs_t a;
			CUDA_KERNEL_NODE_PARAMS p;
			gs_cu_kargs_fill(r, &a, kp);
			gs_cu_kernel_params(r, &a, &p);
			st = R->cuGraphExecKernelNodeSetParams_v2(G->x, G->node[node], &p);
			gs_cu_kp_free(kp, stack);
		} else {
			st = CUDA_ERROR_OUT_OF_MEMORY;
		}
	} else if (r->kind == GS_REC_COPY && R->cuGraphExecMemcpyNodeSetParams) {
		CUDA_MEMCPY3D c;
		gs_cu_copy_params(r, &c);
		st = R->cuGraphExecMemcpyNodeSetParams(G->x, G->node[node], &c,
						       (CUcontext)r->ctx);
	} else if (r->kind == GS_REC_SET && R->cuGraphExecMemsetNodeSetParams) {
		CUDA_MEMSET_NODE_PARAMS p;
		gs_cu_set_params(r, &p);
		st = R->cuGraphExecMemsetNodeSetParams(G->x, G->node[node], &p,
						       (CUcontext)r->ctx);
	}
	gs_self_drv_end(t, GS_SELF_PATCH);
	gs_cu_ctx_leave(pushed);
	if (st == CUDA_SUCCESS && G->du)
		gs_cu_du_patched(G->du, node, r);
	if (st != CUDA_SUCCESS && st != CUDA_ERROR_NOT_SUPPORTED)
		gs_cu_refusal_note(r, st, "node update");
	return (int)st;
}

static int gs_cu_graph_node_patching(void *graph, size_t node, const gs_rec_t *r)
{
	gs_cu_graph_t *G = graph;
	if (node >= G->n)
		return GS_PATCH_HOST;
	if (G->du) {
		int how = gs_cu_du_patching(G->du, node);
		if (how != GS_PATCH_CAN)
			return how;
	} else if (G->du_settled) {
		return GS_PATCH_HOST; /* the updater would not load, or the driver refused it */
	}
	return gs_cu_du_could(r) ? GS_PATCH_CAN : GS_PATCH_HOST;
}

static void gs_cu_graph_destroy(void *graph)
{
	gs_cu_graph_t *G = graph;
	if (!G)
		return;
	bool pushed = gs_cu_ctx_enter(G->ctx);
	gs_cu_graph_release(G);
	gs_cu_ctx_leave(pushed);
}

/* The gate's GPU timers: two timing events in the graph's context. */
typedef struct gs_cu_timer {
	CUcontext ctx;
	CUevent ev[2];
} gs_cu_timer_t;

/* An event the application destroyed while it was held (gs_ops.h), and
 * the gate's timer events. */
static void gs_cu_event_destroy(uint64_t ev)
{
	const gs_cu_real_t *R = &gs_cu_real;
	gs_cu_pfn_cuEventDestroy_v2 destroy = R->cuEventDestroy_v2 ? R->cuEventDestroy_v2 : R->cuEventDestroy;
	if (destroy)
		destroy((CUevent)(uintptr_t)ev);
}

static void gs_cu_timer_destroy(void *timer)
{
	gs_cu_timer_t *t = timer;
	bool pushed = gs_cu_ctx_enter(t->ctx);
	for (int i = 0; i < 2; i++)
		if (t->ev[i])
			gs_cu_event_destroy((uint64_t)(uintptr_t)t->ev[i]);
	gs_cu_ctx_leave(pushed);
	free(t);
}

static int gs_cu_timer_create(void *graph, void **timer)
{
	const gs_cu_graph_t *G = graph;
	const gs_cu_real_t *R = &gs_cu_real;
	*timer = NULL;
	if (!R->cuEventCreate || !R->cuEventRecord || !R->cuEventQuery ||
	    !(R->cuEventElapsedTime_v2 || R->cuEventElapsedTime))
		return CUDA_ERROR_NOT_SUPPORTED;
	gs_cu_timer_t *t = calloc(1, sizeof(*t));
	if (!t)
		return CUDA_ERROR_OUT_OF_MEMORY;
	t->ctx = G->ctx;
	bool pushed = gs_cu_ctx_enter(t->ctx);
	CUresult st = R->cuEventCreate(&t->ev[0], CU_EVENT_DEFAULT);
	if (st == CUDA_SUCCESS)
		st = R->cuEventCreate(&t->ev[1], CU_EVENT_DEFAULT);
	gs_cu_ctx_leave(pushed);
	if (st != CUDA_SUCCESS) {
		gs_cu_timer_destroy(t);
		return (int)st;
	}
	*timer = t;
	return CUDA_SUCCESS;
}

static int gs_cu_timer_mark(void *timer, int which, uintptr_t stream)
{
	gs_cu_timer_t *t = timer;
	bool pushed = gs_cu_ctx_enter(t->ctx);
	CUresult st = gs_cu_real.cuEventRecord(t->ev[which != 0], gs_cu_stream_of(stream, 0));
	gs_cu_ctx_leave(pushed);
	return (int)st;
}

static int gs_cu_timer_read(void *timer, uint64_t *ns)
{
	gs_cu_timer_t *t = timer;
	const gs_cu_real_t *R = &gs_cu_real;
	bool pushed = gs_cu_ctx_enter(t->ctx);
	CUresult st = R->cuEventQuery(t->ev[1]);
	float ms = 0;
	if (st == CUDA_SUCCESS)
		st = R->cuEventElapsedTime_v2 ? R->cuEventElapsedTime_v2(&ms, t->ev[0], t->ev[1])
					      : R->cuEventElapsedTime(&ms, t->ev[0], t->ev[1]);
	gs_cu_ctx_leave(pushed);
	return gs_ops_timer_read_result((int)st, CUDA_ERROR_NOT_READY, ms, ns);
}

const gs_ops_t gs_cu_ops = GS_OPS_TABLE("cuda", gs_cu_);
