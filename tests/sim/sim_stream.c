/*
 * Contexts, streams, events and stream capture of the simulator core.
 *
 * Each stream owns a worker thread that runs its FIFO of operations.  The
 * legacy default stream's implicit synchronization is built from fences
 * collected at submission time under the context mutex: an operation on the
 * legacy stream waits for everything already submitted to every blocking
 * stream, and an operation on a blocking stream waits for everything already
 * submitted to the legacy stream.  Lock order: ctx->mu, then a stream's mu;
 * event mu is never held together with either.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_core.h"

/* ---- references ---- */
void gs_sim_stream_ref(gs_sim_stream_t *s)
{
	atomic_fetch_add(&s->refs, 1);
}

void gs_sim_stream_unref(gs_sim_stream_t *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	GS_SIM_PT(pthread_mutex_destroy(&s->mu));
	GS_SIM_PT(pthread_cond_destroy(&s->work_cv));
	GS_SIM_PT(pthread_cond_destroy(&s->done_cv));
	free(s->capdeps);
	free(s);
}

gs_sim_capture_t *gs_sim_capture_ref(gs_sim_capture_t *c)
{
	atomic_fetch_add(&c->refs, 1);
	return c;
}

void gs_sim_capture_unref(gs_sim_capture_t *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	/* The graph belongs to the capture until EndCapture hands it out. */
	if (c->graph)
		gs_sim_graph_destroy(c->graph);
	free(c);
}

static void event_unref(gs_sim_event_t *e)
{
	if (atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	if (e->has_fence)
		gs_sim_stream_unref(e->fence.s);
	gs_sim_capture_unref(e->cap);
	free(e->capdeps);
	GS_SIM_PT(pthread_mutex_destroy(&e->mu));
	free(e);
}

/* ---- fences ---- */
void gs_sim_fence_wait(const gs_sim_fence_t *f)
{
	gs_sim_stream_t *s = f->s;
	GS_SIM_PT(pthread_mutex_lock(&s->mu));
	while (s->completed < f->seq)
		GS_SIM_PT(pthread_cond_wait(&s->done_cv, &s->mu));
	GS_SIM_PT(pthread_mutex_unlock(&s->mu));
}

bool gs_sim_fence_done(const gs_sim_fence_t *f)
{
	GS_SIM_PT(pthread_mutex_lock(&f->s->mu));
	bool done = f->s->completed >= f->seq;
	GS_SIM_PT(pthread_mutex_unlock(&f->s->mu));
	return done;
}

static void fences_release(gs_sim_fence_t *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		gs_sim_stream_unref(f[i].s);
	free(f);
}

/* Appends a fence on s's last submitted op when s still has work. */
static bool fence_add_pending(gs_sim_fence_t **fv, unsigned *n, unsigned *cap,
			      gs_sim_stream_t *s)
{
	GS_SIM_PT(pthread_mutex_lock(&s->mu));
	uint64_t sub = s->submitted, done = s->completed;
	GS_SIM_PT(pthread_mutex_unlock(&s->mu));
	if (done >= sub)
		return false;
	if (*n == *cap) {
		unsigned nc = *cap ? *cap * 2 : 4;
		gs_sim_fence_t *nf = realloc(*fv, nc * sizeof(**fv));
		if (!nf)
			return true;
		*fv = nf;
		*cap = nc;
	}
	gs_sim_stream_ref(s);
	(*fv)[(*n)++] = (gs_sim_fence_t){ s, sub };
	return false;
}

/* The implicit legacy-stream fences of an op on s, plus s's own tail when
 * self is set (used by synchronize/query).  Caller holds ctx->mu. */
static bool collect_fences(gs_sim_stream_t *s, bool self, gs_sim_fence_t **fv,
			   unsigned *n, unsigned *cap)
{
	gs_sim_ctx_t *ctx = s->ctx;
	bool err = false;
	if (self)
		err |= fence_add_pending(fv, n, cap, s);
	if (s->legacy) {
		for (gs_sim_stream_t *b = ctx->streams; b; b = b->next)
			if (b != s && b->flags == GS_SIM_S_BLOCKING)
				err |= fence_add_pending(fv, n, cap, b);
	} else if (s->flags == GS_SIM_S_BLOCKING && ctx->legacy) {
		err |= fence_add_pending(fv, n, cap, ctx->legacy);
	}
	return err;
}

/* ---- streams ---- */
static void op_free(gs_sim_op_t *op)
{
	fences_release(op->fence, op->nfence);
	gs_sim_work_fini(&op->work);
	free(op);
}

static void *stream_worker(void *arg)
{
	gs_sim_stream_t *s = arg;
	for (;;) {
		GS_SIM_PT(pthread_mutex_lock(&s->mu));
		while (!s->head && !s->stop)
			GS_SIM_PT(pthread_cond_wait(&s->work_cv, &s->mu));
		gs_sim_op_t *op = s->head;
		if (op) {
			s->head = op->next;
			if (!s->head)
				s->tail = NULL;
		}
		s->running = op;
		GS_SIM_PT(pthread_mutex_unlock(&s->mu));
		if (!op)
			break;
		for (unsigned i = 0; i < op->nfence; i++)
			gs_sim_fence_wait(&op->fence[i]);
		gs_sim_work_run(&op->work);
		GS_SIM_PT(pthread_mutex_lock(&s->mu));
		s->completed = op->seq;
		GS_SIM_PT(pthread_cond_broadcast(&s->done_cv));
		GS_SIM_PT(pthread_mutex_unlock(&s->mu));
		/* s->running still names op while it is freed (the next pass
		 * replaces it): a fork before the free must find it reachable. */
		op_free(op);
	}
	return NULL;
}

static gs_sim_err_t stream_new(gs_sim_stream_t **out, gs_sim_ctx_t *ctx, unsigned flags,
			       int priority, bool legacy, uint64_t ptds_owner)
{
	gs_sim_stream_t *s = calloc(1, sizeof(*s));
	if (!s)
		return GS_SIM_ENOMEM;
	s->ctx = ctx;
	s->flags = flags;
	s->priority = priority;
	s->legacy = legacy;
	s->ptds_owner = ptds_owner;
	atomic_init(&s->refs, 1);
	GS_SIM_PT(pthread_mutex_init(&s->mu, NULL));
	GS_SIM_PT(pthread_cond_init(&s->work_cv, NULL));
	GS_SIM_PT(pthread_cond_init(&s->done_cv, NULL));
	if (pthread_create(&s->thread, NULL, stream_worker, s) != 0) {
		gs_sim_stream_unref(s);
		return GS_SIM_ENOMEM;
	}
	GS_SIM_PT(pthread_mutex_lock(&ctx->mu));
	s->next = ctx->streams;
	ctx->streams = s;
	if (legacy)
		ctx->legacy = s;
	GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
	gs_sim_reg_add(s, GS_SIM_H_STREAM);
	*out = s;
	return GS_SIM_OK;
}

gs_sim_err_t gs_sim_stream_create(gs_sim_stream_t **out, gs_sim_ctx_t *ctx,
				  unsigned flags, int priority)
{
	return stream_new(out, ctx, flags, priority, false, 0);
}

static void capture_leave_locked(gs_sim_stream_t *s)
{
	gs_sim_capture_unref(s->cap);
	s->cap = NULL;
	free(s->capdeps);
	s->capdeps = NULL;
	s->ncapdeps = 0;
}

/* Waits for the stream's work (the real driver returns at once and frees
 * later; blocking here is stronger and keeps ownership simple). */
void gs_sim_stream_destroy(gs_sim_stream_t *s)
{
	gs_sim_ctx_t *ctx = s->ctx;
	gs_sim_reg_del(s);
	GS_SIM_PT(pthread_mutex_lock(&ctx->mu));
	for (gs_sim_stream_t **pp = &ctx->streams; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	if (ctx->legacy == s)
		ctx->legacy = NULL;
	if (s->cap) {
		s->cap->status = GS_SIM_CAP_INVALIDATED;
		capture_leave_locked(s);
	}
	GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
	GS_SIM_PT(pthread_mutex_lock(&s->mu));
	s->stop = true;
	GS_SIM_PT(pthread_cond_signal(&s->work_cv));
	GS_SIM_PT(pthread_mutex_unlock(&s->mu));
	GS_SIM_PT(pthread_join(s->thread, NULL));
	gs_sim_stream_unref(s);
}

static atomic_ulong ptds_ids = 1;
static _Thread_local uint64_t ptds_self;

/* The calling thread's per-thread default stream in ctx, created on first
 * use.  It lives until its context is destroyed. */
gs_sim_stream_t *gs_sim_stream_ptds(gs_sim_ctx_t *ctx)
{
	if (!ptds_self)
		ptds_self = atomic_fetch_add(&ptds_ids, 1);
	GS_SIM_PT(pthread_mutex_lock(&ctx->mu));
	gs_sim_stream_t *s = ctx->streams;
	while (s && s->ptds_owner != ptds_self)
		s = s->next;
	GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
	if (s)
		return s;
	if (stream_new(&s, ctx, GS_SIM_S_BLOCKING, 0, false, ptds_self))
		return NULL;
	return s;
}

static gs_sim_err_t capture_add_locked(gs_sim_stream_t *s, gs_sim_work_t *w)
{
	gs_sim_capture_t *c = s->cap;
	gs_sim_node_t *node;
	if (c->status != GS_SIM_CAP_ACTIVE) {
		gs_sim_work_fini(w);
		return GS_SIM_ECAP_INVALIDATED;
	}
	gs_sim_err_t err = gs_sim_graph_add(&node, c->graph, -1, w, s->capdeps, s->ncapdeps);
	if (err) {
		c->status = GS_SIM_CAP_INVALIDATED;
		return err;
	}
	gs_sim_node_t **d = realloc(s->capdeps, sizeof(*d));
	if (!d) {
		c->status = GS_SIM_CAP_INVALIDATED;
		return GS_SIM_ENOMEM;
	}
	d[0] = node;
	s->capdeps = d;
	s->ncapdeps = 1;
	return GS_SIM_OK;
}

/* Work on the legacy stream during a non-relaxed capture of a blocking
 * stream would need an implicit dependency capture cannot express: the
 * real driver fails the call and invalidates the capture. */
static bool legacy_conflict_locked(gs_sim_ctx_t *ctx)
{
	bool hit = false;
	for (gs_sim_stream_t *b = ctx->streams; b; b = b->next)
		if (b->cap && b->flags == GS_SIM_S_BLOCKING && b->cap->mode != 2) {
			b->cap->status = GS_SIM_CAP_INVALIDATED;
			hit = true;
		}
	return hit;
}

gs_sim_err_t gs_sim_submit(gs_sim_stream_t *s, gs_sim_work_t *w,
			   gs_sim_fence_t *extra, unsigned nextra, uint64_t *seq_out)
{
	gs_sim_ctx_t *ctx = s->ctx;
	gs_sim_fence_t *fv = NULL;
	unsigned n = 0, cap = 0;
	gs_sim_err_t err = GS_SIM_OK;

	if (seq_out)
		*seq_out = 0;
	GS_SIM_PT(pthread_mutex_lock(&ctx->mu));
	if (s->cap) {
		err = capture_add_locked(s, w);
		GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
		for (unsigned i = 0; i < nextra; i++)
			gs_sim_stream_unref(extra[i].s);
		return err;
	}
	if (s->legacy && legacy_conflict_locked(ctx)) {
		err = GS_SIM_ECAP_IMPLICIT;
		goto fail;
	}
	if (collect_fences(s, false, &fv, &n, &cap))
		goto nomem;
	if (nextra) {
		gs_sim_fence_t *nf = realloc(fv, (n + nextra) * sizeof(*fv));
		if (!nf)
			goto nomem;
		fv = nf;
		memcpy(fv + n, extra, nextra * sizeof(*fv));
		n += nextra;
		nextra = 0;
	}
	gs_sim_op_t *op = calloc(1, sizeof(*op));
	if (!op)
		goto nomem;
	op->fence = fv;
	op->nfence = n;
	op->work = *w;
	GS_SIM_PT(pthread_mutex_lock(&s->mu));
	op->seq = ++s->submitted;
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	if (seq_out)
		*seq_out = op->seq;
	GS_SIM_PT(pthread_cond_signal(&s->work_cv));
	GS_SIM_PT(pthread_mutex_unlock(&s->mu));
	GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
	return GS_SIM_OK;
nomem:
	err = GS_SIM_ENOMEM;
fail:
	GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
	fences_release(fv, n);
	for (unsigned i = 0; i < nextra; i++)
		gs_sim_stream_unref(extra[i].s);
	gs_sim_work_fini(w);
	return err;
}

gs_sim_err_t gs_sim_submit_wait(gs_sim_stream_t *s, gs_sim_work_t *w)
{
	uint64_t seq;
	gs_sim_err_t err = gs_sim_submit(s, w, NULL, 0, &seq);
	if (err || !seq)
		return err;
	gs_sim_fence_t f = { s, seq };
	gs_sim_fence_wait(&f);
	return GS_SIM_OK;
}

/* Synchronize/query see what an op submitted now would wait for, plus the
 * stream's own tail: syncing the legacy stream covers blocking streams. */
static gs_sim_err_t stream_fences(gs_sim_stream_t *s, gs_sim_fence_t **fv, unsigned *n)
{
	unsigned cap = 0;
	gs_sim_err_t err = GS_SIM_OK;
	*fv = NULL;
	*n = 0;
	GS_SIM_PT(pthread_mutex_lock(&s->ctx->mu));
	if (s->cap) {
		/* Synchronizing a capturing stream is illegal and ends the capture. */
		s->cap->status = GS_SIM_CAP_INVALIDATED;
		err = GS_SIM_ECAP_UNSUPPORTED;
	} else if (s->legacy && legacy_conflict_locked(s->ctx)) {
		err = GS_SIM_ECAP_IMPLICIT;
	} else if (collect_fences(s, true, fv, n, &cap)) {
		err = GS_SIM_ENOMEM;
	}
	GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));
	return err;
}

gs_sim_err_t gs_sim_stream_sync(gs_sim_stream_t *s)
{
	gs_sim_fence_t *fv;
	unsigned n;
	gs_sim_err_t err = stream_fences(s, &fv, &n);
	for (unsigned i = 0; i < n; i++)
		gs_sim_fence_wait(&fv[i]);
	fences_release(fv, n);
	return err;
}

gs_sim_err_t gs_sim_stream_query(gs_sim_stream_t *s)
{
	gs_sim_fence_t *fv;
	unsigned n;
	gs_sim_err_t err = stream_fences(s, &fv, &n);
	for (unsigned i = 0; i < n && !err; i++)
		if (!gs_sim_fence_done(&fv[i]))
			err = GS_SIM_ENOTREADY;
	fences_release(fv, n);
	return err;
}

/* ---- contexts ---- */
gs_sim_err_t gs_sim_ctx_create(gs_sim_ctx_t **out, int device, unsigned flags, bool primary)
{
	gs_sim_ctx_t *ctx = calloc(1, sizeof(*ctx));
	gs_sim_stream_t *legacy;
	if (!ctx)
		return GS_SIM_ENOMEM;
	ctx->device = device;
	ctx->flags = flags;
	ctx->primary = primary;
	GS_SIM_PT(pthread_mutex_init(&ctx->mu, NULL));
	if (stream_new(&legacy, ctx, GS_SIM_S_BLOCKING, 0, true, 0)) {
		GS_SIM_PT(pthread_mutex_destroy(&ctx->mu));
		free(ctx);
		return GS_SIM_ENOMEM;
	}
	gs_sim_reg_del(legacy); /* not a user-visible handle */
	gs_sim_reg_add(ctx, GS_SIM_H_CTX);
	*out = ctx;
	return GS_SIM_OK;
}

void gs_sim_ctx_sync(gs_sim_ctx_t *ctx)
{
	gs_sim_fence_t *fv = NULL;
	unsigned n = 0, cap = 0;
	GS_SIM_PT(pthread_mutex_lock(&ctx->mu));
	for (gs_sim_stream_t *s = ctx->streams; s; s = s->next)
		if (fence_add_pending(&fv, &n, &cap, s))
			abort();
	GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
	for (unsigned i = 0; i < n; i++)
		gs_sim_fence_wait(&fv[i]);
	fences_release(fv, n);
}

void gs_sim_ctx_destroy(gs_sim_ctx_t *ctx)
{
	gs_sim_reg_del(ctx);
	for (;;) {
		GS_SIM_PT(pthread_mutex_lock(&ctx->mu));
		gs_sim_stream_t *s = ctx->streams;
		GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
		if (!s)
			break;
		gs_sim_stream_destroy(s);
	}
	gs_sim_pool_drop(ctx); /* its streams' frees have run */
	GS_SIM_PT(pthread_mutex_destroy(&ctx->mu));
	free(ctx);
}

/* ---- events ---- */
gs_sim_err_t gs_sim_event_create(gs_sim_event_t **out, unsigned flags)
{
	gs_sim_event_t *e = calloc(1, sizeof(*e));
	if (!e)
		return GS_SIM_ENOMEM;
	e->flags = flags;
	atomic_init(&e->refs, 1);
	GS_SIM_PT(pthread_mutex_init(&e->mu, NULL));
	gs_sim_reg_add(e, GS_SIM_H_EVENT);
	*out = e;
	return GS_SIM_OK;
}

/* Pending record operations keep the event alive, like the real driver
 * which releases a destroyed event's resources once its work completes. */
void gs_sim_event_destroy(gs_sim_event_t *e)
{
	gs_sim_reg_del(e);
	event_unref(e);
}

void gs_sim_event_stamp(gs_sim_event_t *e, uint64_t gen)
{
	GS_SIM_PT(pthread_mutex_lock(&e->mu));
	if (e->gen == gen) {
		e->t_ns = gs_sim_now_ns();
		e->t_valid = true;
	}
	GS_SIM_PT(pthread_mutex_unlock(&e->mu));
}

void gs_sim_event_release(gs_sim_event_t *e)
{
	event_unref(e);
}

gs_sim_err_t gs_sim_event_record(gs_sim_event_t *e, gs_sim_stream_t *s)
{
	gs_sim_capture_t *oldcap = NULL;
	gs_sim_node_t **olddeps = NULL;

	GS_SIM_PT(pthread_mutex_lock(&s->ctx->mu));
	if (s->cap) {
		/* A captured record remembers where the capture stands, so a
		 * stream waiting on the event joins the capture (fork/join). */
		gs_sim_node_t **d = NULL;
		if (s->ncapdeps) {
			d = malloc(s->ncapdeps * sizeof(*d));
			if (!d) {
				GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));
				return GS_SIM_ENOMEM;
			}
			memcpy(d, s->capdeps, s->ncapdeps * sizeof(*d));
		}
		gs_sim_capture_t *c = gs_sim_capture_ref(s->cap);
		size_t nd = s->ncapdeps;
		GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));
		GS_SIM_PT(pthread_mutex_lock(&e->mu));
		oldcap = e->cap;
		olddeps = e->capdeps;
		e->cap = c;
		e->capdeps = d;
		e->ncapdeps = nd;
		GS_SIM_PT(pthread_mutex_unlock(&e->mu));
		gs_sim_capture_unref(oldcap);
		free(olddeps);
		return GS_SIM_OK;
	}
	GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));

	GS_SIM_PT(pthread_mutex_lock(&e->mu));
	uint64_t gen = ++e->gen;
	e->t_valid = false;
	oldcap = e->cap;
	olddeps = e->capdeps;
	e->cap = NULL;
	e->capdeps = NULL;
	e->ncapdeps = 0;
	GS_SIM_PT(pthread_mutex_unlock(&e->mu));
	gs_sim_capture_unref(oldcap);
	free(olddeps);

	atomic_fetch_add(&e->refs, 1);
	gs_sim_work_t w = { .kind = GS_SIM_W_RECORD, .u.record = { e, gen } };
	uint64_t seq;
	gs_sim_err_t err = gs_sim_submit(s, &w, NULL, 0, &seq);
	if (err)
		return err;
	gs_sim_stream_t *old = NULL;
	GS_SIM_PT(pthread_mutex_lock(&e->mu));
	if (e->gen == gen && seq) {
		if (e->has_fence)
			old = e->fence.s;
		gs_sim_stream_ref(s);
		e->fence = (gs_sim_fence_t){ s, seq };
		e->has_fence = true;
	}
	GS_SIM_PT(pthread_mutex_unlock(&e->mu));
	if (old)
		gs_sim_stream_unref(old);
	return GS_SIM_OK;
}

/* A copy of the event's fence with its own reference, if recorded. */
static bool event_fence(gs_sim_event_t *e, gs_sim_fence_t *f)
{
	bool has;
	GS_SIM_PT(pthread_mutex_lock(&e->mu));
	has = e->has_fence;
	if (has) {
		*f = e->fence;
		gs_sim_stream_ref(f->s);
	}
	GS_SIM_PT(pthread_mutex_unlock(&e->mu));
	return has;
}

gs_sim_err_t gs_sim_event_query(gs_sim_event_t *e)
{
	gs_sim_fence_t f;
	if (!event_fence(e, &f))
		return GS_SIM_OK;
	bool done = gs_sim_fence_done(&f);
	gs_sim_stream_unref(f.s);
	return done ? GS_SIM_OK : GS_SIM_ENOTREADY;
}

gs_sim_err_t gs_sim_event_sync(gs_sim_event_t *e)
{
	gs_sim_fence_t f;
	if (!event_fence(e, &f))
		return GS_SIM_OK;
	gs_sim_fence_wait(&f);
	gs_sim_stream_unref(f.s);
	return GS_SIM_OK;
}

static gs_sim_err_t event_time(gs_sim_event_t *e, uint64_t *t)
{
	gs_sim_err_t err = gs_sim_event_query(e);
	if (err)
		return err;
	GS_SIM_PT(pthread_mutex_lock(&e->mu));
	if (!e->has_fence)
		err = GS_SIM_EHANDLE;
	else if (!e->t_valid)
		err = GS_SIM_ENOTREADY;
	*t = e->t_ns;
	GS_SIM_PT(pthread_mutex_unlock(&e->mu));
	return err;
}

gs_sim_err_t gs_sim_event_elapsed(float *ms, gs_sim_event_t *a, gs_sim_event_t *b)
{
	uint64_t ta, tb;
	gs_sim_err_t err;
	if ((a->flags | b->flags) & GS_SIM_EV_NOTIMING)
		return GS_SIM_EHANDLE;
	if ((err = event_time(a, &ta)) || (err = event_time(b, &tb)))
		return err;
	*ms = (float)(((double)tb - (double)ta) / 1e6);
	return GS_SIM_OK;
}

static gs_sim_err_t capture_join(gs_sim_stream_t *s, gs_sim_capture_t *c,
				 gs_sim_node_t **deps, size_t nd)
{
	gs_sim_err_t err = GS_SIM_OK;
	GS_SIM_PT(pthread_mutex_lock(&s->ctx->mu));
	if (s->cap && s->cap != c) {
		err = GS_SIM_ECAP_UNSUPPORTED;
	} else {
		/* Union of the stream's dependencies and the event's. */
		size_t have = s->cap ? s->ncapdeps : 0;
		gs_sim_node_t **d = realloc(s->cap ? s->capdeps : NULL,
					    (have + nd + 1) * sizeof(*d));
		if (!d) {
			err = GS_SIM_ENOMEM;
		} else {
			for (size_t i = 0; i < nd; i++) {
				size_t j = 0;
				while (j < have && d[j] != deps[i])
					j++;
				if (j == have)
					d[have++] = deps[i];
			}
			if (!s->cap) {
				s->cap = gs_sim_capture_ref(c);
			}
			s->capdeps = d;
			s->ncapdeps = have;
		}
	}
	GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));
	return err;
}

gs_sim_err_t gs_sim_stream_wait_event(gs_sim_stream_t *s, gs_sim_event_t *e)
{
	gs_sim_fence_t f;
	gs_sim_capture_t *c = NULL;
	gs_sim_node_t **deps = NULL;
	size_t nd = 0;
	bool has;

	GS_SIM_PT(pthread_mutex_lock(&e->mu));
	if (e->cap && e->cap->status == GS_SIM_CAP_ACTIVE) {
		c = gs_sim_capture_ref(e->cap);
		nd = e->ncapdeps;
		deps = nd ? malloc(nd * sizeof(*deps)) : NULL;
		if (nd && deps)
			memcpy(deps, e->capdeps, nd * sizeof(*deps));
	}
	GS_SIM_PT(pthread_mutex_unlock(&e->mu));
	if (c) {
		gs_sim_err_t err = (nd && !deps) ? GS_SIM_ENOMEM : capture_join(s, c, deps, nd);
		free(deps);
		gs_sim_capture_unref(c);
		return err;
	}
	has = event_fence(e, &f);
	gs_sim_work_t w = { .kind = GS_SIM_W_EMPTY };
	/* A wait on a capturing stream for an event outside the capture has
	 * no node to depend on; it is dropped (the real driver rejects it). */
	return gs_sim_submit(s, &w, has ? &f : NULL, has ? 1 : 0, NULL);
}

/* ---- capture ---- */
static atomic_ulong capture_ids = 1;

gs_sim_err_t gs_sim_capture_begin(gs_sim_stream_t *s, int mode)
{
	gs_sim_capture_t *c;
	if (s->legacy)
		return GS_SIM_ECAP_UNSUPPORTED;
	c = calloc(1, sizeof(*c));
	if (!c)
		return GS_SIM_ENOMEM;
	if (gs_sim_graph_create(&c->graph)) {
		free(c);
		return GS_SIM_ENOMEM;
	}
	atomic_init(&c->refs, 1);
	c->status = GS_SIM_CAP_ACTIVE;
	c->mode = mode;
	c->id = atomic_fetch_add(&capture_ids, 1);
	c->origin = s;
	GS_SIM_PT(pthread_mutex_lock(&s->ctx->mu));
	if (s->cap) {
		GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));
		gs_sim_capture_unref(c);
		return GS_SIM_ECAP_UNSUPPORTED;
	}
	s->cap = c;
	GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));
	return GS_SIM_OK;
}

gs_sim_err_t gs_sim_capture_end(gs_sim_stream_t *s, gs_sim_graph_t **out)
{
	gs_sim_ctx_t *ctx = s->ctx;
	gs_sim_err_t err = GS_SIM_OK;
	*out = NULL;
	GS_SIM_PT(pthread_mutex_lock(&ctx->mu));
	gs_sim_capture_t *c = s->cap;
	if (!c || c->origin != s) {
		GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
		return GS_SIM_ECAP_UNMATCHED;
	}
	/* Every stream that joined leaves the capture with the origin; our
	 * reference keeps it alive until the graph is taken out. */
	gs_sim_capture_ref(c);
	for (gs_sim_stream_t *b = ctx->streams; b; b = b->next)
		if (b->cap == c)
			capture_leave_locked(b);
	if (c->status == GS_SIM_CAP_ACTIVE) {
		*out = c->graph;
		c->graph = NULL;
	} else {
		err = GS_SIM_ECAP_INVALIDATED;
	}
	c->status = GS_SIM_CAP_INVALIDATED; /* events recorded in it go stale */
	GS_SIM_PT(pthread_mutex_unlock(&ctx->mu));
	gs_sim_capture_unref(c);
	return err;
}

int gs_sim_capture_info(gs_sim_stream_t *s, uint64_t *id, gs_sim_graph_t **g,
			gs_sim_node_t ***deps, size_t *ndeps)
{
	int st;
	GS_SIM_PT(pthread_mutex_lock(&s->ctx->mu));
	gs_sim_capture_t *c = s->cap;
	st = c ? c->status : GS_SIM_CAP_NONE;
	if (id)
		*id = c ? c->id : 0;
	if (g)
		*g = c ? c->graph : NULL;
	if (deps) {
		*deps = NULL;
		if (c && s->ncapdeps) {
			*deps = malloc(s->ncapdeps * sizeof(**deps));
			if (*deps)
				memcpy(*deps, s->capdeps, s->ncapdeps * sizeof(**deps));
		}
	}
	if (ndeps)
		*ndeps = c ? s->ncapdeps : 0;
	GS_SIM_PT(pthread_mutex_unlock(&s->ctx->mu));
	return st;
}
