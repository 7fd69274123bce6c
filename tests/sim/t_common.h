/*
 * Helpers shared by the simulator's test programs (t_*.c): a CHECK macro
 * that reports the failing call and exits 1, and setup of a context plus
 * the test kernel module.
 */
#ifndef GS_SIM_T_COMMON_H
#define GS_SIM_T_COMMON_H

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GS_SIM_TESTKERN
#define GS_SIM_TESTKERN "tests/sim/testkern.cubin"
#endif

#define CHECK(call)                                                                 \
	do {                                                                        \
		CUresult r_ = (call);                                               \
		if (r_ != CUDA_SUCCESS) {                                           \
			const char *n_ = NULL;                                      \
			cuGetErrorName(r_, &n_);                                    \
			fprintf(stderr, "FAIL %s:%d: %s -> %s (%d)\n", __FILE__,    \
				__LINE__, #call, n_ ? n_ : "?", (int)r_);           \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#define EXPECT(cond)                                                                \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "FAIL %s:%d: expected %s\n", __FILE__,      \
				__LINE__, #cond);                                   \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#define EXPECT_ERR(call, code)                                                      \
	do {                                                                        \
		CUresult r_ = (call);                                               \
		if (r_ != (code)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s -> %d, expected %s (%d)\n", \
				__FILE__, __LINE__, #call, (int)r_, #code, (int)(code)); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

static CUmodule t_mod;

/* cuInit, primary context current, test module loaded.  Fails unless the
 * simulator (not a real driver) was picked up. */
static inline CUcontext t_setup(void)
{
	CUcontext ctx;
	CUdevice dev;
	if (!dlsym(RTLD_DEFAULT, "gs_sim_is_simulator")) {
		fprintf(stderr, "FAIL: libcuda.so.1 is not the simulator\n");
		exit(1);
	}
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoad(&t_mod, GS_SIM_TESTKERN));
	return ctx;
}

static inline CUfunction t_func(const char *name)
{
	CUfunction f;
	CHECK(cuModuleGetFunction(&f, t_mod, name));
	return f;
}

/* Launch fill(ptr, v, n) with one block. */
static inline CUresult t_fill(CUstream s, CUdeviceptr p, int v, unsigned n)
{
	void *args[] = { &p, &v, &n };
	return cuLaunchKernel(t_func("fill"), 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
}

static inline CUresult t_add(CUstream s, CUdeviceptr p, int v, unsigned n)
{
	void *args[] = { &p, &v, &n };
	return cuLaunchKernel(t_func("add_scalar"), 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
}

static inline int t_read_int(CUdeviceptr p, size_t i)
{
	int v;
	CHECK(cuMemcpyDtoH(&v, p + i * sizeof(int), sizeof(int)));
	return v;
}

/* A gate: a host function enqueued with t_gate_fn blocks its stream until
 * the host opens the gate, so tests can hold work "in flight". */
typedef struct t_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int open;
	atomic_int entered;
} t_gate_t;

#define T_GATE_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 }

static inline void t_gate_fn(void *arg)
{
	t_gate_t *g = arg;
	atomic_fetch_add(&g->entered, 1);
	pthread_mutex_lock(&g->mu);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

static inline void t_gate_open(t_gate_t *g)
{
	pthread_mutex_lock(&g->mu);
	g->open = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

static inline void *t_gate_opener(void *arg)
{
	usleep(30000);
	t_gate_open(arg);
	return NULL;
}

/* Opens the gate from another thread after 30 ms; join the result. */
static inline pthread_t t_gate_open_later(t_gate_t *g)
{
	pthread_t th;
	if (pthread_create(&th, NULL, t_gate_opener, g) != 0)
		abort();
	return th;
}

static inline double t_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void t_sleep_ms(int ms)
{
	usleep((useconds_t)ms * 1000);
}

/* A host function that appends its tag to a shared log (ordering tests). */
typedef struct t_log {
	pthread_mutex_t mu;
	char buf[64];
	int n;
} t_log_t;

typedef struct t_logent {
	t_log_t *log;
	char tag;
} t_logent_t;

static inline void t_log_fn(void *arg)
{
	t_logent_t *e = arg;
	pthread_mutex_lock(&e->log->mu);
	e->log->buf[e->log->n++] = e->tag;
	pthread_mutex_unlock(&e->log->mu);
}

static inline void t_log_get(t_log_t *l, char *out)
{
	pthread_mutex_lock(&l->mu);
	memcpy(out, l->buf, (size_t)l->n);
	out[l->n] = 0;
	pthread_mutex_unlock(&l->mu);
}

#endif /* GS_SIM_T_COMMON_H */
