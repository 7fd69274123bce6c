/*
 * Writes a small, realistic trace through the gs_trace API, shaped as the
 * engine emits it (launches traced eager or held; held ones then either a
 * replay event or a second, "released" launch event): three streams,
 * sequences learned, built, replayed (a variant too), a mismatch, a retirement, flushes and
 * a fallback) for the `graphshim trace summarize` tests.  With -k the
 * process kills itself before closing the trace, leaving the unterminated
 * form a crash leaves, in FILE.PID.part (the trace reaches FILE only when
 * it is finished); the event count is then large enough to reach disk.
 * Usage: gen_trace [-k] FILE
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_trace.h"

static void gs_gen_step(uintptr_t stream, gs_rec_t *r, int n, const char *state)
{
	for (int i = 0; i < n; i++) {
		r->grid[0] = (uint32_t)(64 + i);
		gs_trace_launch("cuLaunchKernel", stream, r, state);
	}
}

/* A pass replayed in chunks of these lengths: each chunk's launches held, then its replay. */
static void gs_gen_pass(uintptr_t stream, uint64_t id, gs_rec_t *r, const uint32_t *chunk,
			uint32_t nchunks)
{
	uint32_t length = 0;
	for (uint32_t j = 0; j < nchunks; j++)
		length += chunk[j];
	for (uint32_t j = 0; j < nchunks; j++) {
		gs_gen_step(stream, r, (int)chunk[j], "held");
		gs_trace_replay(stream, id, length, chunk[j], 0, j, nchunks, false, false);
	}
	gs_trace_pass(stream, id, length, false);
}

int main(int argc, char **argv)
{
	bool kill_self = argc == 3 && !strcmp(argv[1], "-k");
	if (argc != 2 && !kill_self) {
		fprintf(stderr, "usage: gen_trace [-k] FILE\n");
		return 2;
	}
	if (gs_trace_open(argv[argc - 1], 1000000, true)) {
		perror(argv[argc - 1]);
		return 1;
	}
	gs_rec_t *r = calloc(1, gs_rec_size(32));
	r->kind = GS_REC_KERNEL;
	r->func = (void *)(uintptr_t)0x5000;
	r->grid[1] = r->grid[2] = r->block[1] = r->block[2] = 1;
	r->block[0] = 128;
	r->nbytes = 32;
	const uintptr_t a = 0x1000, b = 0x2000;
	const uint64_t sa = 0xaaaa, sb = 0xbbbb;

	/* Stream A: an 8-launch step, learned after two, then replayed 10 times. */
	for (int rep = 0; rep < 2; rep++) {
		gs_gen_step(a, r, 8, "eager");
		gs_trace_flush(a, GS_FLUSH_SYNC, "cuStreamSynchronize", 0, NULL);
	}
	gs_trace_learned(a, sa, 8, "boundary");
	gs_trace_built(a, sa, 8, 2000000, 0, r);
	int reps = kill_self ? 400 : 10;
	for (int rep = 0; rep < reps; rep++) {
		/* A variant of its chunk after 5 (one that failed to build first): 4 replays of it. */
		if (rep == 5) {
			gs_trace_variant(a, sa, 8, 0, 8, 100000, 1, r);
			gs_trace_variant(a, sa, 8, 0, 8, 300000, 0, r);
		}
		gs_gen_step(a, r, 8, "held");
		gs_trace_replay(a, sa, 8, 8, rep == 3 ? 1 : 0, 0, 1, rep > 5, false);
		gs_trace_pass(a, sa, 8, false);
		gs_trace_flush(a, GS_FLUSH_SYNC, "cuStreamSynchronize", 8, NULL);
	}
	/* A step that diverges at launch 5 (grid), released eagerly. */
	gs_gen_step(a, r, 5, "held");
	gs_trace_mismatch(a, sa, 5, GS_MISMATCH_STRUCTURE, "grid", "[69,1,1]", "[32,1,1]", r);
	gs_gen_step(a, r, 5, "released");

	/* Stream B: a periodic 4-launch sequence, replayed twice, then retired. */
	gs_gen_step(b, r, 8, "eager");
	gs_trace_learned(b, sb, 4, "period");
	gs_trace_built(b, sb, 4, 500000, 0, NULL);
	static const uint32_t one[] = {4}, two[] = {8, 4};
	for (int rep = 0; rep < 2; rep++)
		gs_gen_pass(b, sb, r, one, 1);
	for (int m = 0; m < 3; m++) {
		gs_trace_mismatch(b, sb, 0, GS_MISMATCH_DRIFT, "arg 2", NULL, NULL, r);
		gs_trace_flush(b, GS_FLUSH_EVENT, "cuEventRecord", 4, NULL);
	}
	gs_trace_mismatch(b, sb, 3, GS_MISMATCH_CUT, NULL, NULL, NULL, NULL);
	gs_trace_retired(b, sb, 3);
	gs_trace_flush(b, GS_FLUSH_COPY, "cuMemcpyHtoD", 2, NULL);

	/*
	 * Stream C: a 12-launch sequence in two chunks (8 and 4), replayed
	 * three times, then cut after its first chunk: its last event with a
	 * length is a chunk's replay, which is not the sequence's length.
	 */
	const uintptr_t c = 0x3000;
	const uint64_t sc = 0xcccc;
	gs_gen_step(c, r, 24, "eager");
	gs_trace_learned(c, sc, 12, "boundary");
	gs_trace_built(c, sc, 12, 1000000, 0, r);
	for (int rep = 0; rep < 3; rep++)
		gs_gen_pass(c, sc, r, two, 2);
	gs_gen_step(c, r, 8, "held");
	gs_trace_replay(c, sc, 12, 8, 0, 0, 2, false, false);
	gs_gen_step(c, r, 2, "held");
	gs_trace_mismatch(c, sc, 10, GS_MISMATCH_CUT, NULL, NULL, NULL, NULL);
	gs_gen_step(c, r, 2, "released");
	gs_trace_fallback("graph_instantiate", 2);
	if (kill_self)
		raise(SIGKILL);
	gs_trace_close();
	free(r);
	return 0;
}
