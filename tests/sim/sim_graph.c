/*
 * Work items (what a stream op or a graph node does), graphs and their
 * executable instances.  An executable's node parameters live in a
 * reference-counted version: a launch holds the version it was submitted
 * with, and patching a node copies the version first if a launch still
 * holds it, so parameter changes only affect later launches and an exec
 * can be destroyed while a launch is in flight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_core.h"


static void copy_run(const gs_sim_copy_t *c)
{
	for (size_t z = 0; z < c->depth; z++)
		for (size_t y = 0; y < c->height; y++)
			memmove(c->dst + z * c->dslice + y * c->dpitch,
				c->src + z * c->sslice + y * c->spitch, c->width);
}

static void set_run(const gs_sim_set_t *s)
{
	for (size_t y = 0; y < s->height; y++) {
		unsigned char *row = s->dst + y * s->pitch;
		switch (s->elsize) {
		case 1:
			memset(row, (int)(s->value & 0xff), s->width);
			break;
		case 2: {
			uint16_t v = (uint16_t)s->value;
			for (size_t x = 0; x < s->width; x++)
				memcpy(row + 2 * x, &v, 2);
			break;
		}
		default:
			for (size_t x = 0; x < s->width; x++)
				memcpy(row + 4 * x, &s->value, 4);
			break;
		}
	}
}

void gs_sim_work_run(const gs_sim_work_t *w)
{
	switch (w->kind) {
	case GS_SIM_W_KERNEL: {
		const gs_sim_func_t *fn = w->u.kern.fn;
		void *params[GS_SIM_MAX_PARAMS];
		for (unsigned p = 0; p < fn->k->nparams; p++)
			params[p] = w->u.kern.args + fn->off[p];
		fn->k->fn(&w->u.kern.dim, params);
		break;
	}
	case GS_SIM_W_COPY:
		copy_run(&w->u.copy);
		break;
	case GS_SIM_W_SET:
		set_run(&w->u.set);
		break;
	case GS_SIM_W_HOST:
		w->u.host.fn(w->u.host.arg);
		break;
	case GS_SIM_W_GRAPH: {
		const gs_sim_exec_ver_t *v = w->u.graph.ver;
		double node_us = gs_sim_node_us();
		if (v->dev)
			gs_sim_dev_upload(v);
		for (size_t i = 0; i < v->n; i++) {
			size_t k = v->order[i];
			gs_sim_spin_us(node_us);
			if (v->works[k].disabled)
				continue;
			if (v->dev && v->dev->handles[k])
				gs_sim_dev_run(v, k);
			else
				gs_sim_work_run(&v->works[k]);
		}
		break;
	}
	case GS_SIM_W_RECORD:
		gs_sim_event_stamp(w->u.record.ev, w->u.record.gen);
		break;
	default:
		break;
	}
}

void gs_sim_work_fini(gs_sim_work_t *w)
{
	switch (w->kind) {
	case GS_SIM_W_KERNEL:
		free(w->u.kern.args);
		break;
	case GS_SIM_W_GRAPH:
		gs_sim_exec_ver_unref(w->u.graph.ver);
		break;
	case GS_SIM_W_RECORD:
		gs_sim_event_release(w->u.record.ev);
		break;
	default:
		break;
	}
	free(w->owned);
	memset(w, 0, sizeof(*w));
}

bool gs_sim_work_clone(gs_sim_work_t *dst, const gs_sim_work_t *src)
{
	if (src->owned)
		return true;
	*dst = *src;
	switch (src->kind) {
	case GS_SIM_W_KERNEL: {
		size_t n = src->u.kern.fn->argsize;
		dst->u.kern.args = malloc(n ? n : 1);
		if (!dst->u.kern.args)
			return true;
		memcpy(dst->u.kern.args, src->u.kern.args, n);
		break;
	}
	case GS_SIM_W_GRAPH:
		atomic_fetch_add(&src->u.graph.ver->refs, 1);
		break;
	case GS_SIM_W_RECORD:
		atomic_fetch_add(&src->u.record.ev->refs, 1);
		break;
	default:
		break;
	}
	return false;
}

/* ---- graphs ---- */
gs_sim_err_t gs_sim_graph_create(gs_sim_graph_t **out)
{
	gs_sim_graph_t *g = calloc(1, sizeof(*g));
	if (!g)
		return GS_SIM_ENOMEM;
	GS_SIM_PT(pthread_mutex_init(&g->mu, NULL));
	gs_sim_reg_add(g, GS_SIM_H_GRAPH);
	*out = g;
	return GS_SIM_OK;
}

void gs_sim_graph_destroy(gs_sim_graph_t *g)
{
	gs_sim_reg_del(g);
	for (size_t i = 0; i < g->n; i++) {
		gs_sim_node_t *nd = g->nodes[i];
		gs_sim_reg_del(nd);
		gs_sim_work_fini(&nd->work);
		gs_sim_devnode_unref(nd->devnode);
		free(nd->deps);
		free(nd);
	}
	free(g->nodes);
	GS_SIM_PT(pthread_mutex_destroy(&g->mu));
	free(g);
}

/* Whether p lies in device or pinned memory (a free can end it). */
static bool mem_live(const void *p)
{
	return gs_sim_mem_kind(p, NULL, NULL, NULL, NULL) != GS_SIM_M_PAGEABLE;
}

/* Remember which of a copy's or memset's pointers lie in memory a free can end. */
static void node_note_live(gs_sim_node_t *nd)
{
	const void *p[2] = { NULL, NULL };
	if (nd->work.kind == GS_SIM_W_COPY)
		p[0] = nd->work.u.copy.dst, p[1] = nd->work.u.copy.src;
	else if (nd->work.kind == GS_SIM_W_SET)
		p[0] = nd->work.u.set.dst;
	for (int i = 0; i < 2; i++)
		nd->live[i] = p[i] && mem_live(p[i]) ? p[i] : NULL;
}

/*
 * A graph instantiated after memory under one of its copy or memset nodes
 * was freed: on an H100 (driver 580) cuGraphInstantiate could spin forever
 * there (graphshim's builder, `decode --check --workspace`).  What a real
 * driver may do silently, this one makes loud: the run aborts.
 */
static void check_live(const gs_sim_graph_t *g)
{
	for (size_t i = 0; i < g->n; i++)
		for (int k = 0; k < 2; k++)
			if (g->nodes[i]->live[k] && !mem_live(g->nodes[i]->live[k])) {
				fprintf(stderr, "sim: a graph instantiated with node %zu's %s on memory freed "
					"since the node was made (a real driver may hang there)\n",
					i, g->nodes[i]->work.kind == GS_SIM_W_SET ? "memset" : "copy");
				abort();
			}
}

gs_sim_err_t gs_sim_graph_add(gs_sim_node_t **out, gs_sim_graph_t *g, int type,
			      gs_sim_work_t *w, gs_sim_node_t *const *deps, size_t ndeps)
{
	gs_sim_node_t *nd = calloc(1, sizeof(*nd));
	gs_sim_err_t err = GS_SIM_ENOMEM;
	(void)type; /* the node type follows from the work */
	if (!nd)
		goto fail;
	if (ndeps && !(nd->deps = malloc(ndeps * sizeof(*deps))))
		goto fail;
	GS_SIM_PT(pthread_mutex_lock(&g->mu));
	for (size_t i = 0; i < ndeps; i++) {
		if (!deps[i] || deps[i]->graph != g) {
			GS_SIM_PT(pthread_mutex_unlock(&g->mu));
			err = GS_SIM_EINVAL;
			goto fail;
		}
		nd->deps[i] = deps[i];
	}
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 16;
		gs_sim_node_t **nn = realloc(g->nodes, nc * sizeof(*nn));
		if (!nn) {
			GS_SIM_PT(pthread_mutex_unlock(&g->mu));
			goto fail;
		}
		g->nodes = nn;
		g->cap = nc;
	}
	nd->graph = g;
	nd->index = g->n;
	nd->type = w->kind;
	nd->work = *w;
	nd->ndeps = ndeps;
	node_note_live(nd);
	g->nodes[g->n++] = nd;
	GS_SIM_PT(pthread_mutex_unlock(&g->mu));
	gs_sim_reg_add(nd, GS_SIM_H_NODE);
	*out = nd;
	return GS_SIM_OK;
fail:
	if (nd)
		free(nd->deps);
	free(nd);
	gs_sim_work_fini(w);
	return err;
}

gs_sim_err_t gs_sim_graph_add_dep(gs_sim_node_t *from, gs_sim_node_t *to)
{
	gs_sim_graph_t *g = to->graph;
	gs_sim_err_t err = GS_SIM_OK;
	if (from->graph != g || from == to)
		return GS_SIM_EINVAL;
	GS_SIM_PT(pthread_mutex_lock(&g->mu));
	for (size_t i = 0; i < to->ndeps; i++)
		if (to->deps[i] == from)
			err = GS_SIM_EINVAL; /* the real driver rejects duplicate edges */
	if (!err) {
		gs_sim_node_t **d = realloc(to->deps, (to->ndeps + 1) * sizeof(*d));
		if (!d) {
			err = GS_SIM_ENOMEM;
		} else {
			d[to->ndeps++] = from;
			to->deps = d;
		}
	}
	GS_SIM_PT(pthread_mutex_unlock(&g->mu));
	return err;
}

/* ---- executable graphs ---- */
void gs_sim_exec_ver_unref(gs_sim_exec_ver_t *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	for (size_t i = 0; i < v->n; i++)
		gs_sim_work_fini(&v->works[i]);
	gs_sim_dev_unref(v->dev);
	free(v->works);
	free(v->order);
	free(v);
}

static gs_sim_exec_ver_t *ver_new(size_t n)
{
	gs_sim_exec_ver_t *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	atomic_init(&v->refs, 1);
	v->n = n;
	v->works = calloc(n ? n : 1, sizeof(*v->works));
	v->order = calloc(n ? n : 1, sizeof(*v->order));
	if (!v->works || !v->order) {
		free(v->works);
		free(v->order);
		free(v);
		return NULL;
	}
	return v;
}

/* Deep copy of works[] from an array of works (nodes or another version). */
static bool ver_fill(gs_sim_exec_ver_t *v, const gs_sim_work_t *const *src)
{
	for (size_t i = 0; i < v->n; i++)
		if (gs_sim_work_clone(&v->works[i], src[i])) {
			for (size_t j = 0; j < i; j++)
				gs_sim_work_fini(&v->works[j]);
			memset(v->works, 0, v->n * sizeof(*v->works));
			return true;
		}
	return false;
}

/* Kahn's algorithm, lowest index first, so the order is deterministic. */
static bool topo_order(const gs_sim_graph_t *g, size_t *order)
{
	size_t n = g->n, done = 0;
	bool *placed = calloc(n ? n : 1, sizeof(*placed));
	if (!placed)
		return true;
	while (done < n) {
		bool progress = false;
		for (size_t i = 0; i < n; i++) {
			if (placed[i])
				continue;
			const gs_sim_node_t *nd = g->nodes[i];
			bool ready = true;
			for (size_t d = 0; d < nd->ndeps && ready; d++)
				ready = placed[nd->deps[d]->index];
			if (ready) {
				placed[i] = true;
				order[done++] = i;
				progress = true;
				break;
			}
		}
		if (!progress)
			break; /* cycle */
	}
	free(placed);
	return done != n;
}

static void exec_free_shape(gs_sim_exec_t *x)
{
	if (x->deps)
		for (size_t i = 0; i < x->n; i++)
			free(x->deps[i]);
	free(x->deps);
	free(x->ndeps);
	free(x->types);
	free((void *)x->src);
}

gs_sim_err_t gs_sim_exec_create(gs_sim_exec_t **out, gs_sim_graph_t *g)
{
	gs_sim_err_t err = GS_SIM_ENOMEM;
	/* Instantiating takes time on a GPU (tens of us to ms): a race with
	 * it, such as a module unloaded meanwhile, needs that window. */
	double inst_us = gs_sim_instantiate_us();
	if (inst_us > 0)
		usleep((useconds_t)inst_us);
	gs_sim_exec_t *x = calloc(1, sizeof(*x));
	if (!x)
		return GS_SIM_ENOMEM;
	GS_SIM_PT(pthread_mutex_lock(&g->mu));
	check_live(g);
	size_t n = g->n;
	x->n = n;
	gs_sim_exec_ver_t *v = ver_new(n);
	const gs_sim_work_t **src = calloc(n ? n : 1, sizeof(*src));
	x->src = calloc(n ? n : 1, sizeof(*x->src));
	x->types = calloc(n ? n : 1, sizeof(*x->types));
	x->ndeps = calloc(n ? n : 1, sizeof(*x->ndeps));
	x->deps = calloc(n ? n : 1, sizeof(*x->deps));
	if (!v || !src || !x->src || !x->types || !x->ndeps || !x->deps)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const gs_sim_node_t *nd = g->nodes[i];
		src[i] = &nd->work;
		x->src[i] = nd;
		x->types[i] = nd->type;
		x->ndeps[i] = nd->ndeps;
		if (nd->ndeps && !(x->deps[i] = malloc(nd->ndeps * sizeof(size_t))))
			goto fail;
		for (size_t d = 0; d < nd->ndeps; d++)
			x->deps[i][d] = nd->deps[d]->index;
	}
	if (topo_order(g, v->order)) {
		err = GS_SIM_EINVAL;
		goto fail;
	}
	if (ver_fill(v, src))
		goto fail;
	if ((err = gs_sim_dev_create(x, g))) {
		for (size_t i = 0; i < n; i++)
			gs_sim_work_fini(&v->works[i]);
		goto fail;
	}
	if ((v->dev = x->dev))
		atomic_fetch_add(&v->dev->refs, 1);
	GS_SIM_PT(pthread_mutex_unlock(&g->mu));
	free(src);
	GS_SIM_PT(pthread_mutex_init(&x->mu, NULL));
	x->cur = v;
	gs_sim_reg_add(x, GS_SIM_H_EXEC);
	*out = x;
	return GS_SIM_OK;
fail:
	GS_SIM_PT(pthread_mutex_unlock(&g->mu));
	free(src);
	gs_sim_exec_ver_unref(v);
	exec_free_shape(x);
	free(x);
	return err;
}

void gs_sim_exec_destroy(gs_sim_exec_t *x)
{
	gs_sim_reg_del(x);
	gs_sim_dev_unref(x->dev); /* launches in flight keep theirs */
	gs_sim_exec_ver_unref(x->cur); /* in-flight launches hold their own */
	if (x->launched)
		gs_sim_stream_unref(x->last.s);
	exec_free_shape(x);
	GS_SIM_PT(pthread_mutex_destroy(&x->mu));
	free(x);
}

/* One stream operation runs every node; it is also ordered after the
 * exec's previous launch, as the real driver orders launches of one exec. */
gs_sim_err_t gs_sim_exec_launch(gs_sim_exec_t *x, gs_sim_stream_t *s)
{
	gs_sim_fence_t prev;
	uint64_t seq;
	GS_SIM_PT(pthread_mutex_lock(&x->mu));
	atomic_fetch_add(&x->cur->refs, 1);
	gs_sim_work_t w = { .kind = GS_SIM_W_GRAPH, .u.graph.ver = x->cur };
	bool has_prev = x->launched;
	if (has_prev) {
		prev = x->last;
		gs_sim_stream_ref(prev.s);
	}
	gs_sim_err_t err = gs_sim_submit(s, &w, has_prev ? &prev : NULL, has_prev, &seq);
	if (!err && seq) {
		if (x->launched)
			gs_sim_stream_unref(x->last.s);
		gs_sim_stream_ref(s);
		x->last = (gs_sim_fence_t){ s, seq };
		x->launched = true;
	}
	GS_SIM_PT(pthread_mutex_unlock(&x->mu));
	return err;
}

static size_t exec_index_locked(gs_sim_exec_t *x, const gs_sim_node_t *node)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->src[i] == node)
			return i;
	return x->n;
}

/* Copy-on-write: a version still held by a launch is never modified. */
static gs_sim_err_t exec_own_version_locked(gs_sim_exec_t *x)
{
	if (atomic_load(&x->cur->refs) == 1)
		return GS_SIM_OK;
	gs_sim_exec_ver_t *v = ver_new(x->n);
	const gs_sim_work_t **src = calloc(x->n ? x->n : 1, sizeof(*src));
	if (!v || !src) {
		free(src);
		gs_sim_exec_ver_unref(v);
		return GS_SIM_ENOMEM;
	}
	for (size_t i = 0; i < x->n; i++)
		src[i] = &x->cur->works[i];
	memcpy(v->order, x->cur->order, x->n * sizeof(*v->order));
	bool fail = ver_fill(v, src);
	free(src);
	if (fail) {
		gs_sim_exec_ver_unref(v);
		return GS_SIM_ENOMEM;
	}
	if ((v->dev = x->cur->dev))
		atomic_fetch_add(&v->dev->refs, 1);
	gs_sim_exec_ver_unref(x->cur);
	x->cur = v;
	return GS_SIM_OK;
}

gs_sim_err_t gs_sim_exec_set(gs_sim_exec_t *x, const gs_sim_node_t *node, int type,
			     gs_sim_work_t *w)
{
	gs_sim_err_t err;
	(void)type;
	GS_SIM_PT(pthread_mutex_lock(&x->mu));
	size_t i = exec_index_locked(x, node);
	if (i == x->n || x->types[i] != w->kind) {
		err = GS_SIM_EINVAL;
	} else if (!(err = exec_own_version_locked(x))) {
		/* New parameters keep the node's launch attributes, as on a GPU. */
		if (w->kind == GS_SIM_W_KERNEL) {
			const gs_sim_dim_t *old = &x->cur->works[i].u.kern.dim;
			memcpy(w->u.kern.dim.cluster, old->cluster, sizeof(old->cluster));
			w->u.kern.dim.priority = old->priority;
			w->u.kern.dim.cooperative = old->cooperative;
		}
		/* The node keeps its enabled state; its device copy, if any,
		 * takes these parameters at the next launch. */
		w->disabled = x->cur->works[i].disabled;
		w->serial = x->cur->works[i].serial + 1;
		gs_sim_work_fini(&x->cur->works[i]);
		x->cur->works[i] = *w;
		GS_SIM_PT(pthread_mutex_unlock(&x->mu));
		return GS_SIM_OK;
	}
	GS_SIM_PT(pthread_mutex_unlock(&x->mu));
	gs_sim_work_fini(w);
	return err;
}

gs_sim_err_t gs_sim_exec_update(gs_sim_exec_t *x, gs_sim_graph_t *g, gs_sim_node_t **bad)
{
	gs_sim_err_t err = GS_SIM_OK;
	*bad = NULL;
	GS_SIM_PT(pthread_mutex_lock(&x->mu));
	GS_SIM_PT(pthread_mutex_lock(&g->mu));
	if (g->n != x->n || x->dev) {
		/* (A graph with device-updatable nodes takes no whole update.) */
		err = GS_SIM_EUPDATE;
		goto out;
	}
	for (size_t i = 0; i < x->n; i++) {
		const gs_sim_node_t *nd = g->nodes[i];
		bool same = nd->type == x->types[i] && nd->ndeps == x->ndeps[i];
		for (size_t d = 0; same && d < nd->ndeps; d++)
			same = nd->deps[d]->index == x->deps[i][d];
		if (!same) {
			*bad = g->nodes[i];
			err = GS_SIM_EUPDATE;
			goto out;
		}
	}
	gs_sim_exec_ver_t *v = ver_new(x->n);
	const gs_sim_work_t **src = calloc(x->n ? x->n : 1, sizeof(*src));
	if (!v || !src) {
		free(src);
		gs_sim_exec_ver_unref(v);
		err = GS_SIM_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < x->n; i++)
		src[i] = &g->nodes[i]->work;
	memcpy(v->order, x->cur->order, x->n * sizeof(*v->order));
	bool fail = ver_fill(v, src);
	free(src);
	if (fail) {
		gs_sim_exec_ver_unref(v);
		err = GS_SIM_ENOMEM;
		goto out;
	}
	gs_sim_exec_ver_unref(x->cur);
	x->cur = v;
out:
	GS_SIM_PT(pthread_mutex_unlock(&g->mu));
	GS_SIM_PT(pthread_mutex_unlock(&x->mu));
	return err;
}

gs_sim_err_t gs_sim_exec_enable(gs_sim_exec_t *x, const gs_sim_node_t *node, bool on)
{
	gs_sim_err_t err;
	GS_SIM_PT(pthread_mutex_lock(&x->mu));
	size_t i = exec_index_locked(x, node);
	int kind = i < x->n ? x->cur->works[i].kind : -1;
	if (kind != GS_SIM_W_KERNEL && kind != GS_SIM_W_COPY && kind != GS_SIM_W_SET)
		err = GS_SIM_EINVAL; /* (as on a GPU: kernels, copies and memsets only) */
	else if (!(err = exec_own_version_locked(x)))
		x->cur->works[i].disabled = !on;
	GS_SIM_PT(pthread_mutex_unlock(&x->mu));
	return err;
}
