/*
 * The operations table a backend fills for the core.  The core decides what
 * to hold, learn and replay; the backend is the only part that talks to a
 * vendor library.  Every function returns the vendor's status as an int
 * (0 is success for both CUDA and HIP).
 */
#ifndef GS_OPS_H
#define GS_OPS_H

#include "gs_rec.h"

typedef struct gs_ops {
	const char *name; /* "cuda", "hip", "test" */

	/*
	 * Submit one record now, eagerly, on the stream it was recorded for.
	 * When rec->orig is set the backend may use the caller's own arguments.
	 * Returns the vendor status, which reaches the application unchanged
	 * when the record is a pass-through.
	 */
	int (*submit)(const gs_rec_t *rec, uintptr_t stream);

	/*
	 * Build a graph of n records, node i made from recs[i] and depending on
	 * node i-1, and instantiate it.  *graph receives a backend object that
	 * owns the graph, its nodes and the executable graph.  On failure
	 * *refused is the index of the record the vendor would not take as a
	 * node, or n when the failure was no one node's (creating or
	 * instantiating the graph, memory): the core then runs that record
	 * eagerly at its place and builds the rest (gs_arm.c).
	 *
	 * stand_in (n entries, zeroed by the core; NULL: none may be used):
	 * a backend may build node i with a stand-in for an operand the vendor
	 * would refuse now but not when the graph runs (a pointer into memory
	 * the program freed after its pass and allocates again in its next,
	 * which the vendor checks when a copy or memset node is made), and
	 * then sets stand_in[i].  The core patches such a node with the held
	 * record's operands before its first launch (gs_rec_t.stale), so no
	 * launch ever runs the stand-in.
	 */
	int (*graph_build)(const gs_rec_t *const *recs, size_t n, void **graph, size_t *refused,
			   uint8_t *stand_in);

	/* Launch an instantiated graph on a stream. */
	int (*graph_launch)(void *graph, uintptr_t stream);

	/*
	 * Patch node i of the instantiated graph with rec's operands (same
	 * shape as the baked record).  Affects only launches made after it.
	 * old: the record whose operands node i holds now (it was built or
	 * last patched with them), which a backend may diff rec against; NULL
	 * where the caller cannot say (a stand-in in the node, a job of the
	 * submission thread, whose baked records are already rec).
	 */
	int (*graph_patch)(void *graph, size_t node, const gs_rec_t *rec, const gs_rec_t *old);

	/* Release a graph; work already launched from it still completes. */
	void (*graph_destroy)(void *graph);

	/*
	 * GPU timers for the gate (gs_gate.c); a backend may leave them NULL,
	 * and then every sequence replays.  A timer is two GPU events in the
	 * context of `graph`.  timer_mark records event `which` (0 start, 1
	 * stop) on a stream, adding no synchronization; timer_read never
	 * waits: 1 and *ns the time between the two marks on the GPU, 0 not
	 * complete yet, negative when it failed.
	 */
	int (*timer_create)(void *graph, void **timer);
	int (*timer_mark)(void *timer, int which, uintptr_t stream);
	int (*timer_read)(void *timer, uint64_t *ns);
	void (*timer_destroy)(void *timer);

	/*
	 * The name of a record's kernel (the symbol the vendor's module gives
	 * it), or NULL when it has none or the record is not a kernel.  Asked
	 * only while tracing, once per function (gs_trace.c keeps the answer);
	 * the string need only live until the function's module is unloaded.
	 * May be left NULL.
	 */
	const char *(*func_name)(const gs_rec_t *rec);

	/*
	 * Destroy an event the application destroyed while a stream held a
	 * record of it or a wait on it (gs_engine_event_destroy), now that
	 * the last of them went to the vendor.  May be left NULL: such a
	 * destruction then has the holders submit first.
	 */
	void (*event_destroy)(uint64_t ev);

	/*
	 * How node i of graph takes patches such as rec (its shape):
	 * GS_PATCH_DEVICE on the GPU (the CUDA backend's device-updatable
	 * nodes, GRAPHSHIM_DEVICE_PATCH), where a change of the function, the
	 * block or the shared memory is the host's and costs the whole graph
	 * an upload; GS_PATCH_CAN from the host, but on the GPU were it built
	 * knowing its parameters drift; GS_PATCH_HOST from the host.  The core
	 * marks the drift it sees (gs_rec_t.drift) and, where the backend
	 * would build the node otherwise, builds the sequence again once the
	 * match has ended: a node whose parameters drift then takes its
	 * patches on the GPU, one whose geometry drifts is a plain node, and a
	 * graph whose nodes never drift carries nothing for it.  May be left
	 * NULL (every node GS_PATCH_HOST).
	 */
	int (*graph_node_patching)(void *graph, size_t node, const gs_rec_t *rec);
} gs_ops_t;

enum { GS_PATCH_HOST = 0, GS_PATCH_DEVICE = 1, GS_PATCH_CAN = 2 };

/*
 * A backend's table, from the prefix its functions share: GS_OPS_TABLE("x",
 * gs_x_) names gs_x_submit, gs_x_graph_build, ... gs_x_timer_destroy.  An
 * operation added above is added here once, and every backend then has to
 * provide it.
 */
#define GS_OPS_TABLE(label, prefix)                                           \
	{                                                                     \
		.name = label,                                                \
		.submit = prefix##submit,                                     \
		.graph_build = prefix##graph_build,                           \
		.graph_launch = prefix##graph_launch,                         \
		.graph_patch = prefix##graph_patch,                           \
		.graph_destroy = prefix##graph_destroy,                       \
		.timer_create = prefix##timer_create,                         \
		.timer_mark = prefix##timer_mark,                             \
		.timer_read = prefix##timer_read,                             \
		.timer_destroy = prefix##timer_destroy,                       \
		.func_name = prefix##func_name,                               \
		.event_destroy = prefix##event_destroy,                       \
		.graph_node_patching = prefix##graph_node_patching,           \
	}

/*
 * What timer_read answers, from the vendor's status of its query of the
 * stop mark and of the elapsed time between the marks (0: success;
 * `not_ready`: the stop mark is not complete yet) and those milliseconds.
 */
static inline int gs_ops_timer_read_result(int status, int not_ready, float ms, uint64_t *ns)
{
	if (status == not_ready)
		return 0;
	if (status != 0)
		return -status;
	*ns = ms > 0 ? (uint64_t)((double)ms * 1e6) : 0;
	return 1;
}

#endif /* GS_OPS_H */
