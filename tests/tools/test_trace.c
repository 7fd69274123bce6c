/*
 * Tests of gs_trace.c: the file is strict JSON after close, repairable
 * (strip the trailing comma, append "]") after the process is killed, every
 * event passes a schema check, the cap is honoured, files are never
 * clobbered or followed through symlinks, and concurrent writers produce
 * whole events.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "gs_trace.h"

static char gs_tdir[256];

static void gs_setup(void)
{
	snprintf(gs_tdir, sizeof(gs_tdir), "/tmp/gs-test-trace-XXXXXX");
	cr_assert_not_null(mkdtemp(gs_tdir));
}

static void gs_teardown(void)
{
	char cmd[300];
	gs_trace_close();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", gs_tdir);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", gs_tdir);
}

TestSuite(trace, .init = gs_setup, .fini = gs_teardown);

static void gs_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", gs_tdir, name);
}

/* The whole file, NUL-terminated, with room to append a repair. */
static char *gs_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 4);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b[n] = '\0';
	*len = (size_t)n;
	return b;
}

/* The documented repair of a trace left by a killed process. */
static void gs_repair(char *b, size_t *len)
{
	size_t n = *len;
	while (n && (b[n - 1] == '\n' || b[n - 1] == ' ' || b[n - 1] == '\r' || b[n - 1] == '\t'))
		n--;
	if (n && b[n - 1] == ']') {
		*len = n;
		return;
	}
	if (n && b[n - 1] == ',')
		n--;
	b[n++] = ']';
	b[n] = '\0';
	*len = n;
}

/*
 * Every event: an object with name (string), ph (one of the phases used),
 * ts (number), pid and tid (integers); args, when present, an object; X
 * events have a dur.  Returns the number of non-metadata events.
 */
static size_t gs_check_schema(json_t *arr)
{
	cr_assert(json_is_array(arr), "a trace is a JSON array");
	size_t i, n = 0;
	json_t *ev;
	json_array_foreach(arr, i, ev) {
		cr_assert(json_is_object(ev), "event %zu is an object", i);
		json_t *name = json_object_get(ev, "name"), *ph = json_object_get(ev, "ph");
		cr_assert(json_is_string(name), "event %zu has a name", i);
		cr_assert(json_is_string(ph), "event %zu has a ph", i);
		cr_assert(json_is_number(json_object_get(ev, "ts")), "event %zu has ts", i);
		cr_assert(json_is_integer(json_object_get(ev, "pid")), "event %zu has pid", i);
		cr_assert(json_is_integer(json_object_get(ev, "tid")), "event %zu has tid", i);
		const char *p = json_string_value(ph);
		cr_assert(!strcmp(p, "i") || !strcmp(p, "X") || !strcmp(p, "M"),
			  "event %zu: ph %s", i, p);
		json_t *args = json_object_get(ev, "args");
		cr_assert(!args || json_is_object(args), "event %zu: args", i);
		if (!strcmp(p, "X"))
			cr_assert(json_is_number(json_object_get(ev, "dur")), "event %zu: dur", i);
		if (strcmp(p, "M")) {
			cr_assert(json_is_string(json_object_get(ev, "cat")), "event %zu: cat", i);
			n++;
		}
	}
	return n;
}

static json_t *gs_parse(const char *path, bool repair, size_t *nevents)
{
	size_t len;
	char *b = gs_slurp(path, &len);
	if (repair)
		gs_repair(b, &len);
	json_error_t err;
	json_t *j = json_loadb(b, len, 0, &err);
	cr_assert_not_null(j, "%s: %s (line %d col %d)", path, err.text, err.line, err.column);
	free(b);
	size_t n = gs_check_schema(j);
	if (nevents)
		*nevents = n;
	return j;
}

/* The args of the first event named name (NULL when none). */
static json_t *gs_find(json_t *arr, const char *name)
{
	size_t i;
	json_t *ev;
	json_array_foreach(arr, i, ev) {
		if (!strcmp(json_string_value(json_object_get(ev, "name")), name))
			return ev;
	}
	return NULL;
}

static gs_rec_t *gs_make_rec(void)
{
	gs_rec_t *r = calloc(1, gs_rec_size(16));
	r->kind = GS_REC_KERNEL;
	r->func = (void *)(uintptr_t)0xdeadbeef;
	r->grid[0] = 128;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = 256;
	r->block[1] = r->block[2] = 1;
	r->shmem = 1024;
	r->nbytes = 16;
	return r;
}

/* One of each event, as the engine would emit them. */
static void gs_emit_all(uintptr_t stream)
{
	gs_rec_t *r = gs_make_rec();
	gs_trace_launch("cuLaunchKernel", stream, r, "eager");
	gs_trace_launch("cuLaunchKernel", stream, r, "held");
	gs_trace_launch("cuMemcpyAsync", stream, NULL, "boundary");
	gs_trace_flush(stream, GS_FLUSH_SYNC, "cuStreamSynchronize", 3, r);
	gs_trace_learned(stream, 0xabcdef, 3, "boundary");
	gs_trace_built(stream, 0xabcdef, 3, 1500000, 0, r);
	gs_trace_replay(stream, 0xabcdef, 3, 3, 1, 0, 1, false, false);
	gs_trace_pass(stream, 0xabcdef, 3, false);
	gs_trace_mismatch(stream, 0xabcdef, 2, GS_MISMATCH_STRUCTURE, "grid", "[128,1,1]",
			  "[64,1,1]", r);
	gs_trace_retired(stream, 0xabcdef, 3);
	gs_trace_fallback("graph_build", 700);
	free(r);
}

Test(trace, off_until_opened)
{
	cr_assert_not(gs_trace_on);
	gs_emit_all(1); /* no-ops, no crash */
	gs_trace_close();
	cr_assert_not(gs_trace_on);
}

Test(trace, valid_json_after_close)
{
	char p[300];
	gs_path(p, sizeof(p), "t.json");
	cr_assert_not(gs_trace_open(p, 1000, false));
	cr_assert(gs_trace_on);
	gs_emit_all(0x7f0010);
	gs_emit_all(0);
	gs_trace_close();
	cr_assert_not(gs_trace_on);

	size_t n;
	json_t *j = gs_parse(p, false, &n);
	cr_assert_eq(n, 22);

	json_t *launch = gs_find(j, "cuLaunchKernel");
	cr_assert_not_null(launch);
	json_t *a = json_object_get(launch, "args");
	cr_assert_str_eq(json_string_value(json_object_get(launch, "cat")), "launch");
	cr_assert_str_eq(json_string_value(json_object_get(a, "state")), "eager");
	cr_assert_str_eq(json_string_value(json_object_get(a, "kind")), "kernel");
	cr_assert_str_eq(json_string_value(json_object_get(a, "func")), "0xdeadbeef");
	cr_assert_str_eq(json_string_value(json_object_get(a, "stream")), "0x7f0010");
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(a, "grid"), 0)), 128);
	cr_assert_eq(json_integer_value(json_array_get(json_object_get(a, "block"), 0)), 256);
	cr_assert_eq(json_integer_value(json_object_get(a, "shmem")), 1024);
	cr_assert_eq(json_integer_value(json_object_get(a, "nbytes")), 16);
	/* Stream events sit on the stream's track, which is named. */
	json_int_t tid = json_integer_value(json_object_get(launch, "tid"));
	cr_assert_geq(tid, 1 << 24);
	size_t i;
	json_t *ev;
	bool named = false;
	json_array_foreach(j, i, ev) {
		if (!strcmp(json_string_value(json_object_get(ev, "name")), "thread_name") &&
		    json_integer_value(json_object_get(ev, "tid")) == tid)
			named = !strcmp(json_string_value(json_object_get(
						json_object_get(ev, "args"), "name")),
					"stream 0x7f0010");
	}
	cr_assert(named);

	json_t *fl = json_object_get(gs_find(j, "flush"), "args");
	cr_assert_str_eq(json_string_value(json_object_get(fl, "reason")), "SYNC");
	cr_assert_str_eq(json_string_value(json_object_get(fl, "api")), "cuStreamSynchronize");
	cr_assert_eq(json_integer_value(json_object_get(fl, "nheld")), 3);
	cr_assert(json_object_get(fl, "kernel"), "the last held launch's kernel (null: no name known)");

	json_t *built = gs_find(j, "built");
	cr_assert_str_eq(json_string_value(json_object_get(built, "ph")), "X");
	cr_assert_float_eq(json_number_value(json_object_get(built, "dur")), 1500.0, 1e-6);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(built, "args"), "id")),
			 "0x0000000000abcdef");

	json_t *mm = json_object_get(gs_find(j, "mismatch"), "args");
	cr_assert_eq(json_integer_value(json_object_get(mm, "position")), 2);
	cr_assert_str_eq(json_string_value(json_object_get(mm, "reason")), "STRUCTURE");
	cr_assert_str_eq(json_string_value(json_object_get(mm, "field")), "grid");
	cr_assert_str_eq(json_string_value(json_object_get(mm, "expected")), "[128,1,1]");
	cr_assert_str_eq(json_string_value(json_object_get(mm, "got")), "[64,1,1]");

	json_t *fb = gs_find(j, "fallback");
	cr_assert_eq(json_integer_value(json_object_get(fb, "tid")), (json_int_t)gettid());
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(fb, "args"), "status")),
		     700);

	json_t *pn = json_object_get(gs_find(j, "process_name"), "args");
	cr_assert_str_eq(json_string_value(json_object_get(pn, "name")), "graphshim");
	json_t *end = json_object_get(gs_find(j, "graphshim_trace"), "args");
	cr_assert_eq(json_integer_value(json_object_get(end, "events")), 22);
	cr_assert_str_eq(json_string_value(json_object_get(end, "ended_by")), "exit");
	cr_assert_not_null(json_object_get(pn, "run"), "the first event names the run");
	/* A replay says which chunk of how many, and of how long a sequence. */
	json_t *rp = json_object_get(gs_find(j, "replay"), "args");
	cr_assert_eq(json_integer_value(json_object_get(rp, "seq_length")), 3);
	cr_assert_eq(json_integer_value(json_object_get(rp, "chunk")), 0);
	cr_assert_eq(json_integer_value(json_object_get(rp, "chunks")), 1);
	json_t *ps = json_object_get(gs_find(j, "pass"), "args");
	cr_assert_str_eq(json_string_value(json_object_get(ps, "how")), "replayed");
	cr_assert_eq(json_integer_value(json_object_get(ps, "length")), 3);
	cr_assert_eq(json_integer_value(json_object_get(end, "dropped")), 0);
	cr_assert_eq(json_integer_value(json_object_get(end, "cap")), 1000);
	json_decref(j);
}

Test(trace, escapes_strings)
{
	char p[300];
	gs_path(p, sizeof(p), "esc.json");
	cr_assert_not(gs_trace_open(p, 100, false));
	char longs[3000];
	memset(longs, '\\', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	gs_trace_mismatch(1, 2, 3, GS_MISMATCH_DRIFT, "arg \"1\"\n\t", "\xc3\xa9\x01\x7f", longs, NULL);
	gs_trace_mismatch(1, 2, 3, GS_MISMATCH_DRIFT, NULL, NULL, NULL, NULL);
	gs_trace_launch(NULL, 1, NULL, NULL);
	gs_trace_close();
	size_t n;
	json_t *j = gs_parse(p, false, &n);
	cr_assert_eq(n, 3);
	size_t i, k = 0;
	json_t *ev;
	json_array_foreach(j, i, ev) {
		if (strcmp(json_string_value(json_object_get(ev, "name")), "mismatch"))
			continue;
		json_t *a = json_object_get(ev, "args");
		if (k++ == 0) {
			cr_assert_str_eq(json_string_value(json_object_get(a, "field")),
					 "arg \"1\"\n\t");
			/* Non-ASCII bytes are replaced, control bytes escaped. */
			cr_assert_str_eq(json_string_value(json_object_get(a, "expected")),
					 "??\x01?");
			/* Long strings are truncated to a bounded, still valid, string. */
			size_t gl = strlen(json_string_value(json_object_get(a, "got")));
			cr_assert(gl > 100 && gl < 256, "got %zu", gl);
		} else {
			cr_assert(json_is_null(json_object_get(a, "field")));
			cr_assert(json_is_null(json_object_get(a, "got")));
		}
	}
	cr_assert_eq(k, 2);
	/* A launch without an api or a record still makes an event. */
	cr_assert_not_null(gs_find(j, "launch"));
	json_decref(j);
}

Test(trace, cap_honoured)
{
	char p[300];
	gs_path(p, sizeof(p), "cap.json");
	cr_assert_not(gs_trace_open(p, 10, false));
	for (int i = 0; i < 100; i++)
		gs_trace_replay((uintptr_t)(i % 3), (uint64_t)i, 4, 4, 0, 0, 1, false, false);
	gs_trace_close();
	size_t n;
	json_t *j = gs_parse(p, false, &n);
	cr_assert_eq(n, 10);
	json_t *end = json_object_get(gs_find(j, "graphshim_trace"), "args");
	cr_assert_eq(json_integer_value(json_object_get(end, "events")), 10);
	cr_assert_eq(json_integer_value(json_object_get(end, "dropped")), 90);
	cr_assert_eq(json_integer_value(json_object_get(end, "cap")), 10);
	json_decref(j);
}

/*
 * A child traces more than one buffer's worth and dies by the given means;
 * what it leaves is its NAME.PID.part (out), never NAME.
 */
static void gs_child_dies(const char *p, int how, int nevents, char *out, size_t len)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (gs_trace_open(p, 1000000, false))
			_exit(3);
		gs_rec_t *r = gs_make_rec();
		for (int i = 0; i < nevents; i++)
			gs_trace_launch("cuLaunchKernel", (uintptr_t)(i % 4), r, "held");
		if (how == SIGKILL)
			raise(SIGKILL);
		_exit(0);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (how == SIGKILL)
		cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	else
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct stat sb;
	cr_assert_neq(stat(p, &sb), 0, "a trace that was not finished is never at its name");
	snprintf(out, len, "%s.%ld.part", p, (long)pid);
}

Test(trace, repairable_after_sigkill)
{
	char p[300];
	gs_path(p, sizeof(p), "killed.json");
	char part[400];
	gs_child_dies(p, SIGKILL, 5000, part, sizeof(part));
	memcpy(p, part, sizeof(p) - 1);
	p[sizeof(p) - 1] = '\0';
	size_t len;
	char *b = gs_slurp(p, &len);
	cr_assert_gt(len, 64 * 1024, "several buffers were written before the kill");
	cr_assert_eq(memcmp(b + len - 3, "},\n", 3), 0, "the file ends at a whole event");
	free(b);
	size_t n;
	json_t *j = gs_parse(p, true, &n);
	cr_assert_gt(n, 100);
	cr_assert_lt(n, 5000);
	json_decref(j);
}

Test(trace, repairable_after_exit_without_close)
{
	char p[300];
	gs_path(p, sizeof(p), "exited.json");
	char part[400];
	gs_child_dies(p, 0, 10, part, sizeof(part)); /* less than one buffer: only the header is on disk */
	memcpy(p, part, sizeof(p) - 1);
	p[sizeof(p) - 1] = '\0';
	size_t n;
	json_t *j = gs_parse(p, true, &n);
	cr_assert_eq(n, 0);
	cr_assert_not_null(gs_find(j, "process_name"));
	json_decref(j);
}

Test(trace, never_clobbers_nor_follows_symlinks)
{
	char p[300], link[300], side[400];
	gs_path(p, sizeof(p), "exists.json");
	int fd = open(p, O_WRONLY | O_CREAT, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "x", 1), 1);
	close(fd);
	/* Not this run's file: kept; the trace goes beside it. */
	cr_assert_not(gs_trace_open(p, 10, false));
	cr_assert(gs_trace_on);
	gs_trace_close();
	struct stat st;
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_size, 1);
	snprintf(side, sizeof(side), "%s/exists.%ld.json", gs_tdir, (long)getpid());
	json_decref(gs_parse(side, false, NULL));
	cr_assert_eq(unlink(side), 0);
	/* A symbolic link is neither followed nor replaced, overwrite or not. */
	gs_path(link, sizeof(link), "link.json");
	cr_assert_eq(symlink(p, link), 0);
	cr_assert_not(gs_trace_open(link, 10, true));
	gs_trace_close();
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_size, 1);
	cr_assert_eq(lstat(link, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	snprintf(side, sizeof(side), "%s/link.%ld.json", gs_tdir, (long)getpid());
	json_decref(gs_parse(side, false, NULL));
	/* Overwrite replaces a regular file of an earlier run. */
	cr_assert_not(gs_trace_open(p, 10, true));
	gs_trace_close();
	json_decref(gs_parse(p, false, NULL));
}

Test(trace, one_run_two_processes)
{
	/* A later process of the run goes beside the first and is noted in it,
	 * which stays strict JSON. */
	char p[300], side[400];
	gs_path(p, sizeof(p), "run.json");
	cr_assert_not(gs_trace_open(p, 10, true));
	gs_trace_fallback("first", 1);
	gs_trace_close();
	cr_assert_not(gs_trace_open(p, 10, true));
	gs_trace_fallback("second", 2);
	gs_trace_close();
	snprintf(side, sizeof(side), "%s/run.%ld.json", gs_tdir, (long)getpid());
	json_decref(gs_parse(side, false, NULL));
	json_t *j = gs_parse(p, false, NULL);
	json_t *note = json_object_get(gs_find(j, "graphshim_process_file"), "args");
	cr_assert_str_eq(json_string_value(json_object_get(note, "file")), strrchr(side, '/') + 1);
	json_decref(j);
}

Test(trace, discard_leaves_nothing)
{
	char p[300], part[400];
	gs_path(p, sizeof(p), "none.json");
	cr_assert_not(gs_trace_open(p, 10, false));
	gs_trace_fallback("x", 1);
	gs_trace_discard();
	cr_assert_not(gs_trace_on);
	struct stat st;
	cr_assert_neq(stat(p, &st), 0);
	snprintf(part, sizeof(part), "%s.%ld.part", p, (long)getpid());
	cr_assert_neq(stat(part, &st), 0);
}

static const char *gs_names_for_test(const gs_rec_t *r)
{
	return r->func == (void *)(uintptr_t)0xdeadbeef ? "rmsnorm_kernel" : NULL;
}

Test(trace, kernel_names)
{
	/* A kernel's launches and mismatches carry its name; the launch event
	 * is named after it, so a timeline shows it. */
	char p[300];
	gs_path(p, sizeof(p), "names.json");
	gs_trace_set_namer(gs_names_for_test);
	cr_assert_not(gs_trace_open(p, 100, false));
	gs_rec_t *r = gs_make_rec();
	gs_trace_launch("cuLaunchKernel", 1, r, "held");
	gs_trace_mismatch(1, 2, 0, GS_MISMATCH_STRUCTURE, "grid", NULL, NULL, r);
	r->func = (void *)(uintptr_t)0x1234;
	gs_trace_launch("cuLaunchKernel", 1, r, "eager");
	gs_trace_close();
	gs_trace_set_namer(NULL);
	gs_trace_forget_names();
	free(r);
	json_t *j = gs_parse(p, false, NULL);
	json_t *l = gs_find(j, "rmsnorm_kernel");
	cr_assert_not_null(l);
	json_t *a = json_object_get(l, "args");
	cr_assert_str_eq(json_string_value(json_object_get(a, "kernel")), "rmsnorm_kernel");
	cr_assert_str_eq(json_string_value(json_object_get(a, "api")), "cuLaunchKernel");
	json_t *m = json_object_get(gs_find(j, "mismatch"), "args");
	cr_assert_str_eq(json_string_value(json_object_get(m, "kernel")), "rmsnorm_kernel");
	/* A function the backend cannot name keeps the API's name. */
	json_t *u = json_object_get(gs_find(j, "cuLaunchKernel"), "args");
	cr_assert(json_is_null(json_object_get(u, "kernel")));
	json_decref(j);
}

Test(trace, pid_expansion_and_reopen)
{
	char p[300], want[300];
	gs_path(p, sizeof(p), "t-%p.json");
	snprintf(want, sizeof(want), "%s/t-%ld.json", gs_tdir, (long)getpid());
	cr_assert_not(gs_trace_open(p, 10, false));
	cr_assert(gs_trace_open(p, 10, true), "one trace at a time");
	gs_trace_close();
	json_decref(gs_parse(want, false, NULL));
}

#define GS_NTHREADS 4
#define GS_PER_THREAD 5000

static void *gs_writer(void *arg)
{
	uintptr_t stream = (uintptr_t)arg;
	gs_rec_t *r = gs_make_rec();
	for (int i = 0; i < GS_PER_THREAD; i++) {
		if (i & 1)
			gs_trace_launch("cuLaunchKernel", stream, r, "replayed");
		else
			gs_trace_flush(stream, GS_FLUSH_EVENT, "cuEventRecord", (uint32_t)i, NULL);
	}
	free(r);
	return NULL;
}

Test(trace, threads_write_whole_events)
{
	char p[300];
	gs_path(p, sizeof(p), "mt.json");
	cr_assert_not(gs_trace_open(p, 1000000, false));
	pthread_t t[GS_NTHREADS];
	for (uintptr_t i = 0; i < GS_NTHREADS; i++)
		pthread_create(&t[i], NULL, gs_writer, (void *)(0x1000 * (i + 1)));
	for (int i = 0; i < GS_NTHREADS; i++)
		pthread_join(t[i], NULL);
	gs_trace_close();
	size_t n;
	json_t *j = gs_parse(p, false, &n);
	cr_assert_eq(n, GS_NTHREADS * GS_PER_THREAD);
	/* One named track per stream. */
	size_t i, tracks = 0;
	json_t *ev;
	json_array_foreach(j, i, ev) {
		if (!strcmp(json_string_value(json_object_get(ev, "name")), "thread_name"))
			tracks++;
	}
	cr_assert_eq(tracks, GS_NTHREADS);
	json_decref(j);
}

Test(trace, many_streams_share_an_overflow_track)
{
	char p[300];
	gs_path(p, sizeof(p), "streams.json");
	cr_assert_not(gs_trace_open(p, 1000000, false));
	for (uintptr_t s = 0; s < 3000; s++)
		gs_trace_retired(s * 64, s, 1);
	gs_trace_close();
	size_t n;
	json_t *j = gs_parse(p, false, &n);
	cr_assert_eq(n, 3000);
	json_decref(j);
}

Test(trace, forked_child_stops_tracing)
{
	char p[300];
	gs_path(p, sizeof(p), "fork.json");
	cr_assert_not(gs_trace_open(p, 1000, false));
	gs_trace_fallback("before fork", 1);
	pid_t pid = fork();
	if (pid == 0) {
		gs_trace_fallback("in child", 2);
		gs_trace_close();
		_exit(gs_trace_on ? 1 : 0);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	gs_trace_fallback("after fork", 3);
	gs_trace_close();
	size_t n;
	json_t *j = gs_parse(p, false, &n);
	cr_assert_eq(n, 2);
	json_decref(j);
}
