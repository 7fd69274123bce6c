/*
 * decode: a transformer-like decode loop, the workload graphshim exists for.
 * Each step embeds the last token, runs L layers of about 16 small kernels,
 * takes the argmax into device memory and (by default) reads the token back
 * with a synchronous cuMemcpyDtoH, as a generate loop does.  Flags turn on
 * the patterns that make graph replay hard (see decode_usage); --explicit-
 * graph captures each distinct step by hand, the reference for the best a
 * graph can do; --check compares against a CPU reference.  Every variant of
 * a run writes the same bytes to --out whether graphshim is loaded or not.
 */
#include <pthread.h>
#include <string.h>

#include "decode.h"
#include "gs_wl.h"

typedef struct dec_fns {
	CUfunction embed, ln_stats, ln_apply, matvec, rope, kv_append, att_scores;
	CUfunction softmax, att_wsum, add, gelu, scale, argmax, pos_inc;
} dec_fns_t;

/* One set of activations; --pingpong alternates between two. */
typedef struct dec_act {
	CUdeviceptr x, h, stats, qkv, sc, att, proj, u, logits, xres;
} dec_act_t;

/* One independent decoder: its own stream(s), buffers and loop. */
typedef struct dec {
	const dec_cfg_t *c;
	const dec_layout_t *l;
	const dec_fns_t *f;
	const gs_wl_dev_t *dev;
	CUdeviceptr w; /* shared, read-only */
	int id;
	CUstream s, s2;
	CUevent fork, join;
	/* --prefetch: the copy stream, its events, the staged value, its log */
	CUstream s3;
	CUevent pf_ready, pf_free;
	int *pf_host; /* two pinned slots */
	CUdeviceptr pf_dev, pf_log;
	dec_act_t act[2];
	CUdeviceptr kc, vc, pos, tok, hist;
	int *toks;      /* tokens read back, one a step */
	CUgraphExec exec[4]; /* --explicit-graph: [parity | extra << 1] */
	pthread_barrier_t *barrier;
	gs_wl_timer_t tm;
} dec_t;

static void decode_usage(void)
{
	fprintf(stderr,
		"usage: decode [--layers L] [--dim D] [--heads H] [--ctx C] [--vocab V]\n"
		"              [--steps N] [--seed S] [--out FILE] [--time] [--check]\n"
		"              [--no-readback] [--readback sync|async] [--explicit-graph]\n"
		"              [--pos-arg] [--pingpong] [--two-streams] [--copies] [--workspace]\n"
		"              [--branch] [--branch-late] [--branch-k K] [--threads T] [--prefetch]\n"
		"  --no-readback   no read-back and no sync inside the loop (one at the end)\n"
		"  --readback      sync: cuMemcpyDtoH on blocking streams (default);\n"
		"                  async: cuMemcpyDtoHAsync + cuStreamSynchronize\n"
		"  --pos-arg       position passed by value: arguments change every step\n"
		"  --pingpong      activations alternate between two buffer sets\n"
		"  --two-streams   attention on a second stream, joined by events\n"
		"  --copies        device copies and memsets inside the step\n"
		"  --workspace     --copies into a workspace of each step's own, freed after its\n"
		"                  read-back once the next step's is allocated (two addresses in\n"
		"                  turn, each freed while the step that used it may be built)\n"
		"  --branch        after a token t at step s with (t+s) %% K == 0, an extra kernel\n"
		"  --branch-late   --branch with the extra kernel after the final layernorm, not\n"
		"                  after the embedding: two steps alike but for their last launches\n"
		"  --prefetch      a copy stream stages each step's input one step ahead, as a\n"
		"                  data loader's prefetcher does: the step waits for it, logs it\n"
		"                  and records an event the next staging copy waits on\n"
		"  --threads T     T host threads, each an independent decoder\n"
		"  --check         small sizes by default; compare with the CPU reference\n");
	exit(1);
}

static void decode_parse(dec_cfg_t *c, int argc, char **argv)
{
	bool set_l = false, set_d = false, set_c = false, set_s = false, set_v = false, set_h = false;

	*c = (dec_cfg_t){ .layers = 12, .dim = 768, .ctx = 512, .vocab = 2048, .steps = 200,
			  .seed = 1, .threads = 1, .branch_k = 3 };
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (gs_wl_opt(argc, argv, &i, "--layers", &v))
			c->layers = gs_wl_arg_long("--layers", v, 1, 1000), set_l = true;
		else if (gs_wl_opt(argc, argv, &i, "--dim", &v))
			c->dim = gs_wl_arg_long("--dim", v, 2, 1 << 16), set_d = true;
		else if (gs_wl_opt(argc, argv, &i, "--heads", &v))
			c->heads = gs_wl_arg_long("--heads", v, 1, 1 << 16), set_h = true;
		else if (gs_wl_opt(argc, argv, &i, "--ctx", &v))
			c->ctx = gs_wl_arg_long("--ctx", v, 1, 1 << 20), set_c = true;
		else if (gs_wl_opt(argc, argv, &i, "--vocab", &v))
			c->vocab = gs_wl_arg_long("--vocab", v, 1, 1 << 24), set_v = true;
		else if (gs_wl_opt(argc, argv, &i, "--steps", &v))
			c->steps = gs_wl_arg_long("--steps", v, 1, 100000000), set_s = true;
		else if (gs_wl_opt(argc, argv, &i, "--seed", &v))
			c->seed = gs_wl_arg_long("--seed", v, 0, 0x7fffffff);
		else if (gs_wl_opt(argc, argv, &i, "--threads", &v))
			c->threads = gs_wl_arg_long("--threads", v, 1, 64);
		else if (gs_wl_opt(argc, argv, &i, "--branch-k", &v))
			c->branch_k = gs_wl_arg_long("--branch-k", v, 1, 1000000);
		else if (gs_wl_opt(argc, argv, &i, "--out", &v))
			c->out = v;
		else if (gs_wl_opt(argc, argv, &i, "--readback", &v)) {
			if (strcmp(v, "sync") == 0)
				c->readback_async = false;
			else if (strcmp(v, "async") == 0)
				c->readback_async = true;
			else
				decode_usage();
		} else if (strcmp(argv[i], "--time") == 0)
			c->time = true;
		else if (strcmp(argv[i], "--check") == 0)
			c->check = true;
		else if (strcmp(argv[i], "--no-readback") == 0)
			c->no_readback = true;
		else if (strcmp(argv[i], "--explicit-graph") == 0)
			c->graph = true;
		else if (strcmp(argv[i], "--pos-arg") == 0)
			c->pos_arg = true;
		else if (strcmp(argv[i], "--pingpong") == 0)
			c->pingpong = true;
		else if (strcmp(argv[i], "--two-streams") == 0)
			c->two_streams = true;
		else if (strcmp(argv[i], "--prefetch") == 0)
			c->prefetch = true;
		else if (strcmp(argv[i], "--copies") == 0)
			c->copies = true;
		else if (strcmp(argv[i], "--workspace") == 0)
			c->copies = c->workspace = true;
		else if (strcmp(argv[i], "--branch") == 0)
			c->branch = true;
		else if (strcmp(argv[i], "--branch-late") == 0)
			c->branch = c->branch_late = true;
		else
			decode_usage();
	}
	if (c->check) {
		/* Small enough for the reference, long enough to wrap the cache. */
		if (!set_l)
			c->layers = 2;
		if (!set_d)
			c->dim = 64;
		if (!set_h && !set_d)
			c->heads = 2;
		if (!set_c)
			c->ctx = 32;
		if (!set_s)
			c->steps = 40;
		if (!set_v)
			c->vocab = 256;
	}
	if (c->heads == 0)
		c->heads = c->dim % 64 == 0 ? c->dim / 64 : 1;
	long hd = c->dim / c->heads;
	if (c->dim % c->heads != 0 || hd % 2 != 0 || hd > 1024) {
		fprintf(stderr, "decode: --dim must be --heads times an even head size <= 1024\n");
		exit(1);
	}
	if (c->prefetch && (c->no_readback || c->graph)) {
		fprintf(stderr, "decode: --prefetch needs the read-back and no --explicit-graph\n");
		exit(1);
	}
	if (c->branch && c->no_readback) {
		fprintf(stderr, "decode: --branch needs the read-back (not --no-readback)\n");
		exit(1);
	}
	if (c->workspace && c->graph) {
		fprintf(stderr, "decode: --explicit-graph bakes the workspace in; not with --workspace\n");
		exit(1);
	}
	if (c->graph && c->pos_arg) {
		fprintf(stderr, "decode: --explicit-graph bakes the position in; not with --pos-arg\n");
		exit(1);
	}
}

static void dec_launch(CUfunction f, unsigned gx, unsigned gy, unsigned bx, CUstream s, void **p)
{
	GS_CHECK(cuLaunchKernel(f, gx, gy, 1, bx, 1, 1, 0, s, p, NULL));
}

static unsigned dec_blocks(long n, unsigned per)
{
	return (unsigned)((n + per - 1) / per);
}

/* y = W x + bias, one warp a row. */
static void dec_matvec(dec_t *d, CUstream s, CUdeviceptr *y, CUdeviceptr W, CUdeviceptr *x,
		       CUdeviceptr bias, long rows, long cols)
{
	int r = (int)rows, k = (int)cols;
	void *p[] = { y, &W, x, &bias, &r, &k };
	dec_launch(d->f->matvec, dec_blocks(rows * 32, 256), 1, 256, s, p);
}

static void dec_layernorm(dec_t *d, dec_act_t *a, CUdeviceptr g, CUdeviceptr b)
{
	int D = (int)d->c->dim;
	void *ps[] = { &a->stats, &a->x, &D };
	dec_launch(d->f->ln_stats, 1, 1, 256, d->s, ps);
	void *pa[] = { &a->h, &a->x, &a->stats, &g, &b, &D };
	dec_launch(d->f->ln_apply, dec_blocks(D, 256), 1, 256, d->s, pa);
}

/* Issue one step's work; step is the position (the device's pos too). */
/* The extra path of --branch: v = DEC_BRANCH_A * v + DEC_BRANCH_B (v: x, or
 * h after the final layernorm with --branch-late). */
static void dec_branch(dec_t *d, CUdeviceptr *v)
{
	float sa = DEC_BRANCH_A, sb = DEC_BRANCH_B;
	int D = (int)d->c->dim;
	void *p[] = { v, &sa, &sb, &D };
	dec_launch(d->f->scale, dec_blocks(D, 256), 1, 256, d->s, p);
}

static void dec_step(dec_t *d, long step, bool extra)
{
	const dec_cfg_t *c = d->c;
	const dec_layout_t *l = d->l;
	const dec_fns_t *f = d->f;
	dec_act_t *a = &d->act[c->pingpong ? (step & 1) : 0];
	CUdeviceptr posp = c->pos_arg ? 0 : d->pos, null = 0;
	/* With the position in device memory the by-value slot is a constant 0,
	 * so a step's arguments repeat exactly, as in a real decode loop. */
	int posv = c->pos_arg ? (int)step : 0, D = (int)c->dim, V = (int)c->vocab, H = (int)c->heads;
	int hd = D / H, ctx = (int)c->ctx, F = DEC_MLP * D, hist_len = (int)c->steps;
	int acc = c->copies ? 1 : 0;
	CUdeviceptr wb = d->w;
#define W_AT(off) (wb + (off) * sizeof(float))

	void *pe[] = { &a->x, &(CUdeviceptr){ W_AT(l->emb) }, &d->tok, &V, &D };
	dec_launch(f->embed, dec_blocks(D, 256), 1, 256, d->s, pe);
	if (extra && !c->branch_late)
		dec_branch(d, &a->x);
	for (long k = 0; k < c->layers; k++) {
		size_t base = (size_t)k * l->layer;
		CUdeviceptr kc = d->kc + (size_t)k * ctx * D * sizeof(float);
		CUdeviceptr vc = d->vc + (size_t)k * ctx * D * sizeof(float);
		CUstream as = d->s;

		dec_layernorm(d, a, W_AT(base + l->ln1_g), W_AT(base + l->ln1_b));
		dec_matvec(d, d->s, &a->qkv, W_AT(base + l->wqkv), &a->h, W_AT(base + l->bqkv), 3L * D, D);
		void *pr[] = { &a->qkv, &posp, &posv, &H, &hd };
		dec_launch(f->rope, dec_blocks((long)H * hd / 2, 256), 1, 256, d->s, pr);
		void *pk[] = { &kc, &vc, &a->qkv, &posp, &posv, &ctx, &D };
		dec_launch(f->kv_append, dec_blocks(D, 256), 1, 256, d->s, pk);

		if (c->two_streams) {
			GS_CHECK(cuEventRecord(d->fork, d->s));
			GS_CHECK(cuStreamWaitEvent(d->s2, d->fork, 0));
			as = d->s2;
		}
		if (c->copies)
			GS_CHECK(cuMemsetD32Async(a->att, 0, (size_t)D, as));
		void *psc[] = { &a->sc, &a->qkv, &kc, &posp, &posv, &ctx, &H, &hd };
		dec_launch(f->att_scores, dec_blocks(ctx, 8), (unsigned)H, 256, as, psc);
		void *psm[] = { &a->sc, &posp, &posv, &ctx };
		dec_launch(f->softmax, (unsigned)H, 1, 256, as, psm);
		void *pw[] = { &a->att, &a->sc, &vc, &posp, &posv, &ctx, &H, &hd, &acc };
		dec_launch(f->att_wsum, (unsigned)H, 1, (unsigned)((hd + 31) / 32 * 32), as, pw);
		if (c->two_streams) {
			GS_CHECK(cuEventRecord(d->join, d->s2));
			GS_CHECK(cuStreamWaitEvent(d->s, d->join, 0));
		}

		dec_matvec(d, d->s, &a->proj, W_AT(base + l->wo), &a->att, W_AT(base + l->bo), D, D);
		CUdeviceptr *resid = &a->x;
		if (c->copies) {
			/* The residual goes through a copy, so its order matters. */
			GS_CHECK(cuMemcpyDtoDAsync(a->xres, a->x, (size_t)D * sizeof(float), d->s));
			resid = &a->xres;
		}
		void *pa1[] = { &a->x, resid, &a->proj, &D };
		dec_launch(f->add, dec_blocks(D, 256), 1, 256, d->s, pa1);

		dec_layernorm(d, a, W_AT(base + l->ln2_g), W_AT(base + l->ln2_b));
		dec_matvec(d, d->s, &a->u, W_AT(base + l->w1), &a->h, W_AT(base + l->b1), F, D);
		void *pg[] = { &a->u, &F };
		dec_launch(f->gelu, dec_blocks(F, 256), 1, 256, d->s, pg);
		dec_matvec(d, d->s, &a->proj, W_AT(base + l->w2), &a->u, W_AT(base + l->b2), D, F);
		void *pa2[] = { &a->x, &a->x, &a->proj, &D };
		dec_launch(f->add, dec_blocks(D, 256), 1, 256, d->s, pa2);
	}
	dec_layernorm(d, a, W_AT(l->lnf_g), W_AT(l->lnf_b));
	if (extra && c->branch_late)
		dec_branch(d, &a->h);
	dec_matvec(d, d->s, &a->logits, W_AT(l->wlm), &a->h, null, V, D);
	void *pm[] = { &d->tok, &d->hist, &a->logits, &d->pos, &V, &hist_len };
	dec_launch(f->argmax, 1, 1, 1024, d->s, pm);
	void *pp[] = { &d->pos };
	dec_launch(f->pos_inc, 1, 1, 32, d->s, pp);
#undef W_AT
}

/*
 * --prefetch, at a step's start: the stream waits for the value staged in
 * the step before (a crossing wait), logs it, and records that it is done
 * with the staging buffer (a crossing record); the copy stream then waits
 * for that, stages the next value from a pinned slot and records it ready.
 * The slot written now was last read by the copy of two steps ago, which
 * the stream waited for before its read-back, so the host may write it.
 */
static void dec_prefetch(dec_t *d, long step)
{
	if (step > 0)
		GS_CHECK(cuStreamWaitEvent(d->s, d->pf_ready, 0));
	GS_CHECK(cuMemcpyDtoDAsync(d->pf_log + (size_t)step * sizeof(int), d->pf_dev, sizeof(int), d->s));
	GS_CHECK(cuEventRecord(d->pf_free, d->s));
	int *slot = &d->pf_host[(step + 1) & 1];
	*slot = (int)(step * 7 + 1);
	GS_CHECK(cuStreamWaitEvent(d->s3, d->pf_free, 0));
	GS_CHECK(cuMemcpyHtoDAsync(d->pf_dev, slot, sizeof(int), d->s3));
	GS_CHECK(cuEventRecord(d->pf_ready, d->s3));
}

static CUdeviceptr dec_zeros(size_t bytes, const void *zeros)
{
	CUdeviceptr p = gs_wl_alloc(bytes);
	GS_CHECK(cuMemcpyHtoD(p, zeros, bytes));
	return p;
}

/* Allocate and initialise one decoder (on the main thread). */
static void dec_setup(dec_t *d, int id, const void *zeros)
{
	const dec_cfg_t *c = d->c;
	size_t D = (size_t)c->dim, V = (size_t)c->vocab, F = DEC_MLP * D, fs = sizeof(float);
	size_t cache = (size_t)c->layers * (size_t)c->ctx * D * fs;
	unsigned sflags = c->readback_async ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;

	d->id = id;
	/* Blocking streams, so the legacy-stream cuMemcpyDtoH waits for them. */
	GS_CHECK(cuStreamCreate(&d->s, sflags));
	GS_CHECK(cuStreamCreate(&d->s2, sflags));
	GS_CHECK(cuEventCreate(&d->fork, CU_EVENT_DISABLE_TIMING));
	GS_CHECK(cuEventCreate(&d->join, CU_EVENT_DISABLE_TIMING));
	if (c->prefetch) {
		GS_CHECK(cuStreamCreate(&d->s3, sflags));
		GS_CHECK(cuEventCreate(&d->pf_ready, CU_EVENT_DISABLE_TIMING));
		GS_CHECK(cuEventCreate(&d->pf_free, CU_EVENT_DISABLE_TIMING));
		GS_CHECK(cuMemHostAlloc((void **)&d->pf_host, 2 * sizeof(int), 0));
		d->pf_host[0] = d->pf_host[1] = 0;
		d->pf_dev = dec_zeros(sizeof(int), zeros);
		d->pf_log = dec_zeros((size_t)c->steps * sizeof(int), zeros);
	}
	for (int k = 0; k < (c->pingpong ? 2 : 1); k++) {
		dec_act_t *a = &d->act[k];
		a->x = dec_zeros(D * fs, zeros);
		a->h = dec_zeros(D * fs, zeros);
		a->stats = dec_zeros(2 * fs, zeros);
		a->qkv = dec_zeros(3 * D * fs, zeros);
		a->sc = dec_zeros((size_t)c->heads * (size_t)c->ctx * fs, zeros);
		a->att = dec_zeros(D * fs, zeros);
		a->proj = dec_zeros(D * fs, zeros);
		a->u = dec_zeros(F * fs, zeros);
		a->logits = dec_zeros(V * fs, zeros);
		a->xres = dec_zeros(D * fs, zeros);
	}
	d->kc = gs_wl_alloc(cache);
	d->vc = gs_wl_alloc(cache);
	for (size_t off = 0; off < cache; off += D * fs) {
		GS_CHECK(cuMemcpyHtoD(d->kc + off, zeros, D * fs));
		GS_CHECK(cuMemcpyHtoD(d->vc + off, zeros, D * fs));
	}
	d->pos = dec_zeros(sizeof(int), zeros);
	int tok0 = dec_first_token(c, id);
	d->tok = gs_wl_alloc(sizeof(int));
	GS_CHECK(cuMemcpyHtoD(d->tok, &tok0, sizeof(int)));
	int *h = malloc((size_t)c->steps * sizeof(int));
	d->toks = calloc((size_t)c->steps, sizeof(int));
	if (h == NULL || d->toks == NULL) {
		perror("malloc");
		exit(2);
	}
	for (long i = 0; i < c->steps; i++)
		h[i] = -1;
	d->hist = gs_wl_alloc((size_t)c->steps * sizeof(int));
	GS_CHECK(cuMemcpyHtoD(d->hist, h, (size_t)c->steps * sizeof(int)));
	free(h);
	gs_wl_timer_init(&d->tm, (size_t)c->steps);
}

/* Capture each distinct step (parity, extra path) into its own graph. */
static void dec_capture(dec_t *d)
{
	for (int key = 0; key < 4; key++) {
		bool odd = key & 1, extra = key & 2;
		if ((odd && !d->c->pingpong) || (extra && !d->c->branch))
			continue;
		gs_wl_capture_begin(d->s);
		dec_step(d, odd ? 1 : 0, extra);
		d->exec[key] = gs_wl_capture_end(d->s);
	}
}

static void *dec_run(void *arg)
{
	dec_t *d = arg;
	const dec_cfg_t *c = d->c;
	bool extra = false;

	gs_wl_dev_attach(d->dev);
	if (c->graph)
		dec_capture(d);
	if (d->barrier != NULL)
		pthread_barrier_wait(d->barrier);
	uint64_t t0 = gs_wl_now_ns();
	size_t wsz = 2 * (size_t)c->dim * sizeof(float);
	CUdeviceptr ws = 0;
	if (c->workspace)
		GS_CHECK(cuMemAlloc(&ws, wsz));
	for (long step = 0; step < c->steps; step++) {
		int key = (c->pingpong ? (int)(step & 1) : 0) | (extra ? 2 : 0);

		gs_wl_timer_start(&d->tm);
		if (c->workspace) /* the attention output and the residual's copy */
			for (int k = 0; k < (c->pingpong ? 2 : 1); k++)
				d->act[k].att = ws, d->act[k].xres = ws + wsz / 2;
		if (c->prefetch)
			dec_prefetch(d, step);
		if (c->graph)
			GS_CHECK(cuGraphLaunch(d->exec[key], d->s));
		else
			dec_step(d, step, extra);
		if (!c->no_readback) {
			int tok;
			if (c->readback_async) {
				GS_CHECK(cuMemcpyDtoHAsync(&tok, d->tok, sizeof(tok), d->s));
				GS_CHECK(cuStreamSynchronize(d->s));
			} else {
				GS_CHECK(cuMemcpyDtoH(&tok, d->tok, sizeof(tok)));
			}
			d->toks[step] = tok;
			extra = dec_branch_next(c, tok, step);
		}
		if (c->workspace) {
			/* The next one first, so it lies elsewhere; the free
			 * synchronizes: the step's work on it is done. */
			CUdeviceptr next;
			GS_CHECK(cuMemAlloc(&next, wsz));
			GS_CHECK(cuMemFree(ws));
			ws = next;
		}
		gs_wl_timer_stop(&d->tm);
	}
	GS_CHECK(cuStreamSynchronize(d->s));
	GS_CHECK(cuStreamSynchronize(d->s2));
	if (ws)
		GS_CHECK(cuMemFree(ws));
	gs_wl_timer_wall(&d->tm, gs_wl_now_ns() - t0);
	return NULL;
}

static void dec_variant(const dec_cfg_t *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s%s%s",
		 c->no_readback ? "+noreadback" : "", c->readback_async ? "+async" : "",
		 c->pos_arg ? "+posarg" : "", c->pingpong ? "+pingpong" : "",
		 c->two_streams ? "+twostreams" : "",
		 c->workspace ? "+workspace" : c->copies ? "+copies" : "",
		 c->branch_late ? "+branch-late" : c->branch ? "+branch" : "", c->threads > 1 ? "+threads" : "");
	if (*buf == '\0')
		snprintf(buf, len, "plain");
}

/* Write everything the decoder produced, in a fixed order. */
static void dec_output(dec_t *d, gs_wl_out_t *o)
{
	const dec_cfg_t *c = d->c;
	size_t D = (size_t)c->dim, fs = sizeof(float);
	size_t cache = (size_t)c->layers * (size_t)c->ctx * D * fs;

	if (!c->no_readback)
		gs_wl_out_write(o, d->toks, (size_t)c->steps * sizeof(int));
	gs_wl_out_device(o, d->hist, (size_t)c->steps * sizeof(int));
	gs_wl_out_device(o, d->tok, sizeof(int));
	gs_wl_out_device(o, d->pos, sizeof(int));
	if (c->prefetch)
		gs_wl_out_device(o, d->pf_log, (size_t)c->steps * sizeof(int));
	for (int k = 0; k < (c->pingpong ? 2 : 1); k++) {
		gs_wl_out_device(o, d->act[k].x, D * fs);
		gs_wl_out_device(o, d->act[k].logits, (size_t)c->vocab * fs);
	}
	gs_wl_out_device(o, d->kc, cache);
	gs_wl_out_device(o, d->vc, cache);
}

static bool dec_check(dec_t *d, const float *w)
{
	const dec_cfg_t *c = d->c;
	size_t D = (size_t)c->dim, V = (size_t)c->vocab;
	int *hist = malloc((size_t)c->steps * sizeof(int));
	float *x = malloc(D * sizeof(float)), *lg = malloc(V * sizeof(float));
	const dec_act_t *a = &d->act[c->pingpong ? ((c->steps - 1) & 1) : 0];

	GS_CHECK(cuMemcpyDtoH(hist, d->hist, (size_t)c->steps * sizeof(int)));
	GS_CHECK(cuMemcpyDtoH(x, a->x, D * sizeof(float)));
	GS_CHECK(cuMemcpyDtoH(lg, a->logits, V * sizeof(float)));
	bool bad = dec_ref_check(c, d->l, w, d->id, hist, x, lg, stdout);
	if (!bad && !c->no_readback)
		for (long s = 0; s < c->steps; s++)
			if (hist[s] != d->toks[s]) {
				printf("decode --check: thread %d step %ld: read back %d, history %d\n",
				       d->id, s, d->toks[s], hist[s]);
				bad = true;
				break;
			}
	free(hist), free(x), free(lg);
	return bad;
}

int main(int argc, char **argv)
{
	dec_cfg_t c;
	dec_layout_t l;
	dec_fns_t f;
	gs_wl_dev_t dev;
	CUmodule mod;

	decode_parse(&c, argc, argv);
	dec_layout_init(&c, &l);
	gs_wl_dev_init(&dev);
	gs_wl_module_load(&mod, "decode");
	f.embed = gs_wl_function(mod, "k_embed");
	f.ln_stats = gs_wl_function(mod, "k_ln_stats");
	f.ln_apply = gs_wl_function(mod, "k_ln_apply");
	f.matvec = gs_wl_function(mod, "k_matvec");
	f.rope = gs_wl_function(mod, "k_rope");
	f.kv_append = gs_wl_function(mod, "k_kv_append");
	f.att_scores = gs_wl_function(mod, "k_att_scores");
	f.softmax = gs_wl_function(mod, "k_softmax");
	f.att_wsum = gs_wl_function(mod, "k_att_wsum");
	f.add = gs_wl_function(mod, "k_add");
	f.gelu = gs_wl_function(mod, "k_gelu");
	f.scale = gs_wl_function(mod, "k_scale");
	f.argmax = gs_wl_function(mod, "k_argmax");
	f.pos_inc = gs_wl_function(mod, "k_pos_inc");

	float *w = malloc(l.total * sizeof(float));
	size_t zlen = (size_t)(DEC_MLP * c.dim > c.vocab ? DEC_MLP * c.dim : c.vocab);
	zlen = (zlen > (size_t)c.heads * (size_t)c.ctx ? zlen : (size_t)c.heads * (size_t)c.ctx) * 4;
	void *zeros = calloc(zlen, sizeof(float));
	dec_t *decs = calloc((size_t)c.threads, sizeof(dec_t));
	if (w == NULL || zeros == NULL || decs == NULL) {
		perror("malloc");
		return 2;
	}
	dec_weights_fill(&c, &l, w);
	CUdeviceptr dw = gs_wl_alloc(l.total * sizeof(float));
	GS_CHECK(cuMemcpyHtoD(dw, w, l.total * sizeof(float)));

	pthread_barrier_t barrier;
	if (c.threads > 1)
		pthread_barrier_init(&barrier, NULL, (unsigned)c.threads);
	for (int t = 0; t < c.threads; t++) {
		dec_t *d = &decs[t];
		d->c = &c, d->l = &l, d->f = &f, d->dev = &dev, d->w = dw;
		d->barrier = c.threads > 1 ? &barrier : NULL;
		dec_setup(d, t, zeros);
	}
	if (c.threads == 1) {
		dec_run(&decs[0]);
	} else {
		pthread_t *th = calloc((size_t)c.threads, sizeof(pthread_t));
		for (int t = 0; t < c.threads; t++)
			if (pthread_create(&th[t], NULL, dec_run, &decs[t]) != 0) {
				perror("pthread_create");
				return 2;
			}
		for (int t = 0; t < c.threads; t++)
			pthread_join(th[t], NULL);
		free(th);
		pthread_barrier_destroy(&barrier);
	}

	if (c.time) {
		char var[160], label[320];
		dec_variant(&c, var, sizeof(var));
		for (int t = 0; t < c.threads; t++) {
			snprintf(label, sizeof(label), "decode mode=%s variant=%s thread=%d L=%ld D=%ld ctx=%ld",
				 c.graph ? "graph" : "eager", var, t, c.layers, c.dim, c.ctx);
			gs_wl_timer_report(&decs[t].tm, label);
		}
	}
	gs_wl_out_t out;
	gs_wl_out_open(&out, c.out);
	for (int t = 0; t < c.threads; t++)
		dec_output(&decs[t], &out);
	gs_wl_out_close(&out);

	int rc = 0;
	if (c.check) {
		for (int t = 0; t < c.threads; t++)
			if (dec_check(&decs[t], w))
				rc = 3;
		printf("decode --check: %s\n", rc ? "FAILED" : "passed");
	}
	for (int t = 0; t < c.threads; t++) {
		for (int k = 0; k < 4; k++)
			if (decs[t].exec[k] != NULL)
				GS_CHECK(cuGraphExecDestroy(decs[t].exec[k]));
		gs_wl_timer_free(&decs[t].tm);
		free(decs[t].toks);
	}
	GS_CHECK(cuModuleUnload(mod));
	free(decs), free(zeros), free(w);
	return rc;
}
