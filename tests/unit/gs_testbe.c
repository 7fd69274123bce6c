/* The recording test backend (see gs_testbe.h). */
#include "gs_testbe.h"
#include "gs_gate.h"
#include "gs_lane.h"
#include "gs_rec.h"

#include <pthread.h>
#include <sched.h>
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

tb_state_t tb;

typedef struct tb_graph {
	size_t n;
	gs_rec_t **nodes;
	bool *dev; /* with tb.devpatch: built to take patches "on the GPU" */
} tb_graph_t;

/*
 * Every kernel takes two 8-byte arguments.  As in the CUDA backend, which
 * interns layouts by content, functions whose layout is one object are
 * operands of each other's nodes (a record's shape holds the layout, not
 * the function): those with TB_SAME_LAYOUT set share one.  Every other
 * function has a layout object of its own, so that the tests can keep
 * sequences of different functions apart.
 */
typedef struct tb_lay {
	gs_layout_t l;
	gs_arg_t a[2];
} tb_lay_t;

#define TB_NLAYOUTS 4093 /* prime: nearby functions land on different layouts */
static tb_lay_t tb_shared = {{2, 16}, {{0, 8}, {8, 8}}};
static tb_lay_t tb_own[TB_NLAYOUTS];

static void tb_layouts_init(void)
{
	for (unsigned i = 0; i < TB_NLAYOUTS; i++)
		tb_own[i] = tb_shared;
}

static const gs_layout_t *tb_layout(uintptr_t func)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, tb_layouts_init);
	if (func & TB_SAME_LAYOUT)
		return &tb_shared.l;
	return &tb_own[func % TB_NLAYOUTS].l;
}

/* What a record runs as in the logs: its function, or a tag for a copy or a mark. */
static uintptr_t tb_func_of(uint32_t kind, uintptr_t func)
{
	return kind == GS_REC_COPY ? 0xc0b1 : kind == GS_REC_MARK ? TB_MARK : func;
}

static void tb_exec_rec(const gs_rec_t *r, uintptr_t stream, bool from_graph)
{
	cr_assert_lt(tb.nexec, TB_MAX_EXEC);
	tb_exec_t *e = &tb.exec[tb.nexec];
	e->stream = stream;
	e->func = tb_func_of(r->kind, (uintptr_t)r->func);
	e->grid = r->kind == GS_REC_KERNEL ? r->grid[0] : 0;
	memcpy(&e->a0, r->args, 8);
	memcpy(&e->a1, r->args + 8, 8);
	if (r->kind == GS_REC_MARK) /* a mark's log says which it is */
		e->a1 = r->aux[0];
	e->from_graph = from_graph;
	tb.clock += from_graph ? tb.cost_node : tb.cost_eager;
	/* Counted once written: the idle watchdog's tests read it from another thread. */
	__atomic_store_n(&tb.nexec, tb.nexec + 1, __ATOMIC_RELEASE);
}

static int tb_submit(const gs_rec_t *r, uintptr_t stream)
{
	if (++tb.submits == tb.fail_submit_at)
		return 99;
	if (tb.submit_status)
		return tb.submit_status;
	tb_exec_rec(r, stream, false);
	return 0;
}

static int tb_build(const gs_rec_t *const *recs, size_t n, void **out, size_t *refused,
		    uint8_t *stand_in)
{
	*refused = n;
	if (__atomic_add_fetch(&tb.builds, 1, __ATOMIC_RELAXED) == tb.fail_build_at)
		return 2;
	for (size_t i = 0; i < n; i++)
		if (recs[i]->kind == GS_REC_KERNEL &&
		    (((uintptr_t)recs[i]->func & TB_REFUSED) ||
		     (!stand_in && ((uintptr_t)recs[i]->func & TB_STAND_IN)) ||
		     (tb.refuse_func && (uintptr_t)recs[i]->func == tb.refuse_func))) {
			*refused = i;
			return 5;
		}
	__atomic_store_n(&tb.build_policy, sched_getscheduler(0) + 1, __ATOMIC_RELEASE);
	if (tb.build_sleep_ms)
		usleep((useconds_t)tb.build_sleep_ms * 1000);
	if (tb.hold_builds_after && __atomic_load_n(&tb.builds, __ATOMIC_RELAXED) > tb.hold_builds_after)
		while (!__atomic_load_n(&tb.release_builds, __ATOMIC_ACQUIRE))
			usleep(200);
	tb_graph_t *g = calloc(1, sizeof(*g));
	g->n = n;
	g->nodes = calloc(n, sizeof(*g->nodes));
	g->dev = calloc(n, sizeof(*g->dev));
	for (size_t i = 0; i < n; i++) {
		/* As the CUDA backend's device patches: kernels whose parameters
		 * drift and whose geometry does not. */
		g->dev[i] = tb.devpatch && recs[i]->kind == GS_REC_KERNEL &&
			    (recs[i]->drift & (GS_DRIFT_ARGS | GS_DRIFT_GEOMETRY)) == GS_DRIFT_ARGS;
		tb.dev_nodes += g->dev[i];
	}
	for (size_t i = 0; i < n; i++) {
		cr_assert(!gs_rec_copy(&g->nodes[i], recs[i]));
		if (recs[i]->kind == GS_REC_KERNEL && ((uintptr_t)recs[i]->func & TB_STAND_IN)) {
			/* Made on a stand-in: run unpatched, it would show. */
			uint64_t poison = ~gs_rec_u64(recs[i], 0);
			memcpy(g->nodes[i]->args, &poison, 8);
			stand_in[i] = 1;
		}
	}
	__atomic_add_fetch(&tb.live_graphs, 1, __ATOMIC_RELAXED);
	*out = g;
	__atomic_add_fetch(&tb.builds_done, 1, __ATOMIC_RELEASE);
	return 0;
}

static int tb_glaunch(void *graph, uintptr_t stream)
{
	if (++tb.launches == tb.fail_launch_at)
		return 3;
	tb_graph_t *g = graph;
	tb.clock += tb.cost_graph;
	for (size_t i = 0; i < g->n; i++)
		if (!gs_rec_is_mark(g->nodes[i])) /* an absorbed mark's node is empty */
			tb_exec_rec(g->nodes[i], stream, true);
	return 0;
}

static int tb_patch(void *graph, size_t node, const gs_rec_t *r, const gs_rec_t *old)
{
	if (++tb.patches == tb.fail_patch_at)
		return 4;
	tb_graph_t *g = graph;
	cr_assert_lt(node, g->n);
	cr_assert(gs_rec_same_shape(g->nodes[node], r), "patch must keep the node's shape");
	/* What the engine says the node holds is what it holds (a backend
	 * diffs against it: the CUDA backend's device patches). */
	cr_assert(!old || !gs_rec_differs(old, g->nodes[node]),
		  "the old record given with a patch must be the node's operands");
	/* A node takes every operand: function, geometry, size and bytes. */
	cr_assert(!gs_rec_copy(&g->nodes[node], r));
	g->nodes[node]->orig = NULL;
	return 0;
}

static void tb_destroy(void *graph)
{
	tb_graph_t *g = graph;
	for (size_t i = 0; i < g->n; i++)
		free(g->nodes[i]);
	free(g->nodes);
	free(g->dev);
	free(g);
	tb.destroys++;
	tb.live_graphs--;
}

typedef struct tb_timer {
	uint64_t mark[2];
	int lag;
} tb_timer_t;

static bool tb_timer_fails(void)
{
	return ++tb.timer_calls == tb.fail_timer_at;
}

static int tb_timer_create(void *graph, void **timer)
{
	cr_assert(graph);
	if (!tb.timers || tb_timer_fails())
		return 5;
	*timer = calloc(1, sizeof(tb_timer_t));
	tb.live_timers++;
	return 0;
}

static int tb_timer_mark(void *timer, int which, uintptr_t stream)
{
	(void)stream;
	if (tb_timer_fails())
		return 6;
	tb_timer_t *t = timer;
	t->mark[which] = tb.clock;
	t->lag = tb.timer_lag;
	tb.timer_ends += which == 1;
	return 0;
}

static int tb_timer_read(void *timer, uint64_t *ns)
{
	if (tb_timer_fails())
		return -7;
	tb_timer_t *t = timer;
	if (t->lag > 0) {
		t->lag--;
		return 0;
	}
	*ns = t->mark[1] - t->mark[0];
	return 1;
}

static void tb_timer_destroy(void *timer)
{
	free(timer);
	tb.live_timers--;
}

/* A kernel's name, for the trace: "k" and its handle ("k100" for 0x100). */
static const char *tb_func_name(const gs_rec_t *r)
{
	static __thread char name[32];
	if (!r || r->kind != GS_REC_KERNEL)
		return NULL;
	snprintf(name, sizeof(name), "k%lx", (unsigned long)(uintptr_t)r->func);
	return name;
}

/* How node i takes patches (gs_ops_t.graph_node_patching): "on the GPU" where
 * built so, and where tb.devpatch is set, any other kernel could be. */
static int tb_node_patching(void *graph, size_t node, const gs_rec_t *r)
{
	tb_graph_t *g = graph;
	cr_assert_lt(node, g->n);
	if (g->dev[node])
		return GS_PATCH_DEVICE;
	return tb.devpatch && r->kind == GS_REC_KERNEL ? GS_PATCH_CAN : GS_PATCH_HOST;
}

/* A held event the program destroyed, destroyed now: logged as TB_EVENT_DESTROYED. */
static void tb_event_destroy(uint64_t ev)
{
	cr_assert_lt(tb.nexec, TB_MAX_EXEC);
	tb.exec[tb.nexec] = (tb_exec_t){.func = TB_EVENT_DESTROYED, .a0 = ev};
	__atomic_store_n(&tb.nexec, tb.nexec + 1, __ATOMIC_RELEASE);
}

const gs_ops_t tb_ops = {"test", tb_submit, tb_build, tb_glaunch, tb_patch, tb_destroy,
			 tb_timer_create, tb_timer_mark, tb_timer_read, tb_timer_destroy,
			 tb_func_name, tb_event_destroy, tb_node_patching};

/* The gate's host clock in tests: the GPU clock, as for a program whose host
 * waits for the GPU every step (tests of a host-bound program set their own). */
static uint64_t tb_host_clock(void)
{
	return tb.clock;
}

void tb_start(const char *first, ...)
{
	memset(&tb, 0, sizeof(tb));
	gs_gate_clock = tb_host_clock;
	gs_stats_reset();
	/* Deterministic by default: tests of the background builder opt in. */
	setenv("GRAPHSHIM_ASYNC_BUILD", "0", 1);
	/* Nor may the host's speed shape the chunks (a sanitizer build on a
	 * loaded machine took over 6 us a launch and cut the tail); the tests
	 * of that rule set it themselves. */
	setenv("GRAPHSHIM_HOST_BOUND_US", "1000000", 1);
	/* Period detection from a stream's first records (its lazy start has
	 * its own test). */
	setenv("GRAPHSHIM_PERIOD_AFTER", "2", 1);
	/* Nor the host's pauses: a test on a loaded machine stalls for
	 * milliseconds, and the idle watchdog would submit what it holds then
	 * (its own tests turn it on). */
	setenv("GRAPHSHIM_IDLE_US", "0", 1);
	/* The gate times passes: its own tests turn it on. */
	setenv("GRAPHSHIM_GATE", "replay", 1);
	/* Every step learned at its GRAPHSHIM_LEARN_REPS-th sighting, whatever
	 * its length: the tests count sightings so (those of learning a long
	 * step at its first sighting set it). */
	setenv("GRAPHSHIM_LEARN_LONG", "0", 1);
	/* Chunks patched and launched on the caller's thread, as they come:
	 * tests of the submission thread turn it on. */
	setenv("GRAPHSHIM_SUBMIT_THREAD", "0", 1);
	va_list ap;
	va_start(ap, first);
	for (const char *k = first; k; k = va_arg(ap, const char *))
		setenv(k, va_arg(ap, const char *), 1);
	va_end(ap);
	gs_engine_init(&tb_ops); /* true when GRAPHSHIM_ENABLE=0: everything passes */
}

static int tb_rec(uintptr_t stream, unsigned sflags, uint32_t kind, uintptr_t func, uint64_t a0,
		  uint64_t a1, uint64_t aux, uint32_t grid)
{
	gs_rec_t *r = gs_rec_scratch(16);
	r->kind = kind;
	r->func = (void *)func;
	r->grid[0] = grid;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = 32;
	r->block[1] = r->block[2] = 1;
	r->layout = kind == GS_REC_KERNEL ? tb_layout(func) : NULL;
	r->aux[0] = aux;
	if (kind == GS_REC_MARK) /* which 2 waits, 3 frees, any other records */
		r->aux[3] = aux == 2 ? GS_MARK_WAIT : aux == 3 ? GS_MARK_FREE : GS_MARK_RECORD;
	memcpy(r->args, &a0, 8);
	memcpy(r->args + 8, &a1, 8);
	gs_rec_seal(r);
	if (tb.submit_status == 0) {
		tb_exec_t *e = &tb.issued[tb.nissued++];
		e->stream = stream;
		e->func = tb_func_of(kind, func);
		e->a0 = a0;
		e->a1 = kind == GS_REC_MARK ? aux : a1;
		e->grid = kind == GS_REC_KERNEL ? grid : 0;
	}
	/*
	 * Kernels offer themselves to a cold stream first, as the CUDA
	 * backend's: to the lane when the stream is not a default one, then
	 * to the full lookup.
	 */
	uint64_t key = func * 0x9e3779b97f4a7c15ULL;
	if (kind == GS_REC_KERNEL && !(sflags & (GS_STREAM_LEGACY | GS_STREAM_PASSTHRU)) &&
	    gs_engine_cold_cached(stream, tb.ctx, key)) {
		tb.lane_hits++;
		return tb_submit(r, stream);
	}
	if (kind == GS_REC_KERNEL && gs_engine_cold(stream, tb.ctx, sflags, key)) {
		tb.cold_hits++;
		return tb_submit(r, stream);
	}
	return gs_engine_launch(stream, tb.ctx, sflags, r, "tb_launch");
}

int tb_launch_on(uintptr_t stream, unsigned sflags, uintptr_t func, uint64_t a0, uint64_t a1)
{
	return tb_rec(stream, sflags, GS_REC_KERNEL, func, a0, a1, 0, 1);
}

int tb_launch_grid(uintptr_t stream, uintptr_t func, uint32_t grid, uint64_t a0, uint64_t a1)
{
	return tb_rec(stream, 0, GS_REC_KERNEL, func, a0, a1, 0, grid);
}

int tb_launch(uintptr_t stream, uintptr_t func, uint64_t a0, uint64_t a1)
{
	return tb_launch_on(stream, 0, func, a0, a1);
}

int tb_copy(uintptr_t stream, uint64_t dst, uint64_t src, uint64_t bytes)
{
	return tb_rec(stream, 0, GS_REC_COPY, 0, dst, src, bytes, 1);
}

int tb_mark(uintptr_t stream, uint64_t event, uint64_t which)
{
	return tb_rec(stream, 0, GS_REC_MARK, 0, event, 0, which, 0);
}

void tb_sync(uintptr_t stream, unsigned sflags)
{
	gs_engine_flush_stream(stream, tb.ctx, sflags, GS_FLUSH_SYNC, "sync");
}

void tb_elsewhere(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, fn, arg), 0);
	pthread_join(t, NULL);
}

static void *tb_flush_all_main(void *why)
{
	gs_engine_flush_all(*(const gs_flush_reason_t *)why, "another thread's call");
	return NULL;
}

void tb_flush_all_elsewhere(gs_flush_reason_t why)
{
	tb_elsewhere(tb_flush_all_main, &why);
}

typedef struct tb_query {
	uintptr_t stream;
	bool busy;
} tb_query_t;

static void *tb_query_main(void *arg)
{
	tb_query_t *q = arg;
	q->busy = gs_engine_stream_query(q->stream, tb.ctx, 0, "cuStreamQuery");
	return NULL;
}

bool tb_query_elsewhere(uintptr_t stream)
{
	tb_query_t q = {stream, false};
	tb_elsewhere(tb_query_main, &q);
	return q.busy;
}

void tb_step(uintptr_t stream, const uintptr_t *funcs, size_t n, uint64_t a1)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(tb_launch(stream, funcs[i], 1000 + i, a1), 0);
}

int tb_from_graph_in_last(size_t n)
{
	int k = 0;
	for (size_t i = tb.nexec - n; i < tb.nexec; i++)
		k += tb.exec[i].from_graph;
	return k;
}

void tb_expect_exec(const tb_exec_t *want, size_t n)
{
	cr_assert_eq(tb.nexec, n, "executed %zu records, expected %zu", tb.nexec, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert(tb.exec[i].stream == want[i].stream && tb.exec[i].func == want[i].func &&
				  tb.exec[i].a0 == want[i].a0 && tb.exec[i].a1 == want[i].a1,
			  "record %zu: got stream %lx func %lx (%llu, %llu), want stream %lx func %lx (%llu, %llu)",
			  i, (unsigned long)tb.exec[i].stream, (unsigned long)tb.exec[i].func,
			  (unsigned long long)tb.exec[i].a0, (unsigned long long)tb.exec[i].a1,
			  (unsigned long)want[i].stream, (unsigned long)want[i].func,
			  (unsigned long long)want[i].a0, (unsigned long long)want[i].a1);
	}
}

void tb_check(void)
{
	gs_engine_flush_all(GS_FLUSH_SYNC, "tb_check");
	cr_assert_eq(gs_stats.order_errors, 0, "records submitted out of their stream's order or twice");
	cr_assert_eq(tb.nexec, tb.nissued, "executed %zu records, issued %zu", tb.nexec, tb.nissued);
	uintptr_t streams[16];
	size_t ns = 0;
	for (size_t i = 0; i < tb.nissued; i++) {
		size_t k = 0;
		while (k < ns && streams[k] != tb.issued[i].stream)
			k++;
		if (k == ns) {
			cr_assert_lt(ns, 16);
			streams[ns++] = tb.issued[i].stream;
		}
	}
	/*
	 * Per stream, the executed launches are the issued ones, in order.  A
	 * mark may run later (a record) or earlier (a wait) than issued, as an
	 * absorbed one does (gs_replay.c), but never on the wrong side of the
	 * launches around it: a record after every launch issued before it, a
	 * wait before every launch issued after it.
	 */
	for (size_t si = 0; si < ns; si++) {
		uintptr_t st = streams[si];
		size_t ki = 0, k = 0, marks_in = 0, marks_out = 0;
		for (size_t j = 0; j < tb.nexec; j++) {
			if (tb.exec[j].stream != st || tb.exec[j].func == TB_MARK)
				continue;
			while (ki < tb.nissued && (tb.issued[ki].stream != st || tb.issued[ki].func == TB_MARK))
				ki++;
			cr_assert_lt(ki, tb.nissued, "stream %lx ran more than was issued", (unsigned long)st);
			const tb_exec_t *a = &tb.exec[j], *b = &tb.issued[ki];
			cr_assert(a->func == b->func && a->a0 == b->a0 && a->a1 == b->a1 &&
					  a->grid == b->grid,
				  "stream %lx record %zu: ran func %lx grid %u (%llu, %llu), issued func %lx grid %u (%llu, %llu)",
				  (unsigned long)st, k, (unsigned long)a->func, a->grid, (unsigned long long)a->a0,
				  (unsigned long long)a->a1, (unsigned long)b->func, b->grid,
				  (unsigned long long)b->a0, (unsigned long long)b->a1);
			k++;
			ki++;
		}
		/* Each issued mark: launches of its stream issued before it (p) run,
		 * for a record, before it; for a wait, none issued after it does. */
		size_t p = 0;
		for (size_t i = 0; i < tb.nissued; i++) {
			const tb_exec_t *m = &tb.issued[i];
			if (m->stream != st)
				continue;
			if (m->func != TB_MARK) {
				p++;
				continue;
			}
			marks_in++;
			bool record = m->a1 != 2;
			/* the n-th run of this mark (same event, same kind) matches the n-th issue */
			size_t nth = 0;
			for (size_t i2 = 0; i2 < i; i2++)
				nth += tb.issued[i2].stream == st && tb.issued[i2].func == TB_MARK &&
				       tb.issued[i2].a0 == m->a0 && tb.issued[i2].a1 == m->a1;
			size_t launches = 0, seen = 0;
			bool found = false;
			for (size_t j = 0; j < tb.nexec && !found; j++) {
				const tb_exec_t *x = &tb.exec[j];
				if (x->stream != st)
					continue;
				if (x->func != TB_MARK)
					launches++;
				else if (x->a0 == m->a0 && x->a1 == m->a1 && seen++ == nth)
					found = true;
			}
			cr_assert(found, "stream %lx: mark %zu (event %llu) never ran", (unsigned long)st, i,
				  (unsigned long long)m->a0);
			if (record)
				cr_assert_geq(launches, p, "stream %lx: a record ran before launches issued before it",
					      (unsigned long)st);
			else
				cr_assert_leq(launches, p, "stream %lx: a wait ran after launches issued after it",
					      (unsigned long)st);
		}
		for (size_t j = 0; j < tb.nexec; j++)
			marks_out += tb.exec[j].stream == st && tb.exec[j].func == TB_MARK;
		cr_assert_eq(marks_in, marks_out, "stream %lx: %zu marks issued, %zu ran", (unsigned long)st,
			     marks_in, marks_out);
	}
}
