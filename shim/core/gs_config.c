/*
 * GRAPHSHIM_* environment variables: parsed once, validated, defaulted.
 * The variable list lives in GS_CONFIG_VARS (gs_config.h); this file only
 * knows how to parse each type.
 */
#include "gs_config.h"
#include "gs_fmt.h"
#include "gs_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/auxv.h>

gs_config_t gs_config = {
	.enable = true, .learn_reps = 2, .learn_long = 32, .min_seq = 3, .max_seq = 4096, .max_seqs = 64,
	.max_nodes = 65536, .period = true, .period_after = 1024, .mismatch_limit = 3, .cooldown = 16,
	.forgive = true,
	.patch_cost = 0.25, .graph_cost = 1.0, .chunk_first = 32, .chunk_growth = 1.5, .chunk_max = 512,
	.chunk_last = 8, .host_bound_us = 6.0, .async_build = true,
	.build_sched = GS_BUILD_SCHED_BATCH, .idle_us = 2000, .idle_eager = 16, .idle_cut = 2,
	.speculate = true, .thrift = 8, .share = true,
	.hip_max_patches = 1000, .gate = GS_GATE_AUTO, .gate_after = 16, .gate_samples = 4, .gate_margin = 0.10,
	.gate_host = true, .gate_recheck = 1000, .log_level = GS_LOG_WARN, .trace_max = 1000000,
};

#define GS_DEF_INT(f, def) c->f = (def);
#define GS_DEF_BOOL(f, def) c->f = (def) != 0;
#define GS_DEF_REAL(f, def) c->f = (def);
#define GS_DEF_PATH(f, def) c->f[0] = '\0';
#define GS_DEF_LEVEL(f, def) c->f = (int)(def);
#define GS_DEF_GATE(f, def) c->f = (int)(def);
#define GS_DEF_SCHED(f, def) c->f = (int)(def);

void gs_config_defaults(gs_config_t *c)
{
#define GS_X(f, name, type, def, lo, hi, help) GS_DEF_##type(f, def)
	GS_CONFIG_VARS(GS_X)
#undef GS_X
}

static bool gs_config_int(const char *name, const char *v, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || end == v || *end != '\0' || x < lo || x > hi) {
		gs_log(GS_LOG_ERROR, "%s=\"%s\" is not a whole number in [%lld, %lld]; using %lld",
		       name, v, lo, hi, *out);
		return true;
	}
	*out = x;
	return false;
}

static bool gs_config_real(const char *name, const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end != '\0' || !(x >= lo && x <= hi)) {
		gs_log(GS_LOG_ERROR, "%s=\"%s\" is not a number in [%g, %g]; using %g", name, v, lo, hi,
		       *out);
		return true;
	}
	*out = x;
	return false;
}

static bool gs_config_bool(const char *name, const char *v, bool *out)
{
	static const char *const yes[] = {"1", "yes", "on", "true"};
	static const char *const no[] = {"0", "no", "off", "false"};
	for (size_t i = 0; i < GS_ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return false;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return false;
		}
	}
	gs_log(GS_LOG_ERROR, "%s=\"%s\" is not one of 0/1/yes/no/on/off/true/false; using %d", name,
	       v, *out);
	return true;
}

static bool gs_config_level_quiet(const char *name, const char *v, int *out, bool quiet)
{
	for (int i = 0; i < GS_LOG_NLEVELS; i++) {
		if (!strcasecmp(v, gs_log_level_name(i)) || (v[0] == '0' + i && v[1] == '\0')) {
			*out = i;
			return false;
		}
	}
	if (!quiet) {
		char list[64] = "";
		for (int i = 0; i < GS_LOG_NLEVELS; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "/" : "",
				 gs_log_level_name(i));
		gs_log(GS_LOG_ERROR, "%s=\"%s\" is not one of %s (or 0-%d); using %s", name, v, list,
		       GS_LOG_NLEVELS - 1, gs_log_level_name(*out));
	}
	return true;
}

static bool gs_config_level(const char *name, const char *v, int *out)
{
	return gs_config_level_quiet(name, v, out, false);
}

/* One of `names` (any case), stored as its index. */
static bool gs_config_choice(const char *name, const char *v, const char *const *names, int n,
			     int *out)
{
	for (int i = 0; i < n; i++) {
		if (!strcasecmp(v, names[i])) {
			*out = i;
			return false;
		}
	}
	char list[64] = "";
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "/" : "",
			 names[i]);
	gs_log(GS_LOG_ERROR, "%s=\"%s\" is not one of %s; using %s", name, v, list, names[*out]);
	return true;
}

static const char *const gs_config_gate_names[] = {GS_GATE_MODES(GS_NAME_STR)};
static const char *const gs_config_sched_names[] = {GS_BUILD_SCHEDS(GS_NAME_STR)};

const char *gs_config_gate_name(int mode)
{
	return gs_name_at(gs_config_gate_names, GS_GATE_NMODES, (unsigned)mode, NULL);
}

const char *gs_config_sched_name(int sched)
{
	return gs_name_at(gs_config_sched_names, GS_BUILD_NSCHEDS, (unsigned)sched, NULL);
}

static bool gs_config_gate(const char *name, const char *v, int *out)
{
	return gs_config_choice(name, v, gs_config_gate_names, GS_GATE_NMODES, out);
}

static bool gs_config_sched(const char *name, const char *v, int *out)
{
	return gs_config_choice(name, v, gs_config_sched_names, GS_BUILD_NSCHEDS, out);
}

static bool gs_config_path(const char *name, const char *v, char *out, size_t cap)
{
	size_t n = strlen(v);
	if (n == 0 || n >= cap) {
		gs_log(GS_LOG_ERROR, "%s is %s; ignored", name, n ? "too long" : "empty");
		return true;
	}
	memcpy(out, v, n + 1);
	return false;
}

#define GS_PARSE_INT(f, name, v, lo, hi) gs_config_int(name, v, lo, hi, &c->f)
#define GS_PARSE_BOOL(f, name, v, lo, hi) gs_config_bool(name, v, &c->f)
#define GS_PARSE_REAL(f, name, v, lo, hi) gs_config_real(name, v, lo, hi, &c->f)
#define GS_PARSE_PATH(f, name, v, lo, hi) gs_config_path(name, v, c->f, sizeof(c->f))
#define GS_PARSE_LEVEL(f, name, v, lo, hi) gs_config_level(name, v, &c->f)
#define GS_PARSE_GATE(f, name, v, lo, hi) gs_config_gate(name, v, &c->f)
#define GS_PARSE_SCHED(f, name, v, lo, hi) gs_config_sched(name, v, &c->f)

int gs_config_parse(gs_config_t *c, const char *(*lookup)(const char *name))
{
	int bad = 0;
	const char *v;
#define GS_X(f, name, type, def, lo, hi, help)                                \
	if ((v = lookup(name)) != NULL)                                       \
		bad += GS_PARSE_##type(f, name, v, lo, hi);
	GS_CONFIG_VARS(GS_X)
#undef GS_X
	if (c->min_seq > c->max_seq) {
		gs_log(GS_LOG_ERROR, "GRAPHSHIM_MIN_SEQ (%lld) exceeds GRAPHSHIM_MAX_SEQ (%lld); using %lld for both",
		       c->min_seq, c->max_seq, c->max_seq);
		c->min_seq = c->max_seq;
		bad++;
	}
	return bad;
}

bool gs_config_secure(void)
{
	return getauxval(AT_SECURE) != 0;
}

static const char *gs_config_getenv(const char *name)
{
	return getenv(name);
}

/* Read by graphshim(1), not by the library: known, never reported. */
static const char *const gs_config_others[] = {"GRAPHSHIM_LIB"};

static const char *const gs_config_names[] = {
#define GS_X(f, name, type, def, lo, hi, help) name,
	GS_CONFIG_VARS(GS_X)
#undef GS_X
};

/* Levenshtein distance of a and b (at most 63 bytes each; longer: far). */
static size_t gs_config_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 63 || m > 63)
		return 99;
	size_t row[64];
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[m];
}

const char *gs_config_nearest(const char *name)
{
	const char *best = NULL;
	size_t bd = 99;
	for (size_t i = 0; i < GS_ARRAY_SIZE(gs_config_names); i++) {
		size_t d = gs_config_distance(name, gs_config_names[i]);
		if (d < bd) {
			bd = d;
			best = gs_config_names[i];
		}
	}
	/* Near: a slip of a few letters, not another word altogether. */
	size_t len = strlen(name) > 10 ? strlen(name) - 10 : 0; /* past "GRAPHSHIM_" */
	return bd <= 3 && bd <= (len + 1) / 2 ? best : NULL;
}

static bool gs_config_known(const char *name, size_t len)
{
	for (size_t i = 0; i < GS_ARRAY_SIZE(gs_config_names); i++)
		if (strlen(gs_config_names[i]) == len && !memcmp(gs_config_names[i], name, len))
			return true;
	for (size_t i = 0; i < GS_ARRAY_SIZE(gs_config_others); i++)
		if (strlen(gs_config_others[i]) == len && !memcmp(gs_config_others[i], name, len))
			return true;
	return false;
}

int gs_config_unknown(char *const *env, bool report)
{
	int n = 0;
	for (size_t i = 0; env && env[i]; i++) {
		const char *e = env[i], *eq = strchr(e, '=');
		if (strncmp(e, "GRAPHSHIM_", 10) || !eq || gs_config_known(e, (size_t)(eq - e)))
			continue;
		n++;
		if (!report)
			continue;
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - e), e);
		const char *near = gs_config_nearest(name);
		if (near)
			gs_log(GS_LOG_WARN, "%s is not a graphshim variable (did you mean %s?); ignored",
			       name, near);
		else
			gs_log(GS_LOG_WARN, "%s is not a graphshim variable; ignored (the variables: "
			       "graphshim(7))", name);
	}
	return n;
}

void gs_config_load(void)
{
	gs_config_defaults(&gs_config);
	gs_log_level = gs_config.log_level;
	if (gs_config_secure())
		return; /* setuid: the environment is the attacker's, read none of it */
	/* The log level first (quietly), so that messages about the others obey it. */
	const char *lvl = getenv("GRAPHSHIM_LOG");
	if (lvl)
		gs_config_level_quiet("GRAPHSHIM_LOG", lvl, &gs_config.log_level, true);
	gs_log_level = gs_config.log_level;
	gs_config_parse(&gs_config, gs_config_getenv);
	gs_log_level = gs_config.log_level;
	/* A misspelt name is reported once a process (tests load again). */
	static int reported;
	extern char **environ;
	if (!__atomic_exchange_n(&reported, 1, __ATOMIC_RELAXED))
		gs_config_unknown(environ, true);
}

static int gs_config_early; /* loaded by gs_config_load_once, not yet taken */

static void gs_config_load_early(void)
{
	gs_config_load();
	__atomic_store_n(&gs_config_early, 1, __ATOMIC_RELEASE);
}

void gs_config_load_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, gs_config_load_early);
}

void gs_config_start(void)
{
	if (!__atomic_exchange_n(&gs_config_early, 0, __ATOMIC_ACQ_REL))
		gs_config_load();
}

#define GS_JSON_INT(f, v) gs_fmt_i64(f, (int64_t)(v))
#define GS_JSON_BOOL(f, v) gs_fmt_str(f, (v) ? "true" : "false")
#define GS_JSON_REAL(f, v) gs_fmt_fixed(f, (v), 6)
#define GS_JSON_LEVEL(f, v) gs_fmt_json(f, gs_log_level_name(v))
#define GS_JSON_GATE(f, v) gs_fmt_json(f, gs_config_gate_name(v))
#define GS_JSON_SCHED(f, v) gs_fmt_json(f, gs_config_sched_name(v))

void gs_config_write_json(struct gs_fmt *f)
{
	const char *sep = "{";
#define GS_JSON_ONE(field, name, type)                                        \
	gs_fmt_str(f, sep);                                                   \
	gs_fmt_json(f, name);                                                 \
	gs_fmt_str(f, ": ");                                                  \
	GS_JSON_##type(f, gs_config.field);                                   \
	sep = ", ";
#define GS_X(field, name, type, def, lo, hi, help) GS_CFG_JSON_##type(field, name, type)
#define GS_CFG_JSON_INT GS_JSON_ONE
#define GS_CFG_JSON_BOOL GS_JSON_ONE
#define GS_CFG_JSON_REAL GS_JSON_ONE
#define GS_CFG_JSON_LEVEL GS_JSON_ONE
#define GS_CFG_JSON_GATE GS_JSON_ONE
#define GS_CFG_JSON_SCHED GS_JSON_ONE
#define GS_CFG_JSON_PATH(field, name, type) /* a path says nothing about the run */
	GS_CONFIG_VARS(GS_X)
#undef GS_X
	gs_fmt_char(f, '}');
}
