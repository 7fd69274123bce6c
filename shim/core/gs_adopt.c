/*
 * Side streams adopted into the stream they fork from: the tables and the
 * fork rule, shared by the backends (gs_adopt.h).  Why adoption keeps every
 * result, and the backend's part (its stream checks, its hooks' scopes,
 * CUDA's lazy arming and its grace): shim/cuda/cu_adopt.c.
 */
#include "gs_adopt.h"
#include "gs_log.h"
#include "gs_stats.h"

/*
 * Work issued on each stream, in an open-addressed table keyed by handle,
 * entered lock-free at a stream's first work and never removed.  Exact: a
 * direct-mapped table made two streams share a count one run in three (a
 * dozen streams in 256 slots, by their addresses), which made cuDNN's
 * forks look spoilt and left rnn-lstm unadopted in some runs and not
 * others.  A stream that finds no room in GS_ADOPT_WORK_PROBES slots
 * counts in the last, shared one, which can only make a fork look spoilt.
 */
#define GS_ADOPT_WORK_PROBES 16u

static unsigned gs_adopt_work_slot(gs_adopt_t *a, uintptr_t s)
{
	uint64_t key = s ? s : UINT64_MAX; /* HIP's legacy stream: 0 is an empty slot's key */
	return gs_probe_slot(a->work_key, GS_ADOPT_WORK_SLOTS,
			     (uint32_t)gs_mix64(key) & (GS_ADOPT_WORK_SLOTS - 1), GS_ADOPT_WORK_PROBES, key,
			     true);
}

void gs_adopt_count(gs_adopt_t *a, uintptr_t s)
{
	__atomic_fetch_add(&a->work[gs_adopt_work_slot(a, s)], 1, __ATOMIC_RELAXED);
}

static gs_adopt_fork_t *gs_adopt_fork_of(gs_adopt_t *a, uintptr_t t, bool make)
{
	for (unsigned i = 0; i < a->nforks; i++)
		if (a->forks[i].t == t)
			return &a->forks[i];
	if (!make || a->nforks == GS_ADOPT_FORKS)
		return NULL;
	a->forks[a->nforks] = (gs_adopt_fork_t){ .t = t };
	return &a->forks[a->nforks++];
}

/*
 * A fork is *closed* when root waits on t's event with no work of its own
 * issued since the fork (only marks): in a closed fork root's later work
 * waits for t's anyway, so issuing t's work on root adds no wait that the
 * program's own join does not already make.  A fork after one closed fork
 * and no spoilt one is adopted.  The legacy stream joins forks; it is never
 * adopted.
 */
bool gs_adopt_fork(gs_adopt_t *a, uintptr_t t, uintptr_t root)
{
	uint64_t t_work = __atomic_load_n(&a->work[gs_adopt_work_slot(a, t)], __ATOMIC_RELAXED);
	uint64_t r_work = __atomic_load_n(&a->work[gs_adopt_work_slot(a, root)], __ATOMIC_RELAXED);
	pthread_mutex_lock(&a->fork_lock);
	gs_adopt_fork_t *j = gs_adopt_fork_of(a, root, false);
	if (j && j->open && j->root == t) {
		j->open = false;
		if (t_work == j->work)
			j->closed++;
		else
			j->spoilt++;
	}
	gs_adopt_fork_t *f = t == a->ops->legacy ? NULL : gs_adopt_fork_of(a, t, true);
	bool ready = f && f->closed && !f->spoilt && !f->open && f->root == root;
	if (f && !ready) {
		if (f->root != root)
			*f = (gs_adopt_fork_t){ .t = t }; /* another root: start again */
		f->root = root;
		f->work = r_work;
		f->open = true;
	}
	pthread_mutex_unlock(&a->fork_lock);
	return ready;
}

/* The entry of t, or NULL; lock held. */
static gs_adoptee_t *gs_adoptee(gs_adopt_t *a, uintptr_t t)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->tab[i].t == t)
			return &a->tab[i];
	return NULL;
}

static bool gs_adopt_is_root(const gs_adopt_t *a, uintptr_t s)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->tab[i].root == s)
			return true;
	return false;
}

bool gs_adopt_take_begin(gs_adopt_t *a, uintptr_t t, uintptr_t *root)
{
	pthread_rwlock_wrlock(&a->lock);
	const gs_adoptee_t *r = gs_adoptee(a, *root);
	if (r)
		*root = r->root; /* root was adopted since: its root */
	return *root != t && !gs_adoptee(a, t) && !gs_adopt_is_root(a, t) && a->n < GS_ADOPT_MAX;
}

void gs_adopt_insert(gs_adopt_t *a, uintptr_t t, uintptr_t root, void *ctx, void *join)
{
	a->tab[a->n++] = (gs_adoptee_t){ t, root, ctx, join };
	GS_STAT_INC(adopted);
	gs_log(GS_LOG_DEBUG, "%s: stream %#lx adopted into %#lx", a->ops->name, (unsigned long)t,
	       (unsigned long)root);
}

void gs_adopt_take_end(gs_adopt_t *a)
{
	pthread_rwlock_unlock(&a->lock);
}

void gs_adopt_rdlock(gs_adopt_t *a)
{
	pthread_rwlock_rdlock(&a->lock);
}

void gs_adopt_unlock(gs_adopt_t *a)
{
	pthread_rwlock_unlock(&a->lock);
}

uintptr_t gs_adopt_redirect(gs_adopt_t *a, uintptr_t s)
{
	if (!a->n || !s || s == a->ops->legacy || s == a->ops->per_thread)
		return s;
	const gs_adoptee_t *e = gs_adoptee(a, s);
	/* A call on t from another context is the driver's to judge, on t. */
	if (e && (e->root != a->ops->legacy || a->ops->ctx_current() == e->ctx))
		return e->root;
	return s;
}

/* Entry e goes: its join event with it (the last entry takes its place).  Write lock held. */
static void gs_adopt_drop(gs_adopt_t *a, gs_adoptee_t *e)
{
	if (a->ops->event_free)
		a->ops->event_free(e->join);
	*e = a->tab[--a->n];
}

/*
 * Entry e ends: t waits for what root holds of its work, and takes its own
 * work back (the engine's held work on root submitted first).  Write lock
 * held.  A join that fails leaves the entry in place: t's work keeps going
 * to root, which is still correct; where the driver is shutting down or
 * the context is gone, the entry goes (true), as nothing of either runs
 * again.
 */
static bool gs_adopt_end(gs_adopt_t *a, gs_adoptee_t *e, const char *api)
{
	int rc = a->ops->give_back(e->join, e->root, e->t, e->ctx, api);
	if (rc && a->ops->gone(rc)) {
		gs_log(GS_LOG_DEBUG, "%s: side stream %#lx dropped at %s (status %d)", a->ops->name,
		       (unsigned long)e->t, api, rc);
		gs_adopt_drop(a, e);
		return true;
	}
	if (rc) {
		gs_log_once(GS_LOG_WARN, "%s: a side stream could not be given back its own work "
			    "at %s (the join failed, status %d): its work stays on the stream it was "
			    "adopted into", a->ops->name, api, rc);
		return false;
	}
	gs_adopt_drop(a, e);
	return true;
}

void gs_adopt_release(gs_adopt_t *a, uintptr_t t, const char *api)
{
	pthread_rwlock_wrlock(&a->lock);
	gs_adoptee_t *e = gs_adoptee(a, t);
	if (e)
		gs_adopt_end(a, e, api);
	pthread_rwlock_unlock(&a->lock);
}

void gs_adopt_destroyed(gs_adopt_t *a, uintptr_t s, const char *api)
{
	pthread_rwlock_wrlock(&a->lock);
	/* Streams adopted into s take their work back before s goes. */
	for (unsigned i = 0; i < a->n;) {
		if (a->tab[i].root == s && gs_adopt_end(a, &a->tab[i], api))
			continue; /* the last entry moved into i */
		i++;
	}
	pthread_mutex_lock(&a->fork_lock);
	for (unsigned i = 0; i < a->nforks;) {
		if (a->forks[i].t == s || a->forks[i].root == s)
			a->forks[i] = a->forks[--a->nforks]; /* its handle may come back */
		else
			i++;
	}
	pthread_mutex_unlock(&a->fork_lock);
	gs_adoptee_t *e = gs_adoptee(a, s);
	if (e)
		gs_adopt_drop(a, e); /* nothing of s's own is on s to join */
	pthread_rwlock_unlock(&a->lock);
}

void gs_adopt_release_all(gs_adopt_t *a, const char *api)
{
	pthread_rwlock_wrlock(&a->lock);
	for (unsigned i = 0; i < a->n;)
		if (!gs_adopt_end(a, &a->tab[i], api))
			i++;
	pthread_rwlock_unlock(&a->lock);
	/* The forks seen so far may be of streams about to go (a context's
	 * teardown destroys them with no stream destruction): seen again. */
	pthread_mutex_lock(&a->fork_lock);
	a->nforks = 0;
	pthread_mutex_unlock(&a->fork_lock);
}

void gs_adopt_reset(gs_adopt_t *a)
{
	/* A forked child: the parent's streams are not its own. */
	pthread_rwlock_init(&a->lock, NULL);
	pthread_mutex_init(&a->fork_lock, NULL);
	a->n = 0;
	a->nforks = 0;
}
