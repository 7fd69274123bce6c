/*
 * Patches made on the GPU (GRAPHSHIM_DEVICE_PATCH; docs/how-it-works.md,
 * "Patches made on the GPU").  A host patch of a graph node
 * (cuGraphExecKernelNodeSetParams) costs a real program about 2 us, and
 * about 1 us more when the graph is next launched; a chunk whose step's
 * tensors moved patches dozens (docs/performance.md).  Here a graph's kernel
 * nodes are device-updatable (CUDA 12.4) and the graph begins with an
 * updater node of graphshim's (cu_devupd.cu, loaded from PTX once per
 * context): a patch only notes the 8-byte words of the node's parameters
 * (and its grid) that changed, words close together as one run of bytes,
 * and at the graph's launch one host update of
 * the updater node carries them all; the updater writes them into the
 * nodes after it before they run.  With nothing to write it is disabled.
 *
 * What a device update cannot change (the function, the block, the shared
 * memory), a second patch of a node before the launch, and entries past
 * the updater's capacity take a host patch of that node as before; such a
 * graph is uploaded before its next launch (the driver's rule for host
 * updates of device-updatable nodes).  A device update lasts until the
 * node is set again, so what each node holds is known: the engine's record
 * of it (the old record of a patch, gs_ops_t.graph_patch), and where the
 * engine cannot say, a copy kept here.  A patch diffs against the record
 * the engine gives: it was just read to find the node drifting and is
 * written next (the engine's rebake), so the copy here, which a patch of
 * every node would read and write too, is kept up only where it will be
 * read (GRAPHSHIM_CHECK_ORDER, which checks the two agree); where neither
 * is to be had, the patch is the host's.
 * Every entry points the updater at a node of this graph and at bytes
 * inside its parameters; the simulator checks both (tests/sim/sim_devupd.c).
 */
#include <pthread.h>
#include <stdlib.h>

#include "cu_internal.h"
#include "cu_devupd.h"
#include "cu_devupd_ptx.h"
#include "gs_self.h"
#include "gs_stats.h"

/* As the updater reads them (cu_devupd.cu); its three sizes. */
typedef struct gs_du_entry {
	uint64_t node;
	uint32_t off, size;
	uint64_t value; /* size 1-8: the bytes; more: the run's offset among the runs */
} gs_du_entry_t;
#define GS_DU_CAP 1360 /* 32,648 bytes of parameters (the driver's limit: 32,764) */
#define GS_DU_THREADS 1024 /* a block's at most: the updater strides past it */
#define GS_DU_BLOCK 64 /* bytes compared at once (a multiple of 8) */
/*
 * Words of a node that changed, GS_DU_GAP bytes apart or less, go as one
 * run of bytes (unchanged words between them written as they are) of at
 * most GS_DU_SPAN: one device call a run.  On an H200 a call cost about
 * 2 us, a node's calls one after another, and a run's bytes about 11 ns
 * each (tools/gpu/devupd/updcost.c: a 256-byte run 2.9 us more than one
 * word), so a gap of 64 bytes costs a third of the call it saves.  A
 * run's bytes follow the entries in the updater's parameters, each 8-byte
 * aligned (cu_devupd.cu).
 */
#define GS_DU_GAP 64
#define GS_DU_SPAN 256

/* The updater's sizes, smallest first: the entries each takes (776 bytes,
 * 12 KB and 32 KB of parameters) and its entry point. */
#define GS_DU_SIZES 3
static const struct {
	uint32_t cap;
	const char *name;
} gs_du_size[GS_DU_SIZES] = {
	{ 32, "gs_du_apply32" }, { 512, "gs_du_apply512" }, { GS_DU_CAP, "gs_du_apply1360" }
};

typedef struct gs_du_args {
	uint32_t n, pad;
	gs_du_entry_t e[GS_DU_CAP];
} gs_du_args_t;

typedef struct gs_du_node {
	bool tried;        /* its record's parameters had drifted when the graph was built */
	bool opted;        /* device-updatable: a host patch makes the graph upload */
	uint64_t dev;      /* device handle; 0: host patches */
	void *func;        /* what a device update cannot change: */
	uint32_t block[3], shmem, flags, nbytes;
	uint32_t grid[3];  /* and what it can, as the next launch has them */
	unsigned char *cur; /* the bytes as the next launch leaves them, unless behind */
	bool behind;       /* a device patch diffed against the engine's record since cur
			    * was last taken whole: a patch without that record is the
			    * host's (under GRAPHSHIM_CHECK_ORDER cur is kept up all the
			    * same, to check against, and the choices are the same) */
	uint32_t epoch;    /* == du->epoch: it has entries pending */
	bool unsure;       /* entries dropped: cur is what they would have left,
			    * not the node's, until a host patch succeeds */
} gs_du_node_t;

struct gs_cu_du {
	CUgraphNode unode;
	CUfunction fn[GS_DU_SIZES]; /* by gs_du_size */
	bool on;           /* the updater node is enabled */
	CUfunction set_fn; /* its function and block as last set (NULL: never, nor enabled) */
	unsigned set_bx;
	bool uploaded;     /* since instantiation or the last host update of a node */
	uint32_t epoch;    /* launches so far, plus one */
	size_t used;       /* of the arena */
	gs_du_args_t args; /* the entries pending */
	unsigned char *runs; /* their runs' bytes (GS_DU_CAP entries' worth), once one is noted */
	uint32_t nrun;     /* bytes of runs pending */
	uint32_t words;    /* words and grids the entries pending write */
	unsigned char *arena;
	gs_du_node_t node[];
};

/* ---- the updater's module, once per context ---- */

#define GS_DU_CTXS 16
static struct {
	CUcontext ctx;
	CUfunction fn[GS_DU_SIZES]; /* by gs_du_size; NULL: it would not load there */
} gs_du_mods[GS_DU_CTXS];
static pthread_mutex_t gs_du_lock = PTHREAD_MUTEX_INITIALIZER;

/* The updater's functions in ctx (current), by gs_du_size; false when not available. */
static bool gs_du_funcs(CUcontext ctx, CUfunction fn[GS_DU_SIZES])
{
	const gs_cu_real_t *R = &gs_cu_real;
	if (!R->cuModuleLoadData || !R->cuModuleGetFunction || !R->cuGraphKernelNodeGetAttribute ||
	    !R->cuGraphKernelNodeSetAttribute || !R->cuGraphNodeSetEnabled || !R->cuGraphUpload ||
	    !R->cuGraphExecKernelNodeSetParams_v2 || !R->cuGraphAddKernelNode_v2)
		return false;
	/* No gs_cu_stand_ensure here: a build allocates nothing (cu_stand.c).
	 * A context with no stand-in block loads the updater again after any
	 * call that may destroy a context (gs_cu_du_forget). */
	pthread_mutex_lock(&gs_du_lock);
	int at = -1;
	for (int i = 0; i < GS_DU_CTXS && at < 0; i++)
		if (gs_du_mods[i].ctx == ctx)
			at = i;
	if (at < 0) {
		for (int i = 0; i < GS_DU_CTXS && at < 0; i++)
			if (!gs_du_mods[i].ctx)
				at = i;
		if (at < 0) {
			pthread_mutex_unlock(&gs_du_lock);
			return false;
		}
		CUmodule m = NULL;
		CUfunction f[GS_DU_SIZES] = { NULL };
		CUresult st = R->cuModuleLoadData(&m, gs_cu_devupd_ptx);
		for (int k = 0; st == CUDA_SUCCESS && k < GS_DU_SIZES; k++)
			if (R->cuModuleGetFunction(&f[k], m, gs_du_size[k].name) != CUDA_SUCCESS) {
				memset(f, 0, sizeof(f)); /* all or none */
				break;
			}
		if (!f[0])
			gs_log_once(GS_LOG_INFO, "cuda: the device updater would not load (status %d); "
				    "graph nodes are patched from the host", (int)st);
		gs_du_mods[at].ctx = ctx;
		memcpy(gs_du_mods[at].fn, f, sizeof(f));
	}
	memcpy(fn, gs_du_mods[at].fn, sizeof(gs_du_mods[at].fn));
	pthread_mutex_unlock(&gs_du_lock);
	return fn[0] != NULL;
}

void gs_cu_du_forget(void)
{
	pthread_mutex_lock(&gs_du_lock);
	for (int i = 0; i < GS_DU_CTXS; i++)
		if (gs_du_mods[i].ctx && !gs_cu_stand_mem(gs_du_mods[i].ctx, 1))
			gs_du_mods[i].ctx = NULL; /* gone, or cannot tell: loaded again there
						    * (a module left in a living context) */
	pthread_mutex_unlock(&gs_du_lock);
}

/* ---- building ---- */

/* The updater node's parameters: func on one block for n entries, its one parameter du->args. */
static CUDA_KERNEL_NODE_PARAMS gs_du_params(gs_cu_du_t *du, CUfunction func, uint32_t n, void **kp)
{
	CUDA_KERNEL_NODE_PARAMS p;
	memset(&p, 0, sizeof(p));
	kp[0] = &du->args;
	p.func = func;
	p.gridDimX = p.gridDimY = p.gridDimZ = 1;
	p.blockDimX = n ? (n < GS_DU_THREADS ? (n + 31) / 32 * 32 : GS_DU_THREADS) : 32;
	p.blockDimY = p.blockDimZ = 1;
	p.kernelParams = kp;
	return p;
}

/* Node d as r makes it: what no device update changes, the grid, the bytes. */
static void gs_du_take(gs_du_node_t *d, const gs_rec_t *r)
{
	d->func = r->func;
	memcpy(d->block, r->block, sizeof(d->block));
	memcpy(d->grid, r->grid, sizeof(d->grid));
	d->shmem = r->shmem;
	d->flags = r->flags;
	memcpy(d->cur, r->args, d->nbytes);
	d->behind = false;
}

bool gs_cu_du_could(const gs_rec_t *r)
{
	return gs_config.device_patch && r->kind == GS_REC_KERNEL && r->nbytes &&
	       (r->layout || (r->flags & GS_CU_RF_EXTRA));
}

/* Whether record r's node is built to take device updates: its parameters
 * drift, its function, block and shared memory do not (gs_rec_t.drift). */
static bool gs_du_eligible(const gs_rec_t *r)
{
	return gs_cu_du_could(r) && (r->drift & (GS_DRIFT_ARGS | GS_DRIFT_GEOMETRY)) == GS_DRIFT_ARGS;
}

/* The parameter bytes of the records to be built device-updatable (an eligible record has some). */
static size_t gs_du_bytes(const gs_rec_t *const *recs, size_t n)
{
	size_t bytes = 0;
	for (size_t i = 0; i < n; i++)
		if (gs_du_eligible(recs[i]))
			bytes += recs[i]->nbytes;
	return bytes;
}

bool gs_cu_du_wanted(const gs_rec_t *const *recs, size_t n)
{
	return gs_config.device_patch && gs_du_bytes(recs, n);
}

gs_cu_du_t *gs_cu_du_begin(CUgraph g, CUcontext ctx, const gs_rec_t *const *recs, size_t n,
			   CUgraphNode *root)
{
	const gs_cu_real_t *R = &gs_cu_real;
	*root = NULL;
	if (!gs_config.device_patch)
		return NULL;
	size_t bytes = gs_du_bytes(recs, n);
	CUfunction fn[GS_DU_SIZES];
	if (!bytes || !gs_du_funcs(ctx, fn))
		return NULL;
	gs_cu_du_t *du = calloc(1, sizeof(*du) + n * sizeof(gs_du_node_t));
	if (!du || !(du->arena = malloc(bytes))) {
		free(du);
		return NULL;
	}
	memcpy(du->fn, fn, sizeof(fn));
	du->epoch = 1;
	void *kp[1];
	/* Made with the largest parameters: an update may only shrink them. */
	CUDA_KERNEL_NODE_PARAMS p = gs_du_params(du, fn[GS_DU_SIZES - 1], 0, kp);
	if (R->cuGraphAddKernelNode_v2(&du->unode, g, NULL, 0, &p) != CUDA_SUCCESS) {
		gs_cu_du_free(du);
		return NULL;
	}
	*root = du->unode;
	return du;
}

void gs_cu_du_node(gs_cu_du_t *du, size_t i, const gs_rec_t *r, CUgraphNode node)
{
	const gs_cu_real_t *R = &gs_cu_real;
	if (!du || !gs_du_eligible(r))
		return;
	du->node[i].tried = true;
	CUlaunchAttributeValue v;
	memset(&v, 0, sizeof(v));
	v.deviceUpdatableKernelNode.deviceUpdatable = 1;
	if (R->cuGraphKernelNodeSetAttribute(node, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
					     &v) != CUDA_SUCCESS)
		return; /* this one is patched from the host */
	gs_du_node_t *d = &du->node[i];
	d->opted = true;
	memset(&v, 0, sizeof(v));
	if (R->cuGraphKernelNodeGetAttribute(node, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
					     &v) != CUDA_SUCCESS ||
	    !v.deviceUpdatableKernelNode.devNode)
		return; /* patched from the host, with the upload that needs */
	d->dev = (uint64_t)(uintptr_t)v.deviceUpdatableKernelNode.devNode;
	gs_log(GS_LOG_DEBUG, "cuda: device update %p node %zu: handle 0x%llx, %u bytes of parameters",
	       (void *)du, i, (unsigned long long)d->dev, r->nbytes);
	d->nbytes = r->nbytes;
	d->cur = du->arena + du->used;
	du->used += r->nbytes;
	gs_du_take(d, r);
}

bool gs_cu_du_opted(const gs_cu_du_t *du, size_t i)
{
	return du->node[i].opted;
}

int gs_cu_du_patching(const gs_cu_du_t *du, size_t i)
{
	const gs_du_node_t *d = &du->node[i];
	return d->opted ? GS_PATCH_DEVICE : d->tried ? GS_PATCH_HOST : GS_PATCH_CAN;
}

bool gs_cu_du_ready(gs_cu_du_t *du, CUgraphExec x)
{
	/* Disabled until a launch has something to write. */
	return gs_cu_real.cuGraphNodeSetEnabled(x, du->unode, 0) == CUDA_SUCCESS;
}

void gs_cu_du_free(gs_cu_du_t *du)
{
	if (du) {
		free(du->arena);
		free(du->runs);
	}
	free(du);
}

/* ---- patching and launching ---- */

/* Drop node d's pending entries (they are consecutive). */
static void gs_du_drop(gs_cu_du_t *du, gs_du_node_t *d)
{
	if (d->epoch != du->epoch)
		return;
	d->unsure = true;
	uint32_t w = 0;
	for (uint32_t k = 0; k < du->args.n; k++) {
		const gs_du_entry_t *e = &du->args.e[k];
		if (e->node != d->dev)
			du->args.e[w++] = *e;
		else
			du->words -= e->size ? (e->size + 7) / 8 : 1;
	}
	du->args.n = w; /* (a dropped run's bytes stay, unread, until the launch) */
}

/* The sz (1-8) bytes at p as a word. */
static uint64_t gs_du_word(const unsigned char *p, uint32_t sz)
{
	uint64_t w = 0;
	memcpy(&w, p, sz);
	return w;
}

/*
 * GRAPHSHIM_CHECK_ORDER: the engine's record of node d (old) against the
 * copy kept here; where they differ a device patch would have left bytes
 * of the node as they were.  A bug: said once, and the process aborts.
 */
static void gs_du_check_old(const gs_du_node_t *d, const gs_rec_t *old)
{
	if (!memcmp(old->args, d->cur, d->nbytes) && !memcmp(old->grid, d->grid, sizeof(d->grid)))
		return;
	gs_log_once(GS_LOG_ERROR, "cuda: a device-updatable node's parameters are not what the engine "
				  "says it holds: a bug, please report it");
	abort();
}

/* Entries, runs' bytes and words noted so far by a patch, not yet counted in. */
typedef struct gs_du_fill {
	uint32_t n, nrun, words;
} gs_du_fill_t;

/* Whether one more entry, with `run` bytes of a run, fits the largest updater. */
static bool gs_du_room(const gs_du_fill_t *f, uint32_t run)
{
	return (f->n + 1) * sizeof(gs_du_entry_t) + f->nrun + run <= GS_DU_CAP * sizeof(gs_du_entry_t);
}

/* Node d's bytes [lo, hi) as r has them, one entry: the bytes themselves
 * (8 or fewer) or a run.  False where it does not fit. */
static bool gs_du_emit(gs_cu_du_t *du, const gs_du_node_t *d, const gs_rec_t *r, uint32_t lo, uint32_t hi,
		       gs_du_fill_t *f)
{
	uint32_t size = hi - lo, run = size > 8 ? (size + 7) & ~7u : 0;
	if (!gs_du_room(f, run))
		return false;
	uint64_t value;
	if (run) {
		if (!du->runs && !(du->runs = malloc(GS_DU_CAP * sizeof(gs_du_entry_t))))
			return false;
		memset(du->runs + f->nrun + run - 8, 0, 8);
		memcpy(du->runs + f->nrun, r->args + lo, size);
		value = f->nrun;
		f->nrun += run;
	} else
		value = gs_du_word(r->args + lo, size);
	du->args.e[f->n++] = (gs_du_entry_t){ d->dev, lo, size, value };
	f->words += (size + 7) / 8;
	return true;
}

bool gs_cu_du_defer(gs_cu_du_t *du, size_t i, const gs_rec_t *r, const gs_rec_t *old)
{
	gs_du_node_t *d = &du->node[i];
	if (!d->dev || r->kind != GS_REC_KERNEL)
		return false;
	bool shape = r->func != d->func || memcmp(r->block, d->block, sizeof(d->block)) ||
		     r->shmem != d->shmem || r->flags != d->flags || r->nbytes != d->nbytes;
	if (old && (old->kind != GS_REC_KERNEL || old->nbytes != d->nbytes))
		old = NULL; /* (not seen: a patch keeps its node's shape) */
	bool behind = !old && d->behind && !shape && d->epoch != du->epoch && !d->unsure;
	if (shape || d->epoch == du->epoch || d->unsure || behind) {
		/* A host patch (the caller's): this node's pending entries go, its
		 * bytes become r's, and the graph is uploaded before its launch.
		 * Should that patch fail, the node keeps neither r's bytes nor the
		 * dropped entries': the next patch is the host's too (unsure). */
		gs_du_drop(du, d);
		GS_STAT_INC(device_host_patches);
		if (shape)
			GS_STAT_INC(device_host_shape);
		if (behind)
			GS_STAT_INC(device_host_behind);
		return false;
	}
	/* The entries go after the pending ones, counted in only if all fit.
	 * Parameter blocks run to kilobytes (PyTorch's offset calculators) and
	 * a patch changes a few words: blocks that are equal are skipped whole. */
	bool keep = !old || gs_config.check_order; /* cur, read again */
	if (old && gs_config.check_order)
		gs_du_check_old(d, old);
	const unsigned char *was = old ? old->args : d->cur;
	const uint32_t *grid = old ? old->grid : d->grid;
	gs_du_fill_t f = { du->args.n, du->nrun, du->words };
	if (memcmp(r->grid, grid, sizeof(d->grid))) {
		if (!gs_du_room(&f, 0))
			goto full;
		du->args.e[f.n++] = (gs_du_entry_t){ d->dev, r->grid[0], 0,
						     r->grid[1] | (uint64_t)r->grid[2] << 32 };
		f.words++;
	}
	uint32_t lo = 0, hi = 0; /* the run open, [lo, hi) */
	for (uint32_t blk = 0; blk < d->nbytes; blk += GS_DU_BLOCK) {
		uint32_t end = d->nbytes - blk < GS_DU_BLOCK ? d->nbytes : blk + GS_DU_BLOCK;
		if (!memcmp(r->args + blk, was + blk, end - blk))
			continue;
		for (uint32_t off = blk; off < end; off += 8) {
			uint32_t sz = end - off < 8 ? end - off : 8;
			if (gs_du_word(r->args + off, sz) == gs_du_word(was + off, sz))
				continue;
			if (hi && off - hi <= GS_DU_GAP && off + sz - lo <= GS_DU_SPAN) {
				hi = off + sz;
				continue;
			}
			if (hi && !gs_du_emit(du, d, r, lo, hi, &f))
				goto full; /* past the updater's capacity: the host's */
			lo = off;
			hi = off + sz;
		}
	}
	if (hi && !gs_du_emit(du, d, r, lo, hi, &f))
		goto full;
	if (f.n == du->args.n)
		return true;
	/* The node's bytes as the launch leaves them: the bytes just noted. */
	for (uint32_t k = du->args.n; keep && k < f.n; k++) {
		const gs_du_entry_t *e = &du->args.e[k];
		if (e->size)
			memcpy(d->cur + e->off, r->args + e->off, e->size);
	}
	d->behind = d->behind || old;
	memcpy(d->grid, r->grid, sizeof(d->grid));
	du->args.n = f.n;
	du->nrun = f.nrun;
	du->words = f.words;
	d->epoch = du->epoch;
	return true;
full:
	GS_STAT_INC(device_host_patches);
	return false;
}

void gs_cu_du_patched(gs_cu_du_t *du, size_t i, const gs_rec_t *r)
{
	gs_du_node_t *d = &du->node[i];
	if (!d->opted)
		return;
	du->uploaded = false;
	if (!d->dev)
		return;
	d->unsure = false;
	if (r->nbytes == d->nbytes)
		gs_du_take(d, r);
	else
		d->dev = 0; /* (a layout never changes under a node: not seen) */
}

CUresult gs_cu_du_prepare(gs_cu_du_t *du, CUgraphExec x, CUstream s)
{
	const gs_cu_real_t *R = &gs_cu_real;
	CUresult st = CUDA_SUCCESS;
	if (!du->args.n && !du->on && du->uploaded)
		return st; /* nothing to set */
	uint64_t t = gs_self_drv_begin();
	if (du->args.n) {
		/* The smallest updater that holds them: the fewer bytes of
		 * parameters the host update copies. */
		uint32_t n = du->args.n;
		size_t slots = n + (du->nrun + sizeof(gs_du_entry_t) - 1) / sizeof(gs_du_entry_t);
		int k = 0;
		while (k + 1 < GS_DU_SIZES && slots > gs_du_size[k].cap)
			k++;
		if (du->nrun)
			memcpy(&du->args.e[n], du->runs, du->nrun);
		void *kp[1];
		CUDA_KERNEL_NODE_PARAMS p = gs_du_params(du, du->fn[k], n, kp);
		/* Counted for what they cost the launch after them (an H200:
		 * about 3 us a change of function, 4 us a node enabled again;
		 * tools/gpu/devupd/updcost.c). */
		bool before = du->set_fn != NULL; /* set (and enabled) at an earlier launch */
		if (before && (du->set_fn != p.func || du->set_bx != p.blockDimX))
			GS_STAT_INC(device_resizes);
		st = R->cuGraphExecKernelNodeSetParams_v2(x, du->unode, &p);
		if (st == CUDA_SUCCESS) {
			du->set_fn = p.func;
			du->set_bx = p.blockDimX;
		}
		if (st == CUDA_SUCCESS && !du->on && (st = R->cuGraphNodeSetEnabled(x, du->unode, 1)) == CUDA_SUCCESS) {
			if (before)
				GS_STAT_INC(device_reenables);
			du->on = true;
		}
	} else if (du->on) {
		if ((st = R->cuGraphNodeSetEnabled(x, du->unode, 0)) == CUDA_SUCCESS)
			du->on = false;
	}
	if (st == CUDA_SUCCESS && !du->uploaded && (st = R->cuGraphUpload(x, s)) == CUDA_SUCCESS) {
		du->uploaded = true;
		GS_STAT_INC(device_uploads);
	}
	gs_self_drv_end(t, GS_SELF_UPDATER);
	return st;
}

void gs_cu_du_launched(gs_cu_du_t *du)
{
	if (!du->args.n) {
		/* (Runs whose entries were all dropped: their bytes go too.) */
		du->nrun = du->words = 0;
		return;
	}
	GS_STAT_ADD(device_patched, du->words);
	GS_STAT_ADD(device_calls, du->args.n);
	GS_STAT_INC(device_updates);
	du->args.n = du->nrun = du->words = 0;
	du->epoch++;
}
