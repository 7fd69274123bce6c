/* GRAPHSHIM_SELFTIME's accounting (gs_self.h). */
#include "gs_self.h"
#include "gs_stats.h"

GS_TLS_IE __thread gs_self_tl_t gs_self_tl;

void gs_self_drv_end_slow(uint64_t t0, unsigned kind)
{
	uint64_t dt = gs_clock_ns() - t0;
	gs_self_tl.drv_ns += dt;
	if (!gs_self_tl.depth || !gs_config.selftime)
		return; /* outside a launch call, or timed for the gate alone */
	gs_self_tl.kinds |= kind;
	if (kind == GS_SELF_GRAPH) {
		GS_STAT_INC(host_graph_launches);
		GS_STAT_ADD(host_graph_launch_ns, dt);
	} else if (kind == GS_SELF_PATCH) {
		GS_STAT_INC(host_patches);
		GS_STAT_ADD(host_patch_ns, dt);
	} else if (kind == GS_SELF_UPDATER) {
		GS_STAT_INC(host_updaters);
		GS_STAT_ADD(host_updater_ns, dt);
	} else {
		GS_STAT_INC(host_submits);
		GS_STAT_ADD(host_submit_ns, dt);
	}
}

void gs_self_call_end_slow(const gs_self_call_t *c)
{
	if (!gs_self_tl.depth || --gs_self_tl.depth || !c->t0)
		return;
	uint64_t all = gs_clock_ns() - c->t0, drv = gs_self_tl.drv_ns - c->drv0;
	uint64_t own = all > drv ? all - drv : 0;
	gs_self_tl.own_ns += own;
	if (!gs_config.selftime)
		return; /* timed for the gate alone (GRAPHSHIM_GATE_LESS_OWN) */
	unsigned k = gs_self_tl.kinds;
	if (k & GS_SELF_GRAPH) {
		GS_STAT_INC(host_chunk_calls);
		GS_STAT_ADD(host_chunk_own_ns, own);
	} else if (k & GS_SELF_SUBMIT) {
		GS_STAT_INC(host_eager_calls);
		GS_STAT_ADD(host_eager_own_ns, own);
	} else {
		GS_STAT_INC(host_held_calls);
		GS_STAT_ADD(host_held_own_ns, own);
	}
	if (own < GS_SELF_SLOW_NS)
		return;
	GS_STAT_INC(host_slow_calls);
	GS_STAT_ADD(host_slow_own_ns, own);
	/* What the slow call did, a counter each (it may count under several). */
	static const struct {
		unsigned bit;
		uint64_t *n;
	} did[] = {
		{ GS_SELF_SUBMIT, &gs_stats.host_slow_eager },
		{ GS_SELF_DID_ARM, &gs_stats.host_slow_arm },
		{ GS_SELF_DID_BUILD, &gs_stats.host_slow_build },
		{ GS_SELF_DID_RELEASE, &gs_stats.host_slow_release },
		{ GS_SELF_DID_GATE, &gs_stats.host_slow_gate },
		{ GS_SELF_DID_LAYOUT, &gs_stats.host_slow_layout },
		{ GS_SELF_DID_PEERS, &gs_stats.host_slow_peers },
		{ GS_SELF_DID_WAIT, &gs_stats.host_slow_wait },
		{ GS_SELF_DID_LOCK, &gs_stats.host_slow_lock },
		{ GS_SELF_DID_MISMATCH, &gs_stats.host_slow_mismatch },
		{ GS_SELF_DID_VARIANT, &gs_stats.host_slow_variant },
		{ GS_SELF_DID_PUBLISH, &gs_stats.host_slow_publish },
	};
	for (size_t i = 0; i < sizeof(did) / sizeof(did[0]); i++)
		if (k & did[i].bit)
			__atomic_fetch_add(did[i].n, 1, __ATOMIC_RELAXED);
	if (!(k & ~(GS_SELF_SUBMIT | GS_SELF_GRAPH | GS_SELF_PATCH | GS_SELF_UPDATER)))
		GS_STAT_INC(host_slow_plain);
}
