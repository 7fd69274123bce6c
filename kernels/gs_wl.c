/*
 * Shared host-side helpers of the workloads (see gs_wl.h).
 */
#include "gs_wl.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#ifndef GS_KERNEL_DIR_DEFAULT
#define GS_KERNEL_DIR_DEFAULT "."
#endif

void gs_wl_dev_init(gs_wl_dev_t *d)
{
	GS_CHECK(cuInit(0));
	GS_CHECK(cuDeviceGet(&d->dev, 0));
	GS_CHECK(gs_gpu_context(d->dev, &d->ctx));
}

void gs_wl_dev_attach(const gs_wl_dev_t *d)
{
	GS_CHECK(gs_gpu_make_current(d->dev, d->ctx));
}

void gs_wl_module_load(CUmodule *mod, const char *name)
{
	const char *dir = getenv("GS_KERNEL_DIR");
	char path[4096];

	if (dir == NULL || *dir == '\0')
		dir = GS_KERNEL_DIR_DEFAULT;
	snprintf(path, sizeof(path), "%s/%s%s", dir, name, GS_GPU_MODULE_EXT);
	CUresult r = cuModuleLoad(mod, path);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "cuModuleLoad(\"%s\") failed: %s (%d)\n", path,
			gs_gpu_error_name(r), (int)r);
		exit(2);
	}
}

CUfunction gs_wl_function(CUmodule mod, const char *name)
{
	CUfunction f;
	CUresult r = cuModuleGetFunction(&f, mod, name);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "cuModuleGetFunction(\"%s\") failed: %s (%d)\n",
			name, gs_gpu_error_name(r), (int)r);
		exit(2);
	}
	return f;
}

CUdeviceptr gs_wl_alloc(size_t bytes)
{
	CUdeviceptr p;
	GS_CHECK(cuMemAlloc(&p, bytes));
	return p;
}

void gs_wl_rng_seed(gs_wl_rng_t *r, uint64_t seed, uint64_t stream)
{
	r->s = seed * 0x9e3779b97f4a7c15ull + stream * 0xd1b54a32d192ed03ull + 1;
}

uint64_t gs_wl_rng_next(gs_wl_rng_t *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

float gs_wl_rng_float(gs_wl_rng_t *r, float scale)
{
	/* 24 random bits: exactly representable, the same on every machine. */
	double u = (double)(gs_wl_rng_next(r) >> 40) / (double)(1u << 24);
	return (float)((2.0 * u - 1.0) * scale);
}

void gs_wl_rng_fill(gs_wl_rng_t *r, float *x, size_t n, float scale)
{
	for (size_t i = 0; i < n; i++)
		x[i] = gs_wl_rng_float(r, scale);
}

uint64_t gs_wl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gs_wl_timer_init(gs_wl_timer_t *t, size_t cap)
{
	t->ns = calloc(cap ? cap : 1, sizeof(*t->ns));
	if (t->ns == NULL) {
		perror("calloc");
		exit(2);
	}
	t->n = 0;
	t->cap = cap;
	t->t0 = 0;
	t->wall_ns = 0;
}

void gs_wl_timer_wall(gs_wl_timer_t *t, uint64_t ns)
{
	t->wall_ns = ns;
}

void gs_wl_timer_start(gs_wl_timer_t *t)
{
	t->t0 = gs_wl_now_ns();
}

void gs_wl_timer_add(gs_wl_timer_t *t, uint64_t ns)
{
	if (t->n < t->cap)
		t->ns[t->n++] = ns;
}

void gs_wl_timer_stop(gs_wl_timer_t *t)
{
	gs_wl_timer_add(t, gs_wl_now_ns() - t->t0);
}

static int gs_wl_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

double gs_wl_timer_median_ns(gs_wl_timer_t *t)
{
	if (t->n == 0)
		return 0;
	qsort(t->ns, t->n, sizeof(*t->ns), gs_wl_cmp_u64);
	if (t->n % 2 == 0)
		return (t->ns[t->n / 2 - 1] + t->ns[t->n / 2]) / 2.0;
	return (double)t->ns[t->n / 2];
}

void gs_wl_timer_report(gs_wl_timer_t *t, const char *label)
{
	if (t->n == 0) {
		printf("gs-wl: %s steps=0\n", label);
		return;
	}
	double med = gs_wl_timer_median_ns(t) / 1e3; /* sorts t->ns */
	printf("gs-wl: %s steps=%zu median_us=%.3f p10_us=%.3f p90_us=%.3f max_us=%.3f",
	       label, t->n, med, t->ns[t->n / 10] / 1e3,
	       t->ns[(t->n * 9) / 10] / 1e3, t->ns[t->n - 1] / 1e3);
	if (t->wall_ns != 0)
		printf(" mean_us=%.3f", t->wall_ns / 1e3 / (double)t->n);
	printf("\n");
	fflush(stdout);
}

void gs_wl_timer_free(gs_wl_timer_t *t)
{
	free(t->ns);
	t->ns = NULL;
}

void gs_wl_out_open(gs_wl_out_t *o, const char *path)
{
	o->f = NULL;
	if (path == NULL)
		return;
	o->f = fopen(path, "wb");
	if (o->f == NULL) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

void gs_wl_out_write(gs_wl_out_t *o, const void *p, size_t n)
{
	if (o->f != NULL && n > 0 && fwrite(p, 1, n, o->f) != n) {
		perror("write --out");
		exit(1);
	}
}

void gs_wl_out_device(gs_wl_out_t *o, CUdeviceptr p, size_t n)
{
	if (o->f == NULL)
		return;
	void *h = malloc(n);
	if (h == NULL) {
		perror("malloc");
		exit(2);
	}
	GS_CHECK(cuMemcpyDtoH(h, p, n));
	gs_wl_out_write(o, h, n);
	free(h);
}

void gs_wl_out_close(gs_wl_out_t *o)
{
	if (o->f != NULL && fclose(o->f) != 0) {
		perror("close --out");
		exit(1);
	}
	o->f = NULL;
}

long gs_wl_arg_long(const char *opt, const char *val, long min, long max)
{
	char *end;
	errno = 0;
	long v = strtol(val, &end, 0);
	if (errno != 0 || end == val || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "%s: expected an integer in [%ld, %ld], got '%s'\n",
			opt, min, max, val);
		exit(1);
	}
	return v;
}

bool gs_wl_opt(int argc, char **argv, int *i, const char *opt, const char **val)
{
	if (strcmp(argv[*i], opt) != 0)
		return false;
	if (*i + 1 >= argc) {
		fprintf(stderr, "%s needs a value\n", opt);
		exit(1);
	}
	*val = argv[++*i];
	return true;
}

void gs_wl_pair_init(gs_wl_pair_t *p, gs_wl_rng_t *rng, size_t n)
{
	p->bytes = n * sizeof(float);
	float *h = malloc(p->bytes);
	if (h == NULL) {
		perror("malloc");
		exit(2);
	}
	p->x = gs_wl_alloc(p->bytes);
	p->y = gs_wl_alloc(p->bytes);
	gs_wl_rng_fill(rng, h, n, 1.0f);
	GS_CHECK(cuMemcpyHtoD(p->x, h, p->bytes));
	gs_wl_rng_fill(rng, h, n, 1.0f);
	GS_CHECK(cuMemcpyHtoD(p->y, h, p->bytes));
	free(h);
}

void gs_wl_pair_out(const gs_wl_pair_t *p, const char *path)
{
	gs_wl_out_t out;
	gs_wl_out_open(&out, path);
	gs_wl_out_device(&out, p->x, p->bytes);
	gs_wl_out_device(&out, p->y, p->bytes);
	gs_wl_out_close(&out);
}

void gs_wl_pair_free(gs_wl_pair_t *p)
{
	GS_CHECK(cuMemFree(p->x));
	GS_CHECK(cuMemFree(p->y));
}

void gs_wl_capture_begin(CUstream s)
{
	GS_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
}

CUgraphExec gs_wl_capture_end(CUstream s)
{
	CUgraph g;
	CUgraphExec exec;
	GS_CHECK(cuStreamEndCapture(s, &g));
	GS_CHECK(cuGraphInstantiate(&exec, g, 0));
	GS_CHECK(cuGraphDestroy(g));
	return exec;
}

float *gs_wl_floats(size_t n)
{
	float *p = malloc(n * sizeof(float));
	if (p == NULL) {
		perror("malloc");
		exit(2);
	}
	return p;
}
