/*
 * The submission thread (GRAPHSHIM_SUBMIT_THREAD).  Where a replayed
 * chunk's nodes drift, patching them and launching the graph cost the
 * application's thread about 2 us a node plus 8-10 us a launch on an H200
 * (docs/performance.md, thirty-sixth session), about what submitting the
 * chunk eagerly costs.  With the thread, the chunk's end only posts a job
 * (the graph, its stream, which nodes to patch from which baked records)
 * and returns; the thread patches and launches.
 *
 * The ordering contract holds because no thread makes a vendor call that
 * could observe or order against posted work while a job is pending:
 * every such call first drains (gs_submit_drain): the core's backend table
 * (gs_backend) is a wrapper whose operations drain before the vendor's,
 * and every backend hook that reaches the vendor outside it (pass-through
 * calls, flushes, captures, the cold lane) drains first.  Only the
 * vendor's queries of state no submission changes (HARMLESS in
 * cu_api.def) and allocations skip it.  Jobs run in the order they were
 * posted, one at a time: a thread that drains runs what the submission
 * thread has not begun itself, after the one it is running.
 *
 * A job's records are the baked records of its graph (gs_seq_rebake made
 * them the held ones before posting); nothing writes them, and no graph or
 * sequence is freed, while a job that names them is pending
 * (gs_submit_wait_graph, and gs_seq_release drains).  When the vendor
 * refuses a patch or the launch, the job submits its records eagerly, in
 * order, and leaves the failure on its sequence for the application's
 * thread to act on at that sequence's next chunk (gs_replay.c).
 */
#ifndef GS_SUBMIT_H
#define GS_SUBMIT_H

#include "gs_common.h"
#include "gs_ops.h"

struct gs_seq;

/* Jobs posted and jobs finished, ever (atomic). */
extern uint64_t gs_submit_posted, gs_submit_done;

/* True on a thread that is running jobs (its vendor calls need no drain). */
extern GS_TLS_IE __thread bool gs_submit_running;

/* Run every pending job (on this thread where the submission thread has not begun it). */
void gs_submit_drain_slow(void);

/* Whether a posted job has not run yet. */
static inline bool gs_submit_pending(void)
{
	return __atomic_load_n(&gs_submit_posted, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&gs_submit_done, __ATOMIC_ACQUIRE);
}

static inline void gs_submit_drain(void)
{
	if (GS_UNLIKELY(gs_submit_pending()) && !gs_submit_running)
		gs_submit_drain_slow();
}

/* Whether jobs may be posted: GRAPHSHIM_SUBMIT_THREAD and a running thread (started on first use). */
bool gs_submit_ready(void);

/*
 * Post a chunk: its n records recs are positions base.. of q; for each
 * k < ndiff patch the node of position diffs[k] from its record, then
 * launch graph on stream (`var`: a variant's graph, for the statistics).
 * False when it could not be posted (nothing was done: the caller patches
 * and launches itself).  The caller counts the chunk as replayed; a job
 * the vendor refuses takes that back.
 */
bool gs_submit_post(void *graph, uintptr_t stream, gs_rec_t *const *recs, uint32_t n,
		    const uint32_t *diffs, uint32_t ndiff, struct gs_seq *q, uint32_t base, bool var);

/* Wait until no pending job names graph (its records may then be written). */
void gs_submit_wait_graph(const void *graph);

/* The table the core calls through: `raw`'s operations, each draining first where it needs to. */
const gs_ops_t *gs_submit_wrap(const gs_ops_t *raw);

/* The backend's own table (what jobs call). */
extern const gs_ops_t *gs_submit_raw;

/* Drain and stop the thread (the engine's end); it starts again on the next post. */
void gs_submit_stop(void);

#endif /* GS_SUBMIT_H */
