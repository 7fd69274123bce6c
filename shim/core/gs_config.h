/*
 * Configuration from GRAPHSHIM_* environment variables.  Each variable is
 * listed once in GS_CONFIG_VARS; the parser, the defaults, the validation
 * and the reference in docs/configuration.md all follow that list.  A bad
 * value prints one `graphshim:` line and the default is kept.  Nothing is
 * read in secure-execution mode (setuid programs).
 */
#ifndef GS_CONFIG_H
#define GS_CONFIG_H

#include "gs_common.h"

/*
 * X(field, NAME, type, default, min, max, help)
 * type: INT (long long within [min, max]), BOOL (0/1/yes/no/on/off/true/false),
 *       REAL (double within [min, max]), PATH (string), LEVEL (log level),
 *       GATE (auto/replay/eager, gs_gate_mode_t),
 *       SCHED (normal/batch/idle, gs_build_sched_t).
 */
#define GS_CONFIG_VARS(X)                                                                     \
	X(enable, "GRAPHSHIM_ENABLE", BOOL, 1, 0, 1,                                          \
	  "0 turns graphshim into a pure pass-through")                                      \
	X(learn_reps, "GRAPHSHIM_LEARN_REPS", INT, 2, 1, 1000,                                \
	  "identical repetitions of a sequence before it is built into a graph")             \
	X(learn_long, "GRAPHSHIM_LEARN_LONG", INT, 32, 0, 1000000,                            \
	  "a step of at least this many operations is learned at its first sighting (0: every step at GRAPHSHIM_LEARN_REPS)") \
	X(min_seq, "GRAPHSHIM_MIN_SEQ", INT, 3, 1, 1000000,                                   \
	  "shortest sequence worth a graph (launches)")                                       \
	X(max_seq, "GRAPHSHIM_MAX_SEQ", INT, 4096, 2, 1000000,                                \
	  "longest sequence learned; also the per-stream history kept")                       \
	X(max_seqs, "GRAPHSHIM_MAX_SEQS", INT, 64, 1, 100000,                                 \
	  "sequences cached per stream (least recently used evicted)")                       \
	X(max_nodes, "GRAPHSHIM_MAX_NODES", INT, 65536, 1, 100000000,                         \
	  "graph nodes kept per stream (least recently used evicted)")                       \
	X(variants, "GRAPHSHIM_VARIANTS", INT, 16, 1, 64,                                     \
	  "graphs kept per chunk, each baked from a recurring set of operands (1: one)")      \
	X(period, "GRAPHSHIM_PERIOD", BOOL, 1, 0, 1,                                          \
	  "detect repeating periods in streams that never synchronize")                      \
	X(period_after, "GRAPHSHIM_PERIOD_AFTER", INT, 1024, 2, 1000000,                      \
	  "launches without a boundary before period detection starts on a stream")         \
	X(cold_after, "GRAPHSHIM_COLD_AFTER", INT, 16, 0, 1000000000,                         \
	  "segments in a row that did not repeat before a stream keeps no records (0: never)") \
	X(cold_replay, "GRAPHSHIM_COLD_REPLAY", BOOL, 1, 0, 1,                                \
	  "a stream whose armed steps replay between segments that never repeat goes cold, waking at each armed step's start and cold again after it") \
	X(cold_want, "GRAPHSHIM_COLD_WANT", INT, 4, 0, 255,                                   \
	  "wakes of a cold stream, a repeat, at the first launch of a segment that begins as the repeated one (0: none)") \
	X(cold_eager, "GRAPHSHIM_COLD_EAGER", BOOL, 1, 0, 1,                                  \
	  "a stream whose armed steps the gate all keeps eager passes its launches through the cold lane until their next re-check") \
	X(mismatch_limit, "GRAPHSHIM_MISMATCH_LIMIT", INT, 3, 1, 1000000,                     \
	  "consecutive mismatches that retire a sequence to eager")                          \
	X(cooldown, "GRAPHSHIM_COOLDOWN", INT, 16, 0, 1000000000,                             \
	  "sightings of a retired sequence before it may learn again, doubled at each later retirement (0: never)") \
	X(forgive, "GRAPHSHIM_FORGIVE", BOOL, 1, 0, 1,                                        \
	  "spare a sequence the STRUCTURE mismatches and cuts of segments that are steps of their own") \
	X(patch_cost, "GRAPHSHIM_PATCH_COST", REAL, 0.25, 0.0, 1000.0,                        \
	  "cost of patching one node, in eager launches")                                    \
	X(graph_cost, "GRAPHSHIM_GRAPH_COST", REAL, 1.0, 0.0, 1000000.0,                      \
	  "fixed cost of one graph launch, in eager launches")                               \
	X(chunk_first, "GRAPHSHIM_CHUNK_FIRST", INT, 32, 1, 1000000,                          \
	  "launches in the first graph of a chunked replay (later ones grow)")              \
	X(chunk_growth, "GRAPHSHIM_CHUNK_GROWTH", REAL, 1.5, 1.0, 16.0,                         \
	  "how much longer each chunk from the front is than the one before where the host is slow (else twice)") \
	X(chunk_max, "GRAPHSHIM_CHUNK_MAX", INT, 512, 1, 1000000,                             \
	  "most launches in one chunk of a replay")                                          \
	X(chunk_last, "GRAPHSHIM_CHUNK_LAST", INT, 8, 1, 1000000,                             \
	  "launches in the last chunk when the host is slower than the GPU")               \
	X(chunk_short, "GRAPHSHIM_CHUNK_SHORT", BOOL, 1, 0, 1,                                \
	  "a slow host's step no longer than the first chunk still ends in a chunk of GRAPHSHIM_CHUNK_LAST") \
	X(host_bound_us, "GRAPHSHIM_HOST_BOUND_US", REAL, 6.0, 0.0, 1000000.0,                \
	  "host time per launch above which chunks also shrink towards the end")          \
	X(async_build, "GRAPHSHIM_ASYNC_BUILD", BOOL, 1, 0, 1,                                \
	  "build and instantiate graphs on a background thread")                             \
	X(build_sched, "GRAPHSHIM_BUILD_SCHED", SCHED, 1, 0, 2,                               \
	  "the builder thread's scheduling: normal, batch (never preempts the application on waking) or idle") \
	X(idle_us, "GRAPHSHIM_IDLE_US", INT, 2000, 0, 1000000000,                             \
	  "a stream holding launches with no call for this long has them submitted by the idle watchdog (0: never)") \
	X(idle_eager, "GRAPHSHIM_IDLE_EAGER", INT, 16, 0, 1000000000,                         \
	  "replayed passes in a row that wait for the idle watchdog before their sequence goes eager until its next re-check (0: never)") \
	X(idle_cut, "GRAPHSHIM_IDLE_CUT", INT, 2, 1, 1000000,                                 \
	  "replayed passes in a row that wait at one place before a chunk ends there")         \
	X(speculate, "GRAPHSHIM_SPECULATE", BOOL, 1, 0, 1,                                    \
	  "start building a step's graphs when its last sighting before learning begins")    \
	X(siblings, "GRAPHSHIM_SIBLINGS", BOOL, 0, 0, 1,                                      \
	  "a step first seen as long as an armed one and unlike it at few places (a kernel variant chosen by size or alignment) is learned at once") \
	X(thrift, "GRAPHSHIM_THRIFT", INT, 8, 0, 1000000,                                     \
	  "graph builds a stream wasted (never replayed) more than paid before it speculates no more and needs twice GRAPHSHIM_LEARN_REPS sightings to learn (0: never)") \
	X(share, "GRAPHSHIM_SHARE", BOOL, 1, 0, 1,                                            \
	  "while several learned steps still match, replay the chunks they all share")       \
	X(absorb, "GRAPHSHIM_ABSORB", BOOL, 0, 0, 1,                                          \
	  "event records and waits inside a replayed chunk go with its graph instead of cutting it, on every stream (streams with adopted sides always do)") \
	X(cooperative, "GRAPHSHIM_COOPERATIVE", BOOL, 0, 0, 1,                                \
	  "cuLaunchCooperativeKernel is held and graphed as a launch with the cooperative attribute (CUDA), instead of a boundary") \
	X(adopt, "GRAPHSHIM_ADOPT", BOOL, 1, 0, 1,                                            \
	  "a side stream forked from another stream and joined again has its work issued on that stream, so one stream's step holds both (CUDA)") \
	X(adopt_grace_us, "GRAPHSHIM_ADOPT_GRACE_US", INT, 100000, 0, 1000000000,            \
	  "after adoption is armed (the first wait of a stream on another's event), how long before forks are noted") \
	X(check_order, "GRAPHSHIM_CHECK_ORDER", BOOL, 0, 0, 1,                                \
	  "abort when a stream's record is submitted out of its order or twice (a testing aid)") \
	X(submit_thread, "GRAPHSHIM_SUBMIT_THREAD", BOOL, 0, 0, 1,                           \
	  "patch and launch replayed chunks' graphs on a thread of graphshim's, off the application's") \
	X(device_patch, "GRAPHSHIM_DEVICE_PATCH", BOOL, 1, 0, 1,                            \
	  "kernel nodes' patches are written on the GPU by an updater node at the head of each graph, one host update a launch (CUDA)") \
	X(submit_spin_us, "GRAPHSHIM_SUBMIT_SPIN_US", INT, 50, 0, 1000000,                    \
	  "how long the submission thread spins for the next chunk before it sleeps")       \
	X(hip_max_patches, "GRAPHSHIM_HIP_MAX_PATCHES", INT, 1000, 0, 1000000000,             \
	  "patches of one HIP graph before it is re-instantiated (0: no limit)")            \
	X(selftime, "GRAPHSHIM_SELFTIME", BOOL, 0, 0, 1,                                      \
	  "time every launch call and the vendor calls graphshim makes in it (statistics' host_* counters; two clock reads a call and one a driver call)") \
	X(gate, "GRAPHSHIM_GATE", GATE, 0, 0, 2,                                               \
	  "auto: time eager and replayed passes of each sequence, keep the faster; replay or eager: force") \
	X(gate_after, "GRAPHSHIM_GATE_AFTER", INT, 16, 1, 1000000000,                         \
	  "untimed replays of a sequence before the gate first times it")                   \
	X(gate_samples, "GRAPHSHIM_GATE_SAMPLES", INT, 4, 1, 15,                              \
	  "timed passes of each kind before the gate decides (the medians are compared)")   \
	X(gate_margin, "GRAPHSHIM_GATE_MARGIN", REAL, 0.10, 0.0, 10.0,                        \
	  "eager wins only when replay is slower than eager by more than this fraction")     \
	X(gate_less_own, "GRAPHSHIM_GATE_LESS_OWN", BOOL, 0, 0, 1,                            \
	  "the gate's eager passes count less graphshim's own time in them (eager without graphshim)") \
	X(gate_host, "GRAPHSHIM_GATE_HOST", BOOL, 1, 0, 1,                                    \
	  "the host's time from a pass to the next decides; the GPU's span can veto eager")  \
	X(gate_period, "GRAPHSHIM_GATE_PERIOD", BOOL, 0, 0, 1,                                \
	  "the GPU's time from a timed pass's first launch to the next pass's on the stream decides alone (what the stream waited for after the pass included)") \
	X(gate_block, "GRAPHSHIM_GATE_BLOCK", INT, 1, 1, 8,                                   \
	  "a trial's passes in blocks of this many of one kind, the first of each block untimed (1: eager and replayed passes in turn)") \
	X(gate_trust, "GRAPHSHIM_GATE_TRUST", INT, 32, 0, 1000000000,                          \
	  "a sequence of at least this many launches whose last four untimed replays patched at most one launch in 16, in chunks of 8 or more, on a stream with no adopted side streams, replays without a first trial (0: every sequence is tried)") \
	X(gate_recheck, "GRAPHSHIM_GATE_RECHECK", INT, 1000, 0, 1000000000,                   \
	  "passes of a sequence after a decision before it is timed again (0: never)")      \
	X(log_level, "GRAPHSHIM_LOG", LEVEL, 2, 0, 4,                                         \
	  "stderr verbosity: off, error, warn, info, debug")                                 \
	X(summary, "GRAPHSHIM_SUMMARY", BOOL, 0, 0, 1,                                        \
	  "print a one-line summary on stderr at exit")                                      \
	X(stats_path, "GRAPHSHIM_STATS", PATH, 0, 0, 0,                                       \
	  "write statistics as JSON to this file at exit (%p: pid)")                         \
	X(trace_path, "GRAPHSHIM_TRACE", PATH, 0, 0, 0,                                       \
	  "write a Chrome trace-event JSON file (%p: pid)")                                  \
	X(trace_max, "GRAPHSHIM_TRACE_MAX", INT, 1000000, 1, 1000000000,                      \
	  "trace events written at most")                                                    \
	X(overwrite, "GRAPHSHIM_OVERWRITE", BOOL, 0, 0, 1,                                    \
	  "replace stats and trace files left by an earlier run instead of writing beside them") \
	X(steps, "GRAPHSHIM_STEPS", INT, 0, 0, 1000000000000,                                 \
	  "steps the program runs, written into the statistics for per-step comparisons (0: not given)") \
	X(hip_library, "GRAPHSHIM_HIP_LIBRARY", PATH, 0, 0, 0,                                \
	  "the HIP runtime library to forward to, tried before the usual names")

typedef struct gs_config {
	bool enable;
	long long learn_reps;
	long long learn_long;
	long long min_seq;
	long long max_seq;
	long long max_seqs;
	long long max_nodes;
	long long variants;
	bool period;
	long long period_after;
	long long cold_after;
	bool cold_eager;
	bool cold_replay;
	long long cold_want;
	long long mismatch_limit;
	long long cooldown;
	bool forgive;
	double patch_cost;
	double graph_cost;
	long long chunk_first;
	double chunk_growth;
	long long chunk_max;
	long long chunk_last;
	bool chunk_short;
	double host_bound_us;
	bool async_build;
	int build_sched; /* gs_build_sched_t */
	long long idle_us;
	long long idle_eager;
	long long idle_cut;
	bool speculate;
	bool siblings;
	long long thrift;
	bool share;
	bool absorb;
	bool cooperative;
	bool adopt;
	long long adopt_grace_us;
	bool check_order;
	long long hip_max_patches;
	bool selftime;
	bool submit_thread;
	bool device_patch;
	long long submit_spin_us;
	int gate; /* gs_gate_mode_t */
	long long gate_after;
	long long gate_samples;
	double gate_margin;
	bool gate_less_own;
	bool gate_host;
	bool gate_period;
	long long gate_block;
	long long gate_trust;
	long long gate_recheck;
	int log_level;
	bool summary;
	char stats_path[512];
	char trace_path[512];
	long long trace_max;
	bool overwrite;
	long long steps;
	char hip_library[512];
} gs_config_t;

/*
 * GRAPHSHIM_GATE: what decides between a sequence's graph and eager
 * launches; X(NAME, "value").  AUTO: measured per sequence.  REPLAY: always
 * the graph (graphshim before the gate).  EAGER: never the graph: learn
 * and match, submit eagerly.
 */
#define GS_GATE_MODES(X)                                                      \
	X(AUTO, "auto")                                                       \
	X(REPLAY, "replay")                                                   \
	X(EAGER, "eager")

typedef enum gs_gate_mode {
#define GS_X(n, s) GS_GATE_##n,
	GS_GATE_MODES(GS_X)
#undef GS_X
	GS_GATE_NMODES
} gs_gate_mode_t;

/*
 * GRAPHSHIM_BUILD_SCHED: the Linux scheduling policy of the builder
 * thread; X(NAME, "value").  NORMAL: the application's own (inherited).
 * BATCH: SCHED_BATCH, a fair share but no preemption on waking.  IDLE:
 * SCHED_IDLE, only CPU time nothing else wants.
 */
#define GS_BUILD_SCHEDS(X)                                                    \
	X(NORMAL, "normal")                                                   \
	X(BATCH, "batch")                                                     \
	X(IDLE, "idle")

typedef enum gs_build_sched {
#define GS_X(n, s) GS_BUILD_SCHED_##n,
	GS_BUILD_SCHEDS(GS_X)
#undef GS_X
	GS_BUILD_NSCHEDS
} gs_build_sched_t;

/* The values GRAPHSHIM_GATE and GRAPHSHIM_BUILD_SCHED take; NULL outside the lists. */
const char *gs_config_gate_name(int mode);
const char *gs_config_sched_name(int sched);

/* The configuration in force (defaults until gs_config_load). */
extern gs_config_t gs_config;

/* Set every field to its default. */
void gs_config_defaults(gs_config_t *c);

/*
 * Fill c from a lookup function (getenv in production, a table in tests).
 * Returns the number of variables that were set but rejected.
 */
int gs_config_parse(gs_config_t *c, const char *(*lookup)(const char *name));

/* Load gs_config from the environment, unless in secure-execution mode. */
void gs_config_load(void);

/*
 * For a backend that needs a setting before the engine starts (the HIP
 * runtime's name): load once per process, and let the engine's start
 * (gs_config_start) use that load instead of reading again.
 */
void gs_config_load_once(void);
/* The engine's start: load, unless gs_config_load_once just did. */
void gs_config_start(void);

/* True in secure-execution mode (AT_SECURE), where nothing is read or written. */
bool gs_config_secure(void);

/*
 * The GRAPHSHIM_* names of env (a NULL-terminated "NAME=value" list, as
 * environ) that graphshim does not know; with report, each is named on
 * stderr with the nearest known name.  Returns how many there are.  Names
 * read by the graphshim command only (GRAPHSHIM_LIB) are known.
 */
int gs_config_unknown(char *const *env, bool report);

/* The known variable nearest to name (by edit distance), or NULL when none is near. */
const char *gs_config_nearest(const char *name);

struct gs_fmt;
/*
 * The configuration in force as a JSON object, each variable's name and
 * value, paths left out (async-signal-safe: for the statistics file).
 */
void gs_config_write_json(struct gs_fmt *f);

#endif /* GS_CONFIG_H */
