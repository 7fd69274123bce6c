/*
 * Tests of gs_stats.c: counters, summary line, and the statistics JSON file
 * (written, then parsed back with jansson; refuses to clobber or follow a
 * symlink).  The per-sequence figures are the test's own, as the engine
 * hands its own to the writer.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "gs_fmt.h"
#include "gs_stats.h"

/* The per-sequence figures the next gs_write() hands to the writer. */
static const gs_seq_info_t *gs_seqs;
static size_t gs_nseqs;

static bool gs_write(const char *path, bool overwrite)
{
	return gs_stats_write_json(path, overwrite, gs_seqs, gs_nseqs, false);
}

static char gs_tdir[256];

static void gs_setup(void)
{
	snprintf(gs_tdir, sizeof(gs_tdir), "/tmp/gs-test-stats-XXXXXX");
	cr_assert_not_null(mkdtemp(gs_tdir));
	gs_stats_reset();
	gs_seqs = NULL;
	gs_nseqs = 0;
}

static void gs_teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", gs_tdir);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", gs_tdir);
}

static void gs_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", gs_tdir, name);
}

static json_t *gs_load(const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);
	cr_assert_not_null(j, "%s: %s (line %d)", path, err.text, err.line);
	return j;
}

TestSuite(stats, .init = gs_setup, .fini = gs_teardown);

Test(stats, names)
{
	cr_assert_str_eq(gs_mismatch_reason_name(GS_MISMATCH_STRUCTURE), "STRUCTURE");
	cr_assert_str_eq(gs_mismatch_reason_name(GS_MISMATCH_LAUNCH_FAILED), "LAUNCH_FAILED");
	cr_assert_str_eq(gs_mismatch_reason_name((gs_mismatch_reason_t)99), "INVALID");
	cr_assert_str_eq(gs_seq_state_name(GS_SEQ_LEARNING), "learning");
	cr_assert_str_eq(gs_seq_state_name(GS_SEQ_ARMED), "armed");
	cr_assert_str_eq(gs_seq_state_name(GS_SEQ_RETIRED), "retired");
	cr_assert_str_eq(gs_seq_state_name(GS_SEQ_FAILED), "failed");
	cr_assert_str_eq(gs_seq_state_name((gs_seq_state_t)7), "invalid");
}

Test(stats, coverage)
{
	gs_stats_t s = {0};
	cr_assert_eq(gs_stats_coverage(&s), 0.0);
	s.launches = 200;
	s.replayed = 50;
	cr_assert_float_eq(gs_stats_coverage(&s), 0.25, 1e-12);
	s.replayed = 300; /* never above 1, whatever the counters say */
	cr_assert_eq(gs_stats_coverage(&s), 1.0);
}

static void *gs_max_thread(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < 100000; i++)
		gs_stats_max(&gs_stats.build_max_ns, base + i);
	return NULL;
}

Test(stats, max_is_atomic)
{
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, gs_max_thread, (void *)(i * 1000));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(gs_stats.build_max_ns, 3000 + 99999);
	gs_stats_max(&gs_stats.build_max_ns, 5);
	cr_assert_eq(gs_stats.build_max_ns, 3000 + 99999);
}

Test(stats, reset)
{
	GS_STAT_ADD(launches, 10);
	GS_STAT_INC(mismatch_by[GS_MISMATCH_DRIFT]);
	GS_STAT_INC(flush_by[GS_FLUSH_SYNC]);
	gs_stats_reset();
	cr_assert_eq(gs_stats.launches, 0);
	cr_assert_eq(gs_stats.mismatch_by[GS_MISMATCH_DRIFT], 0);
	cr_assert_eq(gs_stats.flush_by[GS_FLUSH_SYNC], 0);
}

Test(stats, summary)
{
	char buf[512];
	GS_STAT_ADD(launches, 1000);
	GS_STAT_ADD(replayed, 875);
	GS_STAT_ADD(sequences, 3);
	GS_STAT_ADD(graphs, 2);
	GS_STAT_ADD(patches, 7);
	GS_STAT_ADD(mismatches, 1);
	GS_STAT_ADD(retirements, 0);
	GS_STAT_ADD(fallbacks, 4);
	GS_STAT_ADD(build_ns, 12345678);
	gs_stats_summary(buf, sizeof(buf));
	cr_assert_str_eq(buf, "graphshim: launches 1000, replayed 875 (87.5%), sequences 3, "
			      "graphs 2, patches 7, mismatches 1, retired 0, fallbacks 4, "
			      "build 12.3 ms");
	/* A short buffer is truncated, never overrun. */
	char small[16];
	memset(small, 'x', sizeof(small));
	gs_stats_summary(small, 10);
	cr_assert_eq(strlen(small), 9);
	cr_assert_eq(small[15], 'x');
}

static const gs_seq_info_t gs_two_seqs[] = {
	{.id = 0x1234abcdULL, .stream = 0x7f00, .length = 12, .state = GS_SEQ_ARMED,
	 .periodic = false, .seen = 10, .replays = 8, .patches = 3, .mismatches = 1,
	 .retirements = 0, .build_ns = 2500000},
	{.id = 0xffffffffffffffffULL, .stream = 0, .length = 5, .state = GS_SEQ_RETIRED,
	 .periodic = true, .seen = 4, .replays = 0, .patches = 0, .mismatches = 3,
	 .retirements = 1, .build_ns = 0},
};

Test(stats, json_round_trip)
{
	char p[300];
	gs_path(p, sizeof(p), "stats.json");
	uint64_t v = 1;
#define GS_X(f, s) gs_stats.f = v++;
	GS_COUNTERS(GS_X)
#undef GS_X
	gs_stats.launches = 400;
	gs_stats.replayed = 100;
	gs_stats.build_ns = 1500000;
	gs_stats.mismatch_by[GS_MISMATCH_CUT] = 6;
	gs_stats.flush_by[GS_FLUSH_EVENT] = 9;
	gs_seqs = gs_two_seqs;
	gs_nseqs = 2;
	umask(022);

	cr_assert_not(gs_write(p, false));
	json_t *j = gs_load(p);
	cr_assert(json_is_object(j));
	cr_assert_str_eq(json_string_value(json_object_get(j, "graphshim")), PACKAGE_VERSION);
	cr_assert_eq(json_integer_value(json_object_get(j, "pid")), getpid());
	json_t *c = json_object_get(j, "counters");
	cr_assert(json_is_object(c));
#define GS_X(f, s)                                                                         \
	cr_assert(json_is_integer(json_object_get(c, #f)), "counter " #f);                  \
	cr_assert_eq((uint64_t)json_integer_value(json_object_get(c, #f)), gs_stats.f, #f);
	GS_COUNTERS(GS_X)
#undef GS_X
	cr_assert_float_eq(json_real_value(json_object_get(j, "coverage")), 0.25, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(j, "build_ms")), 1.5, 1e-9);

	json_t *m = json_object_get(j, "mismatches_by_reason");
	cr_assert_eq(json_object_size(m), GS_MISMATCH_NREASONS);
	cr_assert_eq(json_integer_value(json_object_get(m, "CUT")), 6);
	json_t *fl = json_object_get(j, "flushes_by_reason");
	cr_assert_eq(json_object_size(fl), GS_FLUSH_NREASONS);
	cr_assert_eq(json_integer_value(json_object_get(fl, "EVENT")), 9);
	cr_assert_eq(json_integer_value(json_object_get(fl, "SYNC")), 0);

	json_t *seqs = json_object_get(j, "sequences");
	cr_assert(json_is_array(seqs));
	cr_assert_eq(json_array_size(seqs), 2);
	cr_assert(json_is_false(json_object_get(j, "sequences_truncated")));
	json_t *s0 = json_array_get(seqs, 0), *s1 = json_array_get(seqs, 1);
	cr_assert_str_eq(json_string_value(json_object_get(s0, "id")), "0x000000001234abcd");
	cr_assert_str_eq(json_string_value(json_object_get(s0, "stream")), "0x7f00");
	cr_assert_eq(json_integer_value(json_object_get(s0, "length")), 12);
	cr_assert_str_eq(json_string_value(json_object_get(s0, "state")), "armed");
	cr_assert(json_is_false(json_object_get(s0, "periodic")));
	cr_assert_eq(json_integer_value(json_object_get(s0, "seen")), 10);
	cr_assert_eq(json_integer_value(json_object_get(s0, "replays")), 8);
	cr_assert_eq(json_integer_value(json_object_get(s0, "patches")), 3);
	cr_assert_eq(json_integer_value(json_object_get(s0, "mismatches")), 1);
	cr_assert_eq(json_integer_value(json_object_get(s0, "retirements")), 0);
	cr_assert_float_eq(json_real_value(json_object_get(s0, "build_ms")), 2.5, 1e-9);
	cr_assert_str_eq(json_string_value(json_object_get(s1, "id")), "0xffffffffffffffff");
	cr_assert_str_eq(json_string_value(json_object_get(s1, "state")), "retired");
	cr_assert(json_is_true(json_object_get(s1, "periodic")));
	json_decref(j);

	struct stat st;
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644);
}

Test(stats, json_many_sequences)
{
	/* More than fit on the stack: the writer takes them all (big file, many flushes). */
	size_t n = 5000;
	gs_seq_info_t *s = calloc(n, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		s[i].id = i;
		s[i].length = (uint32_t)i;
		s[i].state = GS_SEQ_LEARNING;
	}
	gs_seqs = s;
	gs_nseqs = n;
	char p[300];
	gs_path(p, sizeof(p), "many.json");
	cr_assert_not(gs_write(p, false));
	json_t *j = gs_load(p);
	json_t *seqs = json_object_get(j, "sequences");
	cr_assert_eq(json_array_size(seqs), n);
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(seqs, n - 1), "length")),
		     (json_int_t)(n - 1));
	json_decref(j);
	free(s);
}

Test(stats, json_building)
{
	/* A sequence dropped while its graphs were being built was written as
	 * "state": "invalid" (four names were kept by hand for five states). */
	gs_seq_info_t q = {.id = 7, .length = 4, .state = GS_SEQ_BUILDING, .gate = "none", .gone = true};
	gs_seqs = &q;
	gs_nseqs = 1;
	char p[300];
	gs_path(p, sizeof(p), "building.json");
	cr_assert_not(gs_write(p, false));
	json_t *j = gs_load(p);
	json_t *s0 = json_array_get(json_object_get(j, "sequences"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(s0, "state")), "building");
	json_decref(j);
}

Test(stats, json_truncated)
{
	/* The caller could not gather every sequence: the file says so. */
	char p[300];
	gs_path(p, sizeof(p), "truncated.json");
	cr_assert_not(gs_stats_write_json(p, false, gs_two_seqs, 1, true));
	json_t *j = gs_load(p);
	cr_assert(json_is_true(json_object_get(j, "sequences_truncated")));
	cr_assert_eq(json_array_size(json_object_get(j, "sequences")), 1);
	json_decref(j);
}

Test(stats, json_empty)
{
	char p[300];
	gs_path(p, sizeof(p), "empty.json");
	cr_assert_not(gs_write(p, false));
	json_t *j = gs_load(p);
	cr_assert_eq(json_array_size(json_object_get(j, "sequences")), 0);
	cr_assert_eq(json_real_value(json_object_get(j, "coverage")), 0.0);
	json_decref(j);
}

Test(stats, refuses_clobber)
{
	char p[300];
	gs_path(p, sizeof(p), "exists.json");
	FILE *f = fopen(p, "w");
	fputs("precious", f);
	fclose(f);
	errno = 0;
	cr_assert(gs_write(p, false));
	cr_assert_eq(errno, EEXIST);
	char buf[16] = {0};
	f = fopen(p, "r");
	cr_assert_eq(fread(buf, 1, sizeof(buf) - 1, f), 8);
	fclose(f);
	cr_assert_str_eq(buf, "precious");

	/* With overwrite the file is replaced (and truncated). */
	cr_assert_not(gs_write(p, true));
	json_decref(gs_load(p));
}

Test(stats, refuses_symlink)
{
	char target[300], link[300];
	gs_path(target, sizeof(target), "target");
	gs_path(link, sizeof(link), "link.json");
	FILE *f = fopen(target, "w");
	fputs("keep", f);
	fclose(f);
	cr_assert_eq(symlink(target, link), 0);
	cr_assert(gs_write(link, false));
	cr_assert(gs_write(link, true)); /* never through a symlink */
	cr_assert_eq(errno, ELOOP);
	struct stat st;
	cr_assert_eq(stat(target, &st), 0);
	cr_assert_eq(st.st_size, 4);

	/* A dangling symlink must not create its target either. */
	char dangling[300], nowhere[300];
	gs_path(dangling, sizeof(dangling), "dangling.json");
	gs_path(nowhere, sizeof(nowhere), "nowhere");
	cr_assert_eq(symlink(nowhere, dangling), 0);
	cr_assert(gs_write(dangling, false));
	cr_assert_neq(stat(nowhere, &st), 0);
}

Test(stats, pid_expansion)
{
	char p[300], want[300];
	gs_path(p, sizeof(p), "s-%p-%%.json");
	snprintf(want, sizeof(want), "%s/s-%ld-%%.json", gs_tdir, (long)getpid());
	cr_assert_not(gs_write(p, false));
	json_decref(gs_load(want));
}

Test(stats, bad_paths)
{
	cr_assert(gs_write(NULL, false));
	cr_assert(gs_write("", false));
	cr_assert(gs_write("/nonexistent-dir-graphshim/x.json", true));
	char longp[2048];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	cr_assert(gs_write(longp, true));
}

Test(stats, fmt)
{
	char buf[64];
	gs_fmt_t f;
	gs_fmt_init(&f, buf, sizeof(buf));
	gs_fmt_fixed(&f, 0.9756, 3);
	gs_fmt_char(&f, ' ');
	gs_fmt_fixed(&f, -1.25, 1);
	gs_fmt_char(&f, ' ');
	gs_fmt_fixed(&f, 9.9996, 3);
	gs_fmt_char(&f, ' ');
	gs_fmt_hex(&f, 0xab, 4);
	gs_fmt_char(&f, ' ');
	gs_fmt_i64(&f, INT64_MIN);
	cr_assert_str_eq(buf, "0.976 -1.3 10.000 00ab -9223372036854775808");
	gs_fmt_init(&f, buf, 8);
	gs_fmt_str(&f, "0123456789");
	cr_assert(f.full);
	cr_assert_str_eq(buf, "0123456");
	gs_fmt_init(&f, buf, sizeof(buf));
	gs_fmt_json(&f, "a\"b\\\n\xc3\xa9\xff");
	cr_assert_str_eq(buf, "\"a\\\"b\\\\\\u000a\xc3\xa9?\"");
}
