/*
 * End to end: the real engine (libgscore) on the recording test backend,
 * with GRAPHSHIM_STATS and GRAPHSHIM_TRACE set, as a program under the shim
 * would run.  The statistics file and the trace must agree with each other
 * and with the counters, and `graphshim trace summarize` / `compare` must
 * read what the engine wrote (when the command is built).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "gs_sig.h"
#include "gs_testbe.h"
#include "gs_trace.h"

static char gs_tdir[256], gs_stats_path[300], gs_trace_path[300];

static void gs_setup(void)
{
	snprintf(gs_tdir, sizeof(gs_tdir), "/tmp/gs-test-e2e-XXXXXX");
	cr_assert_not_null(mkdtemp(gs_tdir));
	snprintf(gs_stats_path, sizeof(gs_stats_path), "%s/stats.json", gs_tdir);
	snprintf(gs_trace_path, sizeof(gs_trace_path), "%s/trace.json", gs_tdir);
}

static void gs_teardown(void)
{
	char cmd[300];
	if (getenv("GS_TEST_KEEP")) /* for debugging: keep the files */
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", gs_tdir);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", gs_tdir);
}

TestSuite(e2e, .init = gs_setup, .fini = gs_teardown);

static const uintptr_t gs_funcs[8] = {0x100, 0x200, 0x300, 0x400, 0x500, 0x600, 0x700, 0x800};

/* nsteps decode-like steps of 8 kernels, each ended by a synchronize. */
static void gs_run_steps(uintptr_t stream, int nsteps)
{
	for (int i = 0; i < nsteps; i++) {
		tb_step(stream, gs_funcs, 8, 0);
		gs_engine_flush_stream(stream, NULL, 0, GS_FLUSH_SYNC, "cuStreamSynchronize");
	}
}

/* The path of the graphshim command, or NULL when it is not built. */
static const char *gs_cmd(void)
{
	static char path[512];
	const char *b = getenv("top_builddir");
	snprintf(path, sizeof(path), "%s/tools/graphshim", b ? b : ".");
	return access(path, X_OK) == 0 ? path : NULL;
}

static int gs_system(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int gs_system(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t gs_count(json_t *arr, const char *name, int status)
{
	size_t i, n = 0;
	json_t *ev;
	json_array_foreach(arr, i, ev) {
		if (strcmp(json_string_value(json_object_get(ev, "name")), name))
			continue;
		json_t *st = json_object_get(json_object_get(ev, "args"), "status");
		if (status < 0 || (st && json_integer_value(st) == status))
			n++;
	}
	return n;
}

static long long gs_counter(json_t *stats, const char *name)
{
	json_t *v = json_object_get(json_object_get(stats, "counters"), name);
	cr_assert(json_is_integer(v), "counter %s", name);
	return json_integer_value(v);
}

Test(e2e, stats_and_trace_agree)
{
	tb_start("GRAPHSHIM_STATS", gs_stats_path, "GRAPHSHIM_TRACE", gs_trace_path,
		 "GRAPHSHIM_OVERWRITE", "0", "GRAPHSHIM_FORGIVE", "1", NULL);
	cr_assert(gs_trace_on);
	gs_run_steps(0x10, 30);
	/* A step that diverges at launch 5, twice (not charged: new, from a
	 * sequence that completes far more passes than it mismatches; then a
	 * step of its own), then steps on a second stream. */
	uintptr_t odd[8];
	memcpy(odd, gs_funcs, sizeof(odd));
	odd[5] = 0x999;
	for (int i = 0; i < 2; i++) {
		tb_step(0x10, odd, 8, 0);
		gs_engine_flush_stream(0x10, NULL, 0, GS_FLUSH_SYNC, "cuStreamSynchronize");
	}
	gs_run_steps(0x20, 10);
	gs_engine_flush_all(GS_FLUSH_SYNC, "cuCtxSynchronize");
	tb_check();
	gs_engine_fini();
	cr_assert_not(gs_trace_on);

	json_error_t err;
	json_t *st = json_load_file(gs_stats_path, 0, &err);
	cr_assert_not_null(st, "stats: %s", err.text);
	json_t *tr = json_load_file(gs_trace_path, 0, &err);
	cr_assert_not_null(tr, "trace (strict JSON after a clean exit): %s line %d", err.text,
			   err.line);

	cr_assert_eq(gs_counter(st, "launches"), 8 * 42);
	cr_assert_gt(json_real_value(json_object_get(st, "coverage")), 0.7);
	cr_assert_eq(gs_count(tr, "replay", -1), (size_t)gs_counter(st, "replays"));
	cr_assert_eq(gs_count(tr, "mismatch", -1), (size_t)gs_counter(st, "mismatches"));
	cr_assert_eq(gs_counter(st, "forgiven"), 2);
	cr_assert_eq(gs_count(tr, "forgiven", -1), 2);
	cr_assert_eq(gs_count(tr, "built", 0), (size_t)gs_counter(st, "graphs"));
	cr_assert_eq(gs_count(tr, "flush", -1), (size_t)gs_counter(st, "flushes"));
	cr_assert_geq(gs_counter(st, "mismatches"), 1);

	/* The per-reason tables add up to the totals. */
	long long sum = 0;
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(st, "mismatches_by_reason"), k, v) sum +=
		json_integer_value(v);
	cr_assert_eq(sum, gs_counter(st, "mismatches"));
	sum = 0;
	json_object_foreach(json_object_get(st, "flushes_by_reason"), k, v) sum +=
		json_integer_value(v);
	cr_assert_eq(sum, gs_counter(st, "flushes"));

	/* Sequences: the per-sequence replays add up to the graph launches. */
	json_t *seqs = json_object_get(st, "sequences");
	cr_assert_geq(json_array_size(seqs), 2);
	size_t i;
	json_t *q;
	long long replays = 0;
	bool armed8 = false;
	json_array_foreach(seqs, i, q) {
		replays += json_integer_value(json_object_get(q, "replays"));
		armed8 |= json_integer_value(json_object_get(q, "length")) == 8 &&
			  !strcmp(json_string_value(json_object_get(q, "state")), "armed");
	}
	cr_assert_eq(replays, gs_counter(st, "replays"));
	cr_assert(armed8);
	json_decref(st);
	json_decref(tr);

	const char *cmd = gs_cmd();
	if (!cmd) {
		cr_log_warn("tools/graphshim not built: command checks skipped");
		return;
	}
	cr_assert_eq(gs_system("'%s' trace summarize '%s' > '%s/sum.txt'", cmd, gs_trace_path,
			       gs_tdir),
		     0);
	/* One sequence per stream, though the two have the same shape. */
	cr_assert_eq(gs_system("grep -q '^  0x[0-9a-f]*  0x10  .* built ' '%s/sum.txt'", gs_tdir), 0);
	cr_assert_eq(gs_system("grep -q '^  0x[0-9a-f]*  0x20  .* built ' '%s/sum.txt'", gs_tdir), 0);
	cr_assert_eq(gs_system("grep -q '^  STRUCTURE ' '%s/sum.txt'", gs_tdir), 0);
	cr_assert_eq(gs_system("'%s' compare '%s' '%s' > /dev/null", cmd, gs_stats_path,
			       gs_stats_path),
		     0);
}

Test(e2e, never_clobbers_at_exit)
{
	/* A file that is not this run's is kept; the statistics go beside it. */
	FILE *f = fopen(gs_stats_path, "w");
	fputs("keep", f);
	fclose(f);
	tb_start("GRAPHSHIM_STATS", gs_stats_path, "GRAPHSHIM_LOG", "off", NULL);
	gs_run_steps(0x10, 5);
	gs_engine_fini();
	char buf[8] = {0};
	f = fopen(gs_stats_path, "r");
	cr_assert_eq(fread(buf, 1, sizeof(buf) - 1, f), 4);
	fclose(f);
	cr_assert_str_eq(buf, "keep");
	char side[400];
	snprintf(side, sizeof(side), "%s/stats.%ld.json", gs_tdir, (long)getpid());
	json_error_t err;
	json_t *st = json_load_file(side, 0, &err);
	cr_assert_not_null(st, "%s: %s", side, err.text);
	json_decref(st);
}

Test(e2e, no_gpu_call_writes_nothing)
{
	/* The engine started (a helper process that looked at the devices),
	 * but nothing was launched, copied or synchronized: no file, no .part,
	 * no line. */
	tb_start("GRAPHSHIM_STATS", gs_stats_path, "GRAPHSHIM_TRACE", gs_trace_path,
		 "GRAPHSHIM_SUMMARY", "1", NULL);
	gs_engine_fini();
	cr_assert_eq(gs_system("ls -A '%s' | grep -q .", gs_tdir), 1, "the directory stays empty");
	/* One flush is a GPU call. */
	tb_start("GRAPHSHIM_STATS", gs_stats_path, NULL);
	gs_engine_flush_all(GS_FLUSH_SYNC, "cuCtxSynchronize");
	gs_engine_fini();
	cr_assert_eq(access(gs_stats_path, F_OK), 0);
}

/* The number of the statistics' counter, read back from the file at path. */
static json_t *gs_load_json(const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);
	cr_assert_not_null(j, "%s: %s (line %d)", path, err.text, err.line);
	return j;
}

/*
 * A child runs steps with statistics and a trace, and is ended by sig
 * (after `app`, when set, was installed as its handler through the
 * application's path, gs_sig_app_sigaction).  Returns its wait status.
 */
static int gs_child_signalled(int sig, void (*app)(int))
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		tb_start("GRAPHSHIM_STATS", gs_stats_path, "GRAPHSHIM_TRACE", gs_trace_path, NULL);
		if (app) {
			struct sigaction sa = {0};
			sa.sa_handler = app;
			gs_sig_app_sigaction(sig, &sa, NULL);
		}
		gs_run_steps(0x10, 50);
		raise(sig);
		gs_run_steps(0x10, 5); /* an application's handler lets it go on */
		gs_engine_fini();
		_exit(7);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

Test(e2e, sigterm_writes_stats_and_trace)
{
	/* The default disposition: the files are written, then the process
	 * ends by the signal, as it would have. */
	int status = gs_child_signalled(SIGTERM, NULL);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
	json_t *st = gs_load_json(gs_stats_path);
	cr_assert_str_eq(json_string_value(json_object_get(st, "ended_by")), "SIGTERM");
	cr_assert_eq(gs_counter(st, "launches"), 8 * 50);
	json_decref(st);
	json_t *tr = gs_load_json(gs_trace_path); /* strict JSON: closed */
	json_t *last = json_array_get(tr, json_array_size(tr) - 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(last, "args"), "ended_by")),
			 "SIGTERM");
	json_decref(tr);
}

static volatile sig_atomic_t gs_app_saw;

static void gs_app_handler(int sig)
{
	gs_app_saw = sig;
}

Test(e2e, application_handler_is_chained)
{
	/* The application's own handler runs, and the application decides: it
	 * goes on, and the files are written at its exit. */
	int status = gs_child_signalled(SIGINT, gs_app_handler);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %#x", status);
	json_t *st = gs_load_json(gs_stats_path);
	cr_assert_str_eq(json_string_value(json_object_get(st, "ended_by")), "exit");
	cr_assert_eq(gs_counter(st, "launches"), 8 * 55);
	json_decref(st);
}

Test(e2e, killed_program_leaves_a_readable_trace)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		tb_start("GRAPHSHIM_TRACE", gs_trace_path, NULL);
		gs_run_steps(0x10, 400); /* well over one 64 KiB buffer of events */
		raise(SIGKILL);
		_exit(1);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status));
	/* Never a half file at the name: what there is, is in NAME.PID.part. */
	cr_assert_neq(access(gs_trace_path, F_OK), 0);
	char part[400];
	snprintf(part, sizeof(part), "%s.%ld.part", gs_trace_path, (long)pid);
	cr_assert_eq(access(part, F_OK), 0);
	const char *cmd = gs_cmd();
	if (!cmd) {
		cr_log_warn("tools/graphshim not built: command check skipped");
		return;
	}
	cr_assert_eq(gs_system("'%s' trace summarize '%s' > '%s/sum.txt'", cmd, part, gs_tdir), 0);
	cr_assert_eq(gs_system("grep -q 'not closed' '%s/sum.txt'", gs_tdir), 0);
}
