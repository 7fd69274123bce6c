/*
 * Every value of every enum the core names has a name of its own: the name
 * tables are generated from their X-lists, and this checks that nothing
 * outside a list (a hand-kept array, a default case) answers for a value.
 */
#include "gs_config.h"
#include "gs_seq.h"
#include "gs_flush.h"
#include "gs_log.h"
#include "gs_rec.h"
#include "gs_stats.h"

#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

/* names[0..n) are set, different from `bad` and from each other. */
static void distinct(const char *what, const char *const *names, int n, const char *bad)
{
	for (int i = 0; i < n; i++) {
		cr_assert_not_null(names[i], "%s %d has no name", what, i);
		cr_assert(names[i][0], "%s %d has an empty name", what, i);
		if (bad)
			cr_assert_str_neq(names[i], bad, "%s %d is named as no value", what, i);
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(names[i], names[j], "%s %d and %d share a name", what, j, i);
	}
}

/*
 * Values [first, n) of an enum, named by name(): each has a name of its
 * own, not the one name() gives for a value outside the list (n).
 */
#define ENUM_NAMES(what, name, type, first, n)                                \
	do {                                                                  \
		const char *names_[64];                                       \
		cr_assert_leq((n) - (first), 64);                             \
		for (int i_ = (first); i_ < (n); i_++)                        \
			names_[i_ - (first)] = name((type)i_);                \
		distinct(what, names_, (n) - (first), name((type)(n)));       \
	} while (0)

Test(names, flush_reasons)
{
	ENUM_NAMES("flush reason", gs_flush_reason_name, gs_flush_reason_t, 0, GS_FLUSH_NREASONS);
	cr_expect_str_eq(gs_flush_reason_name(GS_FLUSH_SYNC), "SYNC");
	cr_expect_str_eq(gs_flush_reason_name(GS_FLUSH_OTHER), "OTHER");
}

Test(names, mismatch_reasons)
{
	ENUM_NAMES("mismatch reason", gs_mismatch_reason_name, gs_mismatch_reason_t, 0,
		   GS_MISMATCH_NREASONS);
	cr_expect_str_eq(gs_mismatch_reason_name(GS_MISMATCH_DRIFT), "DRIFT");
}

Test(names, sequence_states)
{
	ENUM_NAMES("sequence state", gs_seq_state_name, gs_seq_state_t, 0, GS_SEQ_NSTATES);
	/* A sequence dropped while building was written as "invalid". */
	cr_expect_str_eq(gs_seq_state_name(GS_SEQ_BUILDING), "building");
}

Test(names, record_kinds)
{
	ENUM_NAMES("record kind", gs_rec_kind_name, uint32_t, 1, GS_REC_NKINDS);
	cr_expect_str_eq(gs_rec_kind_name(GS_REC_NOKIND), "unknown");
	cr_expect_str_eq(gs_rec_kind_name(GS_REC_SET), "memset");
}

Test(names, gate_states)
{
	gs_seq_t q;
	memset(&q, 0, sizeof(q));
	q.state = GS_SEQ_ARMED;
	const char *n[GS_GATE_NSTATES];
	for (int i = 0; i < GS_GATE_NSTATES; i++) {
		q.gate.state = (uint8_t)i;
		n[i] = gs_gate_state_name(&q);
	}
	distinct("gate state", n, GS_GATE_NSTATES, "none");
	for (int i = 0; i < GS_GATE_NSTATES; i++)
		cr_assert_str_neq(n[i], "off");
}

/* Each choice of a setting has a name, and the name parses back to it. */
static const char *test_names_var, *test_names_val;

static const char *test_names_lookup(const char *name)
{
	return !strcmp(name, test_names_var) ? test_names_val : NULL;
}

/* The n choices of variable `var`, named by name(), stored in the int at `field`. */
static void parse_back(const char *var, const char *(*name)(int), int n, size_t field)
{
	const char *names[8];
	cr_assert_leq(n, 8);
	for (int i = 0; i < n; i++) {
		gs_config_t c;
		gs_config_defaults(&c);
		int *v = (int *)(void *)((char *)&c + field);
		*v = (i + 1) % n;
		names[i] = name(i);
		test_names_var = var;
		test_names_val = names[i];
		cr_assert_eq(gs_config_parse(&c, test_names_lookup), 0, "%s=%s", var, names[i]);
		cr_assert_eq(*v, i, "%s=%s", var, names[i]);
	}
	distinct(var, names, n, NULL);
	cr_expect_null(name(n));
}

Test(names, settings)
{
	parse_back("GRAPHSHIM_GATE", gs_config_gate_name, GS_GATE_NMODES, offsetof(gs_config_t, gate));
	parse_back("GRAPHSHIM_BUILD_SCHED", gs_config_sched_name, GS_BUILD_NSCHEDS,
		   offsetof(gs_config_t, build_sched));
	parse_back("GRAPHSHIM_LOG", gs_log_level_name, GS_LOG_NLEVELS, offsetof(gs_config_t, log_level));
}
