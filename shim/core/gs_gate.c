/*
 * The gate: keep a sequence's graph only where it is faster than eager
 * launches, by measurement on the machine the program runs on.
 *
 * A graph does not always win (a host that works between launches while
 * graphshim holds them for a chunk, replays that need heavy patching, a
 * runtime whose graph dispatch costs more than its launches).  So every
 * armed sequence starts in a trial: after GRAPHSHIM_GATE_AFTER untimed
 * replays (the first launch of a graph uploads it; a sequence seen only a
 * few times is not worth eager passes; and the builder, busy while a
 * program starts, competes with the timed replays), its passes go eagerly
 * and replayed in turn (E R R E R E E R: gs_gate_turn_eager), each timed
 * on the GPU by a pair of events recorded on the stream -- the start when
 * the pass's first launch arrives, the stop after its last submission --
 * so a timed span holds what the GPU waited for as well as what it ran.
 * Timers are read only when they are complete (never
 * waited for), when a later pass of the same sequence begins.  With
 * GRAPHSHIM_GATE_SAMPLES of each kind the medians decide.  Each timed pass
 * in a trial also has a host time, its first launch to the next pass's
 * first launch on the stream; eager wins when replayed passes cost the host
 * more by GRAPHSHIM_GATE_MARGIN and the GPU's span does not say replay wins
 * by it (GRAPHSHIM_GATE_HOST=0: when the GPU's span says replay is slower
 * by the margin); ties go to the graph.  After
 * GRAPHSHIM_GATE_RECHECK passes the sequence is timed again.  Between,
 * every GS_GATE_WATCH-th pass of the kind chosen is timed (every 4th in the
 * first 32 passes after a decision; two events, no
 * eager pass): when two such in a row took less than half or more than
 * twice the median the decision rested on, conditions have changed (a
 * program's first passes are often unlike the rest) and a trial starts.
 * After GS_GATE_CONFIRMS such trials in a row that gave back the verdict
 * they tried, the watch rests until the re-check: a step whose passes
 * differ with a period of their own (a read-back every fourth) had its
 * watched passes fall on the same phase, every one "moved", and a trial
 * every few dozen passes (solver-managed: 21 trials, 84 eager passes of
 * 440, steady coverage 0.80 on an H200).
 *
 * An eager pass is still matched (shape by shape) so that it is counted,
 * but each launch is submitted as it arrives, as without graphshim.  Which
 * sequence a pass is over is known only when one candidate is left (two
 * that start alike, a framework's alternating steps, are told apart later):
 * every candidate that wants a timed pass has its timer started at the
 * first launch, and the pass's kind is chosen, and its turn counted, for
 * the one it turns out to be (until then its launches are held, as in any
 * match); the others' timers are dropped.  A pass that ends incomplete
 * drops its timing.  Every path here submits the
 * same work in the same order: the gate changes timing, never results.
 */
#include "gs_backend.h"
#include "gs_clock.h"
#include "gs_gate.h"
#include "gs_log.h"
#include "gs_self.h"
#include "gs_stream.h"
#include "gs_trace.h"

/* A timer's state: free; started (the pass in progress); stopped at its
 * pass's end, to be read (EAGER, REPLAY); or, with GRAPHSHIM_GATE_PERIOD,
 * stopped there but to be stopped again at the next pass's first launch
 * (OPEN_EAGER, OPEN_REPLAY: not read until then). */
enum { GS_T_FREE, GS_T_RUNNING, GS_T_EAGER, GS_T_REPLAY, GS_T_OPEN_EAGER, GS_T_OPEN_REPLAY };

/* Whether the host's samples decide (GRAPHSHIM_GATE_HOST), or the GPU's
 * alone: its span, or with GRAPHSHIM_GATE_PERIOD its period. */
static bool gs_gate_host_decides(void)
{
	return gs_config.gate_host && !gs_config.gate_period;
}

static uint64_t gs_gate_clock_real(void)
{
	return gs_clock_ns();
}

uint64_t (*gs_gate_clock)(void) = gs_gate_clock_real;

/* Timed passes a trial may begin before it gives up (cut passes count). */
#define GS_GATE_MAX_STARTS(want) (8u * (want))
/* After a decision, every GS_GATE_WATCH-th pass is timed to watch it;
 * in its first GS_GATE_WATCH_EARLY passes, every GS_GATE_WATCH_EARLY_EVERY-th. */
#define GS_GATE_WATCH 16
#define GS_GATE_WATCH_EARLY 32
#define GS_GATE_WATCH_EARLY_EVERY 4
/* The watch's trials in a row that confirm their verdict before it rests. */
#define GS_GATE_CONFIRMS 2
/* The last warm passes whose patches decide whether a sequence is trusted. */
#define GS_GATE_TRUST_WINDOW 4
/* Passes a first trial waits for a like sequence's trial, at most. */
#define GS_GATE_MAX_WAIT(after) (4u * (after))

static void gs_gate_trial(gs_gate_t *g, uint32_t warm)
{
	g->state = GS_GATE_S_TRIAL;
	g->warm = warm;
	g->ne = g->nr = g->se = g->sr = g->started = 0;
	g->bpass = 0;
	g->neh = g->nrh = 0;
	g->want = (uint8_t)gs_config.gate_samples;
	g->moved = 0;
	g->faster = false;
	g->watch_tried = GS_GATE_S_TRIAL;
	g->passes = 0;
}

void gs_gate_armed(gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	gs_gate_release(q);
	g->off = false;
	g->passes = 0;
	g->waited = 0;
	g->inherited = false;
	g->trusted = false;
	g->trust_patches = g->trust_replays = 0;
	switch ((gs_gate_mode_t)gs_config.gate) {
	case GS_GATE_EAGER:
		g->state = GS_GATE_S_EAGER;
		return;
	case GS_GATE_REPLAY:
		g->state = GS_GATE_S_REPLAY;
		return;
	case GS_GATE_AUTO:
	case GS_GATE_NMODES: /* not a value: the setting is validated */
		break;
	}
	if (!gs_backend_has_timers()) {
		g->state = GS_GATE_S_REPLAY;
		g->off = true;
		return;
	}
	/* At least one (the setting's lower bound): the first launch of a
	 * graph uploads it. */
	gs_gate_trial(g, (uint32_t)gs_config.gate_after);
}

/* No timer could be made or used: q replays, as before the gate. */
static void gs_gate_give_up(gs_seq_t *q, int rc)
{
	gs_log_once(GS_LOG_INFO, "GPU timers failed (status %d); sequences replay untimed", rc);
	q->gate.state = GS_GATE_S_REPLAY;
	q->gate.off = true;
}

static uint32_t gs_gate_median(uint32_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) /* a handful of values: insertion sort */
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint32_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (uint32_t)(((uint64_t)v[n / 2 - 1] + v[n / 2]) / 2);
}

/* Append a sample of ns (clamped to 32 bits) to v[*n], if it has room for it. */
static void gs_gate_sample(uint32_t *v, uint8_t *n, unsigned room, uint64_t ns)
{
	if (*n < room)
		v[(*n)++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

/*
 * The host's eager samples the gate decides on: as timed, or with
 * GRAPHSHIM_GATE_LESS_OWN less graphshim's own time in each (what eager
 * costs once the stream goes quiet, graphshim's matching gone).
 */
static const uint32_t *gs_gate_eager_host(const gs_gate_t *g)
{
	return gs_config.gate_less_own ? g->el_ns : g->eh_ns;
}

/* Lengths within a factor of two: like steps of one program (one model's
 * shapes, a framework's alternating tokens). */
static bool gs_gate_alike(uint32_t a, uint32_t b)
{
	return a <= 2 * b && b <= 2 * a;
}

/* Whether the stream's verdict to inherit (set by gs_gate_verdict, below)
 * covers q: a like sequence's latest verdict was replay. */
static bool gs_gate_prior(const gs_stream_t *s, const gs_seq_t *q)
{
	return s->pass.prior_n && gs_gate_alike(s->pass.prior_n, q->n);
}

/*
 * A verdict on s: its first trial no longer holds like sequences back; a
 * verdict of replay is the stream's prior for like sequences still to be
 * tried, and a verdict of eager on a like sequence ends it (one on a
 * sequence unlike it says nothing of it: hf-encode's eleven-launch tail
 * went eager and had held each request's big step to a trial of its own).
 * A tie decides too: like steps (an encoder's request shapes, a decoder's
 * alternating tokens) tie alike, and where only a clear win decided for
 * them, each tie cost every like step three to nine eager passes of its
 * own, more or fewer from run to run as the first trial's noise fell
 * (hf-encode: 0.84 or 1.00 of its steady state replayed).
 */
static void gs_gate_verdict(gs_stream_t *s, gs_seq_t *q, bool eager)
{
	if (s->pass.trial == q)
		s->pass.trial = NULL;
	if (!eager)
		s->pass.prior_n = q->n;
	else if (gs_gate_prior(s, q))
		s->pass.prior_n = 0;
}

/*
 * Whether the sorted samples a[na] lie above the sorted samples b[nb]
 * beyond their noise: a's lower quartile above b's upper one (with three
 * of each, every sample of a above every sample of b).
 */
static bool gs_gate_apart(const uint32_t *a, unsigned na, const uint32_t *b, unsigned nb)
{
	return na && nb && a[na / 4] > b[nb - 1 - nb / 4];
}

/* How one clock's replayed samples r[nr] compare with its eager ones e[ne]
 * (sorted, medians rm and em), margin m. */
typedef struct gs_gate_loss {
	bool slower; /* the medians: replay slower by the margin */
	bool apart;  /* beyond the noise (gs_gate_apart) */
	bool far;    /* the medians: slower by twice the margin */
} gs_gate_loss_t;

static gs_gate_loss_t gs_gate_loss(uint64_t em, const uint32_t *e, unsigned ne, uint64_t rm,
				   const uint32_t *r, unsigned nr, double m)
{
	return (gs_gate_loss_t){
		.slower = (double)em * (1.0 + m) < (double)rm,
		.apart = gs_gate_apart(r, nr, e, ne),
		.far = (double)em * (1.0 + 2 * m) < (double)rm,
	};
}

/*
 * With enough samples of both kinds, the medians decide: eager when replay
 * is slower on the GPU's span by more than the margin, or, with the host's
 * samples of both kinds, as the host's time says with the GPU's veto
 * (above).  The clock that decides must also say it beyond its noise:
 * replay's samples apart from, and above, eager's (gs_gate_apart).  Passes
 * of an interpreter vary by more than the margin (a collector, an
 * allocator; nn-dynamic's 40 ms tokens by 10% from one to the next), and
 * three samples of each kind whose medians happened to differ by the
 * margin sent a tie eager in one run and kept it in the next: the same
 * program replayed 0.81 of its steady state in one run and 0.96 in the
 * other.  A first verdict of eager that is half clear -- its samples apart
 * but replay slower by less than twice the margin, or slower by twice the
 * margin but its samples overlapping -- is not final: the trial goes on to
 * three times the samples (at most GS_GATE_MAX_SAMPLES), and then eager
 * needs the medians by the margin and the quartiles apart.  Neither (a
 * difference near the margin and inside the noise) keeps the graph at once:
 * more eager passes would cost more than such a difference.
 */
static void gs_gate_decide(gs_stream_t *s, gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	g->eager_ns = gs_gate_median(g->e_ns, g->ne);
	g->replay_ns = gs_gate_median(g->r_ns, g->nr);
	double m = gs_config.gate_margin;
	unsigned more = 3u * (unsigned)gs_config.gate_samples;
	if (more > GS_GATE_MAX_SAMPLES)
		more = GS_GATE_MAX_SAMPLES;
	gs_gate_loss_t l; /* the deciding clock's */
	g->eager_host_ns = g->replay_host_ns = 0; /* where the host has no samples of both kinds */
	g->eager_less_ns = 0;
	bool host = gs_config.gate_host && g->neh && g->nrh;
	if (host) {
		/* Reported under GRAPHSHIM_SELFTIME; with GRAPHSHIM_GATE_LESS_OWN
		 * what the eager passes count for (gs_gate_eager_host). */
		bool less = gs_config.gate_less_own;
		if (gs_config.selftime || less)
			g->eager_less_ns = gs_gate_median(g->el_ns, g->neh);
		/*
		 * The host's time decides, the GPU's span can veto: eager when
		 * replayed passes cost the host more by the margin and the GPU
		 * does not say replay wins by the margin.
		 */
		g->eager_host_ns = gs_gate_median(g->eh_ns, g->neh);
		g->replay_host_ns = gs_gate_median(g->rh_ns, g->nrh);
		l = gs_gate_loss(less ? g->eager_less_ns : g->eager_host_ns, gs_gate_eager_host(g), g->neh,
				 g->replay_host_ns, g->rh_ns, g->nrh, m);
		bool gpu_replay = (double)g->replay_ns * (1.0 + m) < (double)g->eager_ns;
		l.slower = l.slower && !gpu_replay;
	}
	/* With GRAPHSHIM_GATE_PERIOD the GPU's periods decide alone (the host's
	 * medians are still kept, for the statistics and the trace). */
	if (!host || gs_config.gate_period)
		l = gs_gate_loss(g->eager_ns, g->e_ns, g->ne, g->replay_ns, g->r_ns, g->nr, m);
	if (l.slower && l.apart != l.far && g->want < more) {
		g->want = (uint8_t)more;
		return;
	}
	bool eager = l.slower && l.apart && (l.far || g->want >= more);
	g->state = eager ? GS_GATE_S_EAGER : GS_GATE_S_REPLAY;
	g->ref_ns = eager ? g->eager_ns : g->replay_ns;
	g->confirmed = g->watch_tried == g->state ? (uint8_t)(g->confirmed + 1) : 0;
	if (!g->trials)
		g->first = (gs_gate_first_t){g->eager_ns, g->replay_ns, g->eager_host_ns,
					     g->replay_host_ns, eager};
	gs_gate_verdict(s, q, eager);
	g->passes = 0;
	g->trials++;
	for (int i = 0; i < GS_GATE_TIMERS; i++) /* the trial's samples still out: not watched ones */
		if (g->tstate[i] != GS_T_FREE && g->tstate[i] != GS_T_RUNNING)
			g->tstate[i] = GS_T_FREE;
	if (s->pass.period == q)
		s->pass.period = NULL;
	GS_STAT_INC(gate_decisions);
	if (eager)
		GS_STAT_INC(gate_eager);
	gs_trace_gate(s->key.handle, q->id, q->n, g->eager_ns, g->replay_ns, g->eager_host_ns,
		      g->replay_host_ns, eager);
	gs_log(GS_LOG_INFO,
	       "sequence %016llx (%u launches): eager %.1f us, replay %.1f us (host %.1f, %.1f): %s",
	       (unsigned long long)q->id, q->n, (double)g->eager_ns / 1e3,
	       (double)g->replay_ns / 1e3, (double)g->eager_host_ns / 1e3,
	       (double)g->replay_host_ns / 1e3,
	       eager ? "eager" : "replay");
}

/*
 * Timer i of q, if it holds a completed pass: 1, its span in *ns and its
 * kind in *eager (the timer is free again); 0 when it holds none or the
 * pass is not complete; -1 when reading failed (q gave up timing).
 */
static int gs_gate_take(gs_seq_t *q, int i, uint64_t *ns, bool *eager)
{
	gs_gate_t *g = &q->gate;
	if (g->tstate[i] != GS_T_EAGER && g->tstate[i] != GS_T_REPLAY)
		return 0;
	gs_self_did(GS_SELF_DID_GATE);
	int rc = gs_backend->timer_read(g->timer[i], ns);
	if (rc == 0)
		return 0;
	*eager = g->tstate[i] == GS_T_EAGER;
	g->tstate[i] = GS_T_FREE;
	if (rc < 0) {
		gs_gate_give_up(q, rc);
		return -1;
	}
	return 1;
}

/* Whether every sample of r[nr] is shorter than every one of e[ne]. */
static bool gs_gate_all_below(const uint32_t *r, unsigned nr, const uint32_t *e, unsigned ne)
{
	uint32_t rmax = 0, emin = UINT32_MAX;
	for (unsigned i = 0; i < nr; i++)
		rmax = r[i] > rmax ? r[i] : rmax;
	for (unsigned i = 0; i < ne; i++)
		emin = e[i] < emin ? e[i] : emin;
	return nr && ne && rmax < emin;
}

/*
 * Whether replay has won a trial already, at half its samples: every
 * replayed sample of the deciding clock shorter than every eager one (the
 * host's, where it has them, with the GPU's span not saying replay is
 * slower by the margin; or the GPU's span alone).  The whole trial would
 * keep the graph as well unless replay turned out slower by the margin
 * with its samples apart, which the first two of each kind, all on the
 * other side, make unlikely (and a tie goes to the graph anyway).  Most
 * trials end so -- a graph saves a launch-bound step's host time by more
 * than its noise -- and each eager pass a trial spares is a pass replayed
 * (a 196-launch step of hf-llama seen 93 times a run: two passes are 2% of
 * its launches).  A replayed pass as slow as an eager one waits for the
 * whole trial; eager never wins early.  (Requiring the margin as well,
 * every replayed sample longer by 10% still shorter, stopped few trials
 * on an H100: hf-llama's and hf-gpt2's steps, 15-25% faster replayed,
 * mostly took all four eager passes.)
 */
static bool gs_gate_clear(const gs_gate_t *g)
{
	unsigned half = g->want / 2u;
	if (g->want < 4 || g->ne < half || g->nr < half)
		return false;
	if (!gs_gate_host_decides())
		return gs_gate_all_below(g->r_ns, g->nr, g->e_ns, g->ne);
	if (g->neh < half || g->nrh < half ||
	    !gs_gate_all_below(g->rh_ns, g->nrh, gs_gate_eager_host(g), g->neh))
		return false;
	uint32_t e[GS_GATE_MAX_SAMPLES], r[GS_GATE_MAX_SAMPLES];
	memcpy(e, g->e_ns, g->ne * sizeof(e[0]));
	memcpy(r, g->r_ns, g->nr * sizeof(r[0]));
	return (double)gs_gate_median(r, g->nr) <=
	       (double)gs_gate_median(e, g->ne) * (1.0 + gs_config.gate_margin);
}

/* Read the timers of q that are complete; decide once there are enough
 * (or replay has clearly won already: gs_gate_clear). */
static void gs_gate_poll(gs_stream_t *s, gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	unsigned want = g->want;
	for (int i = 0; i < GS_GATE_TIMERS; i++) {
		uint64_t ns = 0;
		bool eager = false;
		int got = gs_gate_take(q, i, &ns, &eager);
		if (got < 0)
			return;
		if (!got)
			continue;
		gs_trace_gate_sample(s->key.handle, q->id, eager, false, ns);
		if (eager)
			gs_gate_sample(g->e_ns, &g->ne, want, ns);
		else
			gs_gate_sample(g->r_ns, &g->nr, want, ns);
	}
	if ((g->ne >= want && g->nr >= want) || gs_gate_clear(g))
		gs_gate_decide(s, q);
}

/*
 * Whether the n-th pass after a decision is watched.  A first trial often
 * falls in a phase unlike the rest (hf-llama on an H100: its 196-launch
 * steps took 45-70 ms a pass in the first generate() call, 6 ms after),
 * and what it decided there is worth little: the watch needs two watched
 * passes in a row to move, which at every 16th pass is 32 passes after the
 * decision, and with the new trial about half of a step seen 93 times in a
 * run.  Right after a decision, every 4th pass is watched (two events
 * each, no eager pass), so such a decision is tried again within about 8
 * passes.
 */
static bool gs_gate_watched(uint64_t n)
{
	return n % (n <= GS_GATE_WATCH_EARLY ? GS_GATE_WATCH_EARLY_EVERY : GS_GATE_WATCH) == 0;
}

/* Whether the watch rests: the decision confirmed by its own trials (see the top). */
static bool gs_gate_rests(const gs_gate_t *g)
{
	return g->confirmed >= GS_GATE_CONFIRMS;
}

/* Whether q's decision is being watched: made by timing (not forced, not
 * off), the watch not resting. */
static bool gs_gate_watching(const gs_gate_t *g)
{
	return gs_config.gate == GS_GATE_AUTO && !g->off && !gs_gate_rests(g) &&
	       (g->trials > 0 || g->inherited || g->trusted);
}

/*
 * Whether a decision to replay still stands where its watched passes now
 * take under half of ref_ns, the last one ns: what replay saved in the
 * trial, on the GPU's span and (where it had samples) the host's, beats the
 * margin of a pass of the new length.  A program's first passes are slow
 * for eager and replayed passes alike (transformers' first generate() call:
 * 62 ms a 196-launch pass of either kind, replay 0.8 ms shorter; 6 ms
 * later, replay still 0.8 ms shorter): what replay saves is the launches,
 * which did not change, not the phase's time.  A tie, or a saving that
 * would be inside the margin now, is timed again.
 */
static bool gs_gate_still_saves(const gs_gate_t *g, uint64_t ns)
{
	double m = gs_config.gate_margin * (double)ns;
	if (g->state != GS_GATE_S_REPLAY || g->eager_ns <= g->replay_ns ||
	    (double)(g->eager_ns - g->replay_ns) <= m)
		return false;
	if (gs_config.gate_period || !g->eager_host_ns || !g->replay_host_ns)
		return true; /* the GPU's span (or period) alone decided */
	return g->eager_host_ns > g->replay_host_ns && (double)(g->eager_host_ns - g->replay_host_ns) > m;
}

/*
 * Whether an inherited decision to replay (no trial of q's own) still has
 * the stream's prior behind it: a like sequence's latest verdict was replay
 * (a verdict of eager on a like sequence clears it).  Where passes got
 * shorter for one like step they did for all: the one that decided is
 * timed again (unless its saving holds), and the others follow its
 * verdict.  hf-llama's two 196-launch steps, both faster after the first
 * generate() call: the second one's trial of its own cost four eager
 * passes a run.
 */
static bool gs_gate_prior_holds(const gs_stream_t *s, const gs_seq_t *q)
{
	const gs_gate_t *g = &q->gate;
	return g->inherited && !g->trials && g->state == GS_GATE_S_REPLAY && gs_gate_prior(s, q);
}

/*
 * A decided sequence's watched passes: read the ones complete; true when two
 * in a row took less than half or more than twice the watch's reference
 * (the median the decision rested on, for the kind now chosen), and a trial
 * should start.  A program's first passes are often unlike the rest: in
 * transformers' first generate() call cuDNN builds a plan for each new
 * shape, every token took ten times as long, eager and replayed alike, and
 * the tie kept a graph that lost afterwards.  Two replayed passes under
 * half of it, where replay's saving still beats the margin
 * (gs_gate_still_saves) or an inherited decision still has the stream's
 * prior (gs_gate_prior_holds), keep the decision instead: the last of them
 * is the new reference.
 */
static bool gs_gate_watch(gs_stream_t *s, gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	uint64_t last = 0;
	for (int i = 0; i < GS_GATE_TIMERS; i++) {
		uint64_t ns = 0;
		bool eager = false;
		int got = gs_gate_take(q, i, &ns, &eager);
		if (got < 0)
			return false;
		if (!got)
			continue;
		if (!g->ref_ns) { /* an inherited decision's first watched pass */
			g->ref_ns = ns;
			continue;
		}
		bool faster = ns * 2 < g->ref_ns;
		bool moved = faster || ns > 2 * g->ref_ns;
		g->faster = faster && (g->moved == 0 || g->faster); /* faster is a move */
		g->moved = moved ? (uint8_t)(g->moved + 1) : 0;
		last = ns;
	}
	if (g->moved < 2)
		return false;
	g->moved = 0;
	if (!g->faster || !(gs_gate_still_saves(g, last) || gs_gate_prior_holds(s, q)))
		return true;
	GS_STAT_INC(gate_kept);
	gs_trace_gate_kept(s->key.handle, q->id, q->n, g->ref_ns, last);
	gs_log(GS_LOG_INFO, "sequence %016llx (%u launches): replay now %.1f us (was %.1f): kept",
	       (unsigned long long)q->id, q->n, (double)last / 1e3, (double)g->ref_ns / 1e3);
	g->ref_ns = last;
	return false;
}

/* A graph of q built already (marks' chunks have none), for its context; NULL if none yet. */
static void *gs_gate_some_graph(const gs_seq_t *q)
{
	uint32_t ready = __atomic_load_n(&q->ready, __ATOMIC_ACQUIRE);
	for (uint32_t j = 0; j < ready && j < q->nchunks; j++)
		if (q->graphs[j])
			return q->graphs[j];
	return NULL;
}

/* Start a timer of q at this pass's first launch; false when none is free. */
static bool gs_gate_start(gs_stream_t *s, gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	int i = 0;
	while (i < GS_GATE_TIMERS && g->tstate[i] != GS_T_FREE)
		i++;
	if (i == GS_GATE_TIMERS)
		return false;
	int rc = 0;
	void *any = g->timer[i] ? NULL : gs_gate_some_graph(q);
	if (!g->timer[i] && !any)
		return false; /* no graph to say where: this pass goes untimed */
	gs_self_did(GS_SELF_DID_GATE);
	if (!g->timer[i] && (rc = gs_backend->timer_create(any, &g->timer[i])) != 0) {
		g->timer[i] = NULL;
		gs_gate_give_up(q, rc);
		return false;
	}
	if ((rc = gs_backend->timer_mark(g->timer[i], 0, s->key.handle)) != 0) {
		gs_gate_give_up(q, rc);
		return false;
	}
	g->tstate[i] = GS_T_RUNNING;
	g->running = (int8_t)i;
	return true;
}

/* q's timer started for this pass is not used: free it (its start mark is
 * simply recorded again next time). */
static void gs_gate_unmark(gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	if (g->running >= 0)
		g->tstate[g->running] = GS_T_FREE;
	g->running = -1;
}

/* Whether o is in its first trial (like sequences wait for its verdict). */
static bool gs_gate_first_trial(const gs_seq_t *o)
{
	return o && o->state == GS_SEQ_ARMED && o->gate.state == GS_GATE_S_TRIAL && !o->gate.trials;
}

/*
 * Whether q's first trial, warm and not yet begun, waits: a like sequence
 * (gs_gate_alike) is in its first trial on the stream, and q has waited
 * fewer than GS_GATE_MAX_WAIT passes (replayed, untimed).  A like sequence
 * the stream decided to replay (prior_n) decides for q instead.  Only a
 * sequence that never had a verdict, its own or inherited.
 */
static bool gs_gate_waits(const gs_stream_t *s, const gs_seq_t *q)
{
	const gs_gate_t *g = &q->gate;
	const gs_seq_t *o = s->pass.trial;
	if (g->trials || g->inherited || g->trusted || g->started || g->off)
		return false;
	if (gs_gate_prior(s, q))
		return true;
	return o != q && gs_gate_first_trial(o) && gs_gate_alike(o->n, q->n) &&
	       g->waited < GS_GATE_MAX_WAIT((uint32_t)gs_config.gate_after);
}

/* Whether a pass over q, were it one, would be timed: q is in a trial, warm,
 * short of samples of one kind and has not given up on this trial. */
static bool gs_gate_wants(const gs_stream_t *s, const gs_seq_t *q)
{
	const gs_gate_t *g = &q->gate;
	unsigned want = g->want;
	if (q->state != GS_SEQ_ARMED || g->off)
		return false;
	if (g->state != GS_GATE_S_TRIAL)
		return gs_gate_watching(g) && gs_gate_watched(g->passes + 1);
	return !g->warm && g->started < GS_GATE_MAX_STARTS(want) && (g->se < want || g->sr < want) &&
	       !gs_gate_waits(s, q);
}

/*
 * The host's side of a trial: a timed pass's host time runs from its first
 * launch to the first launch of the next pass on the stream (of any
 * sequence), so it holds what the host waited for after it (a read-back of
 * its work) and what it saved or spent issuing it.  Where the host is the
 * bottleneck the GPU's span counts the held launches' wait, which the
 * program may never feel; a verdict of eager must then be the host's too.
 */
static void gs_gate_host_sample(gs_stream_t *s, uint64_t now)
{
	gs_seq_t *q = s->pass.host;
	s->pass.host = NULL;
	gs_gate_t *g = &q->gate;
	if (g->state != GS_GATE_S_TRIAL || now < s->pass.t0)
		return;
	gs_trace_gate_sample(s->key.handle, q->id, s->pass.host_eager, true, now - s->pass.t0);
	if (s->pass.host_eager) {
		/* With GRAPHSHIM_SELFTIME or GRAPHSHIM_GATE_LESS_OWN, also the pass
		 * less graphshim's own time in it, where one thread made the whole
		 * pass's calls it saw. */
		uint64_t ns = now - s->pass.t0, own = 0;
		if ((gs_config.selftime || gs_config.gate_less_own) &&
		    s->pass.own_tl == (const void *)&gs_self_tl &&
		    gs_self_tl.own_ns >= s->pass.own0)
			own = gs_self_tl.own_ns - s->pass.own0;
		uint8_t n = g->neh;
		gs_gate_sample(g->el_ns, &n, GS_GATE_MAX_SAMPLES, own < ns ? ns - own : 0);
		gs_gate_sample(g->eh_ns, &g->neh, GS_GATE_MAX_SAMPLES, ns);
	} else
		gs_gate_sample(g->rh_ns, &g->nrh, GS_GATE_MAX_SAMPLES, now - s->pass.t0);
}

/* Stop timer i of q on s, a pass of that kind: false when the timer
 * failed (q then replays untimed). */
static bool gs_gate_stop(gs_stream_t *s, gs_seq_t *q, int i, bool eager)
{
	gs_gate_t *g = &q->gate;
	gs_self_did(GS_SELF_DID_GATE);
	int rc = gs_backend->timer_mark(g->timer[i], 1, s->key.handle);
	if (rc) {
		g->tstate[i] = GS_T_FREE;
		gs_gate_give_up(q, rc);
		return false;
	}
	g->tstate[i] = eager ? GS_T_EAGER : GS_T_REPLAY;
	return true;
}

/*
 * GRAPHSHIM_GATE_PERIOD: the last timed pass's timer, stopped at its end,
 * stops again here, at the next pass's first launch on the stream (of any
 * sequence): its sample is then the pass's period on the GPU, the pass and
 * what the stream waited for before the next one began (a host function's
 * round trip, the host's own work where it is the bottleneck).  A solver
 * whose every iteration ends in a host function left the GPU idle 45 us
 * after each replayed iteration against 23 us eagerly, while the
 * replayed iterations' spans were 1.8x shorter (docs/performance.md,
 * fifty-sixth session).  With stop false (another timed pass of the stream
 * completed first) it is read as stopped at its pass's end: its span.
 */
static void gs_gate_period_end(gs_stream_t *s, bool stop)
{
	gs_seq_t *q = s->pass.period;
	s->pass.period = NULL;
	if (!q)
		return;
	gs_gate_t *g = &q->gate;
	int i = s->pass.period_i;
	if (i < 0 || i >= GS_GATE_TIMERS ||
	    (g->tstate[i] != GS_T_OPEN_EAGER && g->tstate[i] != GS_T_OPEN_REPLAY))
		return;
	bool eager = g->tstate[i] == GS_T_OPEN_EAGER;
	if (stop)
		gs_gate_stop(s, q, i, eager);
	else /* read as stopped at its pass's end: its span */
		g->tstate[i] = eager ? GS_T_EAGER : GS_T_REPLAY;
}

void gs_gate_begin(gs_stream_t *s, gs_seq_t *const *cands, uint32_t n)
{
	gs_gate_period_end(s, true);
	gs_gate_abandon(s);
	s->pass.seq = NULL;
	s->pass.eager = false;
	uint64_t now = 0;
	if (s->pass.host) {
		now = gs_gate_clock();
		gs_gate_host_sample(s, now);
	}
	for (uint32_t i = 0; i < n && s->pass.nmarked < GS_GATE_MARKS; i++)
		if (gs_gate_wants(s, cands[i]) && gs_gate_start(s, cands[i]))
			s->pass.marked[s->pass.nmarked++] = cands[i];
	if (s->pass.nmarked && gs_config.gate_host) {
		s->pass.t0 = now ? now : gs_gate_clock();
		s->pass.own0 = gs_self_tl.own_ns;
		s->pass.own_tl = &gs_self_tl;
		/* GRAPHSHIM_GATE_LESS_OWN: in a trial (not a watched pass, whose
		 * host time is not sampled), this thread's launch calls are timed
		 * through this pass and the next one's first (a count: twice the
		 * longest candidate and some, so that a pass that never ends
		 * stops timing all the same). */
		if (gs_config.gate_less_own) {
			uint32_t most = 0;
			for (uint8_t i = 0; i < s->pass.nmarked; i++) {
				const gs_seq_t *c = s->pass.marked[i];
				if (c->gate.state == GS_GATE_S_TRIAL && c->n > most)
					most = c->n;
			}
			if (most)
				gs_self_want(2 * most + 16);
		}
	}
	if (n == 1)
		gs_gate_eager(s, cands[0]);
}

/* A decision to replay with no trial of q's own: watched, the first watched
 * pass its reference, no medians to compare. */
static void gs_gate_untried(gs_gate_t *g)
{
	g->state = GS_GATE_S_REPLAY;
	g->passes = 0;
	g->ref_ns = 0; /* the first watched pass sets it */
	g->eager_ns = g->replay_ns = 0;
	g->eager_host_ns = g->replay_host_ns = 0;
	g->eager_less_ns = 0;
}

/*
 * Programs issue many like steps on one stream (an encoder's shapes, a
 * decoder's alternating tokens, a solver's stages), each tried with three
 * eager passes of its own: a fifth of a step's passes where each is seen a
 * few dozen times.  One first trial at a time among like sequences; the
 * others replay meanwhile, and a verdict of replay (a win or a tie) decides
 * for them (gate_inherited; they are watched as any decision, and a move
 * starts a trial of their own).  A verdict of eager leaves each to its own
 * trial.  True when the pass replays
 * untimed: q waits, or has inherited.
 */
static bool gs_gate_defer(gs_stream_t *s, gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	if (!gs_gate_waits(s, q)) {
		if (!g->trials && !g->started && !gs_gate_first_trial(s->pass.trial))
			s->pass.trial = q;
		return false;
	}
	if (!gs_gate_prior(s, q)) {
		g->waited++;
		return true;
	}
	gs_gate_untried(g);
	g->inherited = true;
	GS_STAT_INC(gate_inherited);
	gs_trace_gate_inherited(s->key.handle, q->id, q->n, s->pass.prior_n);
	gs_log(GS_LOG_INFO, "sequence %016llx (%u launches): replay, as a like sequence (%u) was decided",
	       (unsigned long long)q->id, q->n, s->pass.prior_n);
	return true;
}

/*
 * Whether q replays from its first trial on without one
 * (GRAPHSHIM_GATE_TRUST): at least that many launches, its last
 * GS_GATE_TRUST_WINDOW untimed replays (all of them where there were
 * fewer) patched at most one launch in 16 (the first ones often patch
 * more: an allocator's rotation of addresses is patched until the
 * variants that bake it are built), its chunks 8 launches
 * or longer on average, and its stream has no adopted side streams (whose
 * concurrency a graph gives up).  Such a pass costs the host a graph
 * launch or a few (8-10 us each in a PyTorch process on an H200) and
 * about a microsecond a launch, where each eager launch costs 4-7 us
 * (docs/performance.md, thirty-sixth session); what the gate has sent
 * eager are short steps and steps that patch most of their launches.  In
 * 167 runs of the suite's programs over five sessions no trial ended
 * eager, and the trials' eager passes were up to 4.5% of a short run's
 * launches.  It is watched as an inherited decision (a move to passes
 * twice as long or half starts a trial) and tried at the re-check
 * (GRAPHSHIM_GATE_RECHECK passes): once trusted, a sequence's next trial
 * is a real one.
 */
static bool gs_gate_trust(const gs_stream_t *s, const gs_seq_t *q)
{
	const gs_gate_t *g = &q->gate;
	uint64_t n = q->n, replays = q->replays - g->trust_replays;
	if (!gs_config.gate_trust || n < (uint64_t)gs_config.gate_trust || !q->nchunks ||
	    n < 8u * (uint64_t)q->nchunks || !replays || q->mismatch_run || gs_stream_absorbs(s))
		return false;
	return (q->patches - g->trust_patches) * 16u <= replays * n;
}

/* Replay q on the trust rule: watched as an inherited decision. */
static void gs_gate_trusted(gs_stream_t *s, gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	gs_gate_untried(g);
	g->trusted = true;
	if (s->pass.trial == q)
		s->pass.trial = NULL;
	GS_STAT_INC(gate_trusted);
	gs_trace_gate_trusted(s->key.handle, q->id, q->n, q->patches, q->nchunks);
	gs_log(GS_LOG_INFO, "sequence %016llx (%u launches, %llu patches in %llu replays): replay, "
	       "no trial", (unsigned long long)q->id, q->n, (unsigned long long)q->patches,
	       (unsigned long long)q->replays);
}

/*
 * Whether the n-th pass begun in a trial goes eagerly: the Thue-Morse
 * order E R R E R E E R ..., not E R E R.  A program's passes often
 * alternate in cost (a request cycle of batch sizes 16, 32, 8, 32: every
 * other pass twice the work) or grow (a cache that lengthens every
 * token).  Strict turns time every eager pass on the cheap ones and every
 * replayed pass on the dear ones (twotower's default stream, its
 * three-launch step learned with GRAPHSHIM_MIN_SEQ 3: replay measured 2.7
 * times slower than eager, and sent eager); in this order every four
 * passes hold two of each kind, one at an even and one at an odd place,
 * and their places sum the same, so costs of period two or four and
 * linear trends fall on both kinds alike.
 */
static bool gs_gate_turn_eager(uint32_t n)
{
	return __builtin_popcount(n) % 2 == 0;
}

/*
 * Whether a timed eager pass of q's trial is still out: its timer not yet
 * read complete (gs_gate_poll has just read every one that is).  Another
 * eager pass waits for it.  Where the host runs far ahead of the GPU (a
 * stream that never synchronizes), timers complete only passes later, or
 * after the program's last pass: decode --no-readback, all 200 steps queued
 * before the GPU finished the first timed one, spent its four eager passes
 * and never decided.  Now such a trial spends one, and one that lags by k
 * passes takes about k passes an eager sample.
 */
static bool gs_gate_eager_out(const gs_gate_t *g)
{
	for (int i = 0; i < GS_GATE_TIMERS; i++)
		if (g->tstate[i] == GS_T_EAGER || g->tstate[i] == GS_T_OPEN_EAGER)
			return true;
	return false;
}

/*
 * The kind of a pass over q, and whether it is timed (s->pass.timed; only
 * a pass whose timer q started at its first launch, `mine`, can be).
 * Eager and replayed passes in turn (gs_gate_turn_eager), eager first, by
 * passes begun: a timed pass cut short (another thread's sync, say)
 * counts, or a sequence whose passes are often cut would run eagerly pass
 * after pass.  One that cannot complete enough timed passes
 * of each kind in GS_GATE_MAX_STARTS keeps its graph until the next
 * re-check.  An untimed pass (no timer started at its first launch, or
 * enough of both kinds) replays.
 *
 * With GRAPHSHIM_GATE_BLOCK = B > 1 a trial's passes go in blocks of B of one
 * kind, the blocks' kinds in the order above (E R R E ...), and the first
 * pass of each block is not timed.  Passes in turn measure each kind in
 * the other's wake: where the host runs ahead of the GPU replayed and
 * behind it eagerly, an eager pass after replayed ones finds its launches
 * queued ahead as a replayed pass does, and whatever the stream's regime
 * costs between passes (a host function's round trip, 23 us eagerly and 45
 * us replayed in solver-hostfn's timeline) falls on both kinds alike.  A
 * block's first pass lets the stream settle into its kind's regime.  An
 * eager block waits (replayed, untimed) while a timed eager pass is out,
 * as a pass in turn does; a timed place without a timer of q's goes
 * untimed in its block's kind.
 */
static bool gs_gate_kind(gs_stream_t *s, gs_seq_t *q, bool mine)
{
	gs_gate_t *g = &q->gate;
	/* Still building: its ready chunks replay, unless GRAPHSHIM_GATE=eager
	 * (its state is set when it is armed: until then a ready chunk replayed,
	 * now and then, in a forced-eager run on a loaded machine). */
	if (q->state != GS_SEQ_ARMED)
		return (gs_gate_mode_t)gs_config.gate == GS_GATE_EAGER;
	if (q->idle_eager) {
		q->idle_eager--; /* its replayed passes kept waiting for the idle watchdog (gs_seq.c) */
		return true;
	}
	if (g->state != GS_GATE_S_TRIAL) {
		bool recheck = !g->off && gs_config.gate == GS_GATE_AUTO && gs_config.gate_recheck &&
			       ++g->passes >= (uint64_t)gs_config.gate_recheck;
		bool watched = false;
		if (!recheck && gs_gate_watching(g))
			recheck = watched = gs_gate_watch(s, q);
		if (!recheck) {
			if (mine && gs_gate_watched(g->passes) && !gs_gate_rests(g))
				s->pass.timed = q; /* a watched pass (none while the watch rests) */
			return g->state == GS_GATE_S_EAGER;
		}
		uint8_t was = g->state;
		/* A graph not launched for a while is cold again. */
		gs_gate_trial(g, g->state == GS_GATE_S_EAGER);
		if (watched)
			g->watch_tried = was;
		else
			g->confirmed = 0; /* the re-check: the watch is on again after it */
	}
	gs_gate_poll(s, q);
	if (g->state != GS_GATE_S_TRIAL)
		return g->state == GS_GATE_S_EAGER;
	if (g->warm) {
		if (g->warm == GS_GATE_TRUST_WINDOW) {
			g->trust_patches = q->patches;
			g->trust_replays = q->replays;
		}
		g->warm--;
		return false;
	}
	if (!g->trials && !g->trusted && !g->started && gs_gate_trust(s, q)) {
		gs_gate_trusted(s, q);
		return false;
	}
	if (gs_gate_defer(s, q))
		return false;
	unsigned want = g->want;
	if (g->started >= GS_GATE_MAX_STARTS(want) ||
	    g->bpass >= (unsigned)gs_config.gate_block * GS_GATE_MAX_STARTS(want)) {
		g->state = GS_GATE_S_REPLAY;
		g->passes = 0;
		if (s->pass.trial == q)
			s->pass.trial = NULL;
		return false;
	}
	/* Turns by pass, or (GRAPHSHIM_GATE_BLOCK) by block, whose first
	 * pass goes untimed. */
	unsigned b = (unsigned)gs_config.gate_block;
	bool settle = b > 1 && g->bpass % b == 0;
	if ((b == 1 && !mine) || (g->se >= want && g->sr >= want))
		return false;
	bool eager = g->sr >= want || (g->se < want && gs_gate_turn_eager(b > 1 ? g->bpass / b : g->started));
	if ((b == 1 || settle) && eager && gs_gate_eager_out(g))
		return false; /* its turn waits, replayed meanwhile (untimed) */
	if (b > 1)
		g->bpass++;
	if (settle || !mine)
		return eager;
	g->started++;
	s->pass.timed = q;
	return eager;
}

/* The pass is over q: its kind (gs_gate_kind); a timer of q started at the
 * first launch runs on only for a timed pass, the other candidates' stop. */
static bool gs_gate_choose(gs_stream_t *s, gs_seq_t *q)
{
	bool mine = false;
	for (uint8_t i = 0; i < s->pass.nmarked; i++) {
		if (s->pass.marked[i] == q)
			mine = true;
		else
			gs_gate_unmark(s->pass.marked[i]);
	}
	s->pass.nmarked = 0;
	bool eager = gs_gate_kind(s, q, mine);
	if (mine && s->pass.timed != q)
		gs_gate_unmark(q);
	return eager;
}

bool gs_gate_eager(gs_stream_t *s, gs_seq_t *q)
{
	if (q != s->pass.seq) {
		s->pass.seq = q;
		s->pass.eager = gs_gate_choose(s, q);
	}
	return s->pass.eager;
}

bool gs_gate_shares(const gs_stream_t *s, const gs_seq_t *q)
{
	/* Unmarked, gs_gate_kind replays q untimed, unless EAGER (or forced
	 * so, while q is still building). */
	return !s->pass.nmarked && !q->idle_eager && q->gate.state != GS_GATE_S_EAGER &&
	       (gs_gate_mode_t)gs_config.gate != GS_GATE_EAGER;
}

void gs_gate_complete(gs_stream_t *s, gs_seq_t *q, bool eager)
{
	gs_gate_t *g = &q->gate;
	if (s->pass.timed != q || g->running < 0) {
		gs_gate_abandon(s);
		return;
	}
	int i = g->running;
	g->running = -1;
	s->pass.timed = NULL;
	if (!gs_gate_stop(s, q, i, eager))
		return;
	if (gs_config.gate_period) {
		/* Read once stopped again at the next pass's first launch
		 * (gs_gate_period_end); one before it still open keeps its span. */
		gs_gate_period_end(s, false);
		g->tstate[i] = eager ? GS_T_OPEN_EAGER : GS_T_OPEN_REPLAY;
		s->pass.period = q;
		s->pass.period_i = (int8_t)i;
	}
	if (eager)
		g->se++;
	else
		g->sr++;
	if (gs_config.gate_host && g->state == GS_GATE_S_TRIAL) {
		s->pass.host = q; /* its host time runs from s->pass.t0 to the next pass */
		s->pass.host_eager = eager;
	}
}

void gs_gate_abandon(gs_stream_t *s)
{
	gs_seq_t *q = s->pass.timed;
	if (q)
		gs_gate_unmark(q);
	s->pass.timed = NULL;
	for (uint8_t i = 0; i < s->pass.nmarked; i++)
		gs_gate_unmark(s->pass.marked[i]);
	s->pass.nmarked = 0;
}

void gs_gate_forget(gs_stream_t *s, const gs_seq_t *q)
{
	if (s->pass.timed == q)
		gs_gate_abandon(s);
	for (uint8_t i = 0; i < s->pass.nmarked; i++)
		if (s->pass.marked[i] == q) {
			s->pass.marked[i] = s->pass.marked[--s->pass.nmarked];
			break;
		}
	if (s->pass.seq == q)
		s->pass.seq = NULL;
	if (s->pass.host == q)
		s->pass.host = NULL;
	if (s->pass.period == q)
		s->pass.period = NULL; /* its open timer is freed with q's (gs_gate_release) */
	if (s->pass.trial == q)
		s->pass.trial = NULL;
}

void gs_gate_release(gs_seq_t *q)
{
	gs_gate_t *g = &q->gate;
	for (int i = 0; i < GS_GATE_TIMERS; i++) {
		if (g->timer[i])
			gs_backend->timer_destroy(g->timer[i]);
		g->timer[i] = NULL;
		g->tstate[i] = GS_T_FREE;
	}
	g->running = -1;
}

bool gs_gate_kept_eager(const gs_seq_t *q)
{
	if (q->state != GS_SEQ_ARMED)
		return false;
	if ((gs_gate_mode_t)gs_config.gate == GS_GATE_EAGER)
		return true;
	/* Past the early watch (gs_gate_watched), or half-way to a re-check
	 * that comes sooner: a first verdict is often made in a phase unlike
	 * the rest, and its watched passes are what tries it again; a quiet
	 * stream matches nothing to watch. */
	const gs_gate_t *g = &q->gate;
	uint64_t settled = (uint64_t)gs_config.gate_recheck / 2;
	if (settled > GS_GATE_WATCH_EARLY)
		settled = GS_GATE_WATCH_EARLY;
	return (gs_gate_mode_t)gs_config.gate == GS_GATE_AUTO && !g->off && g->state == GS_GATE_S_EAGER &&
	       !q->idle_eager && g->passes >= settled;
}

/* The re-check a quiet stream waits for where the gate makes none. */
#define GS_GATE_QUIET_PASSES 1000u

uint64_t gs_gate_until_recheck(const gs_seq_t *q)
{
	uint64_t every = gs_config.gate_recheck ? (uint64_t)gs_config.gate_recheck : GS_GATE_QUIET_PASSES;
	if ((gs_gate_mode_t)gs_config.gate != GS_GATE_AUTO || !gs_config.gate_recheck)
		return every;
	return q->gate.passes + 1 < every ? every - q->gate.passes : 1;
}

void gs_gate_passed_quietly(gs_seq_t *q, uint64_t passes)
{
	gs_gate_t *g = &q->gate;
	if ((gs_gate_mode_t)gs_config.gate != GS_GATE_AUTO || !gs_config.gate_recheck ||
	    g->state != GS_GATE_S_EAGER)
		return;
	uint64_t last = (uint64_t)gs_config.gate_recheck - 1; /* the next pass re-checks */
	g->passes = passes >= last || g->passes + passes >= last ? last : g->passes + passes;
}

const char *gs_gate_state_name(const gs_seq_t *q)
{
	if (q->state != GS_SEQ_ARMED)
		return "none";
	if (q->gate.off)
		return "off";
	static const char *const names[] = {GS_GATE_STATES(GS_NAME_STR)};
	return names[q->gate.state];
}
