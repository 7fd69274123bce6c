/*
 * Device-updatable kernel nodes and the device updater (sim_core.h).  On a
 * GPU a kernel running in a graph may rewrite the parameters or the grid of
 * later device-updatable nodes of an executable graph
 * (cudaGraphKernelNodeSetParam, cudaGraphKernelNodeSetGridDim); graphshim
 * loads a PTX module whose kernels do that from a list of entries.  The
 * simulator recognises that module (gs_sim_devupd_image) and runs its
 * kernels here.  An entry naming no live device-updatable node, or bytes
 * outside the node's parameters, is a bug of the caller's: the simulator
 * aborts, as a fuzzer wants, where a GPU would return an error the kernel
 * cannot report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_core.h"

gs_sim_err_t gs_sim_node_devupd(gs_sim_node_t *n, bool on)
{
	if (!on)
		return n->devnode ? GS_SIM_EINVAL : GS_SIM_OK;
	if (n->devnode)
		return GS_SIM_OK;
	gs_sim_devnode_t *d = calloc(1, sizeof(*d));
	if (!d)
		return GS_SIM_ENOMEM;
	atomic_init(&d->refs, 1);
	gs_sim_reg_add(d, GS_SIM_H_DEVNODE);
	n->devnode = d;
	return GS_SIM_OK;
}

void gs_sim_devnode_unref(gs_sim_devnode_t *d)
{
	if (!d || atomic_fetch_sub(&d->refs, 1) != 1)
		return;
	gs_sim_reg_del(d);
	free(d);
}

gs_sim_err_t gs_sim_dev_create(gs_sim_exec_t *x, const gs_sim_graph_t *g)
{
	size_t on = 0;
	for (size_t i = 0; i < g->n; i++) {
		const gs_sim_devnode_t *d = g->nodes[i]->devnode;
		if (d && d->st)
			return GS_SIM_EINVAL; /* instantiated once already */
		on += d != NULL;
	}
	if (!on)
		return GS_SIM_OK;
	gs_sim_devstate_t *st = calloc(1, sizeof(*st));
	if (!st || !(st->slot = calloc(g->n, sizeof(*st->slot))) ||
	    !(st->handles = calloc(g->n, sizeof(*st->handles)))) {
		if (st)
			free(st->slot);
		free(st);
		return GS_SIM_ENOMEM;
	}
	atomic_init(&st->refs, 1);
	GS_SIM_PT(pthread_mutex_init(&st->mu, NULL));
	st->n = g->n;
	for (size_t i = 0; i < g->n; i++) {
		gs_sim_devnode_t *d = g->nodes[i]->devnode;
		if (!d)
			continue;
		atomic_fetch_add(&d->refs, 1);
		d->st = st;
		d->index = i;
		st->handles[i] = d;
	}
	x->dev = st;
	return GS_SIM_OK;
}

void gs_sim_dev_unref(gs_sim_devstate_t *st)
{
	if (!st || atomic_fetch_sub(&st->refs, 1) != 1)
		return;
	for (size_t i = 0; i < st->n; i++) {
		free(st->slot[i].args);
		if (st->handles[i])
			st->handles[i]->st = NULL; /* its exec and every launch of it are gone */
		gs_sim_devnode_unref(st->handles[i]);
	}
	GS_SIM_PT(pthread_mutex_destroy(&st->mu));
	free(st->slot);
	free(st->handles);
	free(st);
}

void gs_sim_dev_upload(const gs_sim_exec_ver_t *v)
{
	gs_sim_devstate_t *st = v->dev;
	GS_SIM_PT(pthread_mutex_lock(&st->mu));
	for (size_t i = 0; i < st->n; i++) {
		gs_sim_devslot_t *sl = &st->slot[i];
		const gs_sim_work_t *w = &v->works[i];
		if (!st->handles[i] || (sl->loaded && sl->serial == w->serial))
			continue;
		size_t n = w->u.kern.fn->argsize;
		unsigned char *a = realloc(sl->args, n ? n : 1);
		if (!a) {
			fprintf(stderr, "gs-sim: out of memory loading a device-updatable node\n");
			abort();
		}
		memcpy(a, w->u.kern.args, n);
		sl->args = a;
		sl->size = n;
		memcpy(sl->grid, w->u.kern.dim.grid, sizeof(sl->grid));
		sl->serial = w->serial;
		sl->loaded = true;
	}
	GS_SIM_PT(pthread_mutex_unlock(&st->mu));
}

void gs_sim_dev_run(const gs_sim_exec_ver_t *v, size_t i)
{
	gs_sim_devstate_t *st = v->dev;
	gs_sim_work_t w = v->works[i];
	GS_SIM_PT(pthread_mutex_lock(&st->mu));
	const gs_sim_devslot_t *sl = &st->slot[i];
	unsigned char *a = malloc(sl->size ? sl->size : 1);
	if (a) {
		memcpy(a, sl->args, sl->size);
		memcpy(w.u.kern.dim.grid, sl->grid, sizeof(sl->grid));
	}
	GS_SIM_PT(pthread_mutex_unlock(&st->mu));
	if (!a) {
		fprintf(stderr, "gs-sim: out of memory running a device-updatable node\n");
		abort();
	}
	w.u.kern.args = a;
	gs_sim_work_run(&w);
	free(a);
}

/* ---- the device updater ---- */

/* One entry, as graphshim's updater kernel reads it (shim/cuda/cu_devupd.cu). */
typedef struct gs_sim_du_entry {
	uint64_t node;      /* the node's device handle */
	uint32_t off, size; /* bytes of its parameters; size 0: the grid, x in off */
	uint64_t value;     /* the bytes (size 1-8), or the grid's y and z; size 9 to
			     * GS_SIM_DU_SPAN: a run's offset among the runs, which
			     * follow the n entries, each 8-byte aligned */
} gs_sim_du_entry_t;
#define GS_SIM_DU_SPAN 256

static void devupd_fail(const char *why, uint64_t node)
{
	fprintf(stderr, "gs-sim: device updater: %s (node handle 0x%llx)\n", why,
		(unsigned long long)node);
	abort();
}

static void devupd_apply(void *arg, unsigned cap)
{
	uint32_t n;
	memcpy(&n, arg, sizeof(n));
	if (n > cap)
		devupd_fail("more entries than its parameters hold", 0);
	const unsigned char *e = (const unsigned char *)arg + 8;
	const unsigned char *runs = e + (size_t)n * sizeof(gs_sim_du_entry_t);
	size_t room = (size_t)(cap - n) * sizeof(gs_sim_du_entry_t); /* the runs' bytes at most */
	for (uint32_t k = 0; k < n; k++) {
		gs_sim_du_entry_t en;
		memcpy(&en, e + k * sizeof(en), sizeof(en));
		gs_sim_devnode_t *d = (gs_sim_devnode_t *)(uintptr_t)en.node;
		if (!gs_sim_reg_is(d, GS_SIM_H_DEVNODE))
			devupd_fail("not a device-updatable node", en.node);
		gs_sim_devstate_t *st = d->st;
		if (!st)
			devupd_fail("a node of no live executable graph", en.node);
		GS_SIM_PT(pthread_mutex_lock(&st->mu));
		gs_sim_devslot_t *sl = &st->slot[d->index];
		if (!sl->loaded)
			devupd_fail("a node of a graph never launched", en.node);
		if (en.size == 0) {
			if (!en.off || !(uint32_t)en.value || !(uint32_t)(en.value >> 32))
				devupd_fail("an empty grid", en.node);
			sl->grid[0] = en.off;
			sl->grid[1] = (uint32_t)en.value;
			sl->grid[2] = (uint32_t)(en.value >> 32);
		} else {
			if (en.size > GS_SIM_DU_SPAN || en.off > sl->size || sl->size - en.off < en.size)
				devupd_fail("bytes outside the node's parameters", en.node);
			if (en.size <= 8)
				memcpy(sl->args + en.off, &en.value, en.size);
			else if (en.value % 8 || en.value > room || room - en.value < ((en.size + 7u) & ~7u))
				devupd_fail("a run outside the updater's parameters", en.node);
			else
				memcpy(sl->args + en.off, runs + en.value, en.size);
		}
		GS_SIM_PT(pthread_mutex_unlock(&st->mu));
	}
}

static void du_apply32(const gs_sim_dim_t *dim, void **params)
{
	(void)dim;
	devupd_apply(params[0], 32);
}

static void du_apply512(const gs_sim_dim_t *dim, void **params)
{
	(void)dim;
	devupd_apply(params[0], 512);
}

static void du_apply1360(const gs_sim_dim_t *dim, void **params)
{
	(void)dim;
	devupd_apply(params[0], 1360);
}

const gs_sim_kernel_t gs_sim_devupd_kernels[] = {
	{ "gs_du_apply32", du_apply32, 1, { 8 + 32 * sizeof(gs_sim_du_entry_t) } },
	{ "gs_du_apply512", du_apply512, 1, { 8 + 512 * sizeof(gs_sim_du_entry_t) } },
	{ "gs_du_apply1360", du_apply1360, 1, { 8 + 1360 * sizeof(gs_sim_du_entry_t) } },
	{ NULL, NULL, 0, { 0 } },
};

bool gs_sim_devupd_image(const void *image)
{
	const char *s = image;
	/* PTX is text; only graphshim's updater defines these entries. */
	return s && strstr(s, ".entry gs_du_apply32") && strstr(s, ".entry gs_du_apply512") &&
	       strstr(s, ".entry gs_du_apply1360");
}
