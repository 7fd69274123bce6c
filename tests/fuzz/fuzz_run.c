/*
 * The differential fuzzer's runner: generates programs from seeds
 * (fuzz_gen.c) and runs them on the CUDA driver API -- in CI the CPU
 * simulator, plainly or with graphshim preloaded -- writing one 64-bit
 * digest per program: every value the host reads back and the final
 * contents of every buffer.  fuzz.sh runs it twice over the same seeds and
 * compares.  With --shrink it is the shrinker instead: it reruns itself in
 * both modes on one seed with primary operations masked out (delta
 * debugging) and prints the smallest program that still diverges and the
 * first value that differs.
 *
 *   fuzz_run [-v] [-s] [-m MASK] [--pre N] FIRST [COUNT]   run seeds
 *   fuzz_run -p [-m MASK] SEED                            print a program
 *   fuzz_run --shrink [--pre N] [--tries N] SEED          shrink (FUZZ_SHIM=libgraphshim.so)
 *
 * MASK lists disabled primary operations: "3,7-12".  --pre N runs the N
 * seeds before the first one silently, for divergences that need the state
 * an earlier program left in graphshim.
 */
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_abi.h"
#include "fuzz_api.h"
#include "fuzz_gen.h"

#ifndef GS_FUZZ_KERN
#define GS_FUZZ_KERN "tests/fuzz/fuzzkern.cubin"
#endif

extern char **environ;

/* ---- entry points reached through cuGetProcAddress ---- */
typedef struct fz_procs {
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CUresult (*memcpy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*dtod_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*set8_async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*set16_async)(CUdeviceptr, unsigned short, size_t, CUstream);
	CUresult (*set32_async)(CUdeviceptr, unsigned int, size_t, CUstream);
	CUresult (*ev_record)(CUevent, CUstream);
	CUresult (*wait_event)(CUstream, CUevent, unsigned);
	CUresult (*ssync)(CUstream);
	CUresult (*hostfn)(CUstream, CUhostFn, void *);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*memcpy)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*set8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*set16)(CUdeviceptr, unsigned short, size_t);
	CUresult (*set32)(CUdeviceptr, unsigned int, size_t);
} fz_procs_t;

/* [0]: default lookups (legacy stream semantics), [1]: per-thread. */
static fz_procs_t fz_tab[2];

#if !FZ_FLAVOUR_HIP
static int fz_procs_load(fz_procs_t *t, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult q;
	int bad = 0;
#define FZ_P(field, name)                                                            \
	if (cuGetProcAddress(name, (void **)&t->field, 12000, flags, &q) || !t->field) \
		bad++;
	FZ_P(launch, "cuLaunchKernel")
	FZ_P(memcpy_async, "cuMemcpyAsync")
	FZ_P(htod_async, "cuMemcpyHtoDAsync")
	FZ_P(dtoh_async, "cuMemcpyDtoHAsync")
	FZ_P(dtod_async, "cuMemcpyDtoDAsync")
	FZ_P(set8_async, "cuMemsetD8Async")
	FZ_P(set16_async, "cuMemsetD16Async")
	FZ_P(set32_async, "cuMemsetD32Async")
	FZ_P(ev_record, "cuEventRecord")
	FZ_P(wait_event, "cuStreamWaitEvent")
	FZ_P(ssync, "cuStreamSynchronize")
	FZ_P(hostfn, "cuLaunchHostFunc")
	FZ_P(htod, "cuMemcpyHtoD")
	FZ_P(dtoh, "cuMemcpyDtoH")
	FZ_P(dtod, "cuMemcpyDtoD")
	FZ_P(memcpy, "cuMemcpy")
	FZ_P(set8, "cuMemsetD8")
	FZ_P(set16, "cuMemsetD16")
	FZ_P(set32, "cuMemsetD32")
#undef FZ_P
	return bad;
}
#endif

/* ---- coverage counters (both threads) ---- */
static unsigned long long cov_kind[FZ_NKINDS], cov_form[FZ_NFORMS], cov_copy[FZ_NCOPY];
static unsigned long long cov_captured;
static unsigned long long cov_proc, cov_fix, cov_errors;
#define COV(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)

/* ---- one program's state ---- */
typedef struct fz_hostarg {
	uint32_t *slot;
	const uint32_t *src;
	uint32_t val;
} fz_hostarg_t;

typedef struct fz_thr {
	const fz_prog_t *prog;
	int t;
	CUcontext ctx;
	CUstream s[FZ_NS];
	CUdeviceptr dev[FZ_NDEV];
	bool pooled[FZ_NDEV]; /* dev[b] came from the stream-ordered pool (AREALLOC) */
	uint32_t *hb[FZ_NBUF]; /* host buffers (pinned, pageable, slots) */
	uint32_t *slots;
	CUevent ev[FZ_NEV + FZ_NFEV];
	CUevent pev; /* programmatic launch events record it; nothing waits on it */
	CUdeviceptr scratch, sfree;
	uint32_t shost[4];
	uint32_t *flag; /* FUZZ_MWAIT: pinned, written by a kernel the host then polls */
	bool poll_only; /* FUZZ_MWAIT: a spin polls the flag alone, no stream query after it */
	fz_hostarg_t *args;
	uint64_t dig;
	FILE *vout; /* verbose lines, or NULL */
	char *vbuf;
	size_t vlen;
	const struct fz_thr *peer; /* the other thread (its streams: monitor_poll) */
} fz_thr_t;

static CUfunction fz_fn[FZ_NKERN_ALL];
#if !FZ_FLAVOUR_HIP
static CUkernel fz_kn[FZ_NKERN_ALL];
#endif
static const char *const fz_kern_sym[FZ_NKERN_ALL] = { "axpb", "mix", "add_scalar", "structk",
							 "sub_scalar" };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * FUZZ_MWAIT=1: before a spin on a stream, a kernel on it bumps the
 * thread's pinned flag and the host polls the flag with no call, as
 * programs that poll memory their GPU writes do.  A launch graphshim holds
 * there reaches the GPU only by its idle watchdog: 10 s without the flag
 * moving is a hang, and the run fails.  The flag is in no digest.  In half
 * the programs (by seed; all of them with FUZZ_MWAIT=2) the poll is the
 * whole spin: the kernel comes after everything before it on the stream,
 * so the flag orders the host as a query would, and the program goes on
 * with no call there, at the same place every pass of a loop (where
 * graphshim learns to end a chunk, gs_arm_waited).
 */
static CUresult mem_wait(fz_thr_t *th, CUstream h)
{
	uint32_t before = __atomic_load_n(th->flag, __ATOMIC_ACQUIRE), one = 1, n = 1;
	CUdeviceptr d = (CUdeviceptr)(uintptr_t)th->flag;
	void *p[] = { &d, &one, &n };
	CUresult r = cuLaunchKernel(fz_fn[FZ_KN_ADD], 1, 1, 1, 1, 1, 1, 0, h, p, NULL);
	if (r != CUDA_SUCCESS)
		return r;
	double t0 = now_s();
	for (unsigned long k = 0; __atomic_load_n(th->flag, __ATOMIC_ACQUIRE) == before; k++) {
		if ((k & 1023) != 1023)
			continue;
		if (now_s() - t0 > 10.0) {
			fprintf(stderr, "fuzz_run: seed %llu thread %d: a kernel the host polls for has not "
				"run after 10 s (held with no one to submit it?)\n",
				(unsigned long long)th->prog->seed, th->t);
			exit(4);
		}
		sched_yield();
	}
	return CUDA_SUCCESS;
}

static void fold(fz_thr_t *th, uint64_t v)
{
	th->dig = (th->dig ^ v) * 0x100000001b3ULL;
	th->dig ^= th->dig >> 29;
}

static void fold_words(fz_thr_t *th, int at, const char *what, const uint32_t *p, int n)
{
	fold(th, 0x1000000u + (uint64_t)at);
	for (int i = 0; i < n; i++)
		fold(th, p[i]);
	if (th->vout) {
		fprintf(th->vout, "t%d %5d = %s:", th->t, at, what);
		for (int i = 0; i < n; i++)
			fprintf(th->vout, " %08x", p[i]);
		fputc('\n', th->vout);
	}
}

static void check(fz_thr_t *th, int at, const char *what, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return;
	COV(cov_errors);
	fold(th, 0xe000000u + (uint64_t)r);
	if (th->vout)
		fprintf(th->vout, "t%d %5d ! %s -> %d\n", th->t, at, what, (int)r);
}

static CUdeviceptr bufptr(const fz_thr_t *th, int b)
{
	return b < FZ_B_PIN ? th->dev[b] : (CUdeviceptr)(uintptr_t)th->hb[b];
}

/* The stream handle of op; per_thread: called through a per-thread entry
 * point, where 0 names the per-thread stream. */
static CUstream handle(const fz_thr_t *th, const fz_op_t *op, bool per_thread)
{
	if (op->st == FZ_S_L)
		return op->alt || per_thread ? CU_STREAM_LEGACY : 0;
	if (op->st == FZ_S_P)
		return per_thread ? 0 : CU_STREAM_PER_THREAD;
	return th->s[op->st];
}

static void fz_hostfn(void *p)
{
	fz_hostarg_t *a = p;
	uint32_t v = a->val;
	if (a->src)
		for (int i = 0; i < FZ_N; i++)
			v = v * 31u + a->src[i];
	*a->slot = v;
}

/*
 * One launch of the plain form in 32 (by its own random word), on a
 * non-blocking stream of the thread's own, is captured into a graph of the
 * program's own and that graph launched, as a program that captures a step
 * itself does: the same work at the same place in its stream, with
 * graphshim suspended around the capture in the whole process while the
 * other thread goes on (relaxed mode; a stream of the thread's own and
 * non-blocking, so no other thread's work and no legacy-stream call can
 * fall into the capture).  The programs and the legalizer do not change.
 * A capture whose beginning submitted nothing graphshim held failed
 * within 6,000 programs (the other thread's launches, passed straight to
 * the driver meanwhile, overtook its held ones).
 */
static bool fz_captured(const fz_thr_t *th, const fz_op_t *op)
{
	return op->form == FZ_F_PARAMS && op->st >= FZ_S_OWN && th->prog->nb[th->t][op->st] &&
	       ((uint32_t)op->v[3] >> 27) == 0;
}

static CUresult launch_captured(CUfunction f, unsigned grid, unsigned block, unsigned shm,
				CUstream h, void **params)
{
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	COV(cov_captured);
	CUresult r = cuStreamBeginCapture(h, CU_STREAM_CAPTURE_MODE_RELAXED);
	if (r)
		return r;
	CUresult lr = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shm, h, params, NULL);
	usleep(20); /* the other thread's calls may fall inside the capture */
	r = cuStreamEndCapture(h, &g);
	r = r ? r : lr;
	if (!r)
		r = cuGraphInstantiate(&x, g, 0);
	if (!r)
		r = cuGraphLaunch(x, h);
	if (x) {
		CUresult d = cuGraphExecDestroy(x); /* in flight: freed once it has run */
		r = r ? r : d;
	}
	if (g) {
		CUresult d = cuGraphDestroy(g);
		r = r ? r : d;
	}
	return r;
}

static CUresult do_launch(fz_thr_t *th, const fz_op_t *op)
{
	CUdeviceptr p[3] = { 0, 0, 0 };
	for (int i = 0; i < 3; i++)
		if (op->b[i] >= 0)
			p[i] = bufptr(th, op->b[i]) + (CUdeviceptr)op->v[0] * 4;
	unsigned n = (unsigned)op->v[1];
	uint32_t a = (uint32_t)op->v[2], b = (uint32_t)op->v[3];
	unsigned char tag = (unsigned char)a;
	fz_kstruct_t ks;
	memset(&ks, 0, sizeof(ks));
	ks.a = (int32_t)b;
	ks.b = (int64_t)a * 1000003;
	ks.c = (int16_t)(b >> 7);
	void *params[5];
	unsigned char packed[168];
	size_t psize;
	memset(packed, 0, sizeof(packed));
	switch (op->sub) {
	case FZ_KN_AXPB:
		params[0] = &p[0], params[1] = &p[1], params[2] = &a, params[3] = &b, params[4] = &n;
		memcpy(packed, &p[0], 8), memcpy(packed + 8, &p[1], 8), memcpy(packed + 16, &a, 4);
		memcpy(packed + 20, &b, 4), memcpy(packed + 24, &n, 4);
		psize = 28;
		break;
	case FZ_KN_MIX:
		params[0] = &p[0], params[1] = &p[1], params[2] = &p[2], params[3] = &n;
		memcpy(packed, &p[0], 8), memcpy(packed + 8, &p[1], 8), memcpy(packed + 16, &p[2], 8);
		memcpy(packed + 24, &n, 4);
		psize = 28;
		break;
	case FZ_KN_ADD:
	case FZ_KN_SUB:
		params[0] = &p[0], params[1] = &a, params[2] = &n;
		memcpy(packed, &p[0], 8), memcpy(packed + 8, &a, 4), memcpy(packed + 12, &n, 4);
		psize = 16;
		break;
	default:
		params[0] = &tag, params[1] = &ks, params[2] = &p[0], params[3] = &n;
		packed[0] = tag;
		memcpy(packed + 8, &ks, sizeof(ks)), memcpy(packed + 8 + sizeof(ks), &p[0], 8);
		memcpy(packed + 16 + sizeof(ks), &n, 4);
		psize = 20 + sizeof(ks);
		break;
	}
	unsigned grid = (unsigned)op->v[4] & 0xff, shm = (unsigned)op->v[4] >> 8;
	unsigned block = (unsigned)op->v[5];
	CUfunction f = fz_fn[op->sub];
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
			  CU_LAUNCH_PARAM_END };
	COV(cov_form[op->form]);
	switch (op->form) {
	case FZ_F_EXTRA:
		return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shm, handle(th, op, false), NULL, extra);
#if !FZ_FLAVOUR_HIP
	case FZ_F_EX:
	case FZ_F_EXATTR: {
		CUlaunchAttribute attr[5];
		unsigned na = 0;
		/* Garbage in the unused bytes: only the meaningful ones may count. */
		memset(attr, 0x5c ^ (op->v[2] & 0xff), sizeof(attr));
		if (op->form == FZ_F_EXATTR && (op->ev & FZ_A_PRIORITY)) {
			attr[na].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
			attr[na++].value.priority = -(op->v[3] & 3);
		}
		if (op->form == FZ_F_EXATTR && (op->ev & FZ_A_CLUSTER)) {
			attr[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
			attr[na].value.clusterDim.x = grid; /* a cluster divides its grid */
			attr[na].value.clusterDim.y = 1;
			attr[na++].value.clusterDim.z = 1;
		}
		if (op->form == FZ_F_EXATTR && (op->ev & FZ_A_SERIAL)) {
			attr[na].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
			attr[na++].value.programmaticStreamSerializationAllowed = 1;
		}
		if (op->form == FZ_F_EXATTR && (op->ev & FZ_A_COOP)) {
			attr[na].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
			attr[na++].value.cooperative = 1;
		}
		if (op->form == FZ_F_EXATTR && (op->ev & FZ_A_EVENT)) {
			attr[na].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
			attr[na].value.programmaticEvent.event =
				(op->ev & FZ_A_OWNEV) ? th->ev[(op->ev >> FZ_A_EVSHIFT) % FZ_NEV] : th->pev;
			attr[na].value.programmaticEvent.flags = 0;
			attr[na++].value.programmaticEvent.triggerAtBlockStart = 0;
		}
		CUlaunchConfig cfg = { grid, 1, 1, block, 1, 1, shm, handle(th, op, false),
				       na ? attr : NULL, na };
		return cuLaunchKernelEx(&cfg, f, params, NULL);
	}
	case FZ_F_KERNEL:
		return cuLaunchKernel((CUfunction)fz_kn[op->sub], grid, 1, 1, block, 1, 1, shm,
				      handle(th, op, false), params, NULL);
	case FZ_F_COOP: {
		CUstream h = handle(th, op, false);
		/* More blocks than the device runs at once: refused at the call
		 * (the error goes into the digest), then made again with the
		 * grid drawn, as a program that sizes its grid on failure does
		 * (a launch that did nothing would leave the generator's order
		 * of writes and legacy-stream barriers with a hole). */
		if (!(op->v[3] & 15))
			check(th, -1, "cooperative launch too large",
			      cuLaunchCooperativeKernel(f, 1u << 20, 1, 1, block, 1, 1, shm, h, params));
		return cuLaunchCooperativeKernel(f, grid, 1, 1, block, 1, 1, shm, h, params);
	}
	case FZ_F_PROC: {
		bool pt = op->st == FZ_S_P && op->alt;
		return fz_tab[pt].launch(f, grid, 1, 1, block, 1, 1, shm, handle(th, op, pt), params,
					 NULL);
	}
#endif
	default:
		if (fz_captured(th, op))
			return launch_captured(f, grid, block, shm, handle(th, op, false), params);
		return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shm, handle(th, op, false), params,
				      NULL);
	}
}

static void do_copy(fz_thr_t *th, const fz_op_t *op, int at)
{
	CUdeviceptr dst = bufptr(th, op->b[0]) + (CUdeviceptr)op->v[0] * 4;
	CUdeviceptr src = bufptr(th, op->b[1]) + (CUdeviceptr)op->v[1] * 4;
	size_t n = (size_t)op->v[2] * 4;
	void *hdst = (void *)(uintptr_t)dst;
	const void *hsrc = (const void *)(uintptr_t)src;
	/* Synchronous copies on P go through a per-thread entry point; the
	 * proc form uses the table, the other the exported symbol. */
	bool pt = op->st == FZ_S_P;
	const fz_procs_t *tab = op->form || (op->sub >= FZ_C_NASYNC && pt) ? &fz_tab[pt] : NULL;
	CUstream h = handle(th, op, tab && pt);
	CUresult r;
	COV(cov_copy[op->sub]);
	switch (op->sub) {
	case FZ_C_HTOD:
		r = tab ? tab->htod_async(dst, hsrc, n, h) : cuMemcpyHtoDAsync(dst, hsrc, n, h);
		break;
	case FZ_C_DTOH:
		r = tab ? tab->dtoh_async(hdst, src, n, h) : cuMemcpyDtoHAsync(hdst, src, n, h);
		break;
	case FZ_C_DTOD:
		r = tab ? tab->dtod_async(dst, src, n, h) : cuMemcpyDtoDAsync(dst, src, n, h);
		break;
	case FZ_C_UNI:
		r = tab ? tab->memcpy_async(dst, src, n, h) : cuMemcpyAsync(dst, src, n, h);
		break;
	case FZ_C_HTOD_S:
		r = tab ? tab->htod(dst, hsrc, n) : cuMemcpyHtoD(dst, hsrc, n);
		break;
	case FZ_C_DTOH_S:
		r = tab ? tab->dtoh(hdst, src, n) : cuMemcpyDtoH(hdst, src, n);
		break;
	case FZ_C_DTOD_S:
		r = tab ? tab->dtod(dst, src, n) : cuMemcpyDtoD(dst, src, n);
		break;
	default:
		r = tab ? tab->memcpy(dst, src, n) : cuMemcpy(dst, src, n);
		break;
	}
	check(th, at, "copy", r);
	/* Values the host may read now: see the legalizer's model. */
	bool host_dst = op->b[0] >= FZ_B_PIN;
	bool pageable = op->b[0] >= FZ_B_PAGE;
	if (host_dst && (op->sub == FZ_C_DTOH_S || op->sub == FZ_C_UNI_S || pageable))
		fold_words(th, at, "copy", hdst, op->v[2]);
}

static void do_memset(fz_thr_t *th, const fz_op_t *op, int at)
{
	unsigned w = op->sub & 7;
	bool sync = op->sub & 8;
	CUdeviceptr dst = th->dev[op->b[0]] + (CUdeviceptr)op->v[0] * 4;
	size_t n = (size_t)op->v[1] * 4 / w;
	uint32_t v = (uint32_t)op->v[2];
	bool pt = op->st == FZ_S_P;
	const fz_procs_t *tab = op->form || (sync && pt) ? &fz_tab[pt] : NULL;
	CUstream h = handle(th, op, tab && pt);
	CUresult r;
	if (sync) {
		if (w == 1)
			r = tab ? tab->set8(dst, (unsigned char)v, n) : cuMemsetD8(dst, (unsigned char)v, n);
		else if (w == 2)
			r = tab ? tab->set16(dst, (unsigned short)v, n) : cuMemsetD16(dst, (unsigned short)v, n);
		else
			r = tab ? tab->set32(dst, v, n) : cuMemsetD32(dst, v, n);
	} else {
		if (w == 1)
			r = tab ? tab->set8_async(dst, (unsigned char)v, n, h)
				: cuMemsetD8Async(dst, (unsigned char)v, n, h);
		else if (w == 2)
			r = tab ? tab->set16_async(dst, (unsigned short)v, n, h)
				: cuMemsetD16Async(dst, (unsigned short)v, n, h);
		else
			r = tab ? tab->set32_async(dst, v, n, h) : cuMemsetD32Async(dst, v, n, h);
	}
	check(th, at, "memset", r);
}

/*
 * A monitor's look at the other thread's work: with a stream query, one in
 * two (by seed and place) also queries one of the other thread's own
 * streams, before a launch one in sixty-four does, and with a stream
 * synchronization one in eight synchronizes one
 * (a health check, a load report, a thread that waits for a worker).  What
 * they answer or wait for changes no value: no operation of the program is
 * ordered by them, so the program, its legalization and its digest are
 * what they were.  Only blocking streams: see below.  graphshim meets a
 * query or synchronization of a stream whose step another thread is
 * issuing (gs_engine_stream_query, gs_engine_outlived).  0: none; else the
 * stream's index + 1.
 */
static int monitor_poll(const fz_thr_t *th, int at, unsigned one_in)
{
	uint64_t x = fz_mix64(th->prog->seed ^ ((uint64_t)(unsigned)at << 20) ^ (uint64_t)th->t << 52);
	int s = FZ_S_OWN + (int)((x >> 32) % (FZ_NS - FZ_S_OWN));
	/* Blocking ones only: the other thread may be capturing a non-blocking
	 * stream of its own, which no other thread may query or synchronize. */
	if (x % one_in || th->prog->nb[!th->t][s])
		return 0;
	return s + 1;
}

/* The monitor's query, one time in one_in: its answer ("not ready" or done) decides nothing. */
static void peer_query(fz_thr_t *th, int at, unsigned one_in)
{
	int m = monitor_poll(th, at, one_in);
	if (m) {
		CUresult q = cuStreamQuery(th->peer->s[m - 1]);
		if (q != CUDA_ERROR_NOT_READY)
			check(th, at, "peer query", q);
	}
}

static void exec_op(fz_thr_t *th, const fz_op_t *op, int at)
{
	bool pt = op->st == FZ_S_P && op->form;
	const fz_procs_t *tab = op->form ? &fz_tab[pt] : NULL;
	CUstream h = handle(th, op, pt);
	CUresult r = CUDA_SUCCESS;
	COV(cov_kind[op->kind]);
	if (op->prim < 0)
		COV(cov_fix);
	if (op->form && op->kind != FZ_K_LAUNCH)
		COV(cov_proc);
	if (op->kind == FZ_K_LAUNCH)
		peer_query(th, at, 64);
	if (th->vout) {
		char line[256];
		fz_op_format(op, line, sizeof(line));
		fprintf(th->vout, "t%d %5d %s\n", th->t, at, line);
	}
	switch (op->kind) {
	case FZ_K_LAUNCH:
		r = do_launch(th, op);
		break;
	case FZ_K_COPY:
		do_copy(th, op, at);
		break;
	case FZ_K_MEMSET:
		do_memset(th, op, at);
		break;
	case FZ_K_HOSTFN: {
		fz_hostarg_t *a = &th->args[at];
		a->slot = th->hb[op->b[0]];
		a->src = op->b[1] >= 0 ? th->hb[op->b[1]] : NULL;
		a->val = (uint32_t)op->v[0];
		r = tab ? tab->hostfn(h, fz_hostfn, a) : cuLaunchHostFunc(h, fz_hostfn, a);
		break;
	}
	case FZ_K_EVREC: {
		CUevent ev = th->ev[op->ev];
		if (op->sub) { /* a new event in the slot; the old one destroyed after the record */
			r = cuEventCreate(&ev, op->ev % 2 ? CU_EVENT_DISABLE_TIMING : 0);
			if (r)
				break;
		}
		r = tab ? tab->ev_record(ev, h) : cuEventRecord(ev, h);
		if (op->sub) {
			CUresult d = cuEventDestroy(th->ev[op->ev]);
			th->ev[op->ev] = ev;
			r = r ? r : d;
		}
		break;
	}
	case FZ_K_EVWAIT:
		r = tab ? tab->wait_event(h, th->ev[op->ev], 0) : cuStreamWaitEvent(h, th->ev[op->ev], 0);
		break;
	case FZ_K_EVQUERY:
		r = cuEventQuery(th->ev[op->ev]);
		if (r == CUDA_ERROR_NOT_READY)
			r = CUDA_SUCCESS;
		break;
	case FZ_K_EVSYNC:
		r = cuEventSynchronize(th->ev[op->ev]);
		break;
	case FZ_K_SSYNC: {
		int m = monitor_poll(th, at, 8);
		if (m)
			check(th, at, "peer sync", cuStreamSynchronize(th->peer->s[m - 1]));
		r = tab ? tab->ssync(h) : cuStreamSynchronize(h);
		break;
	}
	case FZ_K_SQUERY:
		peer_query(th, at, 2);
		r = cuStreamQuery(h);
		if (r == CUDA_ERROR_NOT_READY)
			r = CUDA_SUCCESS;
		break;
	case FZ_K_SPIN:
		if (th->flag && ((r = mem_wait(th, h)) != CUDA_SUCCESS || th->poll_only))
			break;
		while ((r = cuStreamQuery(h)) == CUDA_ERROR_NOT_READY)
			sched_yield();
		break;
	case FZ_K_CTXSYNC:
		r = cuCtxSynchronize();
		break;
	case FZ_K_HREAD:
		fold_words(th, at, "host", th->hb[op->b[0]], op->b[0] >= FZ_B_SLOT ? 1 : FZ_N);
		break;
	case FZ_K_HWRITE:
		for (int i = 0; i < FZ_N; i++)
			th->hb[op->b[0]][i] = (uint32_t)op->v[0] + (uint32_t)i * 2654435761u;
		break;
	case FZ_K_REALLOC:
		if (op->alt) {
			/* The new block first: another address, and the old one
			 * is no allocation until a later one takes it again (a
			 * graph built from a pass before now meets it freed). */
			CUdeviceptr old = th->dev[op->b[0]];
			check(th, at, "alloc", cuMemAlloc(&th->dev[op->b[0]], FZ_N * 4));
			check(th, at, "free", cuMemFree(old));
		} else {
			check(th, at, "free", cuMemFree(th->dev[op->b[0]]));
			th->dev[op->b[0]] = 0;
			check(th, at, "alloc", cuMemAlloc(&th->dev[op->b[0]], FZ_N * 4));
		}
		r = cuMemsetD32(th->dev[op->b[0]], (unsigned)op->v[0], FZ_N);
		th->pooled[op->b[0]] = false;
		break;
	case FZ_K_AREALLOC: {
		/* In stream order on h: a pool allocator's temporary.  A block
		 * that is not the pool's goes by cuMemFree (the legalizer
		 * synchronized for it); the new one is set on h. */
		CUdeviceptr old = th->dev[op->b[0]], *d = &th->dev[op->b[0]];
		bool was = th->pooled[op->b[0]];
		if (op->alt)
			check(th, at, "alloc_async", cuMemAllocAsync(d, FZ_N * 4, h));
		check(th, at, "free_async", was ? cuMemFreeAsync(old, h) : cuMemFree(old));
		if (!op->alt)
			check(th, at, "alloc_async", cuMemAllocAsync(d, FZ_N * 4, h));
		th->pooled[op->b[0]] = true;
		r = cuMemsetD32Async(*d, (unsigned)op->v[0], FZ_N, h);
		break;
	}
	case FZ_K_NOPL:
		r = cuMemsetD32Async(th->scratch, 0, 1, op->alt ? CU_STREAM_LEGACY : 0);
		break;
	case FZ_K_SCOPY:
		r = cuMemcpyDtoH(th->shost, th->scratch, 4);
		break;
	case FZ_K_SFREE:
		check(th, at, "free", cuMemFree(th->sfree));
		th->sfree = 0;
		r = cuMemAlloc(&th->sfree, 256);
		break;
	}
	check(th, at, fz_kind_names[op->kind], r);
}

static void *exec_thread(void *arg)
{
	fz_thr_t *th = arg;
	if (th->t)
		check(th, -1, "ctx", cuCtxSetCurrent(th->ctx));
	for (int i = 0; i < th->prog->n[th->t]; i++)
		exec_op(th, &th->prog->ops[th->t][i], i);
	return NULL;
}

static uint32_t pattern(uint64_t seed, int t, int b, int i)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)t * 1000003 + (uint64_t)b * 131 + (uint64_t)i;
	z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(z ^ (z >> 29));
}

static const char *fz_kern_path(void)
{
	const char *p = getenv("FUZZ_KERN");
	return p && *p ? p : GS_FUZZ_KERN;
}

#define FZ_CHECK(call)                                                                  \
	do {                                                                            \
		CUresult r_ = (call);                                                   \
		if (r_ != CUDA_SUCCESS) {                                               \
			fprintf(stderr, "fuzz_run: %s:%d: %s -> %d\n", __FILE__, __LINE__, \
				#call, (int)r_);                                        \
			exit(2);                                                        \
		}                                                                       \
	} while (0)

/* Run one legalized program; returns its digest.  verbose: print every
 * operation and value to stdout, thread 0 first. */
static uint64_t run_prog(const fz_prog_t *lp, bool verbose)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
#if !FZ_FLAVOUR_HIP
	CUlibrary lib;
#endif
	CUstream shared;
	fz_thr_t th[2];
	FZ_CHECK(cuDeviceGet(&dev, 0));
	FZ_CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
	FZ_CHECK(cuModuleLoad(&mod, fz_kern_path()));
#if !FZ_FLAVOUR_HIP
	FZ_CHECK(cuLibraryLoadFromFile(&lib, fz_kern_path(), NULL, NULL, 0, NULL, NULL, 0));
#endif
	for (int k = 0; k < FZ_NKERN_ALL; k++) {
		FZ_CHECK(cuModuleGetFunction(&fz_fn[k], mod, fz_kern_sym[k]));
#if !FZ_FLAVOUR_HIP
		FZ_CHECK(cuLibraryGetKernel(&fz_kn[k], lib, fz_kern_sym[k]));
#endif
	}
	FZ_CHECK(cuStreamCreate(&shared, lp->nb[0][FZ_S_SH] ? CU_STREAM_NON_BLOCKING : 0));
	memset(th, 0, sizeof(th));
	for (int t = 0; t < 2; t++) {
		fz_thr_t *h = &th[t];
		h->prog = lp;
		h->t = t;
		h->ctx = ctx;
		h->dig = 0xcbf29ce484222325ULL + (uint64_t)t;
		h->s[FZ_S_SH] = shared;
		for (int s = FZ_S_OWN; s < FZ_NS; s++)
			FZ_CHECK(cuStreamCreate(&h->s[s], lp->nb[t][s] ? CU_STREAM_NON_BLOCKING : 0));
		for (int b = 0; b < FZ_NDEV; b++)
			FZ_CHECK(cuMemAlloc(&h->dev[b], FZ_N * 4));
		for (int b = FZ_B_PIN; b < FZ_B_PAGE; b++)
			FZ_CHECK(cuMemAllocHost((void **)&h->hb[b], FZ_N * 4));
		for (int b = FZ_B_PAGE; b < FZ_B_SLOT; b++)
			if (!(h->hb[b] = malloc(FZ_N * 4)))
				exit(2);
		if (!(h->slots = calloc(FZ_NSLOT, 4)))
			exit(2);
		for (int b = FZ_B_SLOT; b < FZ_NBUF; b++)
			h->hb[b] = &h->slots[b - FZ_B_SLOT];
		for (int b = FZ_B_PIN; b < FZ_B_SLOT; b++)
			for (int i = 0; i < FZ_N; i++)
				h->hb[b][i] = pattern(lp->seed, t, b, i);
		for (int e = 0; e < FZ_NEV + FZ_NFEV; e++)
			FZ_CHECK(cuEventCreate(&h->ev[e], e % 2 ? CU_EVENT_DISABLE_TIMING : 0));
#if !FZ_FLAVOUR_HIP
		FZ_CHECK(cuEventCreate(&h->pev, CU_EVENT_DISABLE_TIMING));
#endif
		FZ_CHECK(cuMemAlloc(&h->scratch, 256));
		FZ_CHECK(cuMemAlloc(&h->sfree, 256));
		const char *mw = getenv("FUZZ_MWAIT");
		if (mw && (*mw == '1' || *mw == '2')) {
			FZ_CHECK(cuMemAllocHost((void **)&h->flag, 4));
			*h->flag = 0;
			h->poll_only = *mw == '2' || (lp->seed * 0x9e3779b97f4a7c15ULL) >> 63;
		}
		if (!(h->args = calloc((size_t)lp->n[t] + 1, sizeof(*h->args))))
			exit(2);
		if (verbose && !(h->vout = open_memstream(&h->vbuf, &h->vlen)))
			exit(2);
	}
	th[0].peer = &th[1];
	th[1].peer = &th[0];
	pthread_t other;
	if (pthread_create(&other, NULL, exec_thread, &th[1]))
		exit(2);
	exec_thread(&th[0]);
	pthread_join(other, NULL);
	FZ_CHECK(cuCtxSynchronize());
	uint32_t tmp[FZ_N];
	for (int t = 0; t < 2; t++) {
		fz_thr_t *h = &th[t];
		for (int b = 0; b < FZ_NDEV; b++) {
			FZ_CHECK(cuMemcpyDtoH(tmp, h->dev[b], FZ_N * 4));
			fold_words(h, 100000 + b, "final", tmp, FZ_N);
		}
		for (int b = FZ_B_PIN; b < FZ_B_SLOT; b++)
			fold_words(h, 100000 + b, "final", h->hb[b], FZ_N);
		fold_words(h, 100000 + FZ_B_SLOT, "final", h->slots, FZ_NSLOT);
	}
	for (int t = 0; t < 2; t++) {
		fz_thr_t *h = &th[t];
		for (int e = 0; e < FZ_NEV + FZ_NFEV; e++)
			FZ_CHECK(cuEventDestroy(h->ev[e]));
#if !FZ_FLAVOUR_HIP
		FZ_CHECK(cuEventDestroy(h->pev));
#endif
		for (int s = FZ_S_OWN; s < FZ_NS; s++)
			FZ_CHECK(cuStreamDestroy(h->s[s]));
		for (int b = 0; b < FZ_NDEV; b++)
			FZ_CHECK(cuMemFree(h->dev[b]));
		FZ_CHECK(cuMemFree(h->scratch));
		FZ_CHECK(cuMemFree(h->sfree));
		for (int b = FZ_B_PIN; b < FZ_B_PAGE; b++)
			FZ_CHECK(cuMemFreeHost(h->hb[b]));
		for (int b = FZ_B_PAGE; b < FZ_B_SLOT; b++)
			free(h->hb[b]);
		free(h->slots);
		if (h->flag)
			FZ_CHECK(cuMemFreeHost(h->flag));
		free(h->args);
		if (h->vout) {
			fclose(h->vout);
			fwrite(h->vbuf, 1, h->vlen, stdout);
			free(h->vbuf);
		}
	}
	FZ_CHECK(cuStreamDestroy(shared));
	FZ_CHECK(cuModuleUnload(mod));
#if !FZ_FLAVOUR_HIP
	FZ_CHECK(cuLibraryUnload(lib));
#endif
	FZ_CHECK(cuCtxDestroy(ctx));
	return (th[0].dig * 0x9e3779b97f4a7c15ULL) ^ th[1].dig;
}

/* ---- masks ---- */
static uint8_t *mask_parse(const char *s, int nprim)
{
	uint8_t *m = calloc((size_t)nprim / 8 + 1, 1);
	if (!m)
		exit(2);
	while (s && *s) {
		char *e;
		long a = strtol(s, &e, 10), b = a;
		if (*e == '-')
			b = strtol(e + 1, &e, 10);
		for (long i = a; i <= b && i < nprim; i++)
			if (i >= 0)
				m[i / 8] |= (uint8_t)(1u << (i % 8));
		s = *e == ',' ? e + 1 : e;
		if (*e && *e != ',')
			break;
	}
	return m;
}

static bool masked(const uint8_t *m, int i)
{
	return m && (m[i / 8] >> (i % 8) & 1);
}

/* "3,7-12" into a malloc'd string. */
static char *mask_format(const uint8_t *m, int nprim)
{
	size_t cap = 16 + (size_t)nprim * 12, len = 0;
	char *s = malloc(cap);
	if (!s)
		exit(2);
	s[0] = 0;
	for (int i = 0; i < nprim;) {
		if (!masked(m, i)) {
			i++;
			continue;
		}
		int j = i;
		while (j + 1 < nprim && masked(m, j + 1))
			j++;
		len += (size_t)(j > i ? snprintf(s + len, cap - len, "%s%d-%d", len ? "," : "", i, j)
				      : snprintf(s + len, cap - len, "%s%d", len ? "," : "", i));
		i = j + 1;
	}
	return s;
}

static void print_prog(const fz_prog_t *lp, FILE *f)
{
	char line[256];
	for (int t = 0; t < 2; t++) {
		fprintf(f, "thread %d (streams:", t);
		for (int s = FZ_S_SH; s < FZ_NS; s++)
			fprintf(f, " %s", lp->nb[t][s] ? "nb" : "blk");
		fprintf(f, ")\n");
		for (int i = 0; i < lp->n[t]; i++) {
			fz_op_format(&lp->ops[t][i], line, sizeof(line));
			fprintf(f, "t%d %5d %s\n", t, i, line);
		}
	}
}

/* ---- the shrinker ---- */
typedef struct child_out {
	char *buf;
	size_t len;
	int status;
} child_out_t;

/* Run this program on seed (after pre silent seeds) with mask, with or
 * without graphshim; the output is collected. */
static void child_run(uint64_t seed, int pre, const char *mask, bool shim, bool verbose,
		      child_out_t *o)
{
	char seedstr[32], prestr[16];
	snprintf(seedstr, sizeof(seedstr), "%llu", (unsigned long long)seed);
	snprintf(prestr, sizeof(prestr), "%d", pre);
	char *argv[12];
	int a = 0;
	argv[a++] = "fuzz_run";
	if (verbose)
		argv[a++] = "-v";
	argv[a++] = "--pre";
	argv[a++] = prestr;
	argv[a++] = "-m";
	argv[a++] = (char *)mask;
	argv[a++] = seedstr;
	argv[a++] = NULL;
	size_t ne = 0;
	while (environ[ne])
		ne++;
	char **env = calloc(ne + 2, sizeof(char *));
	char *pre_env = NULL;
	size_t k = 0;
	for (size_t i = 0; i < ne; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "GRAPHSHIM_STATS=", 16) &&
		    strncmp(environ[i], "GRAPHSHIM_TRACE=", 16))
			env[k++] = environ[i];
	if (shim) {
		const char *lib = getenv("FUZZ_SHIM");
		if (!lib || asprintf(&pre_env, "LD_PRELOAD=%s", lib) < 0) {
			fprintf(stderr, "fuzz_run: --shrink needs FUZZ_SHIM=path/libgraphshim.so\n");
			exit(2);
		}
		env[k++] = pre_env;
	}
	env[k] = NULL;
	int fd[2];
	pid_t pid;
	posix_spawn_file_actions_t fa;
	if (pipe(fd))
		exit(2);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env)) {
		perror("fuzz_run: posix_spawn");
		exit(2);
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	FILE *f = open_memstream(&o->buf, &o->len);
	char tmp[65536];
	ssize_t r;
	while ((r = read(fd[0], tmp, sizeof(tmp))) > 0 || (r < 0 && errno == EINTR))
		if (r > 0)
			fwrite(tmp, 1, (size_t)r, f);
	fclose(f);
	close(fd[0]);
	while (waitpid(pid, &o->status, 0) < 0 && errno == EINTR)
		;
	free(env);
	free(pre_env);
}

/* The digest line of a run, "crash" on a failed child. */
static void child_result(const child_out_t *o, char *res, size_t size)
{
	const char *l = o->len ? strrchr(o->buf, ' ') : NULL;
	if (!WIFEXITED(o->status) || WEXITSTATUS(o->status))
		snprintf(res, size, "exit:%d", o->status);
	else
		snprintf(res, size, "%.*s", l ? 16 : 0, l ? l + 1 : "");
}

static int shrink_tries = 4, shrink_tests;

static bool diverges(uint64_t seed, int pre, const uint8_t *m, int nprim)
{
	char *ms = mask_format(m, nprim);
	child_out_t p = { 0 }, s = { 0 };
	char rp[64], rs[64];
	bool d = false;
	shrink_tests++;
	child_run(seed, pre, ms, false, false, &p);
	child_result(&p, rp, sizeof(rp));
	for (int i = 0; i < shrink_tries && !d; i++) {
		child_run(seed, pre, ms, true, false, &s);
		child_result(&s, rs, sizeof(rs));
		d = strcmp(rp, rs) != 0;
		free(s.buf);
		s.buf = NULL;
	}
	free(p.buf);
	free(ms);
	return d;
}

static int shrink(uint64_t seed, int pre)
{
	fz_prog_t p, lp;
	if (fz_gen(&p, seed))
		return 2;
	int n = p.nprim;
	uint8_t *m = calloc((size_t)n / 8 + 1, 1);
	if (!m)
		return 2;
	/* A divergence may depend on timing: look harder the first time. */
	int tries = shrink_tries;
	shrink_tries = 3 * tries;
	bool d = diverges(seed, pre, m, n);
	shrink_tries = tries;
	if (!d) {
		printf("fuzz: seed %llu does not diverge when run alone (pre %d)\n",
		       (unsigned long long)seed, pre);
		free(m);
		fz_prog_free(&p);
		return 1;
	}
	/* Delta debugging over the enabled primary operations: drop chunks
	 * while the program still diverges. */
	int *en = malloc(sizeof(int) * (size_t)n), ne = n, gran = 2;
	for (int i = 0; i < n; i++)
		en[i] = i;
	while (ne >= 2 && shrink_tests < 1500) {
		int chunk = (ne + gran - 1) / gran;
		bool reduced = false;
		for (int c = 0; c < ne && !reduced; c += chunk) {
			uint8_t *t = calloc((size_t)n / 8 + 1, 1);
			memcpy(t, m, (size_t)n / 8 + 1);
			for (int i = c; i < c + chunk && i < ne; i++)
				t[en[i] / 8] |= (uint8_t)(1u << (en[i] % 8));
			if (diverges(seed, pre, t, n)) {
				free(m);
				m = t;
				int k = 0;
				for (int i = 0; i < ne; i++)
					if (i < c || i >= c + chunk)
						en[k++] = en[i];
				ne = k;
				gran = gran > 2 ? gran - 1 : 2;
				reduced = true;
			} else {
				free(t);
			}
		}
		if (!reduced) {
			if (gran >= ne)
				break;
			gran = 2 * gran < ne ? 2 * gran : ne;
		}
	}
	char *ms = mask_format(m, n);
	if (fz_legalize(&p, m, &lp))
		return 2;
	printf("fuzz: seed %llu diverges; shrunk to %d of %d primary operations (%d runs)\n",
	       (unsigned long long)seed, ne, n, shrink_tests);
	printf("fuzz: reproduce with: fuzz_run -v --pre %d -m '%s' %llu (plain, then with LD_PRELOAD)\n",
	       pre, ms, (unsigned long long)seed);
	print_prog(&lp, stdout);
	/* The first value that differs. */
	child_out_t a = { 0 }, b = { 0 };
	child_run(seed, pre, ms, false, true, &a);
	for (int i = 0; i < 3; i++) {
		free(b.buf);
		b = (child_out_t){ 0 };
		child_run(seed, pre, ms, true, true, &b);
		if (a.len != b.len || memcmp(a.buf, b.buf, a.len))
			break;
	}
	char *pa = a.buf, *pb = b.buf;
	while (pa && pb && *pa && *pb) {
		char *ea = strchr(pa, '\n'), *eb = strchr(pb, '\n');
		size_t la = ea ? (size_t)(ea - pa) : strlen(pa), lb = eb ? (size_t)(eb - pb) : strlen(pb);
		if (la != lb || memcmp(pa, pb, la)) {
			printf("fuzz: first difference:\n  plain:     %.*s\n  graphshim: %.*s\n", (int)la, pa,
			       (int)lb, pb);
			break;
		}
		if (!ea || !eb)
			break;
		pa = ea + 1, pb = eb + 1;
	}
	char ra[64], rb[64];
	child_result(&a, ra, sizeof(ra));
	child_result(&b, rb, sizeof(rb));
	printf("fuzz: digests plain %s, graphshim %s\n", ra, rb);
	free(a.buf);
	free(b.buf);
	free(ms);
	free(m);
	free(en);
	fz_prog_free(&lp);
	fz_prog_free(&p);
	return 0;
}

/*
 * A fault (a wild pointer, in the runner, the simulator or graphshim) names
 * the program it came in and where, on stderr, which fuzz.sh prints: such
 * a crash was seen once in 100,000 programs and not again when rerun, so
 * the one report is what there is to go on.  Resolve graphshim's frames
 * with addr2line -f -i -e .libs/libgraphshim.so OFFSET.  backtrace() is
 * called once first (it loads libgcc then, not in the handler).
 */
static volatile uint64_t fz_current_seed;

static void fz_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	char line[160];
	int n = snprintf(line, sizeof(line), "fuzz_run: signal %d (%s) at address %p in seed %llu; backtrace:\n",
			 sig, strsignal(sig), si ? si->si_addr : NULL, (unsigned long long)fz_current_seed);
	if (n > 0 && write(2, line, (size_t)n) < 0)
		_exit(128 + sig);
	void *frames[64];
	int k = backtrace(frames, 64);
	backtrace_symbols_fd(frames, k, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fz_fault_setup(void)
{
	void *warm[1];
	backtrace(warm, 1);
	static char alt[1 << 16]; /* a stack to report a stack overflow from */
	stack_t st = { .ss_sp = alt, .ss_size = sizeof(alt) };
	sigaltstack(&st, NULL);
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fz_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* ---- main ---- */
static void usage(void)
{
	fprintf(stderr, "usage: fuzz_run [-v] [-s] [-m MASK] [--pre N] FIRST [COUNT]\n"
			"       fuzz_run -p [-m MASK] SEED\n"
			"       fuzz_run --shrink [--pre N] [--tries N] SEED   (FUZZ_SHIM=libgraphshim.so)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool verbose = false, print = false, summary = false, do_shrink = false;
	const char *mask = NULL;
	int pre = 0, i;
	fz_hip = FZ_FLAVOUR_HIP;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "-p"))
			print = true;
		else if (!strcmp(argv[i], "-s"))
			summary = true;
		else if (!strcmp(argv[i], "--shrink"))
			do_shrink = true;
		else if (!strcmp(argv[i], "-m") && i + 1 < argc)
			mask = argv[++i];
		else if (!strcmp(argv[i], "--pre") && i + 1 < argc)
			pre = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tries") && i + 1 < argc)
			shrink_tries = atoi(argv[++i]);
		else
			usage();
	}
	if (i >= argc)
		usage();
	uint64_t first = strtoull(argv[i], NULL, 0);
	uint64_t count = i + 1 < argc ? strtoull(argv[i + 1], NULL, 0) : 1;
	if (do_shrink)
		return shrink(first, pre);
	if (print) {
		fz_prog_t p, lp;
		if (fz_gen(&p, first))
			return 2;
		uint8_t *m = mask ? mask_parse(mask, p.nprim) : NULL;
		if (fz_legalize(&p, m, &lp))
			return 2;
		printf("seed %llu: %d primary operations\n", (unsigned long long)first, p.nprim);
		print_prog(&lp, stdout);
		return 0;
	}
	fz_fault_setup();
	FZ_CHECK(cuInit(0));
#if !FZ_FLAVOUR_HIP
	if (fz_procs_load(&fz_tab[0], CU_GET_PROC_ADDRESS_DEFAULT) ||
	    fz_procs_load(&fz_tab[1], CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) {
		fprintf(stderr, "fuzz_run: cuGetProcAddress failed\n");
		return 2;
	}
#endif
	double t0 = now_s();
	unsigned long long nops = 0;
	for (uint64_t k = first - (uint64_t)pre; k != first + count; k++) {
		bool quiet = k < first;
		fz_prog_t p, lp;
		if (fz_gen(&p, k))
			return 2;
		uint8_t *m = mask && !quiet ? mask_parse(mask, p.nprim) : NULL;
		if (fz_legalize(&p, m, &lp))
			return 2;
		nops += (unsigned long long)(lp.n[0] + lp.n[1]);
		fz_current_seed = k;
		if (verbose && !quiet)
			printf("seed %llu\n", (unsigned long long)k);
		uint64_t d = run_prog(&lp, verbose && !quiet);
		if (!quiet) {
			printf("%llu %016llx\n", (unsigned long long)k, (unsigned long long)d);
			fflush(stdout);
		}
		free(m);
		fz_prog_free(&lp);
		fz_prog_free(&p);
	}
	if (summary) {
		double dt = now_s() - t0;
		fprintf(stderr, "fuzz_run: %llu programs, %llu operations in %.1f s (%.0f programs/s); ",
			(unsigned long long)count, nops, dt, (double)count / dt);
		for (int k = 0; k < FZ_NKINDS; k++)
			fprintf(stderr, "%s %llu, ", fz_kind_names[k], cov_kind[k]);
		fprintf(stderr, "launch forms");
		for (int k = 0; k < FZ_NFORMS; k++)
			fprintf(stderr, " %llu", cov_form[k]);
		fprintf(stderr, ", copies");
		for (int k = 0; k < FZ_NCOPY; k++)
			fprintf(stderr, " %llu", cov_copy[k]);
		fprintf(stderr, ", captured into the program's own graphs %llu", cov_captured);
		fprintf(stderr, ", through cuGetProcAddress %llu, sync added %llu, errors %llu\n",
			cov_proc, cov_fix, cov_errors);
	}
	return 0;
}
