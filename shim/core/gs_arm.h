/*
 * Arming: a learned sequence becomes graphs.  Its records are baked (taken
 * from the stream's history), cut into chunks, and built, one graph a
 * chunk, on the background builder or in place; the stream publishes a
 * finished build on its next call.  Stream lock held throughout.
 */
#ifndef GS_ARM_H
#define GS_ARM_H

#include "gs_common.h"

typedef struct gs_seq gs_seq_t;
typedef struct gs_stream gs_stream_t;

/* How gs_arm_seq() takes the records. */
enum {
	/* The history's records move to the sequence (nothing else will read them). */
	GS_ARM_STEAL = 1u << 0,
	/* A guess, built before the sequence repeated: not matched until it does. */
	GS_ARM_SPEC = 1u << 1,
};

/*
 * Arm q from the history's records [from, from + q->n); host_ns is the
 * host time per launch measured while they arrived.  True when it failed
 * (q stays learning).
 */
bool gs_arm_seq(gs_stream_t *s, gs_seq_t *q, uint64_t from, uint64_t host_ns, unsigned how);
/* Tests only: called while a plan is split, after each record's part is decided (NULL in use). */
extern void (*gs_arm_split_seam)(void);
/* Build q's graphs now (the caller's thread); 0 or the backend's status. */
int gs_arm_build(gs_seq_t *q);
/* Publish what the builder finished for s. */
void gs_arm_publish(gs_stream_t *s);
/*
 * q, armed and in no match, had record q->refuse_at refused by the vendor
 * (a node update it would not take): that record runs eagerly from now on
 * and q is planned and built again around it.  False (nothing done) when q
 * refused too many records already; then it should retire.
 */
bool gs_arm_refuse_armed(gs_stream_t *s, gs_seq_t *q);
/*
 * The idle watchdog submitted the `at` records q's match held (the program
 * waited after record at - 1 without a call): in GS_ARM_CUT_AFTER (4)
 * replayed passes in a row at the same place, a chunk of q is to end there
 * (s->match.recut; gs_arm.c says why).
 */
void gs_arm_waited(gs_stream_t *s, gs_seq_t *q, uint32_t at);
/* q, in no match: where a chunk is to end and none does, it is planned and built again. */
void gs_arm_recut(gs_stream_t *s, gs_seq_t *q);

/*
 * A record of q drifted so that the backend would build its node
 * otherwise (gs_rec_t.drift, gs_ops_t.graph_node_patching): q is built
 * again once the match has ended (s->match.rebuild), a bounded number of
 * times (may).
 */
bool gs_arm_rebuild_may(const gs_seq_t *q);
void gs_arm_rebuild(gs_stream_t *s, gs_seq_t *q);

#endif /* GS_ARM_H */
