/*
 * Patches made on the GPU (cu_devupd.c): a graph's device-update state,
 * made while the graph is built, used by its patches and launches.
 */
#ifndef GS_CU_DEVUPD_H
#define GS_CU_DEVUPD_H

#include "cu_internal.h"

typedef struct gs_cu_du gs_cu_du_t;

/* Whether r's node could take device updates (GRAPHSHIM_DEVICE_PATCH on, a
 * kernel with parameters); it is built so where its parameters are seen to
 * drift and its function, block and shared memory are not (gs_rec_t.drift). */
bool gs_cu_du_could(const gs_rec_t *r);

/*
 * Before graph g's nodes are added: the state, and in *root the updater
 * node every other node must follow (node 0 depends on it).  NULL (and no
 * node) when GRAPHSHIM_DEVICE_PATCH is off, no record is to be updated so,
 * or the updater would not load in ctx (current).
 */
gs_cu_du_t *gs_cu_du_begin(CUgraph g, CUcontext ctx, const gs_rec_t *const *recs, size_t n,
			   CUgraphNode *root);
/* Node i was made from r: make it device-updatable if it can be. */
void gs_cu_du_node(gs_cu_du_t *du, size_t i, const gs_rec_t *r, CUgraphNode node);
/* Whether node i was made device-updatable. */
bool gs_cu_du_opted(const gs_cu_du_t *du, size_t i);
/* How node i takes patches (GS_PATCH_*): on the GPU; from the host, having
 * been tried (the driver would not make it device-updatable); or it could
 * be, built again, its parameters not having drifted at this build. */
int gs_cu_du_patching(const gs_cu_du_t *du, size_t i);
/* Whether a graph of recs would be built with an updater (some record's
 * parameters drift): with none after all, the updater would not load or
 * the driver would not take it, and building again changes nothing. */
bool gs_cu_du_wanted(const gs_rec_t *const *recs, size_t n);
/* After instantiation as x: false when the updater cannot be switched off. */
bool gs_cu_du_ready(gs_cu_du_t *du, CUgraphExec x);
void gs_cu_du_free(gs_cu_du_t *du);

/*
 * Patch node i with r's operands on the GPU: true when r's changes wait
 * for the next launch; false when the caller must patch it from the host
 * (and then call gs_cu_du_patched on success).  old: the record whose
 * operands the node holds (gs_ops_t.graph_patch), or NULL.
 */
bool gs_cu_du_defer(gs_cu_du_t *du, size_t i, const gs_rec_t *r, const gs_rec_t *old);
void gs_cu_du_patched(gs_cu_du_t *du, size_t i, const gs_rec_t *r);
/* Before graph x's launch on s: the updater set (or off), the upload. */
CUresult gs_cu_du_prepare(gs_cu_du_t *du, CUgraphExec x, CUstream s);
/* After its launch succeeded. */
void gs_cu_du_launched(gs_cu_du_t *du);
/* Contexts may have gone (gs_cu_forget). */
void gs_cu_du_forget(void);

#endif /* GS_CU_DEVUPD_H */
