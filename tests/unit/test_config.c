/* Configuration: defaults, parsing, validation. */
#include "gs_config.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static const char *const *tbl;

static const char *lookup(const char *name)
{
	for (size_t i = 0; tbl[i]; i += 2)
		if (!strcmp(tbl[i], name))
			return tbl[i + 1];
	return NULL;
}

static int parse(gs_config_t *c, const char *const *t)
{
	tbl = t;
	gs_config_defaults(c);
	return gs_config_parse(c, lookup);
}

Test(config, defaults)
{
	gs_config_t c;
	const char *none[] = {NULL};
	cr_expect_eq(parse(&c, none), 0);
	cr_expect(c.enable);
	cr_expect_eq(c.learn_reps, 2);
	cr_expect_eq(c.mismatch_limit, 3);
	cr_expect_eq(c.cooldown, 16);
	cr_expect_eq(c.max_seq, 4096);
	cr_expect_eq(c.stats_path[0], '\0');
}

Test(config, good_values)
{
	gs_config_t c;
	const char *t[] = {"GRAPHSHIM_LEARN_REPS", "5", "GRAPHSHIM_ENABLE", "off",
			   "GRAPHSHIM_PATCH_COST", "0.75", "GRAPHSHIM_LOG", "debug",
			   "GRAPHSHIM_STATS", "/tmp/s-%p.json", NULL};
	cr_expect_eq(parse(&c, t), 0);
	cr_expect_eq(c.learn_reps, 5);
	cr_expect_not(c.enable);
	cr_expect_float_eq(c.patch_cost, 0.75, 1e-12);
	cr_expect_eq(c.log_level, 4);
	cr_expect_str_eq(c.stats_path, "/tmp/s-%p.json");
}

Test(config, bad_number_keeps_default)
{
	gs_config_t c;
	const char *t[] = {"GRAPHSHIM_LEARN_REPS", "two", "GRAPHSHIM_MAX_SEQ", "12x", NULL};
	cr_expect_eq(parse(&c, t), 2);
	cr_expect_eq(c.learn_reps, 2);
	cr_expect_eq(c.max_seq, 4096);
}

Test(config, out_of_range_keeps_default)
{
	gs_config_t c;
	const char *t[] = {"GRAPHSHIM_MISMATCH_LIMIT", "0", "GRAPHSHIM_PATCH_COST", "-1",
			   "GRAPHSHIM_MAX_SEQS", "99999999999999999999", NULL};
	cr_expect_eq(parse(&c, t), 3);
	cr_expect_eq(c.mismatch_limit, 3);
	cr_expect_float_eq(c.patch_cost, 0.25, 1e-12);
	cr_expect_eq(c.max_seqs, 64);
}

Test(config, bad_bool_and_level)
{
	gs_config_t c;
	const char *t[] = {"GRAPHSHIM_PERIOD", "maybe", "GRAPHSHIM_LOG", "loud", NULL};
	cr_expect_eq(parse(&c, t), 2);
	cr_expect(c.period);
	cr_expect_eq(c.log_level, 2);
}

Test(config, choices_by_name_in_any_case)
{
	gs_config_t c;
	const char *t[] = {"GRAPHSHIM_BUILD_SCHED", "Idle", "GRAPHSHIM_GATE", "EAGER", NULL};
	cr_expect_eq(parse(&c, t), 0);
	cr_expect_eq(c.build_sched, GS_BUILD_SCHED_IDLE);
	cr_expect_eq(c.gate, GS_GATE_EAGER);
	const char *bad[] = {"GRAPHSHIM_BUILD_SCHED", "low", "GRAPHSHIM_GATE", "2", NULL};
	cr_expect_eq(parse(&c, bad), 2, "names only, not numbers");
	cr_expect_eq(c.build_sched, GS_BUILD_SCHED_BATCH);
	cr_expect_eq(c.gate, GS_GATE_AUTO);
}

Test(config, empty_and_long_paths_rejected)
{
	gs_config_t c;
	static char longp[1024];
	memset(longp, 'a', sizeof(longp) - 1);
	const char *t[] = {"GRAPHSHIM_TRACE", "", "GRAPHSHIM_STATS", longp, NULL};
	cr_expect_eq(parse(&c, t), 2);
	cr_expect_eq(c.trace_path[0], '\0');
	cr_expect_eq(c.stats_path[0], '\0');
}

Test(config, min_above_max_is_clamped)
{
	gs_config_t c;
	const char *t[] = {"GRAPHSHIM_MIN_SEQ", "50", "GRAPHSHIM_MAX_SEQ", "20", NULL};
	cr_expect_eq(parse(&c, t), 1);
	cr_expect_eq(c.min_seq, 20);
}

Test(config, load_reads_the_environment)
{
	setenv("GRAPHSHIM_COOLDOWN", "7", 1);
	setenv("GRAPHSHIM_LEARN_REPS", "-3", 1);
	gs_config_load();
	cr_expect_eq(gs_config.cooldown, 7);
	cr_expect_eq(gs_config.learn_reps, 2);
}

Test(config, unknown_names_are_found_with_the_nearest)
{
	/* A misspelt name was ignored in silence; now it is named (once, at
	 * load), with the variable it was probably meant to be. */
	char *env[] = {"GRAPHSHIM_LERN_REPS=3", "GRAPHSHIM_LEARN_REPS=2", "GRAPHSHIM_LIB=/x.so",
		       "GRAPHSHIM_HIP_LIBRARY=/y.so", "GRAPHSHIM_STATZ=s.json", "GRAPHSHIM_FROBNICATE=1",
		       "NOT_GRAPHSHIM_X=1", "GRAPHSHIM_NOVALUE", NULL};
	cr_expect_eq(gs_config_unknown(env, false), 3);
	cr_expect_str_eq(gs_config_nearest("GRAPHSHIM_LERN_REPS"), "GRAPHSHIM_LEARN_REPS");
	cr_expect_str_eq(gs_config_nearest("GRAPHSHIM_STATZ"), "GRAPHSHIM_STATS");
	cr_expect_str_eq(gs_config_nearest("GRAPHSHIM_GATE_SAMPLE"), "GRAPHSHIM_GATE_SAMPLES");
	cr_expect_null(gs_config_nearest("GRAPHSHIM_FROBNICATE"), "nothing near: no guess");
}

Test(config, hip_library_is_a_config_path)
{
	/* Read with the rest of the configuration (so never in secure mode). */
	gs_config_t c;
	const char *t[] = {"GRAPHSHIM_HIP_LIBRARY", "/opt/rocm/lib/libamdhip64.so", NULL};
	cr_expect_eq(parse(&c, t), 0);
	cr_expect_str_eq(c.hip_library, "/opt/rocm/lib/libamdhip64.so");
}
