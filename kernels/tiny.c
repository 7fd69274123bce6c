/*
 * tiny: a dispatch-bound step of many tiny kernels followed by a stream
 * synchronize, the shape of an iterative solver or of small-batch inference.
 * Eager by default; --explicit-graph captures one step by hand and launches
 * the graph every step, the best a graph can do for this work.  Both write
 * the same bytes to --out.
 *
 * --stages S cuts each step into S stages that all begin alike, each
 * followed by a stream synchronize, in an order drawn afresh every step
 * (stage j: two rotations, j additions, a rotation).  That is the shape of a
 * while loop whose branches are read back (JAX's NUTS, under XLA: many
 * short steps, each between two syncs, all beginning with the loop's
 * carried copies, in an order the data decides).
 *
 * --spin waits for the GPU without a CUDA call in the middle of each step:
 * after the first half of its launches, one more adds 1 to a float in
 * mapped pinned host memory, and the host spins on that float until the
 * GPU has run it (10 s at most: then it says so and exits with status 3).
 * Programs that poll memory the GPU writes do this; a tool that holds
 * launches must not make them wait forever (graphshim's idle watchdog).
 * --spin-moves is the same, but the host goes on launching 0, 3, 6, 9 or
 * 12 kernels (step mod 5, times 3) before it polls: the launches are the
 * same every step, the place where the host waits is not.
 *
 *   tiny [--kernels K] [--steps N] [--n FLOATS] [--seed S] [--out FILE]
 *        [--time] [--explicit-graph] [--stream0] [--stages S] [--spin]
 *        [--spin-moves]
 */
#include <math.h>
#include <string.h>

#include "gs_wl.h"

typedef struct tiny_cfg {
	long kernels, steps, n, seed, stages;
	const char *out;
	bool time, graph, stream0, spin, moves;
} tiny_cfg_t;

typedef struct tiny {
	tiny_cfg_t c;
	CUfunction rot, addc;
	gs_wl_pair_t xy;
	float *a, *b; /* per-kernel constants, fixed for the whole run */
	CUstream s;
	volatile float *flag; /* --spin: mapped pinned memory, and its device address */
	CUdeviceptr flag_dev;
} tiny_t;

static void tiny_usage(void)
{
	fprintf(stderr, "usage: tiny [--kernels K] [--steps N] [--n FLOATS] [--seed S]\n"
			"            [--out FILE] [--time] [--explicit-graph] [--stream0] [--stages S]\n"
			"            [--spin] [--spin-moves]\n");
	exit(1);
}

static void tiny_parse(tiny_cfg_t *c, int argc, char **argv)
{
	*c = (tiny_cfg_t){ .kernels = 256, .steps = 1000, .n = 256, .seed = 1 };
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (gs_wl_opt(argc, argv, &i, "--kernels", &v))
			c->kernels = gs_wl_arg_long("--kernels", v, 1, 1000000);
		else if (gs_wl_opt(argc, argv, &i, "--steps", &v))
			c->steps = gs_wl_arg_long("--steps", v, 1, 100000000);
		else if (gs_wl_opt(argc, argv, &i, "--n", &v))
			c->n = gs_wl_arg_long("--n", v, 1, 1 << 24);
		else if (gs_wl_opt(argc, argv, &i, "--seed", &v))
			c->seed = gs_wl_arg_long("--seed", v, 0, 0x7fffffff);
		else if (gs_wl_opt(argc, argv, &i, "--out", &v))
			c->out = v;
		else if (gs_wl_opt(argc, argv, &i, "--stages", &v))
			c->stages = gs_wl_arg_long("--stages", v, 2, 256);
		else if (strcmp(argv[i], "--time") == 0)
			c->time = true;
		else if (strcmp(argv[i], "--explicit-graph") == 0)
			c->graph = true;
		else if (strcmp(argv[i], "--stream0") == 0)
			c->stream0 = true;
		else if (strcmp(argv[i], "--spin") == 0)
			c->spin = true;
		else if (strcmp(argv[i], "--spin-moves") == 0)
			c->spin = c->moves = true;
		else
			tiny_usage();
	}
	if (c->graph && c->stream0) {
		fprintf(stderr, "tiny: --explicit-graph cannot capture the legacy stream (--stream0)\n");
		exit(1);
	}
	if (c->stages && c->graph) {
		fprintf(stderr, "tiny: --stages synchronizes inside a step: no --explicit-graph\n");
		exit(1);
	}
	if (c->spin && (c->graph || c->stages)) {
		fprintf(stderr, "tiny: --spin waits inside a plain step: no --explicit-graph, no --stages\n");
		exit(1);
	}
	if (c->stages && c->kernels < c->stages + 2) {
		fprintf(stderr, "tiny: --stages %ld needs --kernels %ld or more\n", c->stages,
			c->stages + 2);
		exit(1);
	}
}

/* Launch kernel i of the step: addc where `add`, else a rotation. */
static void tiny_launch(tiny_t *t, long i, bool add)
{
	unsigned block = 256, grid = (unsigned)((t->c.n + block - 1) / block);
	int n = (int)t->c.n;

	if (add) {
		/* Alternate the target so both buffers see constants. */
		CUdeviceptr *dst = (i & 4) ? &t->xy.x : &t->xy.y;
		void *p[] = { dst, &t->a[i], &n };
		GS_CHECK(cuLaunchKernel(t->addc, grid, 1, 1, block, 1, 1, 0, t->s, p, NULL));
	} else {
		void *p[] = { &t->xy.x, &t->xy.y, &t->a[i], &t->b[i], &n };
		GS_CHECK(cuLaunchKernel(t->rot, grid, 1, 1, block, 1, 1, 0, t->s, p, NULL));
	}
}

/*
 * Stage j of a step cut into stages: two rotations, j additions, a
 * rotation.  Any two stages agree on their first 2 + min(j, j') kernels
 * and differ in the next one.
 */
static void tiny_stage(tiny_t *t, long j)
{
	tiny_launch(t, 0, false);
	tiny_launch(t, 1, false);
	for (long m = 0; m < j; m++)
		tiny_launch(t, 2 + m, true);
	tiny_launch(t, 2 + j, false);
}

/* --spin, halfway through step `step`: the flag's kernel. */
static void tiny_flag(tiny_t *t)
{
	float one = 1.0f;
	int n = 1;
	void *p[] = { &t->flag_dev, &one, &n };
	GS_CHECK(cuLaunchKernel(t->addc, 1, 1, 1, 32, 1, 1, 0, t->s, p, NULL));
}

/* ... then, at once or (--spin-moves) a few launches later, a wait for it with no CUDA call. */
static void tiny_poll(tiny_t *t, long step)
{
	uint64_t t0 = gs_wl_now_ns();
	for (unsigned long k = 0; *t->flag < (float)(step + 1); k++) {
		if ((k & 1023) == 1023 && gs_wl_now_ns() - t0 > 10000000000ull) {
			fprintf(stderr, "tiny: --spin: step %ld's first half has not run after 10 s "
					"(launches held with no one to submit them?)\n", step);
			exit(3);
		}
	}
}

/* One step: all its launches, or its stages in this step's order. */
static void tiny_step(tiny_t *t, long step)
{
	if (!t->c.stages) {
		long half = t->c.kernels / 2, poll = half + (t->c.moves ? step % 5 * 3 : 0);
		for (long i = 0; i < t->c.kernels; i++) {
			if (t->c.spin && i == half)
				tiny_flag(t);
			if (t->c.spin && i == (poll < t->c.kernels ? poll : half))
				tiny_poll(t, step);
			tiny_launch(t, i, i % 4 == 3);
		}
		return;
	}
	long order[256];
	gs_wl_rng_t rng;
	gs_wl_rng_seed(&rng, (uint64_t)t->c.seed, 2 + (uint64_t)step);
	for (long j = 0; j < t->c.stages; j++)
		order[j] = j;
	for (long j = t->c.stages - 1; j > 0; j--) { /* Fisher-Yates */
		long k = (long)(gs_wl_rng_next(&rng) % (uint64_t)(j + 1)), x = order[j];
		order[j] = order[k];
		order[k] = x;
	}
	for (long j = 0; j < t->c.stages; j++) {
		tiny_stage(t, order[j]);
		GS_CHECK(cuStreamSynchronize(t->s));
	}
}

int main(int argc, char **argv)
{
	tiny_t t = { 0 };
	gs_wl_dev_t dev;
	CUmodule mod;
	gs_wl_rng_t rng;

	tiny_parse(&t.c, argc, argv);
	gs_wl_dev_init(&dev);
	gs_wl_module_load(&mod, "tiny");
	t.rot = gs_wl_function(mod, "k_rot");
	t.addc = gs_wl_function(mod, "k_addc");

	t.a = gs_wl_floats((size_t)t.c.kernels);
	t.b = gs_wl_floats((size_t)t.c.kernels);
	gs_wl_rng_seed(&rng, (uint64_t)t.c.seed, 1);
	for (long i = 0; i < t.c.kernels; i++) {
		if (i % 4 == 3) {
			t.a[i] = gs_wl_rng_float(&rng, 0.1f);
			t.b[i] = 0;
		} else {
			/* A rotation by a small angle: cos and sin. */
			double th = gs_wl_rng_float(&rng, 0.5f);
			t.a[i] = (float)cos(th);
			t.b[i] = (float)sin(th);
		}
	}
	gs_wl_pair_init(&t.xy, &rng, (size_t)t.c.n);

	if (t.c.spin) {
		void *h;
		GS_CHECK(cuMemHostAlloc(&h, sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP));
		t.flag = h;
		*t.flag = 0.0f;
		GS_CHECK(cuMemHostGetDevicePointer(&t.flag_dev, h, 0));
	}

	t.s = NULL;
	if (!t.c.stream0)
		GS_CHECK(cuStreamCreate(&t.s, CU_STREAM_NON_BLOCKING));

	CUgraphExec exec = NULL;
	if (t.c.graph) {
		gs_wl_capture_begin(t.s);
		tiny_step(&t, 0);
		exec = gs_wl_capture_end(t.s);
	}

	gs_wl_timer_t tm;
	gs_wl_timer_init(&tm, (size_t)t.c.steps);
	uint64_t t0 = gs_wl_now_ns();
	for (long step = 0; step < t.c.steps; step++) {
		gs_wl_timer_start(&tm);
		if (exec != NULL)
			GS_CHECK(cuGraphLaunch(exec, t.s));
		else
			tiny_step(&t, step);
		GS_CHECK(cuStreamSynchronize(t.s));
		gs_wl_timer_stop(&tm);
	}
	gs_wl_timer_wall(&tm, gs_wl_now_ns() - t0);
	if (t.c.time) {
		char label[128];
		snprintf(label, sizeof(label), "tiny mode=%s kernels=%ld stages=%ld",
			 t.c.graph ? "graph" : "eager", t.c.kernels, t.c.stages);
		gs_wl_timer_report(&tm, label);
	}

	gs_wl_pair_out(&t.xy, t.c.out);

	if (exec != NULL)
		GS_CHECK(cuGraphExecDestroy(exec));
	if (t.s != NULL)
		GS_CHECK(cuStreamDestroy(t.s));
	gs_wl_pair_free(&t.xy);
	if (t.c.spin)
		GS_CHECK(cuMemFreeHost((void *)t.flag));
	GS_CHECK(cuModuleUnload(mod));
	gs_wl_timer_free(&tm);
	free(t.a);
	free(t.b);
	return 0;
}
