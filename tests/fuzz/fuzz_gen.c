/*
 * Program generation and legalization for the differential fuzzer (see
 * fuzz_gen.h).  Nothing here calls the driver: the same code prints a
 * program, shrinks one and runs one.
 *
 * The legalizer's model is the CUDA ordering contract, taken conservatively
 * (only orderings every driver guarantees): stream order; an event wait
 * orders a stream after the work before the record; stream, event and
 * context synchronization, a free and a synchronous device-to-host copy
 * order the host after the work they cover; the host's knowledge passes to
 * every operation it enqueues later; an operation on the legacy stream
 * waits for the last operation of every blocking stream, and an operation
 * on a blocking stream waits for the last legacy operation.  Synchronous
 * memsets and device-to-device copies are treated as asynchronous on the
 * legacy stream (the driver may return before they finish).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_gen.h"

const char *const fz_kind_names[FZ_NKINDS] = {
#define FZ_X(k) #k,
	FZ_KINDS(FZ_X)
#undef FZ_X
};

static const char *const kern_names[FZ_NKERN_ALL] = { "axpb", "mix", "add_scalar", "structk",
							 "sub_scalar" };
static const char *const form_names[FZ_NFORMS] = { "params", "extra", "ex", "kernel", "proc",
						   "ex+attr", "coop" };
static const char *const copy_names[FZ_NCOPY] = { "HtoDAsync", "DtoHAsync", "DtoDAsync",
						  "MemcpyAsync", "HtoD", "DtoH", "DtoD", "Memcpy" };
static const char *const stream_names[FZ_NS] = { "L", "P", "SH", "s0", "s1", "s2" };

/* ---- random numbers (splitmix64) ---- */
typedef struct fz_rng {
	uint64_t s;
} fz_rng_t;

uint64_t fz_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnext(fz_rng_t *r)
{
	return fz_mix64(r->s += 0x9e3779b97f4a7c15ULL);
}

static unsigned rn(fz_rng_t *r, unsigned n)
{
	return (unsigned)(rnext(r) % n);
}

/* ---- generation ---- */
typedef struct gen {
	fz_prog_t *p;
	fz_rng_t r;
	int t;
	int loop;
	int limit; /* primary operations per thread at most */
	unsigned pinned_pct; /* kernels on pinned memory, percent */
	bool oom;
} gen_t;

bool fz_hip;

/* The HIP flavour has no CUkernel handles, cuGetProcAddress tables,
 * per-thread entry points, cuLaunchKernelEx or CU_STREAM_LEGACY: map what
 * the generator drew onto what HIP has, after the draws, so the random
 * stream (and the CUDA flavour's programs) stay exactly as they are.
 * Synchronous copies and memsets on P would need per-thread entry points:
 * they go to L.  Idempotent (the legalizer pushes primaries again). */
static void hip_fix(fz_op_t *op)
{
	static const uint8_t hip_form[FZ_NFORMS] = {
		[FZ_F_PARAMS] = FZ_F_PARAMS, [FZ_F_EXTRA] = FZ_F_EXTRA, [FZ_F_EX] = FZ_F_PARAMS,
		[FZ_F_KERNEL] = FZ_F_EXTRA,  [FZ_F_PROC] = FZ_F_PARAMS, [FZ_F_EXATTR] = FZ_F_EXTRA,
		[FZ_F_COOP] = FZ_F_PARAMS,
	};
	if (op->kind == FZ_K_LAUNCH)
		op->form = hip_form[op->form];
	else
		op->form = 0;
	op->alt = 0;
	bool sync = (op->kind == FZ_K_COPY && op->sub >= FZ_C_NASYNC) ||
		    (op->kind == FZ_K_MEMSET && (op->sub & 8));
	if (sync && op->st == FZ_S_P)
		op->st = FZ_S_L;
}

static void push(fz_prog_t *p, int t, const fz_op_t *op, bool *oom)
{
	if (p->n[t] == p->cap[t]) {
		int cap = p->cap[t] ? 2 * p->cap[t] : 256;
		fz_op_t *o = realloc(p->ops[t], (size_t)cap * sizeof(*o));
		if (!o) {
			*oom = true;
			return;
		}
		p->ops[t] = o;
		p->cap[t] = cap;
	}
	p->ops[t][p->n[t]] = *op;
	if (fz_hip)
		hip_fix(&p->ops[t][p->n[t]]);
	p->n[t]++;
}

static void emit(gen_t *g, fz_op_t op, int iter)
{
	if (g->p->n[g->t] >= g->limit)
		return;
	op.loop = (uint16_t)(iter >= 0 ? g->loop : 0);
	op.iter = (uint16_t)(iter >= 0 ? iter : 0);
	op.prim = g->p->nprim++;
	push(g->p, g->t, &op, &g->oom);
}

static fz_op_t op_new(int kind, int st)
{
	fz_op_t op;
	memset(&op, 0, sizeof(op));
	op.kind = (uint8_t)kind;
	op.st = (uint8_t)st;
	op.b[0] = op.b[1] = op.b[2] = -1;
	return op;
}

static int pick_stream(gen_t *g)
{
	unsigned x = rn(&g->r, 100);
	if (x < 15)
		return FZ_S_L;
	if (x < 25)
		return FZ_S_P;
	if (x < 38)
		return FZ_S_SH;
	return FZ_S_OWN + (int)rn(&g->r, 3);
}

static int pick_dev(gen_t *g)
{
	return FZ_B_DEV + (int)rn(&g->r, FZ_NDEV);
}

/* A buffer a kernel may touch: device memory, or now and then pinned host
 * memory (device-accessible on a GPU with unified addressing). */
static int pick_kbuf(gen_t *g, int not1, int not2)
{
	for (;;) {
		int b = rn(&g->r, 100) >= g->pinned_pct ? pick_dev(g) : FZ_B_PIN + (int)rn(&g->r, FZ_NPIN);
		if (b != not1 && b != not2)
			return b;
	}
}

static int pick_hostbuf(gen_t *g, bool pinned_only)
{
	if (pinned_only || rn(&g->r, 2))
		return FZ_B_PIN + (int)rn(&g->r, FZ_NPIN);
	return FZ_B_PAGE + (int)rn(&g->r, FZ_NPAGE);
}

static void launch_shape(gen_t *g, fz_op_t *op)
{
	unsigned shm = rn(&g->r, 4) ? 0 : 64;
	op->v[4] = (int32_t)(1 + rn(&g->r, 3) + (shm << 8));
	op->v[5] = (int32_t)(32u << rn(&g->r, 3));
}

static fz_op_t gen_launch(gen_t *g, int st)
{
	fz_op_t op = op_new(FZ_K_LAUNCH, st);
	unsigned x = rn(&g->r, 100);
	op.sub = (uint8_t)rn(&g->r, FZ_NKERN);
	op.form = x < 45 ? FZ_F_PARAMS : x < 60 ? FZ_F_EXTRA : x < 72 ? FZ_F_EX
		: x < 87 ? FZ_F_KERNEL : x < 95 ? FZ_F_PROC : x < 98 ? FZ_F_EXATTR : FZ_F_COOP;
	if (op.form == FZ_F_EXATTR) {
		op.ev = (uint8_t)(1 + rn(&g->r, FZ_A_ALL));
		if ((op.ev & FZ_A_EVENT) && rn(&g->r, 2))
			op.ev |= (uint8_t)(FZ_A_OWNEV | (rn(&g->r, FZ_NEV) << FZ_A_EVSHIFT));
		if (!rn(&g->r, 3))
			op.ev |= FZ_A_COOP;
	}
	op.alt = (uint8_t)rn(&g->r, 2);
	op.b[0] = (int8_t)pick_kbuf(g, -1, -1);
	if (op.sub == FZ_KN_AXPB || op.sub == FZ_KN_MIX)
		op.b[1] = (int8_t)pick_kbuf(g, op.b[0], -1);
	if (op.sub == FZ_KN_MIX)
		op.b[2] = (int8_t)pick_kbuf(g, op.b[0], -1);
	op.v[0] = (int32_t)rn(&g->r, 4);
	op.v[1] = (int32_t)(1 + rn(&g->r, FZ_N - (unsigned)op.v[0]));
	op.v[2] = (int32_t)rnext(&g->r);
	op.v[3] = (int32_t)rnext(&g->r);
	launch_shape(g, &op);
	return op;
}

static bool is_host(int b)
{
	return b >= FZ_B_PIN;
}

static int kind_buf(gen_t *g, int k, int not)
{
	for (;;) {
		int b = k == 0 ? pick_dev(g) : k == 1 ? FZ_B_PIN + (int)rn(&g->r, FZ_NPIN)
			: FZ_B_PAGE + (int)rn(&g->r, FZ_NPAGE);
		if (b != not)
			return b;
	}
}

/* A copy of kind sub on stream st (synchronous copies: L or P). */
static fz_op_t gen_copy(gen_t *g, int st, int sub, bool pinned_only)
{
	fz_op_t op = op_new(FZ_K_COPY, st);
	op.sub = (uint8_t)sub;
	int base = sub % FZ_C_NASYNC;
	if (sub >= FZ_C_NASYNC)
		op.st = rn(&g->r, 5) ? FZ_S_L : FZ_S_P;
	int dk, sk; /* 0 device, 1 pinned, 2 pageable */
	int hk = pinned_only ? 1 : 1 + (int)rn(&g->r, 2);
	switch (base) {
	case FZ_C_HTOD:
		dk = 0, sk = hk;
		break;
	case FZ_C_DTOH:
		dk = hk, sk = 0;
		break;
	case FZ_C_DTOD:
		dk = sk = 0;
		break;
	default:
		do {
			dk = pinned_only ? (int)rn(&g->r, 2) : (int)rn(&g->r, 3);
			sk = pinned_only ? (int)rn(&g->r, 2) : (int)rn(&g->r, 3);
		} while (dk && sk);
		break;
	}
	op.b[0] = (int8_t)kind_buf(g, dk, -1);
	op.b[1] = (int8_t)kind_buf(g, sk, op.b[0]);
	op.v[0] = (int32_t)rn(&g->r, 4);
	op.v[1] = (int32_t)rn(&g->r, 4);
	int m = op.v[0] > op.v[1] ? op.v[0] : op.v[1];
	op.v[2] = (int32_t)(1 + rn(&g->r, FZ_N - (unsigned)m));
	op.form = rn(&g->r, 5) == 0;
	op.alt = (uint8_t)rn(&g->r, 2);
	return op;
}

static fz_op_t gen_memset(gen_t *g, int st, bool sync)
{
	static const uint8_t widths[3] = { 1, 2, 4 };
	fz_op_t op = op_new(FZ_K_MEMSET, sync ? (rn(&g->r, 5) ? FZ_S_L : FZ_S_P) : st);
	op.sub = (uint8_t)(widths[rn(&g->r, 3)] | (sync ? 8 : 0));
	op.b[0] = (int8_t)pick_dev(g);
	op.v[0] = (int32_t)rn(&g->r, 4);
	op.v[1] = (int32_t)(1 + rn(&g->r, FZ_N - (unsigned)op.v[0]));
	op.v[2] = (int32_t)rnext(&g->r);
	op.form = rn(&g->r, 5) == 0;
	op.alt = (uint8_t)rn(&g->r, 2);
	return op;
}

/* A host function writing its own slot, maybe from a pinned buffer (which
 * makes it observe the stream work before it). */
static fz_op_t gen_hostfn(gen_t *g, int st, bool reads)
{
	fz_op_t op = op_new(FZ_K_HOSTFN, st);
	op.b[0] = (int8_t)(FZ_B_SLOT + (int)rn(&g->r, FZ_NSLOT));
	if (reads)
		op.b[1] = (int8_t)(FZ_B_PIN + (int)rn(&g->r, FZ_NPIN));
	op.v[0] = (int32_t)rnext(&g->r);
	op.form = rn(&g->r, 5) == 0;
	return op;
}

static fz_op_t gen_single(gen_t *g)
{
	static const struct {
		uint8_t kind, w;
	} tab[] = {
		{ FZ_K_LAUNCH, 30 }, { FZ_K_COPY, 20 }, { FZ_K_MEMSET, 8 }, { FZ_K_HOSTFN, 6 },
		{ FZ_K_EVREC, 6 },   { FZ_K_EVWAIT, 6 }, { FZ_K_EVQUERY, 2 }, { FZ_K_EVSYNC, 2 },
		{ FZ_K_SSYNC, 4 },   { FZ_K_SQUERY, 2 }, { FZ_K_SPIN, 1 },   { FZ_K_CTXSYNC, 2 },
		{ FZ_K_HREAD, 5 },   { FZ_K_HWRITE, 3 }, { FZ_K_REALLOC, 3 },
		{ FZ_K_AREALLOC, 3 },
	};
	unsigned total = 0, x;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		total += tab[i].w;
	x = rn(&g->r, total);
	size_t i = 0;
	while (x >= tab[i].w)
		x -= tab[i++].w;
	int st = pick_stream(g);
	fz_op_t op = op_new(tab[i].kind, st);
	op.form = rn(&g->r, 5) == 0;
	op.alt = (uint8_t)rn(&g->r, 2);
	op.ev = (uint8_t)rn(&g->r, FZ_NEV);
	switch (tab[i].kind) {
	case FZ_K_LAUNCH:
		return gen_launch(g, st);
	case FZ_K_COPY:
		return gen_copy(g, st, (int)rn(&g->r, FZ_NCOPY), false);
	case FZ_K_MEMSET:
		return gen_memset(g, st, rn(&g->r, 3) == 0);
	case FZ_K_HOSTFN:
		return gen_hostfn(g, st, rn(&g->r, 2));
	case FZ_K_HREAD:
		op.b[0] = (int8_t)(rn(&g->r, 3) ? pick_hostbuf(g, false)
						: FZ_B_SLOT + (int)rn(&g->r, FZ_NSLOT));
		break;
	case FZ_K_HWRITE:
		op.b[0] = (int8_t)pick_hostbuf(g, false);
		op.v[0] = (int32_t)rnext(&g->r);
		break;
	case FZ_K_REALLOC:
	case FZ_K_AREALLOC:
		op.b[0] = (int8_t)pick_dev(g);
		op.v[0] = (int32_t)rnext(&g->r);
		break;
	default:
		break;
	}
	return op;
}

/*
 * How a loop's body drifts: an argument, a pointer, the launch shape, the
 * launch form, the kernel (another of the same parameter layout: a graph
 * node's operand), a pointer that alternates from then on (an allocator's
 * rotation), an inserted or skipped operation, a buffer reallocated, an
 * argument that takes a new value every iteration from then on (a position,
 * a sampler's coefficient: what period detection tolerates in a step), or a
 * launch replaced by another, drawn anew (a kernel of another layout, as a
 * framework's kernel chosen by size or alignment), two iterations in four
 * from then on: a step that comes as two structures, unlike at one place
 * (GRAPHSHIM_SIBLINGS learns the second at its first sighting).
 */
enum { DR_ARG, DR_PTR, DR_GRID, DR_FORM, DR_FUNC, DR_ROT, DR_INSERT, DR_SKIP, DR_REALLOC, DR_EVERY, DR_VARIANT,
       DR_N };

/* Whether op's first buffer is a device buffer. */
static bool on_dev(const fz_op_t *op)
{
	return op->b[0] >= 0 && op->b[0] < FZ_B_PIN;
}

/*
 * Device buffer b reallocated at iteration it; half the time the new block
 * comes before the old one goes (another address).  As often, in stream
 * order on st (AREALLOC: cuMemFreeAsync and cuMemAllocAsync, a pool
 * allocator's temporary: where the loop persists, one every step).
 */
static void emit_realloc(gen_t *g, int8_t b, int it, int st)
{
	fz_op_t r = op_new(FZ_K_REALLOC, FZ_S_L);
	r.b[0] = b;
	r.v[0] = (int32_t)rnext(&g->r);
	r.alt = (uint8_t)(r.v[0] & 1);
	if (r.v[0] & 2) {
		r.kind = FZ_K_AREALLOC;
		r.st = (uint8_t)st;
	}
	emit(g, r, it);
}

/* The drifted version of a loop body operation. */
static fz_op_t drift_op(gen_t *g, fz_op_t op, int type)
{
	switch (type) {
	case DR_ARG:
		if (op.kind == FZ_K_COPY)
			op.v[1] = (op.v[1] + 1) % 4, op.v[2] = op.v[2] > 28 ? 28 : op.v[2];
		else
			op.v[2] ^= (int32_t)(1 + rn(&g->r, 255));
		break;
	case DR_FUNC:
		if (op.kind == FZ_K_LAUNCH && (op.sub == FZ_KN_ADD || op.sub == FZ_KN_SUB))
			op.sub = op.sub == FZ_KN_ADD ? FZ_KN_SUB : FZ_KN_ADD;
		else
			op = drift_op(g, op, DR_GRID); /* no other kernel of its layout */
		break;
	case DR_ROT:
	case DR_PTR:
		if (op.kind == FZ_K_LAUNCH) {
			op.b[0] = (int8_t)pick_kbuf(g, op.b[1], op.b[2]);
			if (op.b[0] == op.b[1] || op.b[0] == op.b[2])
				op.b[0] = (int8_t)pick_kbuf(g, op.b[1], op.b[2]);
		} else if (op.kind == FZ_K_MEMSET) {
			op.b[0] = (int8_t)pick_dev(g);
		} else {
			op.v[0] = (op.v[0] + 1) % 4;
			op.v[2] = op.v[2] > 28 ? 28 : op.v[2];
		}
		break;
	case DR_GRID:
		if (op.kind == FZ_K_LAUNCH)
			launch_shape(g, &op);
		else if (op.kind == FZ_K_COPY)
			op.v[2] = (op.v[2] + 1) / 2; /* a different size */
		else
			op.v[2] ^= 0x5a5a;
		break;
	case DR_FORM:
		if (op.kind == FZ_K_LAUNCH && op.form == FZ_F_EXATTR && rn(&g->r, 2)) {
			/* Other attributes: another graph node, or a boundary. */
			op.ev = (uint8_t)(op.ev ^ (1u << rn(&g->r, 4)));
			if (!(op.ev & FZ_A_ALL))
				op.ev |= FZ_A_CLUSTER;
		} else if (op.kind == FZ_K_LAUNCH) {
			op.form = (uint8_t)((op.form + 1 + rn(&g->r, FZ_NFORMS - 1)) % FZ_NFORMS);
			if (op.form == FZ_F_EXATTR && !op.ev)
				op.ev = FZ_A_PRIORITY | FZ_A_CLUSTER;
		} else {
			op.form ^= 1;
		}
		break;
	}
	return op;
}

static void gen_loop(gen_t *g)
{
	fz_op_t body[6], extra, end[2];
	int nend = 0;
	int X = pick_stream(g);
	int k = 1 + (int)rn(&g->r, 5);
	g->loop++;
	g->pinned_pct = 25;
	for (int j = 0; j < k; j++) {
		unsigned x = rn(&g->r, 100);
		if (x < 72)
			body[j] = gen_launch(g, X);
		else if (x < 82)
			body[j] = gen_memset(g, X, false);
		else if (x < 90)
			body[j] = gen_copy(g, X, (int)rn(&g->r, FZ_C_NASYNC), true);
		else if (x < 95)
			body[j] = gen_hostfn(g, X, true);
		else
			body[j] = gen_launch(g, pick_stream(g));
	}
	unsigned e = rn(&g->r, 100);
	if (e < 30) {
		end[nend++] = op_new(FZ_K_SSYNC, X);
	} else if (e < 40) {
		end[nend] = op_new(FZ_K_EVREC, X);
		end[nend++].ev = (uint8_t)rn(&g->r, FZ_NEV);
		end[nend] = op_new(FZ_K_EVSYNC, X);
		end[nend].ev = end[nend - 1].ev;
		nend++;
	} else if (e < 50) {
		end[nend] = op_new(FZ_K_HREAD, X);
		end[nend++].b[0] = (int8_t)pick_hostbuf(g, false);
	}
	int reps = 3 + (int)rn(&g->r, 28);
	/* A wait for the GPU inside the body, after operation spin_at, in
	 * every iteration (a program polling memory mid-step, fuzz_run.c's
	 * mem_wait): where graphshim learns to end a chunk. */
	int spin_at = rn(&g->r, 100) < 15 ? (int)rn(&g->r, (unsigned)k) : -1;
	/* A pool allocator's temporary, in 15% of the loops: before
	 * operation pool_at, every iteration, its first
	 * buffer freed and allocated again in stream order on its stream
	 * (AREALLOC, new block first or not as drawn), as PyTorch's
	 * cudaMallocAsync backend gives each step's tensors. */
	int pool_at = rn(&g->r, 100) < 15 ? (int)rn(&g->r, (unsigned)k) : -1;
	bool pool_alt = rn(&g->r, 2);
	bool drift = rn(&g->r, 10) < 7;
	int d = 1 + (int)rn(&g->r, (unsigned)reps - 1), dj = (int)rn(&g->r, (unsigned)k);
	int dt = (int)rn(&g->r, DR_N);
	bool persist = rn(&g->r, 2);
	/* A reallocated buffer tells most under a copy or a memset: the driver
	 * checks their pointers when it makes the node (graphshim's stand-ins). */
	for (int j = 0; dt == DR_REALLOC && j < k; j++)
		if ((body[j].kind == FZ_K_COPY || body[j].kind == FZ_K_MEMSET) && on_dev(&body[j])) {
			dj = j;
			break;
		}
	fz_op_t drifted = drift_op(g, body[dj], dt);
	/* The buffer a reallocation takes: the drifting operation's first one,
	 * or one device buffer for the whole loop (a workspace). */
	int8_t rb = dt != DR_REALLOC ? 0 : on_dev(&body[dj]) ? body[dj].b[0] : (int8_t)pick_dev(g);
	/* A rotation moves every operation's buffer, in turn (an allocator's
	 * other set of addresses): what variants are for. */
	fz_op_t rot[6];
	for (int j = 0; j < k; j++)
		rot[j] = dt == DR_ROT ? drift_op(g, body[j], DR_ROT) : body[j];
	extra = gen_launch(g, body[dj].st);
	fz_op_t variant = dt == DR_VARIANT ? gen_launch(g, body[dj].st) : body[dj];
	g->pinned_pct = 10;
	for (int it = 0; it < reps; it++) {
		if (drift && dt == DR_REALLOC && it == d && !persist)
			emit_realloc(g, rb, it, body[dj].st);
		for (int j = 0; j < k; j++) {
			if (drift && dt == DR_EVERY && j == dj && it >= d) {
				fz_op_t o = body[j];
				if (o.kind == FZ_K_LAUNCH)
					o.v[2] ^= (int32_t)(1 + (unsigned)it * 0x9e37u);
				else
					o = drift_op(g, o, DR_ARG);
				emit(g, o, it);
				continue;
			}
			if (drift && dt == DR_ROT) {
				emit(g, it >= d && (it - d) % 2 == 0 ? rot[j] : body[j], it);
				continue;
			}
			if (drift && dt == DR_VARIANT && j == dj && it >= d) {
				emit(g, (it - d) % 4 < 2 ? variant : body[j], it);
				continue;
			}
			if (j == pool_at && on_dev(&body[j])) {
				fz_op_t o = op_new(FZ_K_AREALLOC, body[j].st);
				o.b[0] = body[j].b[0];
				o.v[0] = (int32_t)rnext(&g->r);
				o.alt = pool_alt;
				emit(g, o, it);
			}
			bool active = drift && j == dj && (it == d || (persist && it > d));
			if (active && dt == DR_SKIP)
				continue;
			emit(g, active && dt <= DR_FUNC ? drifted : body[j], it);
			if (active && dt == DR_INSERT)
				emit(g, extra, it);
			if (j == spin_at)
				emit(g, op_new(FZ_K_SPIN, X), it);
		}
		for (int j = 0; j < nend; j++)
			emit(g, end[j], it);
		/* Persisting, at the end of every iteration from then on, right
		 * after the step's last operation: a per-call workspace freed as
		 * the step is learned, so a graph built from it meets it freed. */
		if (drift && dt == DR_REALLOC && persist && it >= d)
			emit_realloc(g, rb, it, body[dj].st);
	}
}

/* A launch that can be a graph node (no launch attributes: a boundary). */
static fz_op_t gen_node_launch(gen_t *g, int st)
{
	fz_op_t op = gen_launch(g, st);
	if (op.form == FZ_F_EXATTR || op.form == FZ_F_COOP)
		op.form = FZ_F_PARAMS;
	return op;
}

/*
 * A loop on the legacy stream with launches on a blocking stream B between
 * its own, one of them writing what the loop's first launch writes.  Once
 * the loop is learned, L holds its first launches when B's arrive, and
 * B's must run after them (the launch on B flushes L).  B goes cold first
 * (two synchronized steps that do not repeat, counted with
 * GRAPHSHIM_COLD_AFTER of 1 or 2) and the loop's only boundary is an event
 * recorded on L, so B's launches stay in one segment and all but the first
 * take graphshim's cold fast path.
 */
/*
 * A ROTATION LOOP: 3-5 launches on one stream and a sync, 12-30 times, the
 * launches' buffers taken from P sets in turn (P = 2 or 3, an allocator's
 * rotation), sometimes with one argument that grows every iteration (a
 * position).  Learned, then replayed by P graphs a chunk (variants).
 */
static void gen_rotation_loop(gen_t *g)
{
	int X = pick_stream(g), k = 3 + (int)rn(&g->r, 3), P = 2 + (int)rn(&g->r, 2);
	int grow = rn(&g->r, 2) ? (int)rn(&g->r, (unsigned)k) : -1;
	fz_op_t set[3][5];
	g->loop++;
	for (int j = 0; j < k; j++) {
		set[0][j] = gen_node_launch(g, X);
		for (int p = 1; p < P; p++)
			set[p][j] = drift_op(g, set[0][j], DR_PTR);
	}
	fz_op_t end = op_new(FZ_K_SSYNC, X);
	int reps = 12 + (int)rn(&g->r, 19);
	for (int it = 0; it < reps; it++) {
		for (int j = 0; j < k; j++) {
			fz_op_t op = set[it % P][j];
			if (j == grow)
				op.v[2] += it;
			emit(g, op, it);
		}
		emit(g, end, it);
	}
}

/*
 * An ALTERNATING LOOP: two steps on one stream that begin with the same
 * launch and then differ (a framework's even and odd tokens, a prompt and
 * a decode step), each ended by a sync or an event record, run in turn
 * (ABAB, or AAB) 10-24 times.  Both are learned; a pass is told apart only
 * after its first launch, so graphshim holds that launch for the gate to
 * choose eager or replay for the step it turns out to be.
 */
static void gen_alternating_loop(gen_t *g)
{
	int X = pick_stream(g), ka = 2 + (int)rn(&g->r, 3), kb = 2 + (int)rn(&g->r, 3);
	fz_op_t a[5], b[5];
	g->loop++;
	a[0] = b[0] = gen_node_launch(g, X);
	for (int j = 1; j < ka; j++)
		a[j] = gen_node_launch(g, X);
	for (int j = 1; j < kb; j++)
		b[j] = gen_node_launch(g, X);
	fz_op_t end = op_new(FZ_K_SSYNC, X);
	if (rn(&g->r, 3) == 0) {
		end = op_new(FZ_K_EVREC, X);
		end.ev = (uint8_t)rn(&g->r, FZ_NEV);
	}
	int period = 2 + (int)rn(&g->r, 2), reps = 10 + (int)rn(&g->r, 15);
	for (int it = 0; it < reps; it++) {
		bool isb = it % period == period - 1;
		const fz_op_t *body = isb ? b : a;
		for (int j = 0; j < (isb ? kb : ka); j++)
			emit(g, body[j], it);
		emit(g, end, it);
	}
}

/*
 * A BRANCH LOOP: a while loop whose branches are read back (JAX's NUTS
 * under XLA): 4-12 steps on one stream that begin with the same 1-3
 * launches and then differ, each ended by a sync or a read-back, in an
 * order drawn afresh each round, 3-8 rounds.  Each step is learned and
 * is a candidate of every match that begins alike (more than the eight
 * of the candidates' old bound); the others learning around it, and the
 * steps that turn out alike, retire none.  In half of them the order is
 * drawn once and kept, some steps coming several times a round (a
 * detector's post-processing, torchvision's Faster R-CNN): siblings armed
 * while others are still built or retired by them (gs_seq_settle).
 */
static void gen_branch_loop(gen_t *g)
{
	enum { NB = 12 };
	int X = pick_stream(g), nb = 4 + (int)rn(&g->r, NB - 3), np = 1 + (int)rn(&g->r, 3);
	fz_op_t pre[3], tail[NB][3];
	int ntail[NB], order[2 * NB], norder = nb;
	bool fixed = rn(&g->r, 2) != 0;
	g->loop++;
	for (int j = 0; j < np; j++)
		pre[j] = gen_node_launch(g, X);
	for (int b = 0; b < nb; b++) {
		ntail[b] = 1 + (int)rn(&g->r, 3);
		for (int j = 0; j < ntail[b]; j++) {
			unsigned x = rn(&g->r, 100);
			if (x < 80)
				tail[b][j] = gen_node_launch(g, X);
			else if (x < 90)
				tail[b][j] = gen_memset(g, X, false);
			else
				tail[b][j] = gen_copy(g, X, (int)rn(&g->r, FZ_C_NASYNC), true);
		}
	}
	fz_op_t end = op_new(FZ_K_SSYNC, X);
	if (rn(&g->r, 2)) {
		end = op_new(FZ_K_HREAD, X);
		end.b[0] = (int8_t)pick_hostbuf(g, false);
	}
	int rounds = 3 + (int)rn(&g->r, 6);
	for (int it = 0; it < rounds; it++) {
		if (!fixed || it == 0) {
			for (int b = 0; b < nb; b++)
				order[b] = b;
			for (int b = nb - 1; b > 0; b--) {
				int k = (int)rn(&g->r, (unsigned)b + 1), x = order[b];
				order[b] = order[k];
				order[k] = x;
			}
		}
		if (fixed && it == 0) /* some steps again, at places drawn once */
			for (int extra = (int)rn(&g->r, (unsigned)nb + 1); extra > 0; extra--) {
				int at = (int)rn(&g->r, (unsigned)norder + 1);
				for (int b = norder; b > at; b--)
					order[b] = order[b - 1];
				order[at] = (int)rn(&g->r, (unsigned)nb);
				norder++;
			}
		for (int b = 0; b < norder; b++) {
			for (int j = 0; j < np; j++)
				emit(g, pre[j], it);
			for (int j = 0; j < ntail[order[b]]; j++)
				emit(g, tail[order[b]][j], it);
			emit(g, end, it);
		}
	}
}

/*
 * A FORK LOOP: a step forked from stream S onto one to three side streams
 * and joined again, as cuDNN's RNNs and prefetching programs do: S records
 * an event, each side waits on it, runs up to two launches (the first at
 * least one), and records an event S then waits on: the same event again (cuDNN reuses one) or one
 * event a side.  Launches on S before the fork and after the join, the
 * step ended by a sync of S, a read-back or nothing, 8-24 times.  What
 * graphshim's adoption of side streams (GRAPHSHIM_ADOPT) and absorbed
 * marks (GRAPHSHIM_ABSORB) are for: an event recorded again while a wait
 * on it is held, waits on an event S recorded itself.  In half the loops
 * (from the seed and the loop's number, no draw: the programs of earlier
 * seeds are unchanged) every record is of a new event, whose slot's old
 * event is then destroyed, as torch's wait_stream makes and drops one: a
 * destruction while a record of the old event or a wait on it is held.
 */
static void gen_fork_loop(gen_t *g)
{
	int S = rn(&g->r, 3) ? FZ_S_L + (int)(rn(&g->r, 2) * FZ_S_SH) : FZ_S_OWN;
	int nside = 1 + (int)rn(&g->r, 3), side[3], n = 0;
	for (int s = FZ_S_OWN; s < FZ_NS && n < nside; s++)
		if (s != S)
			side[n++] = s;
	if (n < nside && S != FZ_S_SH)
		side[n++] = FZ_S_SH;
	nside = n;
	bool same = rn(&g->r, 2); /* one event for every join, as cuDNN */
	uint8_t fork = (uint8_t)rn(&g->r, FZ_NEV);
	fz_op_t pre = gen_node_launch(g, S), post = gen_node_launch(g, S);
	fz_op_t work[3][2];
	int nwork[3];
	/* Sides with no work record the event again at once, as most of
	 * cuDNN's do: a record that completes before an earlier side's. */
	for (int j = 0; j < nside; j++) {
		nwork[j] = j == 0 ? 1 + (int)rn(&g->r, 2) : (int)rn(&g->r, 3);
		for (int w = 0; w < nwork[j]; w++)
			work[j][w] = gen_node_launch(g, side[j]);
	}
	unsigned e = rn(&g->r, 3);
	g->loop++;
	int reps = 8 + (int)rn(&g->r, 17);
	uint8_t fresh = (uint8_t)((fz_mix64(g->p->seed + g->loop) >> 7) & 1);
	for (int it = 0; it < reps; it++) {
		emit(g, pre, it);
		fz_op_t rec = op_new(FZ_K_EVREC, S);
		rec.ev = fork;
		rec.sub = fresh;
		emit(g, rec, it);
		for (int j = 0; j < nside; j++) {
			fz_op_t w = op_new(FZ_K_EVWAIT, side[j]);
			w.ev = fork;
			emit(g, w, it);
		}
		for (int j = 0; j < nside; j++) {
			for (int w = 0; w < nwork[j]; w++)
				emit(g, work[j][w], it);
			uint8_t join = same ? fork : (uint8_t)((fork + 1 + j) % FZ_NEV);
			fz_op_t r = op_new(FZ_K_EVREC, side[j]), w = op_new(FZ_K_EVWAIT, S);
			r.ev = w.ev = join;
			r.sub = fresh;
			emit(g, r, it);
			emit(g, w, it);
		}
		emit(g, post, it);
		if (e == 0)
			emit(g, op_new(FZ_K_SSYNC, S), it);
		else if (e == 1) {
			fz_op_t h = op_new(FZ_K_HREAD, S);
			h.b[0] = (int8_t)pick_hostbuf(g, false);
			emit(g, h, it);
		}
	}
}

static void gen_legacy_loop(gen_t *g)
{
	int B = -1;
	for (int s = FZ_S_SH; s < FZ_NS && B < 0; s++)
		if (!g->p->nb[g->t][s])
			B = s;
	if (B < 0) {
		gen_loop(g);
		return;
	}
	for (int i = 0; i < 2; i++) {
		emit(g, gen_node_launch(g, B), -1);
		emit(g, op_new(FZ_K_SSYNC, B), -1);
	}
	g->loop++;
	fz_op_t l1 = gen_node_launch(g, FZ_S_L), l2 = gen_node_launch(g, FZ_S_L);
	fz_op_t l3 = gen_node_launch(g, FZ_S_L), b0 = gen_node_launch(g, B);
	fz_op_t b1 = gen_node_launch(g, B);
	b1.b[0] = l1.b[0];
	for (int k = 1; k < 3; k++)
		if (b1.b[k] == b1.b[0])
			b1.b[k] = (int8_t)pick_kbuf(g, b1.b[0], k == 2 ? b1.b[1] : -1);
	fz_op_t rec = op_new(FZ_K_EVREC, FZ_S_L);
	rec.ev = (uint8_t)rn(&g->r, FZ_NEV);
	int reps = 4 + (int)rn(&g->r, 9);
	const fz_op_t body[] = { b0, l1, l2, b1, l3, rec };
	for (int it = 0; it < reps; it++)
		for (size_t j = 0; j < sizeof(body) / sizeof(body[0]); j++)
			emit(g, body[j], it);
}

static void gen_thread(gen_t *g, int t)
{
	g->t = t;
	g->limit = t ? 250 : 450;
	/* Every device buffer starts from a known value. */
	for (int b = 0; b < FZ_NDEV; b++) {
		fz_op_t op = op_new(FZ_K_MEMSET, FZ_S_L);
		op.sub = 4 | 8;
		op.b[0] = (int8_t)b;
		op.v[1] = FZ_N;
		op.v[2] = (int32_t)rnext(&g->r);
		emit(g, op, -1);
	}
	int blocks = t ? 1 + (int)rn(&g->r, 4) : 3 + (int)rn(&g->r, 6);
	for (int i = 0; i < blocks; i++) {
		unsigned x = rn(&g->r, 100);
		if (x < 33) {
			gen_loop(g);
		} else if (x < 40) {
			gen_fork_loop(g);
		} else if (x < 45) {
			gen_branch_loop(g);
		} else if (x < 53) {
			gen_legacy_loop(g);
		} else if (x < 61) {
			gen_rotation_loop(g);
		} else if (x < 67) {
			gen_alternating_loop(g);
		} else {
			int n = 1 + (int)rn(&g->r, 6);
			for (int j = 0; j < n; j++)
				emit(g, gen_single(g), -1);
		}
	}
}

bool fz_gen(fz_prog_t *p, uint64_t seed)
{
	gen_t g;
	memset(p, 0, sizeof(*p));
	memset(&g, 0, sizeof(g));
	p->seed = seed;
	g.p = p;
	g.r.s = fz_mix64(seed ^ 0x6a09e667f3bcc909ULL);
	g.pinned_pct = 10;
	bool shared_nb = rn(&g.r, 4) == 0;
	for (int t = 0; t < 2; t++) {
		p->nb[t][FZ_S_SH] = shared_nb;
		for (int s = FZ_S_OWN; s < FZ_NS; s++)
			p->nb[t][s] = rn(&g.r, 3) == 0;
	}
	gen_thread(&g, 0);
	gen_thread(&g, 1);
	return g.oom;
}

void fz_prog_free(fz_prog_t *p)
{
	free(p->ops[0]);
	free(p->ops[1]);
	memset(p, 0, sizeof(*p));
}

/* ---- legalization ---- */
typedef struct vc {
	uint32_t c[FZ_NS];
} vc_t;

typedef struct lg {
	const fz_prog_t *p;
	fz_prog_t *out;
	int t;
	int prim;
	uint32_t pos[FZ_NS];
	vc_t known[FZ_NS]; /* what the stream's next operation is ordered after */
	vc_t last[FZ_NS];  /* what its last operation was ordered after (itself included) */
	vc_t host;         /* what the host knows complete */
	vc_t ev[FZ_NEV + FZ_NFEV];
	struct {
		uint8_t ws;  /* writer stream, or FZ_HOST */
		uint32_t wp; /* its position; 0: nothing to wait for */
		vc_t rd;     /* readers since the write */
	} buf[FZ_NBUF];
	int fev;
	bool pooled[FZ_NDEV]; /* the buffer's block came from the pool (AREALLOC) */
	bool oom;
} lg_t;

static void vc_max(vc_t *a, const vc_t *b)
{
	for (int i = 0; i < FZ_NS; i++)
		if (b->c[i] > a->c[i])
			a->c[i] = b->c[i];
}

/* What an operation enqueued on X now would be ordered after. */
static void clock_next(const lg_t *l, int X, vc_t *o)
{
	*o = l->known[X];
	vc_max(o, &l->host);
	if (X == FZ_S_L) {
		for (int s = 0; s < FZ_NS; s++)
			if (fz_blocking(l->p, l->t, s))
				vc_max(o, &l->last[s]);
	} else if (fz_blocking(l->p, l->t, X)) {
		vc_max(o, &l->last[FZ_S_L]);
	}
}

static void enqueue(lg_t *l, int X)
{
	clock_next(l, X, &l->known[X]);
	l->pos[X]++;
	l->last[X] = l->known[X];
	l->last[X].c[X] = l->pos[X];
}

/* Is X's next operation (or the host, X == FZ_HOST) ordered after (Y, p)? */
static bool ordered(const lg_t *l, int X, int Y, uint32_t p)
{
	if (!p || Y == FZ_HOST || Y == X)
		return true;
	if (X == FZ_HOST)
		return l->host.c[Y] >= p;
	vc_t c;
	clock_next(l, X, &c);
	return c.c[Y] >= p;
}

static void host_all(lg_t *l)
{
	for (int s = 0; s < FZ_NS; s++)
		vc_max(&l->host, &l->last[s]);
}

typedef struct acc {
	int b;
	bool w, host;
} acc_t;

static int accesses(const fz_op_t *op, acc_t *a)
{
	int n = 0;
	switch (op->kind) {
	case FZ_K_LAUNCH:
		a[n++] = (acc_t){ op->b[0], true, false };
		if (op->b[1] >= 0)
			a[n++] = (acc_t){ op->b[1], false, false };
		if (op->b[2] >= 0)
			a[n++] = (acc_t){ op->b[2], false, false };
		break;
	case FZ_K_COPY:
		/* Pageable memory is touched on the host: a copy from it is staged
		 * at call time, a copy to it is complete on return. */
		a[n++] = (acc_t){ op->b[0], true, op->b[0] >= FZ_B_PAGE };
		a[n++] = (acc_t){ op->b[1], false, op->b[1] >= FZ_B_PAGE };
		break;
	case FZ_K_MEMSET:
	case FZ_K_AREALLOC: /* the free, then the memset of the new block */
		a[n++] = (acc_t){ op->b[0], true, false };
		break;
	case FZ_K_HOSTFN:
		a[n++] = (acc_t){ op->b[0], true, false };
		if (op->b[1] >= 0)
			a[n++] = (acc_t){ op->b[1], false, false };
		break;
	case FZ_K_HREAD:
		a[n++] = (acc_t){ op->b[0], false, true };
		break;
	case FZ_K_HWRITE:
		a[n++] = (acc_t){ op->b[0], true, true };
		break;
	}
	return n;
}

static bool stream_op(const fz_op_t *op)
{
	switch (op->kind) {
	case FZ_K_LAUNCH:
	case FZ_K_COPY:
	case FZ_K_MEMSET:
	case FZ_K_HOSTFN:
	case FZ_K_NOPL:
	case FZ_K_SCOPY:
	case FZ_K_AREALLOC:
		return true;
	}
	return false;
}

static void process(lg_t *l, fz_op_t op);

/* Make X (a stream, or FZ_HOST) ordered after (Y, p), one of the legal ways. */
static void fix(lg_t *l, int X, int Y, uint32_t p)
{
	enum { F_EVENT, F_EVSYNC, F_SSYNC, F_SPIN, F_CTX, F_FREE, F_SCOPY, F_NOPL, F_N };
	static const uint8_t w[F_N] = { 45, 7, 12, 6, 6, 4, 8, 12 };
	for (int attempt = 0; attempt < 4 && !ordered(l, X, Y, p); attempt++) {
		fz_rng_t r = { fz_mix64(l->p->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)l->prim * 977 +
				     (uint64_t)l->t * 31 + (uint64_t)attempt * 7 + (uint64_t)Y) };
		bool blk_y = Y == FZ_S_L || fz_blocking(l->p, l->t, Y);
		bool ok[F_N] = { true, true, true, true, true, true, blk_y,
				 X != FZ_HOST && fz_blocking(l->p, l->t, X) && blk_y };
		if (X == FZ_HOST)
			ok[F_EVENT] = false;
		unsigned total = 0;
		for (int i = 0; i < F_N; i++)
			total += ok[i] ? w[i] : 0;
		unsigned x = rn(&r, total);
		int f = 0;
		while (!ok[f] || x >= w[f]) {
			if (ok[f])
				x -= w[f];
			f++;
		}
		fz_op_t op = op_new(FZ_K_CTXSYNC, Y);
		op.prim = -1;
		op.form = rn(&r, 5) == 0;
		op.alt = (uint8_t)rn(&r, 2);
		switch (f) {
		case F_EVENT:
		case F_EVSYNC:
			op.kind = FZ_K_EVREC;
			op.ev = (uint8_t)(FZ_NEV + l->fev);
			l->fev = (l->fev + 1) % FZ_NFEV;
			process(l, op);
			if (f == F_EVENT) {
				op.kind = FZ_K_EVWAIT;
				op.st = (uint8_t)X;
			} else {
				op.kind = FZ_K_EVSYNC;
			}
			break;
		case F_SSYNC:
			op.kind = FZ_K_SSYNC;
			break;
		case F_SPIN:
			op.kind = FZ_K_SPIN;
			break;
		case F_CTX:
			break;
		case F_FREE:
			op.kind = FZ_K_SFREE;
			break;
		case F_SCOPY:
			op.kind = FZ_K_SCOPY;
			op.st = FZ_S_L;
			break;
		case F_NOPL:
			op.kind = FZ_K_NOPL;
			op.st = FZ_S_L;
			break;
		}
		process(l, op);
	}
	if (!ordered(l, X, Y, p)) {
		fz_op_t op = op_new(FZ_K_CTXSYNC, 0);
		op.prim = -1;
		process(l, op);
	}
}

static void process(lg_t *l, fz_op_t op)
{
	acc_t a[4];
	int n = accesses(&op, a);
	int X = op.st;
	if (op.kind == FZ_K_REALLOC) {
		/* cuMemFree synchronizes; the new memory is then set on L. */
		host_all(l);
		memset(&l->buf[op.b[0]], 0, sizeof(l->buf[0]));
		a[n++] = (acc_t){ op.b[0], true, false };
		X = FZ_S_L;
		l->pooled[op.b[0]] = false;
	} else if (op.kind == FZ_K_AREALLOC) {
		/* A block not from the pool goes by cuMemFree, which
		 * synchronizes; a pool's block is freed on X after every
		 * access before (the write's order).  The new one is set on X. */
		if (!l->pooled[op.b[0]]) {
			host_all(l);
			memset(&l->buf[op.b[0]], 0, sizeof(l->buf[0]));
		}
		l->pooled[op.b[0]] = true;
	}
	for (int i = 0; i < n; i++) {
		int who = a[i].host ? FZ_HOST : X;
		int b = a[i].b;
		fix(l, who, l->buf[b].ws, l->buf[b].wp);
		if (a[i].w)
			for (int s = 0; s < FZ_NS; s++)
				fix(l, who, s, l->buf[b].rd.c[s]);
	}
	/* Fixes inserted for a later access never undo an earlier one: each
	 * only adds knowledge. */
	push(l->out, l->t, &op, &l->oom);
	if (stream_op(&op) || op.kind == FZ_K_REALLOC)
		enqueue(l, X);
	for (int i = 0; i < n; i++) {
		int b = a[i].b;
		if (a[i].host) {
			if (a[i].w)
				memset(&l->buf[b], 0, sizeof(l->buf[b]));
		} else if (a[i].w) {
			memset(&l->buf[b].rd, 0, sizeof(l->buf[b].rd));
			l->buf[b].ws = (uint8_t)X;
			l->buf[b].wp = l->pos[X];
		} else {
			l->buf[b].rd.c[X] = l->pos[X];
		}
	}
	switch (op.kind) {
	case FZ_K_COPY:
		if ((op.sub == FZ_C_DTOH_S || op.sub == FZ_C_UNI_S) && is_host(op.b[0]))
			vc_max(&l->host, &l->last[X]);
		break;
	case FZ_K_SCOPY:
		vc_max(&l->host, &l->last[FZ_S_L]);
		break;
	case FZ_K_EVREC:
		l->ev[op.ev] = l->last[X];
		vc_max(&l->ev[op.ev], &l->host);
		break;
	case FZ_K_EVWAIT:
		vc_max(&l->known[X], &l->ev[op.ev]);
		break;
	case FZ_K_EVSYNC:
		vc_max(&l->host, &l->ev[op.ev]);
		break;
	case FZ_K_SSYNC:
	case FZ_K_SPIN:
		vc_max(&l->host, &l->last[X]);
		break;
	case FZ_K_CTXSYNC:
	case FZ_K_SFREE:
		host_all(l);
		break;
	}
}

bool fz_legalize(const fz_prog_t *p, const uint8_t *mask, fz_prog_t *out)
{
	bool oom = false;
	memset(out, 0, sizeof(*out));
	out->seed = p->seed;
	memcpy(out->nb, p->nb, sizeof(p->nb));
	out->nprim = p->nprim;
	for (int t = 0; t < 2; t++) {
		lg_t *l = calloc(1, sizeof(*l));
		if (!l)
			return true;
		l->p = p;
		l->out = out;
		l->t = t;
		for (int i = 0; i < p->n[t]; i++) {
			const fz_op_t *op = &p->ops[t][i];
			if (mask && (mask[op->prim / 8] >> (op->prim % 8) & 1))
				continue;
			l->prim = op->prim;
			process(l, *op);
		}
		oom |= l->oom;
		free(l);
	}
	return oom;
}

/* ---- printing ---- */
static const char *buf_name(int b, char *tmp)
{
	if (b < 0)
		return "-";
	if (b < FZ_B_PIN)
		sprintf(tmp, "D%d", b - FZ_B_DEV);
	else if (b < FZ_B_PAGE)
		sprintf(tmp, "H%d", b - FZ_B_PIN);
	else if (b < FZ_B_SLOT)
		sprintf(tmp, "G%d", b - FZ_B_PAGE);
	else
		sprintf(tmp, "S%d", b - FZ_B_SLOT);
	return tmp;
}

void fz_op_format(const fz_op_t *op, char *out, size_t size)
{
	char b0[8], b1[8], b2[8], head[48];
	const char *st = stream_names[op->st];
	if (op->prim < 0)
		snprintf(head, sizeof(head), "  fix ");
	else if (op->loop)
		snprintf(head, sizeof(head), "p%-4d loop%u.%-2u", op->prim, op->loop, op->iter);
	else
		snprintf(head, sizeof(head), "p%-4d", op->prim);
	const char *via = op->form ? " proc" : "";
	switch (op->kind) {
	case FZ_K_LAUNCH:
		snprintf(out, size, "%s LAUNCH %s/%s on %s (%s, %s, %s) off %d n %d a %d b %d grid %d block %d shm %d%s%s%s%s%s",
			 head, kern_names[op->sub], form_names[op->form], st,
			 buf_name(op->b[0], b0), buf_name(op->b[1], b1), buf_name(op->b[2], b2),
			 op->v[0], op->v[1], op->v[2], op->v[3], op->v[4] & 0xff, op->v[5],
			 op->v[4] >> 8,
			 op->form == FZ_F_EXATTR && (op->ev & FZ_A_PRIORITY) ? " +priority" : "",
			 op->form == FZ_F_EXATTR && (op->ev & FZ_A_CLUSTER) ? " +cluster" : "",
			 op->form == FZ_F_EXATTR && (op->ev & FZ_A_SERIAL) ? " +serial" : "",
			 op->form == FZ_F_EXATTR && (op->ev & FZ_A_EVENT) ?
				 ((op->ev & FZ_A_OWNEV) ? " +event(own)" : " +event") : "",
			 op->form == FZ_F_EXATTR && (op->ev & FZ_A_COOP) ? " +cooperative"
			 : op->form == FZ_F_COOP && !(op->v[3] & 15) ? " (too large)" : "");
		break;
	case FZ_K_COPY:
		snprintf(out, size, "%s COPY %s%s on %s %s[%d] <- %s[%d] x%d", head,
			 copy_names[op->sub], via, st, buf_name(op->b[0], b0), op->v[0],
			 buf_name(op->b[1], b1), op->v[1], op->v[2]);
		break;
	case FZ_K_MEMSET:
		snprintf(out, size, "%s MEMSET D%d%s%s on %s %s[%d] x%d = 0x%x", head, op->sub & 7,
			 op->sub & 8 ? "" : "Async", via, st, buf_name(op->b[0], b0), op->v[0],
			 op->v[1], (unsigned)op->v[2]);
		break;
	case FZ_K_HOSTFN:
		snprintf(out, size, "%s HOSTFN%s on %s %s <- %s, %d", head, via, st,
			 buf_name(op->b[0], b0), buf_name(op->b[1], b1), op->v[0]);
		break;
	case FZ_K_EVREC:
	case FZ_K_EVWAIT:
		snprintf(out, size, "%s %s%s%s e%d on %s", head, fz_kind_names[op->kind], via,
			 op->kind == FZ_K_EVREC && op->sub ? " (a new event)" : "", op->ev, st);
		break;
	case FZ_K_EVQUERY:
	case FZ_K_EVSYNC:
		snprintf(out, size, "%s %s e%d", head, fz_kind_names[op->kind], op->ev);
		break;
	case FZ_K_HREAD:
	case FZ_K_HWRITE:
	case FZ_K_REALLOC:
		snprintf(out, size, "%s %s %s %d", head, fz_kind_names[op->kind],
			 buf_name(op->b[0], b0), op->v[0]);
		break;
	case FZ_K_AREALLOC:
		snprintf(out, size, "%s %s%s %s %d on %s", head, fz_kind_names[op->kind],
			 op->alt ? " (new first)" : "", buf_name(op->b[0], b0), op->v[0], st);
		break;
	default:
		snprintf(out, size, "%s %s%s on %s", head, fz_kind_names[op->kind], via, st);
		break;
	}
}
