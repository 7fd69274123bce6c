/*
 * The vendor-neutral core of the CPU simulator: contexts, streams with a
 * worker thread each, events, fences, device memory, modules, graphs and
 * stream capture.  A vendor front (cuda_*.c builds libcuda.so.1; a HIP front
 * could build libamdhip64.so.5 the same way) translates its API onto these
 * functions and maps gs_sim_err_t onto its own error codes.  No vendor
 * header is included here.
 *
 * Ordering model: every stream counts the operations submitted to it and
 * the operations its worker has completed.  A fence (stream, seq) is
 * satisfied once that stream has completed seq operations.  Cross-stream
 * order (legacy default stream, event waits, graph-exec serialization) is
 * expressed as fences an operation waits for before it runs; fences only
 * ever point at work submitted earlier, so they cannot form a cycle.
 */
#ifndef GS_SIM_CORE_H
#define GS_SIM_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gs_sim_kernel.h"

typedef enum gs_sim_err {
	GS_SIM_OK = 0,
	GS_SIM_EINVAL,          /* bad argument */
	GS_SIM_EHANDLE,         /* unknown or destroyed handle */
	GS_SIM_ENOMEM,          /* allocation failed (or injected) */
	GS_SIM_ENOTREADY,       /* query: work still pending */
	GS_SIM_ENOTFOUND,       /* symbol or file not found */
	GS_SIM_EIMAGE,          /* not a simulator module */
	GS_SIM_ECTX,            /* no current context */
	GS_SIM_ECAP_UNSUPPORTED,/* operation not allowed while capturing */
	GS_SIM_ECAP_IMPLICIT,   /* legacy stream touched during capture */
	GS_SIM_ECAP_INVALIDATED,/* capture was invalidated earlier */
	GS_SIM_ECAP_UNMATCHED,  /* end capture on a stream not capturing */
	GS_SIM_EUPDATE,         /* exec update: topology differs */
	GS_SIM_ETIMING,         /* event without timing */
	GS_SIM_EUNSUPPORTED,    /* feature not modelled */
} gs_sim_err_t;

/* Handle kinds, checked through a registry so a stale or foreign handle
 * yields an error rather than a crash. */
enum {
	GS_SIM_H_CTX = 1, GS_SIM_H_STREAM, GS_SIM_H_EVENT, GS_SIM_H_MODULE,
	GS_SIM_H_FUNC, GS_SIM_H_KERN, GS_SIM_H_GRAPH, GS_SIM_H_NODE,
	GS_SIM_H_EXEC, GS_SIM_H_DEVNODE,
};

void gs_sim_reg_add(const void *h, int kind);
void gs_sim_reg_del(const void *h);
bool gs_sim_reg_is(const void *h, int kind);

struct gs_sim_stream;
struct gs_sim_event;
struct gs_sim_func;
struct gs_sim_exec_ver;
struct gs_sim_capture;

/* ---- work: one unit a stream (or a graph node) executes ---- */
enum {
	GS_SIM_W_EMPTY = 0, GS_SIM_W_KERNEL, GS_SIM_W_COPY, GS_SIM_W_SET,
	GS_SIM_W_HOST, GS_SIM_W_GRAPH, GS_SIM_W_RECORD,
	GS_SIM_W_COOP = 31, /* no work: a cooperative kernel node, for GS_SIM_REFUSE_NODES */
};

typedef struct gs_sim_copy {
	unsigned char *dst;
	const unsigned char *src;
	size_t width, height, depth;   /* bytes, rows, slices */
	size_t dpitch, spitch;         /* bytes between rows */
	size_t dslice, sslice;         /* bytes between slices */
} gs_sim_copy_t;

typedef struct gs_sim_set {
	unsigned char *dst;
	size_t pitch;
	uint32_t value;
	unsigned elsize;               /* 1, 2 or 4 */
	size_t width, height;          /* elements, rows */
} gs_sim_set_t;

typedef struct gs_sim_work {
	int kind;
	union {
		struct {
			const struct gs_sim_func *fn;
			gs_sim_dim_t dim;
			unsigned char *args;   /* laid out by fn's offsets; owned */
		} kern;
		gs_sim_copy_t copy;
		gs_sim_set_t set;
		struct { void (*fn)(void *); void *arg; } host;
		struct { struct gs_sim_exec_ver *ver; } graph;
		struct { struct gs_sim_event *ev; uint64_t gen; } record;
	} u;
	void *owned;                   /* freed with the work (staging, closures) */
	/* Graph nodes only: disabled (cuGraphNodeSetEnabled) runs nothing;
	 * serial counts the host's settings of the node's parameters, so a
	 * device-updatable node's device copy knows when the host's are newer
	 * (gs_sim_dev_upload). */
	bool disabled;
	unsigned serial;
} gs_sim_work_t;

void gs_sim_work_run(const gs_sim_work_t *w);
void gs_sim_work_fini(gs_sim_work_t *w);
/* Deep copy (kernel arguments, owned buffers are duplicated). */
bool gs_sim_work_clone(gs_sim_work_t *dst, const gs_sim_work_t *src);

/* ---- contexts ---- */
typedef struct gs_sim_ctx {
	int device;
	unsigned flags;
	bool primary;
	pthread_mutex_t mu;            /* guards streams list, capture state */
	struct gs_sim_stream *streams; /* every live stream, legacy included */
	struct gs_sim_stream *legacy;
} gs_sim_ctx_t;

gs_sim_err_t gs_sim_ctx_create(gs_sim_ctx_t **out, int device, unsigned flags, bool primary);
void gs_sim_ctx_destroy(gs_sim_ctx_t *ctx);
void gs_sim_ctx_sync(gs_sim_ctx_t *ctx);

/* ---- streams ---- */
enum { GS_SIM_S_BLOCKING = 0, GS_SIM_S_NONBLOCKING = 1 };

typedef struct gs_sim_fence {
	struct gs_sim_stream *s;       /* holds a reference */
	uint64_t seq;
} gs_sim_fence_t;

typedef struct gs_sim_op {
	struct gs_sim_op *next;
	uint64_t seq;
	unsigned nfence;
	gs_sim_fence_t *fence;
	gs_sim_work_t work;
} gs_sim_op_t;

typedef struct gs_sim_stream {
	gs_sim_ctx_t *ctx;
	unsigned flags;                /* GS_SIM_S_* */
	int priority;
	bool legacy;
	uint64_t ptds_owner;           /* nonzero: per-thread default stream */
	atomic_int refs;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	gs_sim_op_t *head, *tail;
	/* The op the worker runs, dequeued, until it is freed (the worker's
	 * next dequeue replaces it): kept reachable from the stream, so a
	 * forked child (where the worker does not exist) does not leak it. */
	gs_sim_op_t *running;
	uint64_t submitted, completed;
	bool stop;
	pthread_t thread;
	struct gs_sim_stream *next;    /* in ctx->streams, under ctx->mu */
	/* capture state, under ctx->mu */
	struct gs_sim_capture *cap;
	struct gs_sim_node **capdeps;
	size_t ncapdeps;
} gs_sim_stream_t;

gs_sim_err_t gs_sim_stream_create(gs_sim_stream_t **out, gs_sim_ctx_t *ctx,
				  unsigned flags, int priority);
void gs_sim_stream_destroy(gs_sim_stream_t *s);
gs_sim_stream_t *gs_sim_stream_ptds(gs_sim_ctx_t *ctx);
void gs_sim_stream_ref(gs_sim_stream_t *s);
void gs_sim_stream_unref(gs_sim_stream_t *s);
/* Submit work: the stream takes ownership of *w (also on error).  extra
 * fences (references are consumed) are waited for besides the implicit
 * legacy-stream ones.  While the stream captures, the work becomes a
 * graph node instead.  *seq_out (optional) receives the op's sequence
 * number, 0 when captured. */
gs_sim_err_t gs_sim_submit(gs_sim_stream_t *s, gs_sim_work_t *w,
			   gs_sim_fence_t *extra, unsigned nextra, uint64_t *seq_out);
/* Submit and wait for that operation (synchronous copies). */
gs_sim_err_t gs_sim_submit_wait(gs_sim_stream_t *s, gs_sim_work_t *w);
gs_sim_err_t gs_sim_stream_sync(gs_sim_stream_t *s);
gs_sim_err_t gs_sim_stream_query(gs_sim_stream_t *s);
void gs_sim_fence_wait(const gs_sim_fence_t *f);
bool gs_sim_fence_done(const gs_sim_fence_t *f);

/* ---- events ---- */
typedef struct gs_sim_event {
	unsigned flags;                /* GS_SIM_EV_* */
	atomic_int refs;               /* the handle plus pending record ops */
	pthread_mutex_t mu;
	uint64_t gen;                  /* bumped on every record */
	bool has_fence;
	gs_sim_fence_t fence;
	bool t_valid;
	uint64_t t_ns;
	/* captured record: lets another stream join the capture */
	struct gs_sim_capture *cap;
	struct gs_sim_node **capdeps;
	size_t ncapdeps;
} gs_sim_event_t;

enum { GS_SIM_EV_NOTIMING = 1 };

gs_sim_err_t gs_sim_event_create(gs_sim_event_t **out, unsigned flags);
void gs_sim_event_destroy(gs_sim_event_t *e);
gs_sim_err_t gs_sim_event_record(gs_sim_event_t *e, gs_sim_stream_t *s);
gs_sim_err_t gs_sim_event_query(gs_sim_event_t *e);
gs_sim_err_t gs_sim_event_sync(gs_sim_event_t *e);
gs_sim_err_t gs_sim_event_elapsed(float *ms, gs_sim_event_t *a, gs_sim_event_t *b);
/* Used by the record work item: stamp the time, drop its reference. */
void gs_sim_event_stamp(gs_sim_event_t *e, uint64_t gen);
void gs_sim_event_release(gs_sim_event_t *e);
gs_sim_err_t gs_sim_stream_wait_event(gs_sim_stream_t *s, gs_sim_event_t *e);

/* ---- memory ---- */
enum { GS_SIM_M_PAGEABLE = 0, GS_SIM_M_DEVICE, GS_SIM_M_PINNED };

gs_sim_err_t gs_sim_mem_alloc(void **out, size_t size, gs_sim_ctx_t *ctx);
gs_sim_err_t gs_sim_mem_free(void *p);          /* syncs the owning ctx */
gs_sim_err_t gs_sim_host_alloc(void **out, size_t size, unsigned flags);
gs_sim_err_t gs_sim_host_free(void *p);
gs_sim_err_t gs_sim_host_register(void *p, size_t size, unsigned flags);
gs_sim_err_t gs_sim_host_unregister(void *p);
/* Classify an address; base/size/ctx/flags of its allocation (optional). */
int gs_sim_mem_kind(const void *p, void **base, size_t *size,
		    gs_sim_ctx_t **ctx, unsigned *flags);
/* Free and total device memory; either pointer may be NULL. */
void gs_sim_mem_info(size_t *free_b, size_t *total_b);
/*
 * The stream-ordered pool (sim_mem.c): an allocation ordered on stream s,
 * a free made when s reaches it (the block then poisoned), the blocks of a
 * destroyed context given back.
 */
gs_sim_err_t gs_sim_pool_alloc(void **out, size_t size, gs_sim_ctx_t *ctx,
			       const struct gs_sim_stream *s);
gs_sim_err_t gs_sim_pool_free(void *p, struct gs_sim_stream *s);
/* cuMemFree of a pool's block: out of the pool, freed as any (syncing its context). */
gs_sim_err_t gs_sim_pool_free_now(void *p);
bool gs_sim_pool_owns(const void *p);
void gs_sim_pool_drop(gs_sim_ctx_t *ctx);

/* ---- modules and functions ---- */
typedef struct gs_sim_func {
	const gs_sim_kernel_t *k;
	struct gs_sim_module *mod;
	size_t off[GS_SIM_MAX_PARAMS];
	size_t argsize;
} gs_sim_func_t;

typedef struct gs_sim_kern {
	gs_sim_func_t *fn;
} gs_sim_kern_t;

typedef struct gs_sim_module {
	void *dl;
	size_t n;
	gs_sim_func_t *funcs;
	gs_sim_kern_t *kerns;
	bool library;
} gs_sim_module_t;

gs_sim_err_t gs_sim_module_load_file(gs_sim_module_t **out, const char *path);
gs_sim_err_t gs_sim_module_load_image(gs_sim_module_t **out, const void *image);
void gs_sim_module_unload(gs_sim_module_t *m);
/* A module over a kernel table that stays in memory (no shared object, and
 * no GS_SIM_H_MODULE handle: the HIP front's fat binaries). */
gs_sim_err_t gs_sim_module_from_table(gs_sim_module_t **out, const gs_sim_kernel_t *tab);
gs_sim_func_t *gs_sim_module_func(gs_sim_module_t *m, const char *name);
/* Pack kernelParams-style pointers into a new argument buffer. */
unsigned char *gs_sim_func_pack(const gs_sim_func_t *fn, void *const *params);
/* Unpack an `extra` buffer (same layout); size must cover the layout. */
unsigned char *gs_sim_func_pack_buffer(const gs_sim_func_t *fn, const void *buf, size_t size);

/*
 * Unpack a launch's `extra` array ({ptr marker, buffer, size marker,
 * &size, end marker}; each front passes its own marker values) into fn's
 * argument layout.  0 with *out set, or GS_SIM_PACK_INVALID / _NOMEM.
 */
enum { GS_SIM_PACK_INVALID = 1, GS_SIM_PACK_NOMEM = 2 };
int gs_sim_func_pack_extra(const gs_sim_func_t *fn, void **extra, const void *m_ptr,
			   const void *m_size, const void *m_end, unsigned char **out);

/*
 * Fill *w with a launch of fn whose arguments come from params (one
 * pointer each), or the `extra` form (markers as for gs_sim_func_pack_extra),
 * or nothing for a kernel without parameters.  The front checked the
 * handle and its vendor's launch limits.  0, or GS_SIM_PACK_INVALID/_NOMEM.
 */
int gs_sim_kernel_work(gs_sim_work_t *w, const gs_sim_func_t *fn, const unsigned grid[3],
		       const unsigned block[3], unsigned shmem, void **params, void **extra,
		       const void *m_ptr, const void *m_size, const void *m_end);

/* ---- graphs ---- */
typedef struct gs_sim_node {
	struct gs_sim_graph *graph;
	size_t index;                  /* creation order in its graph */
	int type;                      /* front's node type tag */
	gs_sim_work_t work;
	struct gs_sim_node **deps;
	size_t ndeps;
	/* A copy's or memset's pointers that were device or pinned memory when
	 * the node was made (NULL otherwise): they must still be when the graph
	 * is instantiated (gs_sim_exec_create). */
	const void *live[2];
	struct gs_sim_devnode *devnode; /* device-updatable kernel node: its handle */
} gs_sim_node_t;

typedef struct gs_sim_graph {
	pthread_mutex_t mu;
	gs_sim_node_t **nodes;
	size_t n, cap;
} gs_sim_graph_t;

typedef struct gs_sim_exec_ver {
	atomic_int refs;
	size_t n;
	size_t *order;                 /* topological order of node indices */
	gs_sim_work_t *works;          /* by node index */
	struct gs_sim_devstate *dev;   /* the exec's device copies (a reference), or NULL */
} gs_sim_exec_ver_t;

typedef struct gs_sim_exec {
	pthread_mutex_t mu;
	gs_sim_exec_ver_t *cur;
	size_t n;
	const gs_sim_node_t **src;     /* source node handles, by index (not dereferenced) */
	int *types;
	size_t *ndeps;
	size_t **deps;                 /* dependency indices, for update checks */
	bool launched;
	gs_sim_fence_t last;           /* previous launch: launches serialize */
	struct gs_sim_devstate *dev;   /* device-updatable nodes' device copies, or NULL */
} gs_sim_exec_t;

gs_sim_err_t gs_sim_graph_create(gs_sim_graph_t **out);
void gs_sim_graph_destroy(gs_sim_graph_t *g);
/* Add a node; the graph takes ownership of *w (also on error). */
gs_sim_err_t gs_sim_graph_add(gs_sim_node_t **out, gs_sim_graph_t *g, int type,
			      gs_sim_work_t *w, gs_sim_node_t *const *deps, size_t ndeps);
gs_sim_err_t gs_sim_graph_add_dep(gs_sim_node_t *from, gs_sim_node_t *to);
gs_sim_err_t gs_sim_exec_create(gs_sim_exec_t **out, gs_sim_graph_t *g);
void gs_sim_exec_destroy(gs_sim_exec_t *x);
gs_sim_err_t gs_sim_exec_launch(gs_sim_exec_t *x, gs_sim_stream_t *s);
/* Replace one node's work for later launches; takes ownership of *w. */
gs_sim_err_t gs_sim_exec_set(gs_sim_exec_t *x, const gs_sim_node_t *node, int type, gs_sim_work_t *w);
/* Take all parameters from g if its topology matches; else GS_SIM_EUPDATE
 * with *bad set to the first differing node of g (or NULL). */
gs_sim_err_t gs_sim_exec_update(gs_sim_exec_t *x, gs_sim_graph_t *g, gs_sim_node_t **bad);
void gs_sim_exec_ver_unref(gs_sim_exec_ver_t *v);

/* Enable or disable one node for later launches (cuGraphNodeSetEnabled). */
gs_sim_err_t gs_sim_exec_enable(gs_sim_exec_t *x, const gs_sim_node_t *node, bool on);

/*
 * Device-updatable kernel nodes (sim_devupd.c; CUDA 12.4's device graph
 * updates).  Such a node has a handle (gs_sim_devnode_t) that a kernel may
 * pass to the device updater, a built-in module's kernels (the image
 * graphshim loads: gs_sim_devupd_image), to write the node's parameters or
 * grid on the device.  An exec keeps each such node's device copy (a slot),
 * loaded from the host's parameters at a launch when the host set them
 * since (as a GPU's upload at a launch does: gs_sim_dev_upload); the node
 * runs from its slot, so a device update lasts until the host sets the node
 * again.  A graph with such nodes may be instantiated once.
 */
typedef struct gs_sim_devslot {
	bool loaded;
	unsigned serial;               /* the host parameters' it was loaded from */
	size_t size;
	unsigned char *args;
	unsigned grid[3];
} gs_sim_devslot_t;

typedef struct gs_sim_devstate {
	atomic_int refs;               /* the exec's and each version's */
	pthread_mutex_t mu;
	size_t n;
	gs_sim_devslot_t *slot;        /* by node index */
	struct gs_sim_devnode **handles; /* references, by node index (NULL: not device-updatable) */
} gs_sim_devstate_t;

typedef struct gs_sim_devnode {
	atomic_int refs;               /* its graph node's and its exec's */
	gs_sim_devstate_t *st;         /* not a reference: set while its exec or a launch of it lives */
	size_t index;
} gs_sim_devnode_t;

/* Opt node n in (it stays in: opting out is refused, as on a GPU). */
gs_sim_err_t gs_sim_node_devupd(gs_sim_node_t *n, bool on);
void gs_sim_devnode_unref(gs_sim_devnode_t *d);
/* At instantiation (g locked): the exec's device copies; GS_SIM_EINVAL when
 * one of g's device-updatable nodes was instantiated before. */
gs_sim_err_t gs_sim_dev_create(gs_sim_exec_t *x, const gs_sim_graph_t *g);
void gs_sim_dev_unref(gs_sim_devstate_t *st);
/* Run version v's node i (device-updatable) from its device copy. */
void gs_sim_dev_upload(const gs_sim_exec_ver_t *v);
void gs_sim_dev_run(const gs_sim_exec_ver_t *v, size_t i);
/* Whether image is the device updater's (graphshim's PTX); its kernel table. */
bool gs_sim_devupd_image(const void *image);
extern const gs_sim_kernel_t gs_sim_devupd_kernels[];

/* ---- stream capture ---- */
enum { GS_SIM_CAP_NONE = 0, GS_SIM_CAP_ACTIVE, GS_SIM_CAP_INVALIDATED };

typedef struct gs_sim_capture {
	atomic_int refs;
	int status;
	int mode;                      /* front's mode; 2 = relaxed */
	uint64_t id;
	gs_sim_graph_t *graph;
	gs_sim_stream_t *origin;
} gs_sim_capture_t;

gs_sim_capture_t *gs_sim_capture_ref(gs_sim_capture_t *c);
void gs_sim_capture_unref(gs_sim_capture_t *c);

gs_sim_err_t gs_sim_capture_begin(gs_sim_stream_t *s, int mode);
gs_sim_err_t gs_sim_capture_end(gs_sim_stream_t *s, gs_sim_graph_t **out);
/* status, id, graph and dependency snapshot (malloc'd copy, may be NULL). */
int gs_sim_capture_info(gs_sim_stream_t *s, uint64_t *id, gs_sim_graph_t **g,
			gs_sim_node_t ***deps, size_t *ndeps);

/* ---- knobs and fault injection (GS_SIM_* environment) ---- */
enum {
	GS_SIM_F_INSTANTIATE, GS_SIM_F_GRAPH_LAUNCH, GS_SIM_F_NODE_PATCH,
	GS_SIM_F_PARAM_INFO, GS_SIM_F_ALLOC, GS_SIM_F_GRAPH_BUILD, GS_SIM_F_DEVUPD, GS_SIM_F_COUNT
};
/* True when this call (counted per kind) must fail. */
bool gs_sim_fault(int kind);
/*
 * True when explicit node adds of work kind (GS_SIM_W_*) are refused:
 * GS_SIM_REFUSE_NODES names kinds (kernel, copy, memset, comma-separated),
 * as a driver refuses operations its graphs cannot hold.  `coop`
 * (GS_SIM_W_COOP) refuses the cooperative attribute on a kernel node
 * instead (as an H200 refused cuDNN's cooperative batch-norm kernels):
 * where it is set (cuGraphKernelNodeSetAttribute), or at instantiation.
 */
bool gs_sim_refuses_node(int kind);
/*
 * With GS_SIM_REFUSE_AT=instantiate the kinds above are added and refused
 * when their graph is instantiated instead: the first such node of g, or
 * NULL (and NULL always without it).
 */
gs_sim_node_t *gs_sim_refused_at_instantiate(gs_sim_graph_t *g);
double gs_sim_launch_us(void);
double gs_sim_node_us(void);
/* Host time an instantiation takes (GS_SIM_INSTANTIATE_US, slept). */
double gs_sim_instantiate_us(void);
/* Host time creating a graph takes (GS_SIM_GRAPH_CREATE_US, slept). */
double gs_sim_graph_create_us(void);
/* Host time a stream-ordered free takes between marking its block and
 * queueing its work (GS_SIM_POOL_FREE_US, slept; a test seam). */
double gs_sim_pool_free_us(void);
void gs_sim_spin_us(double us);
uint64_t gs_sim_now_ns(void);

/* Abort with a message on a failed pthread call: the simulator cannot
 * continue with a broken lock. */
#define GS_SIM_PT(call) gs_sim_pt_check((call), #call, __FILE__, __LINE__)
void gs_sim_pt_check(int rc, const char *what, const char *file, int line);

#endif /* GS_SIM_CORE_H */
