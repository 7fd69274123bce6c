/*
 * What the vendor fronts share (sim_front.h): each function here is the
 * common part of calls both cuda_*.c and hip_*.c make, written once.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_front.h"

/* ---- streams ---- */

gs_sim_err_t gs_sim_front_stream(gs_sim_ctx_t *ctx, const void *h, bool dflt, bool ptds,
				 gs_sim_stream_t **out)
{
	if (dflt) {
		*out = ptds ? gs_sim_stream_ptds(ctx) : ctx->legacy;
		return *out ? GS_SIM_OK : GS_SIM_ENOMEM;
	}
	if (!gs_sim_reg_is(h, GS_SIM_H_STREAM))
		return GS_SIM_EHANDLE;
	*out = (gs_sim_stream_t *)h;
	return GS_SIM_OK;
}

void *gs_sim_front_handle(gs_sim_stream_t *s, void *legacy, void *ptds)
{
	if (s->legacy)
		return legacy;
	if (s->ptds_owner)
		return ptds;
	return s;
}

bool gs_sim_front_capturing(gs_sim_stream_t *s)
{
	return gs_sim_capture_info(s, NULL, NULL, NULL, NULL) != GS_SIM_CAP_NONE;
}

gs_sim_err_t gs_sim_front_submit(gs_sim_stream_t *s, gs_sim_work_t *w, bool wait)
{
	if (!wait)
		return gs_sim_submit(s, w, NULL, 0, NULL);
	if (gs_sim_front_capturing(s))
		return GS_SIM_ECAP_UNSUPPORTED;
	return gs_sim_submit_wait(s, w);
}

gs_sim_err_t gs_sim_front_host_fn(gs_sim_stream_t *s, void (*fn)(void *), void *ud)
{
	if (!fn)
		return GS_SIM_EINVAL;
	gs_sim_work_t w = { .kind = GS_SIM_W_HOST, .u.host = { fn, ud } };
	return gs_sim_submit(s, &w, NULL, 0, NULL);
}

typedef struct callback {
	gs_sim_invoke_t invoke;
	void (*fn)(void);
	void *stream;
	void *ud;
} callback_t;

static void callback_run(void *arg)
{
	callback_t *c = arg;
	c->invoke(c->fn, c->stream, c->ud);
}

gs_sim_err_t gs_sim_front_callback(gs_sim_stream_t *s, gs_sim_invoke_t invoke, void (*fn)(void),
				   void *stream, void *ud, unsigned flags)
{
	if (!fn || flags)
		return GS_SIM_EINVAL;
	if (gs_sim_front_capturing(s))
		return GS_SIM_ECAP_UNSUPPORTED;
	callback_t *c = malloc(sizeof(*c));
	if (!c)
		return GS_SIM_ENOMEM;
	*c = (callback_t){ invoke, fn, stream, ud };
	gs_sim_work_t w = { .kind = GS_SIM_W_HOST, .u.host = { callback_run, c }, .owned = c };
	return gs_sim_submit(s, &w, NULL, 0, NULL);
}

/* ---- memory ---- */

bool gs_sim_front_fits(const void *p, size_t n)
{
	void *base;
	size_t size;
	if (gs_sim_mem_kind(p, &base, &size, NULL, NULL) != GS_SIM_M_DEVICE)
		return false;
	return (size_t)((const unsigned char *)p - (unsigned char *)base) + n <= size;
}

bool gs_sim_front_range(const void *p, void **base, size_t *size)
{
	void *b;
	size_t n;
	if (gs_sim_mem_kind(p, &b, &n, NULL, NULL) != GS_SIM_M_DEVICE)
		return false;
	if (base)
		*base = b;
	if (size)
		*size = n;
	return true;
}

bool gs_sim_front_overruns(const void *p, size_t n)
{
	return gs_sim_mem_kind(p, NULL, NULL, NULL, NULL) == GS_SIM_M_DEVICE &&
	       !gs_sim_front_fits(p, n);
}

gs_sim_err_t gs_sim_front_typed(const void *dst, bool dst_dev, const void *src, bool src_dev,
				size_t n)
{
	if (n && ((dst_dev && !gs_sim_front_fits(dst, n)) || (src_dev && !gs_sim_front_fits(src, n))))
		return GS_SIM_EINVAL;
	return GS_SIM_OK;
}

gs_sim_err_t gs_sim_front_copy_work(gs_sim_work_t *w, void *dst, const void *src, size_t n)
{
	if (!dst || !src)
		return GS_SIM_EINVAL;
	if (gs_sim_front_overruns(dst, n) || gs_sim_front_overruns(src, n))
		return GS_SIM_EINVAL;
	*w = (gs_sim_work_t){ .kind = GS_SIM_W_COPY, .u.copy = { dst, src, n, 1, 1, n, n, n, n } };
	return GS_SIM_OK;
}

gs_sim_err_t gs_sim_front_copy(gs_sim_stream_t *s, gs_sim_work_t *w, bool sync)
{
	int dk = gs_sim_mem_kind(w->u.copy.dst, NULL, NULL, NULL, NULL);
	int sk = gs_sim_mem_kind(w->u.copy.src, NULL, NULL, NULL, NULL);
	if (sync || dk == GS_SIM_M_PAGEABLE)
		return gs_sim_front_submit(s, w, true);
	if (sk == GS_SIM_M_PAGEABLE) {
		if (gs_sim_front_capturing(s))
			return GS_SIM_ECAP_UNSUPPORTED;
		size_t n = w->u.copy.width;
		void *stage = malloc(n);
		if (!stage)
			return GS_SIM_ENOMEM;
		memcpy(stage, w->u.copy.src, n);
		w->u.copy.src = stage;
		w->owned = stage;
	}
	return gs_sim_submit(s, w, NULL, 0, NULL);
}

gs_sim_err_t gs_sim_front_memset_work(gs_sim_work_t *w, void *dst, size_t pitch, unsigned value,
				      unsigned elsize, size_t width, size_t height)
{
	if (elsize != 1 && elsize != 2 && elsize != 4)
		return GS_SIM_EINVAL;
	if (height <= 1)
		pitch = width * elsize;
	if (pitch < width * elsize || ((uintptr_t)dst % elsize))
		return GS_SIM_EINVAL;
	if (width && height && !gs_sim_front_fits(dst, (height - 1) * pitch + width * elsize))
		return GS_SIM_EINVAL;
	*w = (gs_sim_work_t){ .kind = GS_SIM_W_SET,
			      .u.set = { dst, pitch, value, elsize, width, height } };
	return GS_SIM_OK;
}

/* ---- launches ---- */

gs_sim_err_t gs_sim_front_kernel_work(gs_sim_work_t *w, const gs_sim_func_t *fn,
				      const unsigned grid[3], const unsigned block[3],
				      unsigned shmem, void **params, void **extra,
				      const gs_sim_launch_abi_t *abi)
{
	if (!fn)
		return GS_SIM_EHANDLE;
	if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
		return GS_SIM_EINVAL;
	if (grid[1] > abi->max_grid_y || grid[2] > abi->max_grid_z || block[0] > abi->max_block[0] ||
	    block[1] > abi->max_block[1] || block[2] > abi->max_block[2] ||
	    (uint64_t)block[0] * block[1] * block[2] > abi->max_threads || shmem > abi->max_shmem)
		return GS_SIM_EINVAL;
	int e = gs_sim_kernel_work(w, fn, grid, block, shmem, params, extra, abi->m_ptr,
				   abi->m_size, abi->m_end);
	return !e ? GS_SIM_OK : e == GS_SIM_PACK_NOMEM ? GS_SIM_ENOMEM : GS_SIM_EINVAL;
}

/* ---- graphs ---- */

gs_sim_err_t gs_sim_front_add_node(gs_sim_node_t **out, gs_sim_graph_t *g, gs_sim_work_t *w,
				   void *const *deps, size_t nd)
{
	if (gs_sim_fault(GS_SIM_F_GRAPH_BUILD) || gs_sim_refuses_node(w->kind)) {
		gs_sim_work_fini(w);
		return GS_SIM_EINVAL;
	}
	for (size_t i = 0; i < nd; i++)
		if (!gs_sim_reg_is(deps[i], GS_SIM_H_NODE)) {
			gs_sim_work_fini(w);
			return GS_SIM_EINVAL;
		}
	return gs_sim_graph_add(out, g, w->kind, w, (gs_sim_node_t *const *)deps, nd);
}

void gs_sim_front_graph_nodes(gs_sim_graph_t *g, void **nodes, size_t *num)
{
	GS_SIM_PT(pthread_mutex_lock(&g->mu));
	if (nodes) {
		size_t n = *num < g->n ? *num : g->n;
		for (size_t i = 0; i < n; i++)
			nodes[i] = g->nodes[i];
		for (size_t i = n; i < *num; i++)
			nodes[i] = NULL;
		*num = n;
	} else {
		*num = g->n;
	}
	GS_SIM_PT(pthread_mutex_unlock(&g->mu));
}

gs_sim_err_t gs_sim_front_graph_launch(gs_sim_exec_t *x, gs_sim_stream_t *s)
{
	if (gs_sim_fault(GS_SIM_F_GRAPH_LAUNCH))
		return GS_SIM_ENOMEM;
	gs_sim_spin_us(gs_sim_launch_us());
	return gs_sim_exec_launch(x, s);
}
