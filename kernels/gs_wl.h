/*
 * What every workload's host program shares: device set-up, module loading
 * from $GS_KERNEL_DIR, deterministic data from a seed, the step timer and its
 * median report, and the --out file that holds every output byte for a
 * byte-for-byte comparison between runs.
 */
#ifndef GS_WL_H
#define GS_WL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gs_gpu.h"

/* The device and context every workload runs on (device 0). */
typedef struct gs_wl_dev {
	CUdevice dev;
	CUcontext ctx;
} gs_wl_dev_t;

void gs_wl_dev_init(gs_wl_dev_t *d);
/* Make the workload's context current on the calling (extra) thread. */
void gs_wl_dev_attach(const gs_wl_dev_t *d);

/*
 * Load "$GS_KERNEL_DIR/<name>.cubin" (the directory defaults to the build
 * directory baked in at compile time).  The CPU simulator turns the same
 * path into "<name>.sim.so".
 */
void gs_wl_module_load(CUmodule *mod, const char *name);
CUfunction gs_wl_function(CUmodule mod, const char *name);

/* Device allocation, failing loudly. */
CUdeviceptr gs_wl_alloc(size_t bytes);

/* Deterministic pseudo-random numbers (splitmix64), independent of libc. */
typedef struct gs_wl_rng {
	uint64_t s;
} gs_wl_rng_t;

void gs_wl_rng_seed(gs_wl_rng_t *r, uint64_t seed, uint64_t stream);
uint64_t gs_wl_rng_next(gs_wl_rng_t *r);
/* Uniform in [-scale, scale). */
float gs_wl_rng_float(gs_wl_rng_t *r, float scale);
void gs_wl_rng_fill(gs_wl_rng_t *r, float *x, size_t n, float scale);

/* Step times, in nanoseconds of host wall clock. */
typedef struct gs_wl_timer {
	uint64_t *ns;
	size_t n, cap;
	uint64_t t0;
	uint64_t wall_ns; /* the whole loop, final sync included (0: unset) */
} gs_wl_timer_t;

uint64_t gs_wl_now_ns(void);
void gs_wl_timer_init(gs_wl_timer_t *t, size_t cap);
void gs_wl_timer_start(gs_wl_timer_t *t);
void gs_wl_timer_stop(gs_wl_timer_t *t);
/* Record a time measured some other way. */
void gs_wl_timer_add(gs_wl_timer_t *t, uint64_t ns);
/* Record the whole loop's wall time, reported as mean_us. */
void gs_wl_timer_wall(gs_wl_timer_t *t, uint64_t ns);
/*
 * Print "gs-wl: <label> steps=N median_us=... p10_us=... p90_us=...
 * mean_us=..." (mean_us: loop wall time over steps, when recorded).
 */
void gs_wl_timer_report(gs_wl_timer_t *t, const char *label);
/* The median step time in ns (0 with no step); sorts the times. */
double gs_wl_timer_median_ns(gs_wl_timer_t *t);
void gs_wl_timer_free(gs_wl_timer_t *t);

/* The --out file (NULL path: outputs are dropped). */
typedef struct gs_wl_out {
	FILE *f;
} gs_wl_out_t;

void gs_wl_out_open(gs_wl_out_t *o, const char *path);
void gs_wl_out_write(gs_wl_out_t *o, const void *p, size_t n);
/* Copy a device buffer back (after a full sync) and write it. */
void gs_wl_out_device(gs_wl_out_t *o, CUdeviceptr p, size_t n);
void gs_wl_out_close(gs_wl_out_t *o);

/* n floats of host memory, or exit 2 with a message. */
float *gs_wl_floats(size_t n);

/* Two device buffers of n floats (tiny, hostwork): x and y. */
typedef struct gs_wl_pair {
	CUdeviceptr x, y;
	size_t bytes;
} gs_wl_pair_t;

/* Allocate both and fill x, then y, uniform in [-1, 1) from rng. */
void gs_wl_pair_init(gs_wl_pair_t *p, gs_wl_rng_t *rng, size_t n);
/* Write x then y to the --out file (NULL: dropped). */
void gs_wl_pair_out(const gs_wl_pair_t *p, const char *path);
void gs_wl_pair_free(gs_wl_pair_t *p);

/*
 * The explicit graph of one step (--explicit-graph): begin capturing s,
 * issue the step's work on it, then end the capture, which returns the
 * graph instantiated (the captured graph itself is destroyed).
 */
void gs_wl_capture_begin(CUstream s);
CUgraphExec gs_wl_capture_end(CUstream s);

/* Option parsing helpers: exit 1 with a message on a bad value. */
long gs_wl_arg_long(const char *opt, const char *val, long min, long max);
/* True when argv[*i] is opt; advances *i past its value into *val. */
bool gs_wl_opt(int argc, char **argv, int *i, const char *opt, const char **val);

#endif /* GS_WL_H */
