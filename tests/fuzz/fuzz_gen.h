/*
 * The differential fuzzer's programs: what an operation is, how a program is
 * generated from a seed (fuzz_gen.c) and made race-free (the legalizer), and
 * how it runs on the CUDA driver (fuzz_run.c).
 *
 * A program has two host threads.  Each thread has its own buffers, events
 * and streams: the legacy default stream (L), its per-thread default stream
 * (P), a stream shared by both threads (SH), and three streams of its own
 * (blocking or non-blocking, chosen per program).  The generator first draws
 * the "primary" operations from the seed; the legalizer then walks them with
 * vector clocks (what each stream's next operation and the host are known to
 * be ordered after) and inserts the events or synchronizations that make
 * every cross-stream and host access ordered, choosing among the legal ways
 * with a hash of (seed, operation), so a program with some primary
 * operations masked out (the shrinker) is legalized again consistently.
 */
#ifndef FUZZ_GEN_H
#define FUZZ_GEN_H

#include <stdbool.h>
#include <stdint.h>

/* splitmix64's finalizer: the generator's random numbers, and the runner's per-place choices. */
uint64_t fz_mix64(uint64_t z);

#define FZ_N 32 /* 32-bit words per buffer */
#define FZ_NDEV 5
#define FZ_NPIN 2
#define FZ_NPAGE 2
#define FZ_NSLOT 6
#define FZ_B_DEV 0
#define FZ_B_PIN FZ_NDEV
#define FZ_B_PAGE (FZ_B_PIN + FZ_NPIN)
#define FZ_B_SLOT (FZ_B_PAGE + FZ_NPAGE)
#define FZ_NBUF (FZ_B_SLOT + FZ_NSLOT)

/* Stream indices of a thread. */
#define FZ_S_L 0  /* legacy default stream */
#define FZ_S_P 1  /* per-thread default stream */
#define FZ_S_SH 2 /* shared by both threads */
#define FZ_S_OWN 3
#define FZ_NS 6
#define FZ_HOST 255 /* "written by the host" in the tracker */

#define FZ_NEV 3  /* events the program uses */
#define FZ_NFEV 4 /* events the legalizer uses */

#define FZ_KINDS(X)                                                              \
	X(LAUNCH) X(COPY) X(MEMSET) X(HOSTFN) X(EVREC) X(EVWAIT) X(EVQUERY)     \
	X(EVSYNC) X(SSYNC) X(SQUERY) X(SPIN) X(CTXSYNC) X(HREAD) X(HWRITE)     \
	X(REALLOC) X(NOPL) X(SCOPY) X(SFREE) X(AREALLOC)
enum {
#define FZ_X(k) FZ_K_##k,
	FZ_KINDS(FZ_X)
#undef FZ_X
	FZ_NKINDS
};

/* Kernels (op.sub of LAUNCH). */
/* Kernels drawn for a launch; sub_scalar (add_scalar's layout) only by drift. */
enum { FZ_KN_AXPB, FZ_KN_MIX, FZ_KN_ADD, FZ_KN_STRUCT, FZ_NKERN, FZ_KN_SUB = FZ_NKERN, FZ_NKERN_ALL };
/* Launch forms (op.form of LAUNCH). */
enum { FZ_F_PARAMS, FZ_F_EXTRA, FZ_F_EX, FZ_F_KERNEL, FZ_F_PROC, FZ_F_EXATTR, FZ_F_COOP, FZ_NFORMS };
/*
 * The launch attributes of an ex+attr launch (fz_op_t.ev, at least one):
 * a priority and a cluster dimension, which add_scalar folds into memory,
 * programmatic stream serialization, and a programmatic event (on an event
 * of the runner's own, never waited on), which graphshim cannot put in a
 * graph node and so passes through as a boundary.
 */
enum { FZ_A_PRIORITY = 1, FZ_A_CLUSTER = 2, FZ_A_SERIAL = 4, FZ_A_EVENT = 8, FZ_A_ALL = 15 };
/*
 * A coop launch (cuLaunchCooperativeKernel, FZ_F_COOP) or an ex+attr one
 * with FZ_A_COOP (the cooperative attribute; bit 7 of fz_op_t.ev): the
 * kernel folds whether it ran cooperatively into memory.  A coop launch
 * whose v[3] has its low four bits clear first asks for more blocks than
 * the device runs at once (the driver's error at the call, in both runs),
 * then for its own grid.
 */
enum { FZ_A_COOP = 128 };
/*
 * With FZ_A_EVENT: the launch records one of the program's own events
 * (index in bits 5-6), which marks record and wait on too, not an event
 * of its own that nothing waits on.
 */
enum { FZ_A_OWNEV = 16, FZ_A_EVSHIFT = 5 };
/* Copies (op.sub of COPY): asynchronous, then synchronous. */
enum { FZ_C_HTOD, FZ_C_DTOH, FZ_C_DTOD, FZ_C_UNI, FZ_C_NASYNC,
       FZ_C_HTOD_S = FZ_C_NASYNC, FZ_C_DTOH_S, FZ_C_DTOD_S, FZ_C_UNI_S, FZ_NCOPY };

typedef struct fz_op {
	uint8_t kind;
	uint8_t st;   /* stream index */
	uint8_t sub;  /* kernel, copy kind, memset width (1, 2, 4; +8: synchronous) */
	uint8_t form; /* launch form; for others 1: through cuGetProcAddress */
	uint8_t alt;  /* legacy stream named CU_STREAM_LEGACY instead of 0 */
	uint8_t ev;   /* event index; for an ex+attr launch, its FZ_A_* attributes */
	int8_t b[3];  /* buffers, -1: none */
	uint16_t loop, iter; /* loop number (0: none) and iteration */
	int32_t prim; /* primary index, -1 for operations the legalizer added */
	int32_t v[6]; /* scalars, by kind */
} fz_op_t;

typedef struct fz_prog {
	uint64_t seed;
	uint8_t nb[2][FZ_NS]; /* non-blocking flags per thread (FZ_S_SH the same in both) */
	fz_op_t *ops[2];
	int n[2], cap[2];
	int nprim; /* primary operations over both threads */
} fz_prog_t;

extern const char *const fz_kind_names[FZ_NKINDS];

/* Generate for the HIP flavour (set before fz_gen): no operation HIP lacks
 * (see hip_fix in fuzz_gen.c).  The CUDA flavour's programs do not change. */
extern bool fz_hip;

/* Draw the primary operations of seed.  Returns true on failure (memory). */
bool fz_gen(fz_prog_t *p, uint64_t seed);

/* The runnable program: p's primary operations not in mask (a bitmap over
 * p->nprim, NULL: none), with the synchronization they need. */
bool fz_legalize(const fz_prog_t *p, const uint8_t *mask, fz_prog_t *out);

void fz_prog_free(fz_prog_t *p);

/* One line describing op (no newline). */
void fz_op_format(const fz_op_t *op, char *buf, size_t size);

/* Is stream index s of this program blocking (synchronizes with L)? */
static inline bool fz_blocking(const fz_prog_t *p, int t, int s)
{
	return s != FZ_S_L && !p->nb[t][s];
}

#endif /* FUZZ_GEN_H */
