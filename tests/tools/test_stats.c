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

#include "gs_config.h"
#include "gs_fmt.h"
#include "gs_out.h"
#include "gs_stats.h"

/* The per-sequence figures the next gs_write() hands to the writer. */
static const gs_seq_info_t *gs_seqs;
static size_t gs_nseqs;
/* Where the last gs_write() put its file. */
static char gs_done[GS_OUT_NAME_MAX];

static bool gs_write(const char *path, bool overwrite)
{
	gs_stats_file_t x = {.seqs = gs_seqs, .nseqs = gs_nseqs, .ended_by = "exit"};
	bool err = gs_stats_write_json(path, overwrite, &x);
	snprintf(gs_done, sizeof(gs_done), "%s", x.out.done);
	return err;
}

static char gs_tdir[256];

static void gs_setup(void)
{
	snprintf(gs_tdir, sizeof(gs_tdir), "/tmp/gs-test-stats-XXXXXX");
	cr_assert_not_null(mkdtemp(gs_tdir));
	gs_stats_reset();
	gs_config_defaults(&gs_config);
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

/* Learning takes the first half; the second is replayed whole. */
Test(stats, coverage_steady_is_the_second_half)
{
	/* A run before the reset leaves no notes behind. */
	for (int i = 0; i < 5000; i++) {
		gs_stats_launched(1);
		GS_STAT_INC(replayed);
	}
	gs_stats_reset();
	cr_assert_eq(gs_stats_coverage_steady(), 0.0);
	for (int i = 0; i < 3000; i++)
		gs_stats_launched(1);
	cr_assert_float_eq(gs_stats_coverage_steady(), 0.0, 1e-12, "nothing replayed yet");
	for (int i = 0; i < 3000; i++) {
		gs_stats_launched(1);
		GS_STAT_INC(replayed);
	}
	cr_assert_float_eq(gs_stats_coverage(&gs_stats), 0.5, 1e-12);
	cr_assert_float_eq(gs_stats_coverage_steady(), 1.0, 1e-12);
	/* Long runs (the notes thin out), launches counted in bulk. */
	for (int i = 0; i < 4000; i++) {
		gs_stats_launched(1000);
		GS_STAT_ADD(replayed, i < 3000 ? 0 : 1000);
	}
	cr_assert_float_eq(gs_stats_coverage_steady(), 0.5, 0.01);
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

Test(stats, json_first_trial_only_where_a_later_one_replaced_it)
{
	char p[300];
	gs_path(p, sizeof(p), "first.json");
	gs_seq_info_t q[2] = {
		{.id = 1, .length = 8, .state = GS_SEQ_ARMED, .gate = "replay", .eager_ns = 9000,
		 .replay_ns = 5000, .gate_trials = 2,
		 .first = {.eager_ns = 4000, .replay_ns = 6000, .eager_host_ns = 4100,
			   .replay_host_ns = 6100, .eager = true}},
		{.id = 2, .length = 8, .state = GS_SEQ_ARMED, .gate = "replay", .gate_trials = 1,
		 .first = {.eager_ns = 9000, .replay_ns = 5000}},
	};
	gs_seqs = q;
	gs_nseqs = 2;
	cr_assert_not(gs_write(p, false));
	json_t *j = gs_load(p);
	json_t *seqs = json_object_get(j, "sequences");
	json_t *f = json_object_get(json_array_get(seqs, 0), "first_trial");
	cr_assert(json_is_object(f), "two trials: the first one's figures are shown");
	cr_assert_str_eq(json_string_value(json_object_get(f, "choice")), "eager");
	cr_assert_float_eq(json_real_value(json_object_get(f, "eager_us")), 4.0, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(f, "replay_us")), 6.0, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(f, "eager_host_us")), 4.1, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(f, "replay_host_us")), 6.1, 1e-9);
	cr_assert_null(json_object_get(json_array_get(seqs, 1), "first_trial"),
		       "one trial: its figures are the sequence's own");
	json_decref(j);
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
	gs_stats_file_t x = {.seqs = gs_two_seqs, .nseqs = 1, .truncated = true};
	cr_assert_not(gs_stats_write_json(p, false, &x));
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

/* A file holding text, for the tests of what is never overwritten. */
static void gs_put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void gs_expect_text(const char *path, const char *text)
{
	char buf[64] = {0};
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	cr_assert_eq(n, strlen(text), "%s", path);
	cr_assert_str_eq(buf, text);
}

static void gs_beside(char *out, size_t len, const char *path)
{
	cr_assert_not(gs_out_beside(path, (long)getpid(), out, len));
}

Test(stats, never_clobbers)
{
	/* A file that is not this run's: kept, and the statistics go beside it
	 * (NAME.PID.json), never lost (they were, with "cannot write"). */
	char p[300], side[400];
	gs_path(p, sizeof(p), "exists.json");
	gs_put(p, "precious");
	cr_assert_not(gs_write(p, false));
	gs_expect_text(p, "precious");
	gs_beside(side, sizeof(side), p);
	cr_assert_str_eq(gs_done, side);
	json_decref(gs_load(side));

	/* With overwrite, a file of an earlier run is replaced, whole. */
	cr_assert_not(gs_write(p, true));
	cr_assert_str_eq(gs_done, p);
	json_decref(gs_load(p));
}

Test(stats, whole_or_nothing)
{
	/* Written as NAME.PID.part and renamed: nothing else is left behind. */
	char p[300], part[400];
	gs_path(p, sizeof(p), "s.json");
	snprintf(part, sizeof(part), "%s.%ld.part", p, (long)getpid());
	gs_put(part, "a dead process's part");
	cr_assert_not(gs_write(p, false));
	json_decref(gs_load(p));
	struct stat st;
	cr_assert_neq(stat(part, &st), 0, "the .part file is gone");
	cr_assert_eq(errno, ENOENT);
}

Test(stats, one_run_two_processes)
{
	/* A second process of the same run (here: the same process twice) goes
	 * beside the first and is noted in it; an overwrite never replaces a
	 * file of this run. */
	char p[300], side[400];
	gs_path(p, sizeof(p), "run.json");
	cr_assert_not(gs_write(p, true));
	cr_assert_not(gs_write(p, true));
	gs_beside(side, sizeof(side), p);
	cr_assert_str_eq(gs_done, side);
	json_t *first = gs_load(p), *second = gs_load(side);
	cr_assert_str_eq(json_string_value(json_object_get(first, "run")), gs_out_run_id());
	json_t *files = json_object_get(first, "process_files");
	cr_assert_eq(json_array_size(files), 1);
	cr_assert_str_eq(json_string_value(json_array_get(files, 0)), strrchr(side, '/') + 1);
	cr_assert_eq(json_array_size(json_object_get(second, "process_files")), 0);
	json_decref(first);
	json_decref(second);
	/* A third: the note lists both, and the first stays valid JSON. */
	char third[400];
	cr_assert_eq(unlink(side), 0);
	cr_assert_not(gs_write(p, false));
	cr_assert_str_eq(gs_done, side);
	(void)third;
	first = gs_load(p);
	cr_assert_eq(json_array_size(json_object_get(first, "process_files")), 2);
	json_decref(first);
}

Test(stats, refuses_symlink)
{
	char target[300], link[300], side[400];
	gs_path(target, sizeof(target), "target");
	gs_path(link, sizeof(link), "link.json");
	gs_put(target, "keep");
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_not(gs_write(link, false));
	cr_assert_not(gs_write(link, true)); /* never through a symlink, nor over it */
	gs_beside(side, sizeof(side), link);
	cr_assert_str_eq(gs_done, side);
	gs_expect_text(target, "keep");
	struct stat st;
	cr_assert_eq(lstat(link, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));

	/* A dangling symlink must not create its target either. */
	char dangling[300], nowhere[300];
	gs_path(dangling, sizeof(dangling), "dangling.json");
	gs_path(nowhere, sizeof(nowhere), "nowhere");
	cr_assert_eq(symlink(nowhere, dangling), 0);
	cr_assert_not(gs_write(dangling, true));
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

Test(stats, relative_to_the_start)
{
	/* A relative name is taken from where the library was loaded, not from
	 * wherever the program went since. */
	char cwd[512], sub[300];
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(gs_tdir), 0);
	gs_out_note_cwd();
	gs_path(sub, sizeof(sub), "sub");
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(chdir(sub), 0);
	cr_assert_not(gs_write("rel.json", false));
	cr_assert_eq(chdir(cwd), 0);
	gs_out_note_cwd();
	char want[300];
	gs_path(want, sizeof(want), "rel.json");
	cr_assert_str_eq(gs_done, want);
	json_decref(gs_load(want));
}

Test(stats, bad_paths)
{
	cr_assert(gs_write(NULL, false));
	cr_assert(gs_write("", false));
	cr_assert(gs_write("/nonexistent-dir-graphshim/x.json", true));
	cr_assert_eq(errno, ENOENT);
	char longp[2048];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	cr_assert(gs_write(longp, true));
	cr_assert_eq(errno, ENAMETOOLONG);
}

Test(stats, new_keys)
{
	/* What a comparison needs besides the counters: the run, how the
	 * process ended, the configuration, the steps when given, the main
	 * sequence. */
	static const gs_seq_info_t seqs[] = {
		{.id = 1, .stream = 0x10, .length = 4, .seen = 300, .replays = 290, .gate = "replay"},
		{.id = 2, .stream = 0x10, .length = 198, .seen = 200, .replays = 195, .eager_passes = 3,
		 .gate = "eager"},
	};
	gs_seqs = seqs;
	gs_nseqs = 2;
	gs_config.steps = 200;
	gs_config.gate = GS_GATE_REPLAY;
	char p[300];
	gs_path(p, sizeof(p), "keys.json");
	cr_assert_not(gs_write(p, false));
	json_t *j = gs_load(p);
	cr_assert_str_eq(json_string_value(json_object_get(j, "ended_by")), "exit");
	cr_assert_eq(json_integer_value(json_object_get(j, "steps")), 200);
	cr_assert_eq(json_integer_value(json_object_get(j, "ppid")), getppid());
	json_t *c = json_object_get(j, "config");
	cr_assert_str_eq(json_string_value(json_object_get(c, "GRAPHSHIM_GATE")), "replay");
	cr_assert(json_is_true(json_object_get(c, "GRAPHSHIM_ENABLE")));
	cr_assert_eq(json_integer_value(json_object_get(c, "GRAPHSHIM_LEARN_REPS")), 2);
	cr_assert_null(json_object_get(c, "GRAPHSHIM_STATS"), "paths are left out");
	json_t *m = json_object_get(j, "main_sequence");
	cr_assert_str_eq(json_string_value(json_object_get(m, "id")), "0x0000000000000002");
	cr_assert_eq(json_integer_value(json_object_get(m, "seen")), 200);
	cr_assert_eq(json_integer_value(json_object_get(m, "length")), 198);
	cr_assert_str_eq(json_string_value(json_object_get(m, "gate")), "eager");
	json_decref(j);
	gs_config.steps = 0;
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
