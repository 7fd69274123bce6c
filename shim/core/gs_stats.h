/*
 * Counters for the summary at exit and the JSON statistics file.  Counters
 * are process-wide and updated with relaxed atomics; per-sequence figures
 * are handed in by the caller (the engine, at exit) when the file is
 * written.
 */
#ifndef GS_STATS_H
#define GS_STATS_H

#include "gs_common.h"
#include "gs_flush.h"
#include "gs_gate.h"
#include "gs_out.h"

/* X(field, "meaning"); the JSON keys are the field names. */
#define GS_COUNTERS(X)                                                        \
	X(launches, "sequence elements seen (kernels, copies, memsets)")     \
	X(kernels, "kernel launch calls seen, sequence elements and boundaries") \
	X(layouts_unreadable, "kernels whose parameter layout could not be read (they pass through)") \
	X(passed, "submitted eagerly as they came")                           \
	X(held, "held while matching an armed sequence")                      \
	X(replayed, "submitted as nodes of a graph replay")                   \
	X(released, "held, then submitted eagerly (divergence, flush, drift)")\
	X(boundary_launches, "launches the core cannot graph (boundaries)")   \
	X(sequences, "sequences learned (seen once)")                         \
	X(periods, "sequences found by period detection")                    \
	X(graphs, "graphs built and instantiated")                            \
	X(build_ns, "nanoseconds spent building and instantiating graphs")    \
	X(build_max_ns, "longest single graph build, nanoseconds")            \
	X(arm_max_ns, "longest time a launch call spent arming a sequence (ns)") \
	X(arm_preempted, "arms during which the calling thread lost its CPU (involuntary switches)") \
	X(replays, "graph launches")                                          \
	X(patches, "graph nodes patched in place")                            \
	X(shared_chunks, "chunks submitted while several learned steps still matched, before one was left (chunks they all share)") \
	X(variants, "more graphs of a chunk built from another recurring set of operands") \
	X(variant_replays, "chunk replays that launched one of those variants")  \
	X(patched_replays, "replays that needed at least one patch")          \
	X(posted, "replays whose patches and graph launch went to the submission thread") \
	X(drift_rebuilds, "sequences built again to patch on the GPU the nodes whose parameters drift, and from the host those whose function, block or shared memory does (GRAPHSHIM_DEVICE_PATCH)") \
	X(drift_host_only, "patches whose node drifted in its parameters and that the backend would patch from the host even if built again (no updater in that context, or one refused; GRAPHSHIM_DEVICE_PATCH)") \
	X(drift_deferred, "such drift not marked because another sequence's build again was pending in the match, or the sequence had been built again as often as it may") \
	X(drift_unarmed, "builds again asked for and dropped: the sequence was not armed when its match ended") \
	X(device_patched, "graph node words and grids written on the GPU by graphshim's updater node (GRAPHSHIM_DEVICE_PATCH)") \
	X(device_calls, "device calls the updater made to write them: one a grid, one a word or a run of words close together") \
	X(device_updates, "graph launches whose updater node ran") \
	X(device_resizes, "of those, launches whose updater was set with another function or block size than the last time (about 3 us more at the launch on an H200)") \
	X(device_reenables, "of those, launches whose updater was enabled again after a launch with nothing to write (about 4 us more at the launch on an H200)") \
	X(device_host_patches, "patches of device-updatable graphs made from the host (a function, block or shared-memory change, a second patch before a launch, the updater full)") \
	X(device_host_shape, "of those, patches that changed what a device update cannot: the function, the block or the shared memory") \
	X(device_host_behind, "of those, patches without the engine's record of the node after device patches diffed against it (a stand-in in the node, the submission thread)") \
	X(device_uploads, "uploads of device-updatable graphs: before their first launch, and after a host patch of one of their nodes") \
	X(mismatches, "replays abandoned (structure or drift)")               \
	X(retirements, "sequences retired to eager")                          \
	X(relearned, "retired sequences allowed to learn again")              \
	X(forgiven, "structure mismatches and cuts not charged: the segment was too short to be a sequence, or another known one") \
	X(evictions, "sequences evicted from a full cache")                   \
	X(fallbacks, "backend failures handled by going eager")               \
	X(refused, "records the vendor would not take as graph nodes: each runs eagerly at its place in its step") \
	X(stand_ins, "graph nodes the backend made on a stand-in (a copy or memset on memory freed since its pass), patched before their first launch") \
	X(flushes, "flushes that submitted held work")                        \
	X(cold_passed, "passed through by cold streams, with no record kept")    \
	X(unkept, "passed through on streams the engine does not keep: the per-thread default stream, or one the driver would not describe") \
	X(cold_streams, "times a stream went cold (segments stopped repeating)") \
	X(cold_woken, "times a cold stream began keeping records again")        \
	X(cold_quiet, "times a stream went cold quietly: the gate kept all its armed steps eager") \
	X(cold_quiet_passed, "passed through by quiet cold streams (part of cold_passed)") \
	X(cold_rewarmed, "times a cold stream woke to replay an armed step and went cold again after it (GRAPHSHIM_COLD_REPLAY)") \
	X(cold_wanted, "times a cold stream woke at the first launch of a segment that began as a cold segment that repeated") \
	X(speculated, "sequences built when a step began like the one before, a sighting early") \
	X(siblings, "sequences learned at their first sighting as variants of an armed one (GRAPHSHIM_SIBLINGS)") \
	X(learned_long, "sequences learned at their first sighting, at least GRAPHSHIM_LEARN_LONG operations long") \
	X(guesses_missed, "speculative builds whose step did not repeat: the next segment was another") \
	X(thrift_on, "times a stream turned thrifty: its graph builds were wasted more than they paid (GRAPHSHIM_THRIFT)") \
	X(gated, "matched, submitted eagerly because the gate chose eager for the pass") \
	X(gate_decisions, "gate decisions (eager and replayed passes timed, medians compared)") \
	X(gate_eager, "gate decisions that chose eager")                           \
	X(gate_kept, "watched moves that kept a decision to replay without a trial") \
	X(gate_inherited, "sequences that replay on a like sequence's decision, no trial of their own") \
	X(gate_trusted, "long sequences that patched little, replaying without a first trial (GRAPHSHIM_GATE_TRUST)") \
	X(interrupted, "matches that went on after another thread's flush submitted their held launches") \
	X(idle_cuts, "places a chunk ends because the program waited there without a call, GRAPHSHIM_IDLE_CUT replayed passes in a row") \
	X(idle_eager, "times a sequence went eager until its next re-check: its replayed passes kept waiting for the idle watchdog") \
	X(event_not_ready, "event queries answered not ready: the event's record was held with its chunk, not yet submitted") \
	X(query_not_ready, "stream queries from another thread answered not ready: the stream held launches of that thread's step, not yet submitted") \
	X(destroys_deferred, "event destructions deferred until a held record of the event, or wait on it, went to the driver") \
	X(adopted, "side streams whose work went to the stream they waited on (GRAPHSHIM_ADOPT)") \
	X(frees_held, "stream-ordered frees held with their chunk and sent after it") \
	X(host_held_calls, "GRAPHSHIM_SELFTIME: launch calls that held their launch and called the driver for nothing") \
	X(host_held_own_ns, "GRAPHSHIM_SELFTIME: nanoseconds those calls took") \
	X(host_eager_calls, "GRAPHSHIM_SELFTIME: launch calls that submitted work eagerly and launched no graph") \
	X(host_eager_own_ns, "GRAPHSHIM_SELFTIME: nanoseconds those calls took outside the driver") \
	X(host_chunk_calls, "GRAPHSHIM_SELFTIME: launch calls that launched a graph (a chunk's last launch)") \
	X(host_chunk_own_ns, "GRAPHSHIM_SELFTIME: nanoseconds those calls took outside the driver") \
	X(host_submits, "GRAPHSHIM_SELFTIME: eager submissions to the driver in timed calls (launches, copies, memsets, marks)") \
	X(host_submit_ns, "GRAPHSHIM_SELFTIME: nanoseconds in those driver calls") \
	X(host_graph_launches, "GRAPHSHIM_SELFTIME: graph launches in timed calls") \
	X(host_graph_launch_ns, "GRAPHSHIM_SELFTIME: nanoseconds in those driver calls") \
	X(host_patches, "GRAPHSHIM_SELFTIME: node patches in timed calls") \
	X(host_patch_ns, "GRAPHSHIM_SELFTIME: nanoseconds in those driver calls") \
	X(host_updaters, "GRAPHSHIM_SELFTIME: graph launches that set, enabled, disabled or uploaded for the updater node first (GRAPHSHIM_DEVICE_PATCH)") \
	X(host_updater_ns, "GRAPHSHIM_SELFTIME: nanoseconds in those driver calls") \
	X(host_slow_calls, "GRAPHSHIM_SELFTIME: launch calls that took graphshim 16 us of its own time or more") \
	X(host_slow_own_ns, "GRAPHSHIM_SELFTIME: graphshim's own nanoseconds in those calls") \
	X(host_slow_eager, "GRAPHSHIM_SELFTIME: of those, calls that submitted work eagerly") \
	X(host_slow_arm, "GRAPHSHIM_SELFTIME: of those, calls that armed a sequence") \
	X(host_slow_build, "GRAPHSHIM_SELFTIME: of those, calls that built graphs on the caller's thread") \
	X(host_slow_release, "GRAPHSHIM_SELFTIME: of those, calls that submitted held records eagerly") \
	X(host_slow_gate, "GRAPHSHIM_SELFTIME: of those, calls that made or read a gate's timer") \
	X(host_slow_layout, "GRAPHSHIM_SELFTIME: of those, calls that read a function's parameter layout from the driver") \
	X(host_slow_peers, "GRAPHSHIM_SELFTIME: of those, calls that flushed held work of another stream tied to theirs") \
	X(host_slow_wait, "GRAPHSHIM_SELFTIME: of those, calls that waited for the builder") \
	X(host_slow_lock, "GRAPHSHIM_SELFTIME: of those, calls that found a stream's lock or the stream table's taken") \
	X(host_slow_mismatch, "GRAPHSHIM_SELFTIME: of those, calls that ended a match on a mismatch") \
	X(host_slow_variant, "GRAPHSHIM_SELFTIME: of those, calls that copied a variant's records for the builder") \
	X(host_slow_publish, "GRAPHSHIM_SELFTIME: of those, calls that took graphs the builder had finished") \
	X(host_slow_plain, "GRAPHSHIM_SELFTIME: of those, calls that did none of these") \
	X(order_errors, "records submitted out of their stream's order or a second time (a bug: always 0)")

#define GS_MISMATCH_REASONS(X)                                                \
	X(STRUCTURE, "a launch differed in shape: kind, context, parameter layout, flags or attributes") \
	X(CUT, "a flush arrived before the sequence was complete")            \
	X(DRIFT, "too many arguments changed to patch cheaply")               \
	X(PATCH_FAILED, "the backend could not patch a node")                 \
	X(LAUNCH_FAILED, "the backend could not launch the graph")

typedef enum gs_mismatch_reason {
#define GS_X(n, s) GS_MISMATCH_##n,
	GS_MISMATCH_REASONS(GS_X)
#undef GS_X
	GS_MISMATCH_NREASONS
} gs_mismatch_reason_t;

/* The reason's name ("STRUCTURE", ...); "INVALID" for a value outside the list. */
const char *gs_mismatch_reason_name(gs_mismatch_reason_t r);

typedef struct gs_stats {
#define GS_X(f, s) uint64_t f;
	GS_COUNTERS(GS_X)
#undef GS_X
	uint64_t mismatch_by[GS_MISMATCH_NREASONS];
	uint64_t flush_by[GS_FLUSH_NREASONS];
} gs_stats_t;

extern gs_stats_t gs_stats;

#define GS_STAT_ADD(field, n) __atomic_fetch_add(&gs_stats.field, (n), __ATOMIC_RELAXED)
#define GS_STAT_INC(field) GS_STAT_ADD(field, 1)

/* Raise gs_stats.field to v when v is larger. */
void gs_stats_max(uint64_t *field, uint64_t v);

/* Reset every counter (tests). */
void gs_stats_reset(void);

/*
 * The state of a sequence, for the statistics and the trace; X(NAME,
 * "name").  LEARNING: seen, not yet repeated enough.  ARMED: has its
 * graphs; incoming launches are matched.  RETIRED: too many mismatches,
 * eager.  FAILED: the backend could not build its graph, eager.
 * BUILDING: its graphs are being built in the background.
 */
#define GS_SEQ_STATES(X)                                                      \
	X(LEARNING, "learning")                                               \
	X(ARMED, "armed")                                                     \
	X(RETIRED, "retired")                                                 \
	X(FAILED, "failed")                                                   \
	X(BUILDING, "building")

typedef enum gs_seq_state {
#define GS_X(n, s) GS_SEQ_##n,
	GS_SEQ_STATES(GS_X)
#undef GS_X
	GS_SEQ_NSTATES
} gs_seq_state_t;

/* The state's name ("learning", ...); "invalid" for a value outside the list. */
const char *gs_seq_state_name(gs_seq_state_t s);

/* Per-sequence figures (gs_engine_seq_info() gathers them). */
typedef struct gs_seq_info {
	uint64_t id;        /* the sequence's hash (shape of every record) */
	uintptr_t stream;
	uint32_t length;
	uint32_t state;     /* gs_seq_state_t */
	bool periodic;      /* found by period detection rather than boundaries */
	uint64_t seen;      /* times the sequence was observed or replayed */
	uint64_t replays;
	uint64_t patches;
	uint64_t mismatches;
	uint64_t retirements;
	uint32_t refused;   /* its records the vendor would not graph: each runs eagerly */
	uint64_t build_ns;
	const char *gate;   /* "replay", "eager", "trial" or "off" (never timed) */
	uint64_t eager_ns;  /* the medians behind the gate's last decision, 0 before one */
	uint64_t replay_ns;
	uint32_t eager_host_ns; /* the host's medians behind it, 0 where it had none */
	uint32_t replay_host_ns;
	uint32_t eager_less_ns; /* with GRAPHSHIM_SELFTIME, eager_host_ns less graphshim's own
				 * time in those passes (0: not measured) */
	uint32_t gate_trials;
	gs_gate_first_t first; /* the first decision's figures (shown where a later one followed) */
	uint64_t eager_passes; /* complete passes submitted eagerly by the gate */
	uint32_t rebuilds;  /* built again for its drift (gs_arm_rebuild) */
	uint32_t drift_args, drift_shape; /* its records seen to drift in their parameters
					    * or grid, and in their function, block or
					    * shared memory (gs_rec_t.drift) */
	bool gone;          /* dropped with its stream or module; its last figures */
} gs_seq_info_t;

/* Coverage: replayed launches over launches seen, in [0, 1]. */
double gs_stats_coverage(const gs_stats_t *s);

/*
 * Count n launches seen.  Every 2^k launches it notes how many had been
 * replayed, so that the coverage of the run's second half (its steady
 * state, warm-up, loading and learning left out) can be told.
 */
void gs_stats_launched(uint64_t n);
/* Replayed over launches of the second half of the launches seen so far
 * (from the first note at or past half way); the whole run's coverage
 * while there are too few launches to tell. */
double gs_stats_coverage_steady(void);

/* Format the one-line summary ("graphshim: ...") into buf. */
void gs_stats_summary(char *buf, size_t len);

/* What a statistics file is written from, besides the counters and gs_config. */
typedef struct gs_stats_file {
	const gs_seq_info_t *seqs; /* per-sequence figures */
	size_t nseqs;
	bool truncated;            /* there were more than the caller could gather */
	const char *ended_by;      /* "exit", or the signal that ended the process ("SIGTERM") */
	gs_out_t out;              /* filled by the writer: out.done is where the file went */
} gs_stats_file_t;

/*
 * Write the statistics JSON to path by the rules of gs_out.h (%p, relative
 * names, NAME.PID.part renamed into place, never over a file that is not
 * this run's to replace, NAME.PID.json beside a taken name): the counters,
 * the configuration, the main sequence and the per-sequence figures of x.
 * Async-signal-safe.  True on failure (errno set; the reason is on stderr).
 */
bool gs_stats_write_json(const char *path, bool overwrite, gs_stats_file_t *x);

#endif /* GS_STATS_H */
