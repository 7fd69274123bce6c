/*
 * Side streams adopted into the stream they fork from (GRAPHSHIM_ADOPT):
 * the vendor-neutral part, one instance a backend.  The backend counts each
 * stream's work (gs_adopt_count), tells at a stream's wait on another's
 * event whether the fork is ready to adopt (gs_adopt_fork), takes the
 * adoption (gs_adopt_take_begin / _insert / _end, with its own stream checks,
 * flush and join between), and redirects every stream-ordered call on an
 * adopted stream to its root (gs_adopt_redirect under gs_adopt_rdlock).  Why
 * that keeps every result, and which forks are adopted: shim/cuda/cu_adopt.c
 * and docs/how-it-works.md, "Several streams in one step".
 */
#ifndef GS_ADOPT_H
#define GS_ADOPT_H

#include <pthread.h>

#include "gs_common.h"

#define GS_ADOPT_MAX 64
#define GS_ADOPT_FORKS 64
#define GS_ADOPT_WORK_SLOTS 1024u

/* What the core asks of its backend. */
typedef struct gs_adopt_ops {
	/* `later` waits for everything issued on `first` so far: ev recorded
	 * on first, later waiting on it; 0, or the failing call's status. */
	int (*join)(void *ev, uintptr_t first, uintptr_t later);
	/* An event of graphshim's own for an adoptee's joins (NULL: none), and its end. */
	void *(*event_new)(void);
	void (*event_free)(void *ev);
	/* Submit what the engine holds of root (its context ctx made current
	 * as needed), then join root's work so far into t (ev): the end of an
	 * adoption.  0, or the failing call's status. */
	int (*give_back)(void *ev, uintptr_t root, uintptr_t t, void *ctx, const char *api);
	/* Whether a status says nothing of either stream can run again (the
	 * driver shutting down, the context gone): the entry simply goes. */
	bool (*gone)(int rc);
	/* The calling thread's context: the legacy stream is each context's own. */
	void *(*ctx_current)(void);
	uintptr_t legacy, per_thread; /* the default streams' handles */
	const char *name;             /* "cuda", "hip": for the log */
} gs_adopt_ops_t;

typedef struct gs_adoptee {
	uintptr_t t;    /* the side stream */
	uintptr_t root; /* where its work goes */
	void *ctx;
	void *join; /* graphshim's own event, for the joins */
} gs_adoptee_t;

/* A fork seen of a stream not adopted (yet). */
typedef struct gs_adopt_fork {
	uintptr_t t, root;
	uint64_t work;           /* the root's work count at the fork */
	bool open;               /* a fork of t's not yet joined */
	uint32_t closed, spoilt; /* joins with no work of the root's between, and with some */
} gs_adopt_fork_t;

typedef struct gs_adopt {
	const gs_adopt_ops_t *ops;
	pthread_rwlock_t lock; /* the table: read by every redirected call */
	gs_adoptee_t tab[GS_ADOPT_MAX];
	unsigned n;
	pthread_mutex_t fork_lock;
	gs_adopt_fork_t forks[GS_ADOPT_FORKS];
	unsigned nforks;
	uint64_t work_key[GS_ADOPT_WORK_SLOTS]; /* stream handles (gs_probe_slot) */
	uint64_t work[GS_ADOPT_WORK_SLOTS + 1];
} gs_adopt_t;

#define GS_ADOPT_INIT(o)                                                                 \
	{ .ops = (o), .lock = PTHREAD_RWLOCK_INITIALIZER, .fork_lock = PTHREAD_MUTEX_INITIALIZER }

/* One piece of work (anything but an event record or wait) issued on s. */
void gs_adopt_count(gs_adopt_t *a, uintptr_t s);
/*
 * Stream t waits on an event last recorded on root (t is not a default
 * stream's per-thread handle, root not t): the join of a fork of root's
 * from t, and a fork of t from root, are noted.  True when t is ready to be
 * adopted into root: one closed fork before this one, none spoilt.
 */
bool gs_adopt_fork(gs_adopt_t *a, uintptr_t t, uintptr_t root);
/*
 * Taking an adoption: _begin write-locks the table and says whether t may be
 * adopted at all (not adopted, not a root, room), with *root resolved to
 * where root's own work goes; the backend checks the streams, flushes t and
 * joins t's work so far into *root, then _insert records it (join: its
 * event, owned by the entry from then on); _end unlocks, whatever happened.
 */
bool gs_adopt_take_begin(gs_adopt_t *a, uintptr_t t, uintptr_t *root);
void gs_adopt_insert(gs_adopt_t *a, uintptr_t t, uintptr_t root, void *ctx, void *join);
void gs_adopt_take_end(gs_adopt_t *a);

/* Read-lock the table (every redirected call, until it returns). */
void gs_adopt_rdlock(gs_adopt_t *a);
void gs_adopt_unlock(gs_adopt_t *a);
/* Where a call on s goes: its root if adopted (read lock held), else s. */
uintptr_t gs_adopt_redirect(gs_adopt_t *a, uintptr_t s);
/* t takes its own work back (its adoption ends), if adopted. */
void gs_adopt_release(gs_adopt_t *a, uintptr_t t, const char *api);
/* s is being destroyed: streams adopted into it take their work back, its
 * own entry goes, and the forks it was in are forgotten. */
void gs_adopt_destroyed(gs_adopt_t *a, uintptr_t s, const char *api);
/* Every adopted stream takes its work back, and the forks seen are forgotten. */
void gs_adopt_release_all(gs_adopt_t *a, const char *api);
/* In a forked child: nothing adopted, no fork seen, the locks new. */
void gs_adopt_reset(gs_adopt_t *a);

#endif /* GS_ADOPT_H */
