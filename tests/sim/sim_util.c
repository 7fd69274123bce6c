/*
 * Simulator plumbing: the handle registry, the GS_SIM_* environment knobs
 * (per-launch host cost, fault injection), clocks and the pthread check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#include "sim_core.h"

void gs_sim_pt_check(int rc, const char *what, const char *file, int line)
{
	if (rc == 0)
		return;
	fprintf(stderr, "gs_sim: %s:%d: %s failed: %s\n", file, line, what, strerror(rc));
	abort();
}

/* ---- handle registry ---- */
typedef struct gs_sim_reg {
	const void *h;
	int kind;
	UT_hash_handle hh;
} gs_sim_reg_t;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static gs_sim_reg_t *reg_tab;

void gs_sim_reg_add(const void *h, int kind)
{
	gs_sim_reg_t *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->h = h;
	r->kind = kind;
	GS_SIM_PT(pthread_mutex_lock(&reg_mu));
	gs_sim_reg_t *old = NULL;
	HASH_FIND_PTR(reg_tab, &h, old);
	if (old) {
		HASH_DEL(reg_tab, old);
		free(old);
	}
	HASH_ADD_PTR(reg_tab, h, r);
	GS_SIM_PT(pthread_mutex_unlock(&reg_mu));
}

void gs_sim_reg_del(const void *h)
{
	gs_sim_reg_t *r = NULL;
	GS_SIM_PT(pthread_mutex_lock(&reg_mu));
	HASH_FIND_PTR(reg_tab, &h, r);
	if (r)
		HASH_DEL(reg_tab, r);
	GS_SIM_PT(pthread_mutex_unlock(&reg_mu));
	free(r);
}

bool gs_sim_reg_is(const void *h, int kind)
{
	gs_sim_reg_t *r = NULL;
	bool ok;
	if (!h)
		return false;
	GS_SIM_PT(pthread_mutex_lock(&reg_mu));
	HASH_FIND_PTR(reg_tab, &h, r);
	ok = r && r->kind == kind;
	GS_SIM_PT(pthread_mutex_unlock(&reg_mu));
	return ok;
}

/* How many live handles of a kind there are (tests/reliability checks
 * that graphshim destroys every graph it made).  Exported for tests. */
int gs_sim_count_handles(int kind);
int gs_sim_count_handles(int kind)
{
	int n = 0;
	GS_SIM_PT(pthread_mutex_lock(&reg_mu));
	for (gs_sim_reg_t *r = reg_tab; r; r = r->hh.next)
		n += r->kind == kind;
	GS_SIM_PT(pthread_mutex_unlock(&reg_mu));
	return n;
}

/* ---- environment ---- */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static double env_launch_us, env_node_us, env_inst_us, env_create_us, env_pool_free_us;
static unsigned env_refuse; /* bit per GS_SIM_W_* kind (GS_SIM_REFUSE_NODES) */
static bool env_refuse_late; /* GS_SIM_REFUSE_AT=instantiate */
/* Fault spec per kind: fail call number nth (1-based); from_on: and all
 * later ones too ("N+"); every: every nth call ("N*").  nth == 0: never. */
static struct { unsigned long nth; bool from_on, every; atomic_ulong calls; } faults[GS_SIM_F_COUNT];

static const char *const fault_env[GS_SIM_F_COUNT] = {
	[GS_SIM_F_INSTANTIATE] = "GS_SIM_FAIL_INSTANTIATE",
	[GS_SIM_F_GRAPH_LAUNCH] = "GS_SIM_FAIL_GRAPH_LAUNCH",
	[GS_SIM_F_NODE_PATCH] = "GS_SIM_FAIL_NODE_PATCH",
	[GS_SIM_F_PARAM_INFO] = "GS_SIM_FAIL_PARAM_INFO",
	[GS_SIM_F_ALLOC] = "GS_SIM_FAIL_ALLOC",
	[GS_SIM_F_GRAPH_BUILD] = "GS_SIM_FAIL_GRAPH_BUILD",
	[GS_SIM_F_DEVUPD] = "GS_SIM_FAIL_DEVUPD",
};

static double env_double(const char *name, double dflt)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return dflt;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || *end || d < 0) {
		fprintf(stderr, "gs_sim: ignoring bad %s=%s\n", name, v);
		return dflt;
	}
	return d;
}

static void env_init(void)
{
	env_launch_us = env_double("GS_SIM_LAUNCH_US", 0.0);
	env_node_us = env_double("GS_SIM_NODE_US", env_launch_us / 5.0);
	env_inst_us = env_double("GS_SIM_INSTANTIATE_US", 0.0);
	env_pool_free_us = env_double("GS_SIM_POOL_FREE_US", 0.0);
	env_create_us = env_double("GS_SIM_GRAPH_CREATE_US", 0.0);
	const char *ra = getenv("GS_SIM_REFUSE_AT");
	env_refuse_late = ra && !strcmp(ra, "instantiate");
	if (ra && *ra && !env_refuse_late && strcmp(ra, "add"))
		fprintf(stderr, "gs_sim: ignoring GS_SIM_REFUSE_AT=%s (add, instantiate)\n", ra);
	const char *rn = getenv("GS_SIM_REFUSE_NODES");
	static const struct { const char *name; int kind; } kinds[] = {
		{ "kernel", GS_SIM_W_KERNEL }, { "copy", GS_SIM_W_COPY }, { "memset", GS_SIM_W_SET },
		{ "coop", GS_SIM_W_COOP },
	};
	while (rn && *rn) {
		size_t len = strcspn(rn, ",");
		size_t k = 0;
		while (k < sizeof(kinds) / sizeof(kinds[0]) &&
		       (strlen(kinds[k].name) != len || strncmp(rn, kinds[k].name, len)))
			k++;
		if (k < sizeof(kinds) / sizeof(kinds[0]))
			env_refuse |= 1u << kinds[k].kind;
		else
			fprintf(stderr, "gs_sim: ignoring %.*s in GS_SIM_REFUSE_NODES (kernel, copy, memset, coop)\n",
				(int)len, rn);
		rn += len + (rn[len] == ',');
	}
	for (int k = 0; k < GS_SIM_F_COUNT; k++) {
		const char *v = getenv(fault_env[k]);
		char *end;
		atomic_init(&faults[k].calls, 0);
		if (!v || !*v)
			continue;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (errno || end == v || (*end && strcmp(end, "+") && strcmp(end, "*")) || n == 0) {
			fprintf(stderr, "gs_sim: ignoring bad %s=%s (want N, N+ or N*, N >= 1)\n",
				fault_env[k], v);
			continue;
		}
		faults[k].nth = n;
		faults[k].from_on = *end == '+';
		faults[k].every = *end == '*';
	}
}

bool gs_sim_fault(int kind)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	if (!faults[kind].nth)
		return false;
	unsigned long c = atomic_fetch_add(&faults[kind].calls, 1) + 1;
	return c == faults[kind].nth || (faults[kind].from_on && c > faults[kind].nth) ||
	       (faults[kind].every && c % faults[kind].nth == 0);
}

static bool refused_kind(int kind)
{
	return kind >= 0 && kind < 32 && (env_refuse >> kind & 1);
}

bool gs_sim_refuses_node(int kind)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	return !env_refuse_late && refused_kind(kind);
}

gs_sim_node_t *gs_sim_refused_at_instantiate(gs_sim_graph_t *g)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	gs_sim_node_t *bad = NULL;
	if (!env_refuse_late || !env_refuse)
		return NULL;
	GS_SIM_PT(pthread_mutex_lock(&g->mu));
	for (size_t i = 0; i < g->n && !bad; i++)
		if (refused_kind(g->nodes[i]->work.kind) ||
		    (g->nodes[i]->work.kind == GS_SIM_W_KERNEL && g->nodes[i]->work.u.kern.dim.cooperative &&
		     refused_kind(GS_SIM_W_COOP)))
			bad = g->nodes[i];
	GS_SIM_PT(pthread_mutex_unlock(&g->mu));
	return bad;
}

double gs_sim_launch_us(void)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	return env_launch_us;
}

double gs_sim_node_us(void)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	return env_node_us;
}

uint64_t gs_sim_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy-wait: a launch's host cost is CPU time on the calling thread, which
 * is what graphs save; sleeping would not model it. */
void gs_sim_spin_us(double us)
{
	if (us <= 0)
		return;
	uint64_t end = gs_sim_now_ns() + (uint64_t)(us * 1000.0);
	while (gs_sim_now_ns() < end)
		;
}

double gs_sim_instantiate_us(void)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	return env_inst_us;
}

double gs_sim_pool_free_us(void)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	return env_pool_free_us;
}

double gs_sim_graph_create_us(void)
{
	GS_SIM_PT(pthread_once(&env_once, env_init));
	return env_create_us;
}
