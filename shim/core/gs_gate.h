/*
 * The gate: eager or graph, by measurement on the GPU (see gs_gate.c).
 * Each armed sequence has a gs_gate_t (its trial, timers and decision);
 * each stream a gs_gate_pass_t (what was chosen for the pass in
 * progress, and whose timer runs for it).
 */
#ifndef GS_GATE_H
#define GS_GATE_H

#include "gs_common.h"

typedef struct gs_seq gs_seq_t;
typedef struct gs_stream gs_stream_t;

/* GPU timers a sequence may have in flight, and samples kept per kind. */
#define GS_GATE_TIMERS 4
#define GS_GATE_MAX_SAMPLES 15

/*
 * The gate's state per armed sequence; X(NAME, "name").  REPLAY: replay
 * (decided, forced, or no timers).  EAGER: eager passes (decided or
 * forced).  TRIAL: timing eager and replayed passes in turn.
 */
#define GS_GATE_STATES(X)                                                     \
	X(REPLAY, "replay")                                                   \
	X(EAGER, "eager")                                                     \
	X(TRIAL, "trial")

typedef enum gs_gate_state {
#define GS_X(n, s) GS_GATE_S_##n,
	GS_GATE_STATES(GS_X)
#undef GS_X
	GS_GATE_NSTATES
} gs_gate_state_t;

/*
 * A sequence's first decision by the gate: its medians and its choice.  A
 * later trial overwrites the figures of the last decision; a first verdict
 * of eager that a second trial took back is otherwise lost (hf-llama, one
 * run in four on an H100: 0.60 of its steady state replayed).
 */
typedef struct gs_gate_first {
	uint64_t eager_ns, replay_ns;
	uint32_t eager_host_ns, replay_host_ns;
	bool eager;
} gs_gate_first_t;

/* Per armed sequence (gs_seq_t.gate). */
typedef struct gs_gate {
	uint8_t state;     /* gs_gate_state_t */
	uint32_t warm;     /* replays to run before one is timed */
	uint8_t want;      /* samples of each kind this trial needs */
	uint8_t moved;     /* watched passes in a row far from the watch's reference */
	bool faster;       /* ... and all of them under half of it */
	uint8_t watch_tried; /* a trial the watch started: the verdict it tries again (REPLAY,
			      * EAGER); any other trial (the first, the re-check): TRIAL */
	uint8_t confirmed; /* the watch's trials in a row that gave back the verdict they tried */
	uint8_t ne, nr;    /* samples read in this trial */
	uint8_t se, sr;    /* timed passes completed in this trial */
	uint8_t started;   /* timed passes begun in this trial, completed or cut */
	uint16_t bpass;    /* GRAPHSHIM_GATE_BLOCK: this trial's passes in blocks, untimed ones too */
	int8_t running;    /* the timer of the pass in progress, or -1 */
	bool off;          /* no timers: replay, never measured again */
	uint8_t tstate[GS_GATE_TIMERS];
	void *timer[GS_GATE_TIMERS];
	uint32_t e_ns[GS_GATE_MAX_SAMPLES], r_ns[GS_GATE_MAX_SAMPLES];
	uint8_t neh, nrh;  /* host samples read in this trial */
	uint32_t eh_ns[GS_GATE_MAX_SAMPLES], rh_ns[GS_GATE_MAX_SAMPLES];
	uint32_t el_ns[GS_GATE_MAX_SAMPLES]; /* each eager sample less graphshim's own
					      * time in it (GRAPHSHIM_SELFTIME), neh of them */
	uint64_t passes;   /* passes since the last decision */
	uint64_t eager_ns, replay_ns; /* the medians behind the last decision */
	uint32_t eager_host_ns, replay_host_ns; /* the host's, where it had both kinds */
	uint32_t eager_less_ns; /* with GRAPHSHIM_SELFTIME, the median eager host time
				 * less graphshim's own in it: eager without graphshim,
				 * as near as one process tells (0: not measured) */
	uint32_t trials;   /* decisions made */
	gs_gate_first_t first; /* the first one's figures */
	uint64_t ref_ns;   /* what the watch compares with: the chosen kind's median,
			    * or the watched pass of a move that kept the decision */
	uint32_t waited;   /* passes its first trial waited for a like sequence's */
	bool inherited;    /* replays on a like sequence's decision (no trial of its own) */
	bool trusted;      /* replays without a first trial (gs_gate_trust) */
	uint64_t trust_patches, trust_replays; /* q's, GS_GATE_TRUST_WINDOW warm passes before the trial */
} gs_gate_t;

/* Candidates of one pass whose timers may start at its first launch. */
#define GS_GATE_MARKS 4

/* Per stream (gs_stream_t.pass): the pass in progress. */
typedef struct gs_gate_pass {
	gs_seq_t *seq;   /* the candidate the pass turned out to be over, once known */
	bool eager;      /* ... and whether the pass goes eagerly */
	gs_seq_t *timed; /* the sequence whose timer runs for this pass */
	uint8_t nmarked; /* candidates whose timer started at the pass's first launch */
	gs_seq_t *marked[GS_GATE_MARKS];
	uint64_t t0;     /* host clock at the first launch of the last pass timed in a trial */
	uint64_t own0;   /* its thread's graphshim own time then (GRAPHSHIM_SELFTIME) */
	const void *own_tl; /* ... and that thread (gs_self_tl) */
	gs_seq_t *host;  /* that pass's sequence, while its host time runs to the next pass */
	bool host_eager; /* ... and its kind */
	gs_seq_t *period; /* GRAPHSHIM_GATE_PERIOD: the last timed pass's sequence, whose
			   * timer stops again at the next pass's first launch */
	int8_t period_i;  /* ... and that timer */
	gs_seq_t *trial; /* the sequence in its first trial: like ones wait for its verdict */
	uint32_t prior_n; /* the length of the last sequence decided replay (0: none, or a
			   * verdict of eager on a like sequence since) */
} gs_gate_pass_t;

/* The gate's host clock (ns); a test may replace it. */
extern uint64_t (*gs_gate_clock)(void);

/* q was just armed: start its gate afresh. */
void gs_gate_armed(gs_seq_t *q);
/*
 * A match begins on s with candidates cands[0..n): which one the pass is
 * over is not known yet, so each candidate in a trial that wants a timed
 * pass has its timer started now, at the first launch; with one candidate
 * the pass's kind is chosen at once (gs_gate_eager).
 */
void gs_gate_begin(gs_stream_t *s, gs_seq_t *const *cands, uint32_t n);
/* Whether the pass, now known to be over q (the sole candidate left, or
 * one complete), goes eagerly; chosen the first time it is asked. */
bool gs_gate_eager(gs_stream_t *s, gs_seq_t *q);
/*
 * Whether the pass, not yet known to be over q (several candidates left),
 * may replay chunks now: no candidate's timer runs this pass, and q is not
 * sent eager (its verdict, or the idle watchdog's rule).  The kind chosen
 * later for the one left is then replay, untimed, but where a trial decides
 * eager meanwhile: the rest of that pass goes eagerly, untimed.
 */
bool gs_gate_shares(const gs_stream_t *s, const gs_seq_t *q);
/* The pass over q completed (eagerly or replayed): stop its timer. */
void gs_gate_complete(gs_stream_t *s, gs_seq_t *q, bool eager);
/* The pass ended incomplete: its timing is dropped. */
void gs_gate_abandon(gs_stream_t *s);
/* q leaves s's matching (retired or dropped): forget it there. */
void gs_gate_forget(gs_stream_t *s, const gs_seq_t *q);
/* Destroy q's timers (any thread; touches no stream). */
void gs_gate_release(gs_seq_t *q);
/*
 * Whether q's passes go eagerly until its next re-check: armed, and its
 * decision eager, settled past the watch of its first 32 passes (or
 * half-way to a re-check that comes sooner), or GRAPHSHIM_GATE=eager.  Such a stream's launches may
 * take the cold lane meanwhile (gs_cold.h, "quiet").
 */
bool gs_gate_kept_eager(const gs_seq_t *q);
/* Passes of q before its next re-check (at least 1; under
 * GRAPHSHIM_GATE=eager, or with re-checks off, GRAPHSHIM_GATE_RECHECK or 1000). */
uint64_t gs_gate_until_recheck(const gs_seq_t *q);
/* q's passes went by unmatched (its stream was quiet): count them towards
 * its re-check, the next pass at the latest re-checking. */
void gs_gate_passed_quietly(gs_seq_t *q, uint64_t passes);
/* "replay", "eager", "trial", "off" (untimed) or "none" (not armed). */
const char *gs_gate_state_name(const gs_seq_t *q);

#endif /* GS_GATE_H */
