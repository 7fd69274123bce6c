/*
 * Shared by the C/CUDA programs of the real-program suite (cublas_bias.cu,
 * launch_ex.cu): error checks that name the failing call, the common
 * command-line options, the timed steps (eager or one captured graph) and
 * the --out file.  The programs are
 * CUDA C++ (nvcc); this header is included by them only.
 */
#ifndef GS_REAL_COMMON_H
#define GS_REAL_COMMON_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every runtime call is checked: the call, where, the error's name, exit 2. */
#define RC_CHECK(call)                                                              \
	do {                                                                        \
		cudaError_t rc_e_ = (call);                                         \
		if (rc_e_ != cudaSuccess) {                                         \
			fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__,    \
				__LINE__, #call, cudaGetErrorName(rc_e_),           \
				cudaGetErrorString(rc_e_));                         \
			exit(2);                                                    \
		}                                                                   \
	} while (0)

/* The options every program of the suite takes. */
struct real_opts {
	int steps, warmup, graph, time;
	unsigned long long seed;
	const char *out;
};

static inline void real_opts_init(struct real_opts *o, int steps, int warmup)
{
	memset(o, 0, sizeof(*o));
	o->steps = steps;
	o->warmup = warmup;
	o->seed = 1;
}

static inline int real_int_arg(const char *name, const char *v, int lo)
{
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || *end || x < lo || x > 1000000000L) {
		fprintf(stderr, "%s needs an integer >= %d\n", name, lo);
		exit(1);
	}
	return (int)x;
}

/*
 * Parse one common option at argv[*i]; true when it was one.  Both
 * --steps and --tokens are accepted, as for the Python programs.
 */
static inline int real_common_arg(struct real_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	if (!strcmp(a, "--steps") || !strcmp(a, "--tokens")) {
		o->steps = real_int_arg(a, v, 1);
		++*i;
	} else if (!strcmp(a, "--warmup")) {
		o->warmup = real_int_arg(a, v, 0);
		++*i;
	} else if (!strcmp(a, "--seed")) {
		o->seed = (unsigned long long)real_int_arg(a, v, 0);
		++*i;
	} else if (!strcmp(a, "--out")) {
		if (!v) {
			fprintf(stderr, "--out needs a file name\n");
			exit(1);
		}
		o->out = v;
		++*i;
	} else if (!strcmp(a, "--time")) {
		o->time = 1;
	} else if (!strcmp(a, "--graph")) {
		o->graph = 1;
	} else {
		return 0;
	}
	return 1;
}

static inline double real_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int real_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median and mean of n step times (sorts them). */
static inline void real_stats(double *t, int n, double *median, double *mean)
{
	double s = 0;
	qsort(t, (size_t)n, sizeof(*t), real_cmp_double);
	for (int i = 0; i < n; i++)
		s += t[i];
	*median = n ? (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) : 0;
	*mean = n ? s / n : 0;
}

/* The --out file: every byte read back, appended step by step. */
static inline FILE *real_out_open(const char *path)
{
	FILE *f;
	if (!path)
		return NULL;
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

static inline void real_out_write(FILE *f, const void *p, size_t n)
{
	if (f && fwrite(p, 1, n, f) != n) {
		perror("--out");
		exit(1);
	}
}

static inline void real_out_close(FILE *f)
{
	if (f && fclose(f)) {
		perror("--out");
		exit(1);
	}
}

/* calloc that ends the program when memory is out. */
static inline void *real_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/* What one step issues on its stream (the program's own state in ctx). */
typedef void (*real_issue_fn)(void *ctx);

/*
 * The steps, timed: --warmup untimed, then --steps, each issued (with
 * --graph: one step captured once and launched) and synchronized, the
 * n bytes at host read back into --out after every step.  Returns the
 * step times in microseconds (free them) and, with --graph, the graph in
 * *exec for the caller to destroy.
 */
static inline double *real_run_steps(const struct real_opts *o, cudaStream_t s,
				     real_issue_fn issue, void *ctx, FILE *out,
				     const void *host, size_t n, cudaGraphExec_t *exec)
{
	*exec = NULL;
	if (o->graph) {
		cudaGraph_t g;
		RC_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
		issue(ctx);
		RC_CHECK(cudaStreamEndCapture(s, &g));
		RC_CHECK(cudaGraphInstantiate(exec, g, 0));
		RC_CHECK(cudaGraphDestroy(g));
	}
	double *t = (double *)real_calloc((size_t)o->steps, sizeof(double));
	for (int i = 0; i < o->warmup + o->steps; i++) {
		double t0 = real_now_us();
		if (*exec)
			RC_CHECK(cudaGraphLaunch(*exec, s));
		else
			issue(ctx);
		RC_CHECK(cudaStreamSynchronize(s));
		if (i >= o->warmup)
			t[i - o->warmup] = real_now_us() - t0;
		real_out_write(out, host, n);
	}
	return t;
}

/* A reproducible value in [-1, 1) from a seed and an index (splitmix64). */
__host__ __device__ static inline float real_hash_unit(unsigned long long seed, unsigned long long i)
{
	unsigned long long z = seed * 0x9e3779b97f4a7c15ULL + i + 0x632be59bd9b4e019ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (float)((z >> 40) * (1.0 / 8388608.0)) - 1.0f;
}

#endif
