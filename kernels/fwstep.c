/*
 * fwstep: one token of a decoder, issued the way a framework issues it
 * rather than the way a hand-tuned C program would.  Inside a step the host
 * reads device values back (.item()-style checks every R layers), records
 * and queries an event after each layer (a caching allocator), may join a
 * side stream by events (a copy stream), hands out its scratch buffer from a
 * small rotation (allocator addresses), repeats one layer structure with
 * each layer's own weights, and lets the KV cache grow: the attention's
 * grid, the append's slot and the position passed by value change from
 * token to token.  With --augment, each token begins with short steps of
 * the host's random choosing, all beginning alike, each ending in a
 * read-back (a data pipeline's per-sample augmentation on the GPU:
 * torchvision's transforms, drawn on the host per image).  Each feature
 * turns on and off on its own (fw_usage), so
 * graphshim's learner can be developed against each drift alone and all of
 * them together; every run writes the same bytes to --out whether graphshim
 * is loaded or not.  The kernels (fwstep.cu, fwstep_sim.c) use wrapping
 * 32-bit integers: reproducible bit for bit, sensitive to every order and
 * argument.
 */
#include <string.h>

#include "gs_wl.h"

#define FW_BLOCK 256     /* threads a block, as the kernels expect */
#define FW_MAX_ROTATE 64 /* scratch buffers at most */
#define FW_VOCAB 64      /* the token's argmax runs over x[0, min(FW_VOCAB, D)) */
#define FW_MAX_SIDES 16  /* --side-streams at most */
#define FW_MAX_TAIL 16   /* --tail-records at most */

typedef struct fw_cfg {
	long layers, dim, tokens, rotate, readback_every, chunk, ctx, seed, sides;
	bool events, grow, two_streams, kv_copy, set_attr, readback_async, time, graph;
	bool fresh; /* --fresh-events */
	bool copy_stream, poll; /* --copy-stream, --poll */
	bool pool;              /* --pool */
	bool wide;              /* --wide-args */
	long tail, pause_us; /* --tail-records, --pause-us */
	long augment;        /* --augment */
	long variant;        /* --variant-every */
	const char *out;
} fw_cfg_t;

typedef struct fw_fns {
	CUfunction norm, matvec, append, attn, residual, flag, token, wide, residual_v;
} fw_fns_t;

/* --wide-args: k_wide's 768 bytes of parameters (fwstep.cu). */
#define FW_WIDE 96
typedef struct fw_wide {
	unsigned long long w[FW_WIDE];
} fw_wide_t;

typedef struct fw {
	fw_cfg_t c;
	fw_fns_t f;
	CUstream s, s2, s3; /* s3: --copy-stream */
	CUstream side[FW_MAX_SIDES];  /* --side-streams */
	CUevent ev_layer, ev_a, ev_b;
	CUevent tail[FW_MAX_TAIL]; /* --tail-records */
	CUdeviceptr x, h, y, W, kv, E, flag, tok;
	CUdeviceptr staged;           /* --copy-stream: the token's position, staged */
	int *positions;               /* --copy-stream: what it stages, one a token */
	CUdeviceptr t[FW_MAX_ROTATE]; /* the scratch rotation */
	long turn;                    /* layers issued so far: picks the scratch buffer */
	unsigned *toks, *flags;       /* every value read back, in order */
	size_t nflags;
	CUdeviceptr a[2], az, aflag; /* --augment: its ping-pong buffers, norm's zeroed output, its check */
	unsigned *avals;             /* --augment: its checks read back, in order */
	size_t navals;
	gs_wl_rng_t arng;            /* --augment: the host's draws */
} fw_t;

static void fw_usage(void)
{
	fprintf(stderr,
		"usage: fwstep [--layers L] [--dim D] [--tokens N] [--ctx C] [--chunk K]\n"
		"              [--rotate N] [--readback-every R] [--events|--no-events]\n"
		"              [--grow|--no-grow] [--two-streams] [--side-streams N]\n"
		"              [--kv-copy] [--set-attr]\n"
		"              [--readback sync|async] [--seed S] [--out FILE] [--time]\n"
		"              [--augment N] [--wide-args] [--explicit-graph]\n"
		"  --tokens N          steps, one token each (also --steps; default 200)\n"
		"  --ctx C             cache slots; the position wraps to 0 at C (default 512)\n"
		"  --chunk K           positions an attention block takes (default 16)\n"
		"  --rotate N          scratch buffers handed out in turn, one a layer (default 3)\n"
		"  --readback-every R  a flag read back after every R-th layer (default 2; 0: never)\n"
		"  --no-events         no event record + query after each layer\n"
		"  --no-grow           attention grid fixed at ceil(C/K), not ceil((pos+1)/K)\n"
		"  --two-streams       the KV append on a side stream, joined by events\n"
		"  --side-streams N    each layer forked over N side streams (2-16) and joined\n"
		"                      again, as cuDNN's RNNs do: every side waits on one event\n"
		"                      recorded on the stream, the first runs the projection,\n"
		"                      the second the append after it (an event between), and\n"
		"                      each records that same event again, the stream waiting\n"
		"                      after each record\n"
		"  --fresh-events      with --two-streams or --side-streams, every join and fork\n"
		"                      records a new event, destroyed after the waits on it, as\n"
		"                      torch's wait_stream makes and drops one each time\n"
		"  --tail-records N    after each token's read-back, N events recorded on the\n"
		"                      stream and queried before the next token (a caching\n"
		"                      allocator freeing blocks record_stream()ed to it; 0-16)\n"
		"  --poll              with --tail-records, the tail events are queried again\n"
		"                      before each layer, up to the first not ready (a caching\n"
		"                      allocator polling its pending frees at each allocation)\n"
		"  --copy-stream       a third stream stages each token's position (a copy from\n"
		"                      the host) and records an event the stream waits on before\n"
		"                      the token, as a data loader's copy stream does; with\n"
		"                      --fresh-events a new event each token, whose handle the\n"
		"                      driver may hand out again to a fork or join\n"
		"  --pause-us U        U microseconds of host work before each token (a server\n"
		"                      preparing the next request)\n"
		"  --pool              each layer's scratch buffer allocated on the stream\n"
		"                      (cuMemAllocAsync) and freed after the layer\n"
		"                      (cuMemFreeAsync), as PyTorch's cudaMallocAsync backend\n"
		"                      does every temporary; no rotation\n"
		"  --augment N         before each token, N short steps of 5-10 launches drawn\n"
		"                      on the host (a copy of x, then 3-8 of normalize,\n"
		"                      project, add in a random order), each read back, as a\n"
		"                      per-image GPU augmentation is; then folded into x\n"
		"  --variant-every K   the last layer's residual by another kernel (the same sum,\n"
		"                      another parameter layout) in tokens K to 2K-1, 3K to\n"
		"                      4K-1, ...: a step that comes as two structures, unlike\n"
		"                      at one launch, as a framework's kernel chosen by size or\n"
		"                      alignment makes it\n"
		"  --wide-args         after each layer's residual, a kernel with 768 bytes of\n"
		"                      parameters (PyTorch's offset calculators carry kilobytes):\n"
		"                      the scratch pointer and counters of the position at\n"
		"                      scattered places, in runs of 3, 24 and 36 words\n"
		"  --kv-copy           the KV append as cuMemcpyDtoDAsync, not a kernel\n"
		"  --set-attr          the attention's dynamic shared memory limit set before\n"
		"                      each of its launches, as flash attention does (CUDA)\n"
		"  --readback          sync: cuStreamSynchronize + cuMemcpyDtoH (default);\n"
		"                      async: cuMemcpyDtoHAsync + cuStreamSynchronize\n"
		"  --explicit-graph    one captured graph a position; only with --no-grow\n"
		"                      --rotate 1 --no-events --readback-every 0\n");
	exit(1);
}

static void fw_parse(fw_cfg_t *c, int argc, char **argv)
{
	*c = (fw_cfg_t){ .layers = 12, .dim = 256, .tokens = 200, .rotate = 3, .readback_every = 2,
			 .chunk = 16, .ctx = 512, .seed = 1, .events = true, .grow = true };
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (gs_wl_opt(argc, argv, &i, "--layers", &v))
			c->layers = gs_wl_arg_long("--layers", v, 1, 1000);
		else if (gs_wl_opt(argc, argv, &i, "--dim", &v))
			c->dim = gs_wl_arg_long("--dim", v, 1, 4096);
		else if (gs_wl_opt(argc, argv, &i, "--tokens", &v) ||
			 gs_wl_opt(argc, argv, &i, "--steps", &v))
			c->tokens = gs_wl_arg_long("--tokens", v, 1, 100000000);
		else if (gs_wl_opt(argc, argv, &i, "--ctx", &v))
			c->ctx = gs_wl_arg_long("--ctx", v, 1, 1 << 20);
		else if (gs_wl_opt(argc, argv, &i, "--chunk", &v))
			c->chunk = gs_wl_arg_long("--chunk", v, 1, 1 << 20);
		else if (gs_wl_opt(argc, argv, &i, "--rotate", &v))
			c->rotate = gs_wl_arg_long("--rotate", v, 1, FW_MAX_ROTATE);
		else if (gs_wl_opt(argc, argv, &i, "--readback-every", &v))
			c->readback_every = gs_wl_arg_long("--readback-every", v, 0, 1000);
		else if (gs_wl_opt(argc, argv, &i, "--seed", &v))
			c->seed = gs_wl_arg_long("--seed", v, 0, 0x7fffffff);
		else if (gs_wl_opt(argc, argv, &i, "--out", &v))
			c->out = v;
		else if (gs_wl_opt(argc, argv, &i, "--readback", &v)) {
			if (strcmp(v, "sync") != 0 && strcmp(v, "async") != 0)
				fw_usage();
			c->readback_async = strcmp(v, "async") == 0;
		} else if (strcmp(argv[i], "--events") == 0 || strcmp(argv[i], "--no-events") == 0)
			c->events = argv[i][2] == 'e';
		else if (strcmp(argv[i], "--grow") == 0 || strcmp(argv[i], "--no-grow") == 0)
			c->grow = argv[i][2] == 'g';
		else if (gs_wl_opt(argc, argv, &i, "--tail-records", &v))
			c->tail = gs_wl_arg_long("--tail-records", v, 0, FW_MAX_TAIL);
		else if (gs_wl_opt(argc, argv, &i, "--augment", &v))
			c->augment = gs_wl_arg_long("--augment", v, 0, 1000);
		else if (gs_wl_opt(argc, argv, &i, "--pause-us", &v))
			c->pause_us = gs_wl_arg_long("--pause-us", v, 0, 10000000);
		else if (strcmp(argv[i], "--fresh-events") == 0)
			c->fresh = true;
		else if (strcmp(argv[i], "--poll") == 0)
			c->poll = true;
		else if (strcmp(argv[i], "--copy-stream") == 0)
			c->copy_stream = true;
		else if (strcmp(argv[i], "--two-streams") == 0)
			c->two_streams = true;
		else if (gs_wl_opt(argc, argv, &i, "--side-streams", &v))
			c->sides = gs_wl_arg_long("--side-streams", v, 2, FW_MAX_SIDES);
		else if (strcmp(argv[i], "--kv-copy") == 0)
			c->kv_copy = true;
		else if (strcmp(argv[i], "--pool") == 0)
			c->pool = true;
		else if (strcmp(argv[i], "--wide-args") == 0)
			c->wide = true;
		else if (gs_wl_opt(argc, argv, &i, "--variant-every", &v))
			c->variant = gs_wl_arg_long("--variant-every", v, 1, 1000000);
		else if (strcmp(argv[i], "--set-attr") == 0)
			c->set_attr = true;
		else if (strcmp(argv[i], "--time") == 0)
			c->time = true;
		else if (strcmp(argv[i], "--explicit-graph") == 0)
			c->graph = true;
		else
			fw_usage();
	}
	/* A captured step bakes in everything a static step has; the position
	 * is baked too, so there is one graph a position. */
	if (c->graph && (c->grow || c->rotate != 1 || c->events || c->readback_every != 0 || c->pool ||
			 c->augment)) {
		fprintf(stderr, "fwstep: --explicit-graph needs the static step: "
				"--no-grow --rotate 1 --no-events --readback-every 0, no --pool or --augment\n");
		exit(1);
	}

}

/* What --set-attr allows the attention (it asks for none). */
#define FW_ATTN_SHMEM_LIMIT 1024

static void fw_launch(CUfunction fn, unsigned grid, CUstream s, void **p)
{
	GS_CHECK(cuLaunchKernel(fn, grid, 1, 1, FW_BLOCK, 1, 1, 0, s, p, NULL));
}

static unsigned fw_blocks(long n)
{
	return (unsigned)((n + FW_BLOCK - 1) / FW_BLOCK);
}

/* A caching allocator asks whether a block's last use is done: not an error. */
static CUresult fw_query(CUevent e)
{
	CUresult r = cuEventQuery(e);
	return r == CUDA_ERROR_NOT_READY ? CUDA_SUCCESS : r;
}

/* --poll: the tail events queried in order up to the first not ready. */
static void fw_poll(const fw_t *w)
{
	for (long e = 0; e < w->c.tail; e++) {
		CUresult r = cuEventQuery(w->tail[e]);
		if (r == CUDA_ERROR_NOT_READY)
			return;
		GS_CHECK(r);
	}
}

/* Host work for us microseconds, between tokens. */
static void fw_pause(long us)
{
	uint64_t until = gs_wl_now_ns() + (uint64_t)us * 1000u;
	while (us > 0 && gs_wl_now_ns() < until)
		;
}

/*
 * Four bytes of device memory read by the host, as .item() does.  s is
 * non-blocking, so the synchronous copy (on the legacy stream) would not
 * wait for it: the host synchronizes s first.
 */
static unsigned fw_read(fw_t *w, CUdeviceptr src)
{
	unsigned v;
	if (w->c.readback_async) {
		GS_CHECK(cuMemcpyDtoHAsync(&v, src, sizeof(v), w->s));
		GS_CHECK(cuStreamSynchronize(w->s));
	} else {
		GS_CHECK(cuStreamSynchronize(w->s));
		GS_CHECK(cuMemcpyDtoH(&v, src, sizeof(v)));
	}
	return v;
}

/* kv[pos] = *t, on stream s: a kernel, or a device copy with --kv-copy. */
static void fw_append(fw_t *w, CUstream s, CUdeviceptr kv, CUdeviceptr *t, int pos)
{
	int D = (int)w->c.dim;
	if (w->c.kv_copy) {
		size_t row = (size_t)D * sizeof(unsigned);
		GS_CHECK(cuMemcpyDtoDAsync(kv + (size_t)pos * row, *t, row, s));
	} else {
		void *p[] = { &kv, t, &pos, &D };
		fw_launch(w->f.append, fw_blocks(D), s, p);
	}
}

/*
 * The projection and the append forked over the side streams and joined
 * again, as cuDNN's RNNs spread a step (docs/limits.md, "Several streams in
 * one step"): every side waits on an event recorded on the stream; the
 * first side projects, the second appends after it (an event between); each
 * side records the fork's event again, and the stream waits after each.
 */
/*
 * Record an event on stream s for a join or fork: ev, or with --fresh-events
 * a new event, which the caller drops (fw_drop) after the waits on it.
 */
static CUevent fw_record(fw_t *w, CUevent ev, CUstream s)
{
	if (w->c.fresh)
		GS_CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	GS_CHECK(cuEventRecord(ev, s));
	return ev;
}

static void fw_drop(const fw_t *w, CUevent ev)
{
	if (w->c.fresh)
		GS_CHECK(cuEventDestroy(ev));
}

static void fw_sides(fw_t *w, void **pm, CUdeviceptr kv, CUdeviceptr *t, int pos)
{
	long n = w->c.sides;
	CUevent a = fw_record(w, w->ev_a, w->s);
	for (long k = 0; k < n; k++)
		GS_CHECK(cuStreamWaitEvent(w->side[k], a, 0));
	fw_drop(w, a);
	fw_launch(w->f.matvec, fw_blocks(w->c.dim), w->side[0], pm);
	CUevent b = fw_record(w, w->ev_b, w->side[0]);
	GS_CHECK(cuStreamWaitEvent(w->side[1], b, 0));
	fw_drop(w, b);
	fw_append(w, w->side[1], kv, t, pos);
	for (long k = 0; k < n; k++) {
		a = fw_record(w, w->ev_a, w->side[k]);
		GS_CHECK(cuStreamWaitEvent(w->s, a, 0));
		fw_drop(w, a);
	}
}

/*
 * --copy-stream: token k's position staged on the copy stream, which
 * records an event (a new one with --fresh-events, dropped after the wait)
 * that the stream waits on before the token.
 */
static void fw_stage(fw_t *w, long k, int pos)
{
	w->positions[k] = pos;
	GS_CHECK(cuMemcpyHtoDAsync(w->staged, &w->positions[k], sizeof(int), w->s3));
	CUevent e = fw_record(w, w->ev_b, w->s3);
	GS_CHECK(cuStreamWaitEvent(w->s, e, 0));
	fw_drop(w, e);
}

/*
 * --wide-args: x += a digest of 768 bytes of parameters and the scratch
 * buffer t.  Words that change from token to token or layer to layer lie
 * as a patch of a framework's would: t's pointer with the position and
 * the layer (a run of 3), the position tripled 18 words on (alone), 24
 * words of it at 24-47 (192 bytes) and 36 at 60-95 (288 bytes: past what
 * one run of graphshim's updater writes); constants between.
 */
static void fw_wide(fw_t *w, CUdeviceptr t, int pos, long l)
{
	int D = (int)w->c.dim;
	fw_wide_t m;
	for (int k = 0; k < FW_WIDE; k++)
		m.w[k] = 7ull * (unsigned long long)k + 1;
	m.w[0] = (unsigned long long)(uintptr_t)t;
	m.w[1] = (unsigned long long)pos;
	m.w[2] = (unsigned long long)l;
	m.w[20] = 3ull * (unsigned long long)pos;
	for (int k = 24; k < 48; k++)
		m.w[k] = (unsigned long long)pos + (unsigned long long)k;
	for (int k = 60; k < FW_WIDE; k++)
		m.w[k] = (unsigned long long)pos ^ (0x9e37ull * (unsigned long long)k << 20);
	void *p[] = { &w->x, &m, &D };
	fw_launch(w->f.wide, fw_blocks(D), w->s, p);
}

/* One layer at position pos; l picks the layer's weights and cache. */
static void fw_layer(fw_t *w, long l, int pos)
{
	const fw_cfg_t *c = &w->c;
	int D = (int)c->dim, chunk = (int)c->chunk;
	size_t wsz = sizeof(unsigned);
	CUdeviceptr pooled = 0, *t = &w->t[w->turn++ % c->rotate];
	if (c->pool) {
		/* Written (the projection) before anything reads it. */
		GS_CHECK(cuMemAllocAsync(&pooled, (size_t)D * wsz, w->s));
		t = &pooled;
	}
	CUdeviceptr Wl = w->W + (size_t)l * (size_t)D * (size_t)D * wsz;
	CUdeviceptr kv = w->kv + (size_t)l * (size_t)c->ctx * (size_t)D * wsz;
	long span = c->grow ? pos + 1 : c->ctx;
	unsigned grid = (unsigned)((span + chunk - 1) / chunk);

	if (c->poll)
		fw_poll(w);
	void *pn[] = { &w->h, &w->y, &w->x, &D };
	fw_launch(w->f.norm, 1, w->s, pn);
	void *pm[] = { t, &Wl, &w->h, &D };
	if (c->sides) {
		fw_sides(w, pm, kv, t, pos);
	} else if (c->two_streams) {
		fw_launch(w->f.matvec, fw_blocks(D), w->s, pm);
		/* The append on the side stream, as a copy stream would. */
		CUevent a = fw_record(w, w->ev_a, w->s);
		GS_CHECK(cuStreamWaitEvent(w->s2, a, 0));
		fw_drop(w, a);
		fw_append(w, w->s2, kv, t, pos);
		CUevent b = fw_record(w, w->ev_b, w->s2);
		GS_CHECK(cuStreamWaitEvent(w->s, b, 0));
		fw_drop(w, b);
	} else {
		fw_launch(w->f.matvec, fw_blocks(D), w->s, pm);
		fw_append(w, w->s, kv, t, pos);
	}
	void *pa[] = { &w->y, t, &kv, &pos, &chunk, &D };
#ifndef GS_USE_HIP
	if (c->set_attr)
		GS_CHECK(cuFuncSetAttribute(w->f.attn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					    FW_ATTN_SHMEM_LIMIT));
#endif
	fw_launch(w->f.attn, grid, w->s, pa);
	void *pr[] = { &w->x, &w->y, &D, &D };
	if (c->variant && l == c->layers - 1 && (pos / c->variant) % 2 == 1)
		fw_launch(w->f.residual_v, fw_blocks(D), w->s, pr); /* --variant-every */
	else
		fw_launch(w->f.residual, fw_blocks(D), w->s, pr);
	if (c->wide)
		fw_wide(w, *t, pos, l);
	if (c->pool) /* after its last use, on the stream every use is joined to */
		GS_CHECK(cuMemFreeAsync(pooled, w->s));

	if (c->events) {
		GS_CHECK(cuEventRecord(w->ev_layer, w->s));
		GS_CHECK(fw_query(w->ev_layer));
	}
	if (c->readback_every > 0 && (l + 1) % c->readback_every == 0) {
		void *pf[] = { &w->flag, &w->x, &D };
		fw_launch(w->f.flag, 1, w->s, pf);
		unsigned v = fw_read(w, w->flag);
		/* The stand-in for a NaN check: a digest of 0 stops the run. */
		if (v == 0) {
			fprintf(stderr, "fwstep: position %d, layer %ld: the check read 0\n", pos, l);
			exit(3);
		}
		w->flags[w->nflags++] = v;
	}
}

/*
 * --augment: N short steps before the token, each drawn on the host: a
 * copy of x (every one begins so, unlike any step of the decoder; the
 * append kernel at slot 0), then 3-8 operations in a
 * random order, each a normalization, a projection or an addition between
 * two buffers in turn, and a check read back.  The steps' launch shapes
 * repeat only by chance (9,828 orders), as a per-image augmentation's do.
 * Then x takes the last result in.
 */
static void fw_augment(fw_t *w)
{
	int D = (int)w->c.dim;
	int cur = 0;
	for (long n = 0; n < w->c.augment; n++) {
		int at = 0; /* the append kernel as a copy: a[0] = x */
		void *p0[] = { &w->a[0], &w->x, &at, &D };
		fw_launch(w->f.append, fw_blocks(D), w->s, p0);
		cur = 0;
		long m = 3 + (long)(gs_wl_rng_next(&w->arng) % 6);
		for (long k = 0; k < m; k++) {
			CUdeviceptr *src = &w->a[cur], *dst = &w->a[1 - cur];
			switch (gs_wl_rng_next(&w->arng) % 3) {
			case 0: {
				void *p[] = { dst, &w->az, src, &D };
				fw_launch(w->f.norm, 1, w->s, p);
				cur = 1 - cur;
				break;
			}
			case 1: {
				void *p[] = { dst, &w->W, src, &D };
				fw_launch(w->f.matvec, fw_blocks(D), w->s, p);
				cur = 1 - cur;
				break;
			}
			default: {
				void *p[] = { src, dst, &D };
				fw_launch(w->f.residual, fw_blocks(D), w->s, p);
				break;
			}
			}
		}
		void *pf[] = { &w->aflag, &w->a[cur], &D };
		fw_launch(w->f.flag, 1, w->s, pf);
		w->avals[w->navals++] = fw_read(w, w->aflag);
	}
	void *pr[] = { &w->x, &w->a[cur], &D };
	fw_launch(w->f.residual, fw_blocks(D), w->s, pr);
}

/* One token's work up to the token in device memory (not read back). */
static void fw_step(fw_t *w, int pos)
{
	int D = (int)w->c.dim, vocab = D < FW_VOCAB ? D : FW_VOCAB;

	for (long l = 0; l < w->c.layers; l++)
		fw_layer(w, l, pos);
	void *pt[] = { &w->tok, &w->x, &w->E, &vocab, &D };
	fw_launch(w->f.token, 1, w->s, pt);
}

/* n words of device memory, pseudo-random from rng, or zeros (rng NULL). */
static CUdeviceptr fw_words(size_t n, gs_wl_rng_t *rng)
{
	unsigned *h = calloc(n, sizeof(unsigned));
	if (h == NULL) {
		perror("calloc");
		exit(2);
	}
	for (size_t i = 0; rng != NULL && i < n; i++)
		h[i] = (unsigned)(gs_wl_rng_next(rng) >> 32);
	CUdeviceptr p = gs_wl_alloc(n * sizeof(unsigned));
	GS_CHECK(cuMemcpyHtoD(p, h, n * sizeof(unsigned)));
	free(h);
	return p;
}

static void fw_setup(fw_t *w)
{
	const fw_cfg_t *c = &w->c;
	size_t D = (size_t)c->dim, L = (size_t)c->layers;
	gs_wl_rng_t rng;

	gs_wl_rng_seed(&rng, (uint64_t)c->seed, 7);
	w->W = fw_words(L * D * D, &rng);
	w->E = fw_words((size_t)FW_VOCAB * D, &rng);
	w->x = fw_words(D, &rng);
	w->h = fw_words(D, NULL);
	w->y = fw_words(D, NULL);
	for (long k = 0; k < c->rotate; k++)
		w->t[k] = fw_words(D, NULL);
	w->kv = fw_words(L * (size_t)c->ctx * D, NULL);
	w->flag = fw_words(1, NULL);
	w->tok = fw_words(1, NULL);
	GS_CHECK(cuStreamCreate(&w->s, CU_STREAM_NON_BLOCKING));
	GS_CHECK(cuStreamCreate(&w->s2, CU_STREAM_NON_BLOCKING));
	GS_CHECK(cuStreamCreate(&w->s3, CU_STREAM_NON_BLOCKING));
	w->staged = fw_words(1, NULL);
	for (long k = 0; k < c->sides; k++)
		GS_CHECK(cuStreamCreate(&w->side[k], CU_STREAM_NON_BLOCKING));
	GS_CHECK(cuEventCreate(&w->ev_layer, CU_EVENT_DISABLE_TIMING));
	for (long e = 0; e < w->c.tail; e++)
		GS_CHECK(cuEventCreate(&w->tail[e], CU_EVENT_DISABLE_TIMING));
	GS_CHECK(cuEventCreate(&w->ev_a, CU_EVENT_DISABLE_TIMING));
	GS_CHECK(cuEventCreate(&w->ev_b, CU_EVENT_DISABLE_TIMING));
	size_t nflags = c->readback_every > 0 ? (size_t)(c->layers / c->readback_every) : 0;
	w->toks = calloc((size_t)c->tokens, sizeof(unsigned));
	w->flags = calloc((size_t)c->tokens * nflags + 1, sizeof(unsigned));
	w->positions = calloc((size_t)c->tokens, sizeof(int));
	w->avals = calloc((size_t)c->tokens * (size_t)c->augment + 1, sizeof(unsigned));
	w->a[0] = fw_words(D, NULL);
	w->a[1] = fw_words(D, NULL);
	w->az = fw_words(D, NULL);
	w->aflag = fw_words(1, NULL);
	gs_wl_rng_seed(&w->arng, (uint64_t)c->seed, 11);
	if (w->toks == NULL || w->flags == NULL || w->positions == NULL || w->avals == NULL) {
		perror("calloc");
		exit(2);
	}
}

/* Everything the run produced, in a fixed order. */
static void fw_output(fw_t *w)
{
	const fw_cfg_t *c = &w->c;
	size_t row = (size_t)c->dim * sizeof(unsigned);
	gs_wl_out_t o;

	gs_wl_out_open(&o, c->out);
	gs_wl_out_write(&o, w->toks, (size_t)c->tokens * sizeof(unsigned));
	gs_wl_out_write(&o, w->flags, w->nflags * sizeof(unsigned));
	gs_wl_out_device(&o, w->x, row);
	gs_wl_out_device(&o, w->h, row);
	gs_wl_out_device(&o, w->y, row);
	for (long k = 0; k < c->rotate; k++)
		gs_wl_out_device(&o, w->t[k], row);
	gs_wl_out_device(&o, w->kv, (size_t)c->layers * (size_t)c->ctx * row);
	gs_wl_out_device(&o, w->tok, sizeof(unsigned));
	gs_wl_out_device(&o, w->flag, sizeof(unsigned));
	if (c->copy_stream)
		gs_wl_out_device(&o, w->staged, sizeof(int));
	if (c->augment) {
		gs_wl_out_write(&o, w->avals, w->navals * sizeof(unsigned));
		gs_wl_out_device(&o, w->a[0], row);
		gs_wl_out_device(&o, w->a[1], row);
	}
	gs_wl_out_close(&o);
}

static void fw_report(const fw_cfg_t *c, gs_wl_timer_t *tm)
{
	char label[320];
	snprintf(label, sizeof(label),
		 "fwstep mode=%s L=%ld D=%ld ctx=%ld chunk=%ld rotate=%ld readback_every=%ld "
		 "events=%d grow=%d two_streams=%d sides=%ld fresh=%d tail=%ld poll=%d copy_stream=%d "
		 "pause_us=%ld kv_copy=%d set_attr=%d augment=%ld readback=%s",
		 c->graph ? "graph" : "eager", c->layers, c->dim, c->ctx, c->chunk, c->rotate,
		 c->readback_every, c->events, c->grow, c->two_streams, c->sides, c->fresh, c->tail, c->poll,
		 c->copy_stream, c->pause_us, c->kv_copy, c->set_attr, c->augment,
		 c->readback_async ? "async" : "sync");
	gs_wl_timer_report(tm, label);
}

int main(int argc, char **argv)
{
	fw_t w = { 0 };
	gs_wl_dev_t dev;
	CUmodule mod;

	fw_parse(&w.c, argc, argv);
	gs_wl_dev_init(&dev);
	gs_wl_module_load(&mod, "fwstep");
	w.f.norm = gs_wl_function(mod, "k_norm");
	w.f.matvec = gs_wl_function(mod, "k_matvec");
	w.f.append = gs_wl_function(mod, "k_append");
	w.f.attn = gs_wl_function(mod, "k_attn");
	w.f.residual = gs_wl_function(mod, "k_residual");
	w.f.flag = gs_wl_function(mod, "k_flag");
	w.f.token = gs_wl_function(mod, "k_token");
	w.f.wide = gs_wl_function(mod, "k_wide");
	w.f.residual_v = gs_wl_function(mod, "k_residual_v");
	fw_setup(&w);

	/* --explicit-graph: the static step captured once per position. */
	long ngraphs = w.c.graph ? (w.c.ctx < w.c.tokens ? w.c.ctx : w.c.tokens) : 0;
	CUgraphExec *exec = calloc((size_t)ngraphs + 1, sizeof(*exec));
	if (exec == NULL) {
		perror("calloc");
		return 2;
	}
	for (long p = 0; p < ngraphs; p++) {
		gs_wl_capture_begin(w.s);
		fw_step(&w, (int)p);
		exec[p] = gs_wl_capture_end(w.s);
	}

	gs_wl_timer_t tm;
	gs_wl_timer_init(&tm, (size_t)w.c.tokens);
	uint64_t t0 = gs_wl_now_ns();
	for (long k = 0; k < w.c.tokens; k++) {
		int pos = (int)(k % w.c.ctx);
		fw_pause(w.c.pause_us);
		gs_wl_timer_start(&tm);
		for (long e = 0; e < w.c.tail; e++)
			GS_CHECK(fw_query(w.tail[e]));
		if (w.c.copy_stream)
			fw_stage(&w, k, pos);
		if (w.c.augment)
			fw_augment(&w);
		if (w.c.graph)
			GS_CHECK(cuGraphLaunch(exec[pos], w.s));
		else
			fw_step(&w, pos);
		w.toks[k] = fw_read(&w, w.tok);
		for (long e = 0; e < w.c.tail; e++)
			GS_CHECK(cuEventRecord(w.tail[e], w.s));
		gs_wl_timer_stop(&tm);
	}
	GS_CHECK(cuStreamSynchronize(w.s));
	GS_CHECK(cuStreamSynchronize(w.s2));
	GS_CHECK(cuStreamSynchronize(w.s3));
	gs_wl_timer_wall(&tm, gs_wl_now_ns() - t0);
	if (w.c.time)
		fw_report(&w.c, &tm);
	fw_output(&w);

	for (long p = 0; p < ngraphs; p++)
		GS_CHECK(cuGraphExecDestroy(exec[p]));
	free(exec);
	for (long e = 0; e < w.c.tail; e++)
		GS_CHECK(cuEventDestroy(w.tail[e]));
	GS_CHECK(cuEventDestroy(w.ev_layer));
	GS_CHECK(cuEventDestroy(w.ev_a));
	GS_CHECK(cuEventDestroy(w.ev_b));
	GS_CHECK(cuStreamDestroy(w.s));
	GS_CHECK(cuStreamDestroy(w.s2));
	GS_CHECK(cuStreamDestroy(w.s3));
	CUdeviceptr bufs[] = { w.x, w.h, w.y, w.W, w.kv, w.E, w.flag, w.tok, w.a[0], w.a[1], w.az, w.aflag };
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		GS_CHECK(cuMemFree(bufs[i]));
	for (long k = 0; k < w.c.rotate; k++)
		GS_CHECK(cuMemFree(w.t[k]));
	GS_CHECK(cuModuleUnload(mod));
	gs_wl_timer_free(&tm);
	free(w.toks);
	free(w.flags);
	free(w.positions);
	free(w.avals);
	return 0;
}
