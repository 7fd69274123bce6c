/*
 * What the simulator's two vendor fronts (cuda_*.c, hip_*.c) share: the
 * parts of an API call that are the same whichever vendor's names it has
 * (resolving a stream handle, checking and submitting copies, memsets,
 * host functions and callbacks, a kernel's launch limits, adding a graph
 * node).  Each returns gs_sim_err_t; the front maps it onto its own codes
 * (gs_cu_err, gs_hip_err) and keeps only what differs between vendors.
 * Vendor-neutral: no vendor header is included here.
 */
#ifndef GS_SIM_FRONT_H
#define GS_SIM_FRONT_H

#include <limits.h>

#include "sim_core.h"

/*
 * An export and its twin for the per-thread default stream (name##suffix):
 * the same implementation, impl(legacy) and impl(ptds), the value saying
 * what stream 0 means.  Each front names its suffixes and values.
 */
#define GS_SIM_PAIR(ret, name, suffix, params, impl, legacy, ptds)           \
	ret name params { return impl(legacy); }                              \
	ret name##suffix params { return impl(ptds); }

/* ---- streams ---- */

/*
 * The stream a handle names: with `dflt` the default stream of ctx (its
 * legacy stream, or with `ptds` the calling thread's per-thread one);
 * otherwise h must be a created stream (GS_SIM_EHANDLE if not).
 */
gs_sim_err_t gs_sim_front_stream(gs_sim_ctx_t *ctx, const void *h, bool dflt, bool ptds,
				 gs_sim_stream_t **out);
/* The handle an application sees for s: `legacy`, `ptds` or s itself. */
void *gs_sim_front_handle(gs_sim_stream_t *s, void *legacy, void *ptds);
/* Whether s is capturing (active or invalidated). */
bool gs_sim_front_capturing(gs_sim_stream_t *s);
/*
 * Submit w to s, and with `wait` wait for it (not allowed while s
 * captures: GS_SIM_ECAP_UNSUPPORTED).
 */
gs_sim_err_t gs_sim_front_submit(gs_sim_stream_t *s, gs_sim_work_t *w, bool wait);
/* A host function fn(ud) after the work submitted to s so far. */
gs_sim_err_t gs_sim_front_host_fn(gs_sim_stream_t *s, void (*fn)(void *), void *ud);
/*
 * A stream callback: invoke(fn, stream, ud) runs after s's work so far,
 * where fn is the front's callback (its own type, converted back by
 * invoke) and stream the handle the application named.  flags must be 0.
 */
typedef void (*gs_sim_invoke_t)(void (*fn)(void), void *stream, void *ud);
gs_sim_err_t gs_sim_front_callback(gs_sim_stream_t *s, gs_sim_invoke_t invoke, void (*fn)(void),
				   void *stream, void *ud, unsigned flags);

/* ---- memory ---- */

/* Whether [p, p+n) lies inside one device allocation. */
bool gs_sim_front_fits(const void *p, size_t n);
/* The typed copies' rule: a side said to be device memory lies inside one allocation. */
gs_sim_err_t gs_sim_front_typed(const void *dst, bool dst_dev, const void *src, bool src_dev,
				size_t n);
/* A 1D copy of n bytes; GS_SIM_EINVAL for a NULL side or a device side past its allocation. */
gs_sim_err_t gs_sim_front_copy_work(gs_sim_work_t *w, void *dst, const void *src, size_t n);
/* Whether p is device memory; then its allocation's base and size (either may be NULL). */
bool gs_sim_front_range(const void *p, void **base, size_t *size);
/* Whether p is device memory and [p, p+n) runs past its allocation. */
bool gs_sim_front_overruns(const void *p, size_t n);
/*
 * Submit a copy: it waits when `sync` or when its destination is pageable
 * memory; a pageable source is staged.  Either of these is not allowed
 * while s captures.
 */
gs_sim_err_t gs_sim_front_copy(gs_sim_stream_t *s, gs_sim_work_t *w, bool sync);
/* A memset (elsize 1, 2 or 4; pitch for 2D), checked against its allocation. */
gs_sim_err_t gs_sim_front_memset_work(gs_sim_work_t *w, void *dst, size_t pitch, unsigned value,
				      unsigned elsize, size_t width, size_t height);

/* ---- launches ---- */

/* A vendor's launch: its limits and its `extra` markers. */
typedef struct gs_sim_launch_abi {
	unsigned max_grid_y, max_grid_z;
	unsigned max_block[3];
	unsigned max_threads;  /* per block */
	unsigned max_shmem;
	const void *m_ptr, *m_size, *m_end;
} gs_sim_launch_abi_t;

/*
 * The kernel work item of a launch of fn: GS_SIM_EHANDLE without a
 * function, GS_SIM_EINVAL for a dimension that is 0 or past the vendor's
 * limits or arguments that do not fit, GS_SIM_ENOMEM.
 */
gs_sim_err_t gs_sim_front_kernel_work(gs_sim_work_t *w, const gs_sim_func_t *fn,
				      const unsigned grid[3], const unsigned block[3],
				      unsigned shmem, void **params, void **extra,
				      const gs_sim_launch_abi_t *abi);

/* ---- graphs ---- */

/*
 * Add a node of w (taken, also on failure) to g after deps: GS_SIM_EINVAL
 * for a dependency that is no node, and where GS_SIM_FAIL_GRAPH_BUILD says.
 */
gs_sim_err_t gs_sim_front_add_node(gs_sim_node_t **out, gs_sim_graph_t *g, gs_sim_work_t *w,
				   void *const *deps, size_t nd);

/*
 * Launch x on s: the host pays one launch (GS_SIM_LAUNCH_US), the worker
 * GS_SIM_NODE_US a node; GS_SIM_ENOMEM where GS_SIM_FAIL_GRAPH_LAUNCH says.
 */
gs_sim_err_t gs_sim_front_graph_launch(gs_sim_exec_t *x, gs_sim_stream_t *s);
/*
 * The nodes of g: with `nodes`, up to *num of them (the rest of the
 * array NULL) and *num set to how many; without, *num set to their count.
 */
void gs_sim_front_graph_nodes(gs_sim_graph_t *g, void **nodes, size_t *num);

#endif /* GS_SIM_FRONT_H */
