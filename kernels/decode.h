/*
 * decode's configuration, weight layout and CPU reference, shared by the
 * host program (decode.c) and the reference (decode_ref.c).
 */
#ifndef DECODE_H
#define DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct dec_cfg {
	long layers, dim, heads, ctx, vocab, steps, seed, threads, branch_k;
	const char *out;
	bool time, no_readback, readback_async, pos_arg, pingpong, two_streams;
	bool copies, workspace, branch, branch_late, graph, check, prefetch;
} dec_cfg_t;

/* Offsets, in floats, into the one weight buffer. */
typedef struct dec_layout {
	/* within a layer's block, which repeats every `layer` floats */
	size_t ln1_g, ln1_b, wqkv, bqkv, wo, bo, ln2_g, ln2_b, w1, b1, w2, b2, layer;
	/* after the layers */
	size_t emb, lnf_g, lnf_b, wlm, total;
} dec_layout_t;

/* The factor of the MLP's hidden width. */
#define DEC_MLP 4
/* The extra path of --branch: x = DEC_BRANCH_A * x + DEC_BRANCH_B. */
#define DEC_BRANCH_A 0.5f
#define DEC_BRANCH_B 0.1f

void dec_layout_init(const dec_cfg_t *c, dec_layout_t *l);
/* Deterministic weights from the seed (host memory, l->total floats). */
void dec_weights_fill(const dec_cfg_t *c, const dec_layout_t *l, float *w);
/* The token each decoder (host thread) starts from. */
int dec_first_token(const dec_cfg_t *c, int thread);
/* Does the step after `step`, which produced tok, take the extra path? */
bool dec_branch_next(const dec_cfg_t *c, int tok, long step);

/*
 * Replay the run in double precision, fed with the device's tokens (hist,
 * one per step), and compare: every device token must be the reference's
 * argmax up to the tolerance, and the final hidden state and logits must
 * agree to a relative 1e-3.  Prints its findings to log; true on mismatch.
 */
bool dec_ref_check(const dec_cfg_t *c, const dec_layout_t *l, const float *w, int thread,
		   const int *hist, const float *x, const float *logits, FILE *log);

#endif /* DECODE_H */
