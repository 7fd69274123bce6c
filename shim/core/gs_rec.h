/*
 * Launch records: one stream-ordered operation that may become a graph node.
 * A backend fills a record at call time (arguments are copied then, exactly
 * as the driver does, because callers reuse their parameter arrays); the core
 * keeps it, compares it, and hands it back to the backend to submit or bake.
 */
#ifndef GS_REC_H
#define GS_REC_H

#include "gs_common.h"

/*
 * What a record is; X(NAME, "name in the trace").  KERNEL: a kernel launch,
 * args[] is the packed parameter image.  COPY: a copy, args[] holds the
 * patchable operands (dst, src).  SET: a memset, args[] holds the
 * patchable operands (dst, value).  MARK: a stream-ordered operation that
 * is no graph node (an event record, a wait on an event, a stream-ordered
 * free): it takes its place in a sequence, but the engine submits it
 * itself, after everything before it on the stream (gs_engine_launch), and
 * nothing ever bakes it; args[] holds its operand (the event, or the
 * address freed).  Kinds count from 1: a zeroed record has none.
 */
#define GS_REC_KINDS(X)                                                       \
	X(KERNEL, "kernel")                                                   \
	X(COPY, "copy")                                                       \
	X(SET, "memset")                                                      \
	X(MARK, "event")

typedef enum gs_rec_kind {
	GS_REC_NOKIND = 0,
#define GS_X(n, s) GS_REC_##n,
	GS_REC_KINDS(GS_X)
#undef GS_X
	GS_REC_NKINDS
} gs_rec_kind_t;

/* The kind's name ("kernel", "copy", "memset"); "unknown" for any other value. */
const char *gs_rec_kind_name(uint32_t kind);

/* One kernel parameter: its offset and size inside the packed image. */
typedef struct gs_arg {
	uint32_t off;
	uint32_t size;
} gs_arg_t;

/*
 * The parameter layout of one kernel.  Backends cache one per function
 * handle and never free it while a record may point at it, so records
 * compare and copy layouts by pointer.
 */
typedef struct gs_layout {
	uint32_t nargs;
	uint32_t total; /* bytes of the packed image */
	gs_arg_t arg[];
} gs_layout_t;

/*
 * A record's fields are of two kinds.  Its *shape* is what no patch of a
 * graph node can change: the kind, the context, the flags, the parameter
 * layout (so the size of args[]) and the structural aux words.  Its
 * *operands* are what a node takes new on replay (gs_ops_t.graph_patch):
 * the function (another one of the same layout), the grid, the block, the
 * dynamic shared memory, the size of a copy or a memset (aux[0]), and the
 * bytes of args[].  Sequences are learned and matched by shape; every
 * operand is revalidated on every replay and patched where it differs.
 */
typedef struct gs_rec {
	uint64_t shape;  /* hash of the shape */
	uint64_t hash;   /* hash of the shape and every operand */
	uint32_t kind;   /* gs_rec_kind_t */
	uint32_t nbytes; /* bytes used in args[] */
	uint32_t cap;    /* bytes allocated for args[] (owned by the core) */
	uint32_t shmem;  /* dynamic shared memory, kernels only */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t flags;  /* backend-defined structural flags (handle kind, copy kind) */
	uint32_t held_ev;/* the core's: a mark whose event's record is held (gs_event.h) */
	uint32_t refused;/* the core's, on a sequence's baked records: the vendor would not
			  * take it as a graph node, so it runs eagerly at its place (gs_arm.c) */
	uint32_t waits;  /* the core's, on a sequence's baked records: replayed passes in a row
			  * in which the program waited after it without a call; at
			  * GS_ARM_CUT_AFTER a chunk ends here from then on (gs_arm_waited) */
	uint32_t idled;  /* the core's, baked: 1 + the sequence's replayed passes when the program
			  * last waited after it (gs_arm_waited) */
	uint32_t stale;  /* the core's, baked: the backend built this node with a stand-in
			  * operand (gs_ops_t.graph_build), so the next replay patches it
			  * whatever the held record is; a patch bakes the held one */
	uint32_t drift;  /* the core's, baked: what patches of this kernel changed (GS_DRIFT_*),
			  * kept across patches; a backend that patches nodes on the GPU builds
			  * those so whose parameters drift, not their geometry (gs_replay.c) */
	void *func;      /* kernel handle; NULL for copies and memsets */
	void *ctx;       /* the context the operation belongs to */
	const gs_layout_t *layout; /* kernels only; NULL when the image is opaque */
	uint64_t aux[4]; /* backend-defined words: structural, but for the size of a copy or
			  * a memset in aux[0], which is an operand */
	/*
	 * The backend's own view of the call that produced this record, valid
	 * only while that call is in progress: a pass-through submission uses it
	 * to call the vendor with the caller's own arguments.  NULL otherwise.
	 */
	const void *orig;
	unsigned char args[];
} gs_rec_t;

/* gs_rec_t.drift: a patch changed the parameters or the grid; the function,
 * the block or the dynamic shared memory (its geometry). */
enum { GS_DRIFT_ARGS = 1, GS_DRIFT_GEOMETRY = 2 };

/* The 8-byte operand at byte `at` of args[] (a copy's dst and src, a memset's dst and value). */
static inline uint64_t gs_rec_u64(const gs_rec_t *r, size_t at)
{
	return gs_load_u64(r->args + at);
}

/* Whether r is a mark (GS_REC_MARK): in a sequence; in a graph only as an empty node. */
static inline bool gs_rec_is_mark(const gs_rec_t *r)
{
	return r->kind == GS_REC_MARK;
}

/*
 * What a mark does (aux[3], set by the backend).  A FREE gives memory back
 * to its pool in stream order (cuMemFreeAsync): it names no event, so no
 * other call observes it, and it is held with its chunk and goes after it
 * (gs_match_defer, gs_replay.c).
 */
enum { GS_MARK_RECORD = 1, GS_MARK_WAIT = 2, GS_MARK_FREE = 3 };

/*
 * A mark's held_ev: its event's record or wait held (in gs_event's table),
 * sent already, or a free held (in no table).
 */
enum { GS_HELD_EVENT = 1, GS_HELD_SENT = 2, GS_HELD_FREE = 3 };

/* Whether r is a mark that records its event. */
static inline bool gs_rec_is_record(const gs_rec_t *r)
{
	return r->kind == GS_REC_MARK && r->aux[3] == GS_MARK_RECORD;
}

/* Whether r is a stream-ordered free: a mark that names no event. */
static inline bool gs_rec_is_free(const gs_rec_t *r)
{
	return r->kind == GS_REC_MARK && r->aux[3] == GS_MARK_FREE;
}

/* Whether r is a mark that waits on its event. */
static inline bool gs_rec_is_wait(const gs_rec_t *r)
{
	return r->kind == GS_REC_MARK && r->aux[3] != GS_MARK_RECORD && r->aux[3] != GS_MARK_FREE;
}

/* Whether r is a mark of an event (a record or a wait, not a free). */
static inline bool gs_rec_is_evmark(const gs_rec_t *r)
{
	return r->kind == GS_REC_MARK && r->aux[3] != GS_MARK_FREE;
}

/* A mark's event (a free's address). */
static inline uint64_t gs_rec_event(const gs_rec_t *r)
{
	return gs_rec_u64(r, 0);
}

/* Compute shape and hash from the fields; call after filling a record. */
void gs_rec_seal(gs_rec_t *r);

/* Bytes needed for a record holding nbytes of operands. */
static inline size_t gs_rec_size(uint32_t nbytes)
{
	return sizeof(gs_rec_t) + nbytes;
}

/*
 * A per-thread scratch record with room for nbytes of operands, reset to
 * zero.  Backends fill it in a hook and pass it to gs_engine_launch(), which
 * copies what it keeps.  Returns NULL when memory cannot be had.
 */
gs_rec_t *gs_rec_scratch(uint32_t nbytes);

/* Copy src into *dst, growing *dst when it is too small; true on failure. */
bool gs_rec_copy(gs_rec_t **dst, const gs_rec_t *src);

/* True when a and b have the same shape (a node of one can take the other's operands). */
bool gs_rec_same_shape(const gs_rec_t *a, const gs_rec_t *b);

/* True when records of the same shape differ in any operand (a node needs a patch). */
bool gs_rec_differs(const gs_rec_t *a, const gs_rec_t *b);

/*
 * Compare the argument bytes of two records of the same shape.  Returns -1
 * when every byte is equal, otherwise the index of the first parameter
 * that differs (the byte offset's parameter for kernels with a layout, 0
 * for opaque images and for copy/memset operands).
 */
int gs_rec_first_diff(const gs_rec_t *a, const gs_rec_t *b);

/* Which field differs between a and b (shape first, then operands), for diagnostics. */
const char *gs_rec_diff_field(const gs_rec_t *a, const gs_rec_t *b);

#endif /* GS_REC_H */
