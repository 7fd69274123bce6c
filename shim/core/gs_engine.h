/*
 * The engine: what a backend calls from its hooks.  A backend classifies
 * every vendor entry point into one of four classes (gs_class_t) and calls
 * the matching function below before or instead of calling the vendor:
 *
 *   element     -> gs_engine_launch() with a filled record
 *   flush stream-> gs_engine_flush_stream() then the vendor call
 *   flush all   -> gs_engine_flush_all() then the vendor call
 *   harmless    -> the vendor call alone
 *
 * The engine is thread-safe.  It never calls back into a hook: the backend's
 * ops call the real vendor functions directly.
 */
#ifndef GS_ENGINE_H
#define GS_ENGINE_H

#include "gs_flush.h"
#include "gs_ops.h"

typedef enum gs_class {
	GS_CLASS_ELEMENT = 1, /* may be held and become a graph node */
	GS_CLASS_STREAM = 2,  /* ordered on one stream: submit that stream first */
	GS_CLASS_ALL = 3,     /* cross-stream or host-visible: submit everything first */
	GS_CLASS_HARMLESS = 4 /* touches no stream-ordered state */
} gs_class_t;

/* Why held work was submitted: GS_FLUSH_* (gs_flush.h). */

/* Stream kinds, given when the backend first names a stream. */
enum {
	GS_STREAM_BLOCKING = 1u << 0, /* synchronizes with the legacy default stream */
	GS_STREAM_LEGACY = 1u << 1,   /* the legacy default stream itself */
	GS_STREAM_PASSTHRU = 1u << 2, /* never hold work here (e.g. per-thread default stream) */
};

/*
 * Start the engine with a backend's table.  Reads the configuration once.
 * Idempotent; returns true on failure (the backend then passes through),
 * which includes a second backend asking after the first owns the engine.
 */
bool gs_engine_init(const gs_ops_t *ops);

/* Submit everything held, release graphs and state (at exit). */
void gs_engine_fini(void);

/* True when the engine is up and enabled. */
bool gs_engine_active(void);

/*
 * A stream-ordered operation that may be held.  rec is usually the scratch
 * record (gs_rec_scratch), sealed; handle and ctx name the stream, and
 * sflags (GS_STREAM_*) describe it the first time it is seen.  Returns the
 * vendor status of a pass-through submission, or 0 when the record was held
 * or replayed.  `api` names the entry point for the trace.
 */
int gs_engine_launch(uintptr_t handle, void *ctx, unsigned sflags,
		     gs_rec_t *rec, const char *api);

/*
 * The pass-through fast path.  A stream whose segments stopped repeating
 * goes cold (GRAPHSHIM_COLD_AFTER): it keeps no records, and its launches
 * after the first of each segment may pass through without one.  A backend
 * calls this before building a record, with `key`, a hash of the launch's
 * structure (function, grid, block, shared memory) that it can compute
 * from the call alone.  When it returns true the launch was counted into
 * the stream's cold segment and the backend calls the vendor with it at
 * once, as the application did; when false, the backend builds the record
 * and calls gs_engine_launch() as usual.
 */
bool gs_engine_cold(uintptr_t handle, void *ctx, unsigned sflags, uint64_t key);

/* For the stream the calling thread's last launch went to: gs_lane.h. */

/*
 * Submit the held work of one stream (and what the legacy-stream rules tie
 * to it) and end its learning segment.  Call before the vendor function.
 */
void gs_engine_flush_stream(uintptr_t handle, void *ctx, unsigned sflags,
			    gs_flush_reason_t why, const char *api);

/*
 * Side streams were adopted into this stream (the backend's adoption): from
 * now on it absorbs event records and waits into its chunks
 * (gs_stream_absorbs), as its steps are full of its sides' forks and joins.
 */
void gs_engine_stream_absorb(uintptr_t handle, void *ctx, unsigned sflags);

/*
 * A synchronization or a query of one stream (reason SYNC or QUERY):
 * gs_engine_flush_stream for every state the handle has, in whatever
 * context each was made (a thread may synchronize a stream of a context
 * not current to it); the legacy and per-thread default streams are ctx's
 * own.  The calling thread's other streams end their segments as at any
 * boundary; other threads' streams keep their held work.  Call before the
 * vendor function.
 */
void gs_engine_flush_synced(uintptr_t handle, void *ctx, unsigned sflags, gs_flush_reason_t why,
			    const char *api);

/*
 * A query of one stream: true when the backend answers "not ready" itself,
 * without calling the vendor: the stream holds work not yet submitted that
 * another thread is issuing (a monitor polling a worker's stream), so that
 * work is not complete, and the worker's pass goes on whole.  Answered so
 * while that thread goes on holding launches and for GS_NOT_READY_SPINS
 * queries in a row without (gs_match_not_ready); otherwise as gs_engine_flush_synced with
 * reason QUERY, and the backend asks the vendor.
 */
bool gs_engine_stream_query(uintptr_t handle, void *ctx, unsigned sflags, const char *api);

/*
 * A synchronization of event ev (reason EVENT): whatever stream holds its
 * record (or a wait on it) submits what it holds; the calling thread's
 * streams end their segments, as at any boundary; other threads' streams
 * keep their held work.  Call before the vendor function.
 */
void gs_engine_event_synced(uint64_t ev, const char *api);

/*
 * Event ev is shared with another process (its IPC handle is taken): what
 * holds it submits, and no record of or wait on it is held from now on
 * (gs_event_share).
 */
void gs_engine_event_share(uint64_t ev, const char *api);

/* Submit the held work of every stream and end every learning segment. */
void gs_engine_flush_all(gs_flush_reason_t why, const char *api);

/*
 * The idle watchdog's look (gs_idle.h, from its thread): a stream that
 * holds records and held none since the last look has them submitted, its
 * match going on (as after another thread's synchronize); one that cannot
 * go on (several candidates) ends there, uncharged.  Never waits for a
 * lock: a busy stream is not idle.
 */
void gs_engine_idle_scan(void);

/*
 * Submit everything held, then forget every learned sequence, graph and
 * stream state: function and stream handles may be unloaded or destroyed
 * and then reused (module or library unload, context destroy).  Call it
 * before the vendor call, so graphs are released while their context lives;
 * it returns once no graph is being built.
 */
void gs_engine_forget_funcs(const char *api);
/*
 * Around a vendor call that frees memory: no graph is being built from
 * the moment before the call until it returned (gs_build_free_enter).
 * `on` says whether begin took the lock: pass it to end.
 */
bool gs_engine_free_begin(void);
void gs_engine_free_end(bool on);

/*
 * Before a vendor call that observes or changes event ev (a query, elapsed
 * time, destroying it, sharing it with another process), or, with ev 0,
 * any event (launching an application's graph): a stream that holds a
 * record of it submits what it holds first (gs_event.h).  Event records
 * and waits themselves do this in gs_engine_launch.
 */
void gs_engine_event_use(uint64_t ev, const char *api);

/*
 * An event query: true when the backend answers "not ready" itself,
 * without calling the vendor (ev's record is held and this is its first
 * query, gs_event_first_query); otherwise as gs_engine_event_use, and the
 * backend asks the vendor.
 */
bool gs_engine_event_query(uint64_t ev, const char *api);

/*
 * The application destroys event ev: true when a stream holds a record of
 * it or a wait on it, and the engine destroys it once they have gone to the
 * driver (gs_event_destroy; the backend's event_destroy), so the backend
 * returns success without calling the vendor; otherwise as
 * gs_engine_event_use, and the backend destroys it now.  Destroying an
 * event with work pending is legal: the vendor releases it when that work
 * completes, and nothing the program can still do names it.
 */
bool gs_engine_event_destroy(uint64_t ev, const char *api);

/* Flush and forget a stream that is being destroyed. */
void gs_engine_stream_destroy(uintptr_t handle, void *ctx, const char *api);

/*
 * The stream that last recorded event ev, as the engine saw it: its handle
 * and context; false when none is known.  A hint for a backend choosing a
 * stream to adopt a side stream into (GRAPHSHIM_ADOPT): any answer leaves
 * the order correct, a wrong one only costs concurrency.
 */
bool gs_engine_event_origin(uint64_t ev, uintptr_t *handle, void **ctx);

/*
 * The application began or ended its own stream capture.  While any capture
 * is active the engine holds nothing and learns nothing (work it held could
 * not join the capture, and work it replayed would escape it).  `release`
 * (or NULL): the backend's end of every adoption, called once the capture
 * counts as beginning (gs_engine_capture_begun), so that no stream is adopted
 * after it; every stream is flushed before and after it.
 */
void gs_engine_capture_begin(const char *api, void (*release)(const char *api));
void gs_engine_capture_end(const char *api);

/*
 * True while any application capture is open.  A backend then passes its
 * elements straight to the vendor without even filling a record: a query
 * it would make (a kernel's parameter layout, with lazy module loading)
 * can invalidate the capture.
 */
bool gs_engine_capturing(void);
/* A capture beginning (its flush under way) or under way: no stream may be adopted, nothing held. */
bool gs_engine_capture_begun(void);

/*
 * The figures of every sequence (gs_stats.h), for the statistics and for
 * tests: fill up to max entries; returns how many there are in all (which
 * may exceed max), dropped sequences' last figures included.
 */
struct gs_seq_info;
size_t gs_engine_seq_info(struct gs_seq_info *out, size_t max);

#endif /* GS_ENGINE_H */
