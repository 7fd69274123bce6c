/*
 * The trace dump: Chrome trace-event JSON (the array form), which Perfetto
 * and chrome://tracing open.  Events are formatted into a buffer and written
 * whole with write(2), so a crash leaves a file that ends at an event (the
 * array form allows the closing bracket to be missing).  The number of
 * events is capped (GRAPHSHIM_TRACE_MAX); the cap and the count dropped are
 * written as metadata at the end.
 *
 * Every function is a no-op unless gs_trace_on is true.
 */
#ifndef GS_TRACE_H
#define GS_TRACE_H

#include "gs_rec.h"
#include "gs_stats.h"

extern bool gs_trace_on;

/*
 * Open path by the rules of gs_out.h (%p, relative names, written as
 * NAME.PID.part and renamed into place when closed); true on failure (the
 * reason is on stderr).
 */
bool gs_trace_open(const char *path, long long max_events, bool overwrite);
/* Write what is buffered and the closing metadata; put the file in place. */
void gs_trace_close(void);
/* Stop and remove the file (a process that made no GPU call). */
void gs_trace_discard(void);
/*
 * From a signal handler (async-signal-safe): close the trace as
 * gs_trace_close does (ended_by: the signal's name), or discard it.  True
 * when it could not: this thread is inside the trace (the caller defers
 * the signal, gs_sig.h), or another thread kept it for a second.
 */
bool gs_trace_close_signal(const char *ended_by, bool discard);
/* Whether the calling thread is inside the trace's lock (for gs_sig.c). */
bool gs_trace_busy_here(void);

/*
 * Kernel names: fn (the backend's func_name, gs_ops.h) names a record's
 * function; names are asked for once per function, outside the launch
 * path's hot code (only while tracing), and kept.  gs_trace_forget_names
 * drops them (a module unloaded: its handles may be reused).
 */
void gs_trace_set_namer(const char *(*fn)(const gs_rec_t *r));
void gs_trace_forget_names(void);
/* The kept name of r's function into out (len bytes), or "" (async-unsafe: locks). */
void gs_trace_kernel_name(const gs_rec_t *r, char *out, size_t len);

/*
 * state: "eager" (submitted as it came), "held" (held while matching),
 * "released" (held, then submitted eagerly: divergence, flush, drift),
 * "gated" (held, then submitted eagerly by the gate's choice).  A launch
 * is traced once when it arrives (eager or held), and a held one once more
 * if it is released or gated; replayed launches are counted by the replay
 * events.
 */
void gs_trace_launch(const char *api, uintptr_t stream, const gs_rec_t *r, const char *state);
/* nheld launches held were submitted; last: the last of them, whose kernel is named (NULL: none). */
void gs_trace_flush(uintptr_t stream, gs_flush_reason_t why, const char *api, uint32_t nheld,
		    const gs_rec_t *last);
/*
 * A stream's segment ended (its work so far is one step's, for learning):
 * `len` operations since the last end, `marks` of them event records and
 * waits; why and the entry point that ended it.  Traced whether or not
 * anything was held, so that a trace shows where a stream's steps are cut.
 */
void gs_trace_segment(uintptr_t stream, uint64_t len, uint64_t marks, gs_flush_reason_t why,
		      const char *api);
/* An event record or wait on a stream (a mark): api, the event, and whether the stream is cold. */
void gs_trace_mark(uintptr_t stream, const char *api, uint64_t event, bool cold);
/* how: "boundary" or "period". */
void gs_trace_learned(uintptr_t stream, uint64_t id, uint32_t length, const char *how);
/* first: the sequence's first record (may be NULL), which names its first kernel. */
void gs_trace_built(uintptr_t stream, uint64_t id, uint32_t length, uint64_t ns, int status,
		    const gs_rec_t *first);
/*
 * A variant of chunk `chunk` (length launches) of the sequence id (seq_length
 * launches) was built, status 0, or could not be (gs_variant.h); first
 * names its first kernel.
 */
void gs_trace_variant(uintptr_t stream, uint64_t id, uint32_t seq_length, uint32_t chunk,
		      uint32_t length, uint64_t ns, int status, const gs_rec_t *first);
/*
 * One graph launch of a replay: chunk `chunk` of the `chunks` of a sequence
 * of seq_length launches, covering `length` of them, `patches` nodes patched;
 * `variant`: the graph launched was one of the chunk's variants;
 * `shared`: it went while several steps still matched (a chunk they share).
 */
void gs_trace_replay(uintptr_t stream, uint64_t id, uint32_t seq_length, uint32_t length,
		     uint32_t patches, uint32_t chunk, uint32_t chunks, bool variant, bool shared);
/* A pass over a sequence completed, replayed or eagerly by the gate's choice. */
void gs_trace_pass(uintptr_t stream, uint64_t id, uint32_t length, bool eager);
/*
 * field: "function", "grid", "block", "shmem", "kind", "arg N", ...;
 * expected/got may be NULL; r, the launch that did not match (may be NULL),
 * names its kernel.
 */
void gs_trace_mismatch(uintptr_t stream, uint64_t id, uint32_t pos, gs_mismatch_reason_t why,
		       const char *field, const char *expected, const char *got, const gs_rec_t *r);
void gs_trace_retired(uintptr_t stream, uint64_t id, uint64_t mismatches);
/* A STRUCTURE or CUT of sequence id was not charged: the segment it ended was `by` (its id). */
void gs_trace_forgiven(uintptr_t stream, uint64_t id, uint64_t by);
/* The gate's decision for a sequence, with the medians it compared. */
void gs_trace_gate(uintptr_t stream, uint64_t id, uint32_t length, uint64_t eager_ns,
		   uint64_t replay_ns, uint64_t eager_host_ns, uint64_t replay_host_ns, bool eager);
/* A watched move to shorter replayed passes kept the decision (gs_gate.c). */
void gs_trace_gate_kept(uintptr_t stream, uint64_t id, uint32_t length, uint64_t was_ns,
			uint64_t now_ns);
/* One timed pass of a sequence's trial, as the gate reads it: its kind,
 * which clock (the GPU's span or the host's time) and how long. */
void gs_trace_gate_sample(uintptr_t stream, uint64_t id, bool eager, bool host, uint64_t ns);
/* A sequence took a like sequence's verdict of replay (gs_gate.c). */
void gs_trace_gate_inherited(uintptr_t stream, uint64_t id, uint32_t length, uint32_t like);
void gs_trace_gate_trusted(uintptr_t stream, uint64_t id, uint32_t length, uint64_t patches,
			   uint32_t chunks);
void gs_trace_fallback(const char *what, int status);
/* Sequence id goes eager until its next re-check: `passes` replayed passes in a row waited for the idle watchdog. */
void gs_trace_idle_eager(uintptr_t stream, uint64_t id, uint32_t length, long long passes);
/* A chunk of sequence id ends after record at - 1 from now on, r: the program waited there (gs_arm_waited). */
void gs_trace_cut(uintptr_t stream, uint64_t id, uint32_t length, uint32_t at, const gs_rec_t *r);

#endif /* GS_TRACE_H */
