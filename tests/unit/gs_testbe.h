/*
 * A recording test backend for the core: no GPU, no vendor library.  Every
 * submission and graph launch "executes" synchronously by appending to an
 * execution log, so a test can check that what ran, and in what order, is
 * exactly what the program issued, with or without graphs.
 */
#ifndef GS_TESTBE_H
#define GS_TESTBE_H

#include "gs_engine.h"
#include "gs_stats.h"

typedef struct tb_exec {
	uintptr_t stream;
	uintptr_t func;
	uint64_t a0, a1;
	uint32_t grid; /* grid[0]: an operand a replay must carry like the arguments */
	bool from_graph;
} tb_exec_t;

#define TB_MAX_EXEC 200000

typedef struct tb_state {
	tb_exec_t exec[TB_MAX_EXEC];
	size_t nexec;
	tb_exec_t issued[TB_MAX_EXEC]; /* what the program issued, in program order */
	size_t nissued;
	int builds, launches, patches, destroys, submits, live_graphs;
	/* Fault injection: fail the Nth call (1-based; 0 = never). */
	int fail_build_at, fail_launch_at, fail_patch_at, fail_submit_at;
	uintptr_t refuse_func; /* graph builds refuse a node of this function (its index named) */
	int submit_status; /* returned by every submit that is not failed */
	int build_sleep_ms; /* make graph builds slow */
	/* Graph builds after the first hold_builds_after (when > 0) wait until
	 * release_builds is set; builds_done counts finished ones (atomics). */
	int hold_builds_after, release_builds, builds_done;
	int build_policy; /* the building thread's sched_getscheduler() + 1 (0: no build yet) */
	/*
	 * A GPU clock for the gate's timers: every executed record advances
	 * it by cost_eager (submitted) or cost_node (from a graph), every graph
	 * launch by cost_graph.  Timers exist only with `timers` set; a timer
	 * reads "not complete" timer_lag times before it reads its value;
	 * fail_timer_at fails the Nth timer call.
	 */
	uint64_t clock, cost_eager, cost_node, cost_graph;
	bool timers;
	int timer_lag, timer_calls, fail_timer_at, live_timers;
	int timer_ends; /* timers marked at a timed pass's end (a sample taken) */
	/* Kernels the cold lane took (gs_engine_cold_cached), and the full
	 * cold lookup (gs_engine_cold). */
	int lane_hits, cold_hits;
	/* Nodes of kernels whose parameters drift are built to take patches
	 * on the GPU (gs_ops_t.graph_node_patching); dev_nodes counts them. */
	bool devpatch;
	int dev_nodes;
	void *ctx; /* the context of the records tb_launch_on and the rest make (NULL) */
} tb_state_t;

extern tb_state_t tb;
extern const gs_ops_t tb_ops;

/* Reset the backend, set GRAPHSHIM_* from pairs (GRAPHSHIM_GATE is replay
 * unless a test sets it) ("NAME", "value", ..., NULL), init the engine. */
void tb_start(const char *first, ...);

/* Functions with this bit share one parameter layout, so one can stand in
 * for another in a graph node (a patch); others are told apart by shape. */
#define TB_SAME_LAYOUT ((uintptr_t)1 << 40)
/* Graph builds refuse a node of a function with this bit (as refuse_func). */
#define TB_REFUSED ((uintptr_t)1 << 41)
/* Graph builds make a node of a function with this bit on a stand-in (its
 * first argument inverted) and say so (gs_ops_t.graph_build's stand_in). */
#define TB_STAND_IN ((uintptr_t)1 << 42)

/* A kernel launch of function `func` with two 8-byte arguments. */
int tb_launch(uintptr_t stream, uintptr_t func, uint64_t a0, uint64_t a1);
/* The same with grid[0] = grid. */
int tb_launch_grid(uintptr_t stream, uintptr_t func, uint32_t grid, uint64_t a0, uint64_t a1);
/* The same on a stream of the given GS_STREAM_* kind. */
int tb_launch_on(uintptr_t stream, unsigned sflags, uintptr_t func, uint64_t a0, uint64_t a1);
/* A copy record (dst, src) of `bytes`. */
int tb_copy(uintptr_t stream, uint64_t dst, uint64_t src, uint64_t bytes);

/* An event destroyed by the engine after its holders submitted (gs_ops_t.event_destroy):
 * logged with a0 the event. */
#define TB_EVENT_DESTROYED ((uintptr_t)0xde57)
/* A mark (an event record or wait, `which` its kind: 2 a wait, 3 a stream-ordered
 * free of address `event`, any other a record) of `event`; it runs as TB_MARK. */
#define TB_MARK ((uintptr_t)0xe7e7)
int tb_mark(uintptr_t stream, uint64_t event, uint64_t which);

/* A stream synchronize: the stream's boundary. */
void tb_sync(uintptr_t stream, unsigned sflags);

/* fn(arg) on another thread, to its end (a monitor, another worker). */
void tb_elsewhere(void *(*fn)(void *), void *arg);
/* Another thread's flush of every stream, for the reason given. */
void tb_flush_all_elsewhere(gs_flush_reason_t why);
/* Another thread's query of `stream`: whether graphshim answered it "not
 * ready" itself (gs_engine_stream_query). */
bool tb_query_elsewhere(uintptr_t stream);

/* Issue the steps `nsteps` times: funcs[0..n) with a0 = base + i, a1 = step*arg_stride. */
void tb_step(uintptr_t stream, const uintptr_t *funcs, size_t n, uint64_t a1);

/*
 * Flush everything, then check that on every stream what executed is what
 * was issued, in the same order, with the same arguments.
 */
void tb_check(void);

/* Launches of the last n executed that ran from a graph. */
int tb_from_graph_in_last(size_t n);

/* Check the execution log equals what a reference run without graphs gives. */
void tb_expect_exec(const tb_exec_t *want, size_t n);

#endif
