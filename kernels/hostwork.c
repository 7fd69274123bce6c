/*
 * hostwork: where a graph loses.  A step is a few long kernels with host
 * work between them (the host prepares each next launch: a sampler, a
 * solver's convergence logic, a data loader), then a stream synchronize.
 * Eager, the GPU runs each kernel while the host works on the next; a
 * graph of the step can only start once its launches are all known, so
 * host and GPU take turns.  graphshim's gate should see that on the GPU's
 * clock and leave this sequence eager; GRAPHSHIM_GATE=replay shows what
 * replaying it costs.  --explicit-graph captures the step's kernels by hand
 * and launches them after the host work, the best a graph can do here.
 * Every mode writes the same bytes to --out.
 *
 *   hostwork [--kernels K] [--steps N] [--n FLOATS] [--iters I]
 *            [--host-us U] [--seed S] [--out FILE] [--time] [--explicit-graph]
 */
#include <math.h>
#include <string.h>

#include "gs_wl.h"

typedef struct hw_cfg {
	long kernels, steps, n, iters, host_us, seed;
	const char *out;
	bool time, graph;
} hw_cfg_t;

typedef struct hw {
	hw_cfg_t c;
	CUfunction spin;
	gs_wl_pair_t xy;
	float *a, *b; /* per-kernel rotation (cos, sin), fixed for the run */
	CUstream s;
	volatile uint64_t sink; /* the host work's result, so it is not optimized away */
} hw_t;

static void hw_usage(void)
{
	fprintf(stderr, "usage: hostwork [--kernels K] [--steps N] [--n FLOATS] [--iters I]\n"
			"                [--host-us U] [--seed S] [--out FILE] [--time] [--explicit-graph]\n");
	exit(1);
}

static void hw_parse(hw_cfg_t *c, int argc, char **argv)
{
	*c = (hw_cfg_t){ .kernels = 8, .steps = 200, .n = 1024, .iters = 10000, .host_us = 100,
			 .seed = 1 };
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (gs_wl_opt(argc, argv, &i, "--kernels", &v))
			c->kernels = gs_wl_arg_long("--kernels", v, 1, 100000);
		else if (gs_wl_opt(argc, argv, &i, "--steps", &v))
			c->steps = gs_wl_arg_long("--steps", v, 1, 100000000);
		else if (gs_wl_opt(argc, argv, &i, "--n", &v))
			c->n = gs_wl_arg_long("--n", v, 1, 1 << 24);
		else if (gs_wl_opt(argc, argv, &i, "--iters", &v))
			c->iters = gs_wl_arg_long("--iters", v, 0, 100000000);
		else if (gs_wl_opt(argc, argv, &i, "--host-us", &v))
			c->host_us = gs_wl_arg_long("--host-us", v, 0, 10000000);
		else if (gs_wl_opt(argc, argv, &i, "--seed", &v))
			c->seed = gs_wl_arg_long("--seed", v, 0, 0x7fffffff);
		else if (gs_wl_opt(argc, argv, &i, "--out", &v))
			c->out = v;
		else if (strcmp(argv[i], "--time") == 0)
			c->time = true;
		else if (strcmp(argv[i], "--explicit-graph") == 0)
			c->graph = true;
		else
			hw_usage();
	}
}

/* The host's share of the work: computing for host_us microseconds. */
static void hw_host_work(hw_t *t)
{
	uint64_t until = gs_wl_now_ns() + (uint64_t)t->c.host_us * 1000u, h = t->sink;
	do {
		for (int k = 0; k < 64; k++)
			h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	} while (gs_wl_now_ns() < until);
	t->sink = h;
}

static void hw_launch(hw_t *t, long i)
{
	unsigned block = 256, grid = (unsigned)((t->c.n + block - 1) / block);
	int n = (int)t->c.n, iters = (int)t->c.iters;
	void *p[] = { &t->xy.x, &t->xy.y, &t->a[i], &t->b[i], &n, &iters };
	GS_CHECK(cuLaunchKernel(t->spin, grid, 1, 1, block, 1, 1, 0, t->s, p, NULL));
}

int main(int argc, char **argv)
{
	hw_t t = { 0 };
	gs_wl_dev_t dev;
	CUmodule mod;
	gs_wl_rng_t rng;

	hw_parse(&t.c, argc, argv);
	gs_wl_dev_init(&dev);
	gs_wl_module_load(&mod, "hostwork");
	t.spin = gs_wl_function(mod, "k_spin");

	t.a = gs_wl_floats((size_t)t.c.kernels);
	t.b = gs_wl_floats((size_t)t.c.kernels);
	gs_wl_rng_seed(&rng, (uint64_t)t.c.seed, 1);
	for (long i = 0; i < t.c.kernels; i++) {
		double th = gs_wl_rng_float(&rng, 0.01f);
		t.a[i] = (float)cos(th);
		t.b[i] = (float)sin(th);
	}
	gs_wl_pair_init(&t.xy, &rng, (size_t)t.c.n);
	GS_CHECK(cuStreamCreate(&t.s, CU_STREAM_NON_BLOCKING));

	CUgraphExec exec = NULL;
	if (t.c.graph) {
		gs_wl_capture_begin(t.s);
		for (long i = 0; i < t.c.kernels; i++)
			hw_launch(&t, i);
		exec = gs_wl_capture_end(t.s);
	}

	gs_wl_timer_t tm;
	gs_wl_timer_init(&tm, (size_t)t.c.steps);
	uint64_t t0 = gs_wl_now_ns();
	for (long step = 0; step < t.c.steps; step++) {
		gs_wl_timer_start(&tm);
		for (long i = 0; i < t.c.kernels; i++) {
			if (exec == NULL)
				hw_launch(&t, i);
			hw_host_work(&t);
		}
		if (exec != NULL)
			GS_CHECK(cuGraphLaunch(exec, t.s));
		GS_CHECK(cuStreamSynchronize(t.s));
		gs_wl_timer_stop(&tm);
	}
	gs_wl_timer_wall(&tm, gs_wl_now_ns() - t0);
	if (t.c.time) {
		char label[160];
		snprintf(label, sizeof(label), "hostwork mode=%s kernels=%ld iters=%ld host_us=%ld",
			 t.c.graph ? "graph" : "eager", t.c.kernels, t.c.iters, t.c.host_us);
		gs_wl_timer_report(&tm, label);
	}

	gs_wl_pair_out(&t.xy, t.c.out);

	if (exec != NULL)
		GS_CHECK(cuGraphExecDestroy(exec));
	GS_CHECK(cuStreamDestroy(t.s));
	gs_wl_pair_free(&t.xy);
	GS_CHECK(cuModuleUnload(mod));
	gs_wl_timer_free(&tm);
	free(t.a);
	free(t.b);
	return 0;
}
