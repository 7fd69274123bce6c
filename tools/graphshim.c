/*
 * graphshim: the command-line companion of libgraphshim.so.
 *
 *   graphshim run [OPTIONS] -- PROGRAM [ARGS...]      run a program under the shim
 *   graphshim trace summarize FILE... [--check STATS] tables from trace dumps
 *   graphshim compare BASE.json NEW.json [LIMITS]     CI verdict on two runs' statistics
 *
 * Exit codes follow one rule across subcommands: 0 success (or no
 * regression, or figures that agree), 1 regression (compare) or
 * disagreement (summarize --check), 2 bad usage or bad input, 126/127 a
 * program that cannot be run (as the shell does).  Messages go to stderr
 * prefixed "graphshim:", and name the file and the problem.
 *
 * Several processes of one run may share an output name: the first to
 * finish has the name, the others NAME.PID.EXT beside it, noted in the
 * first (the statistics' "process_files", the trace's
 * "graphshim_process_file" events).  Both readers take a file together with
 * the files it notes, so that a run is judged whole.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#ifndef GS_LIBDIR
#define GS_LIBDIR "/usr/local/lib"
#endif
#define GS_LIBNAME "libgraphshim.so"

enum { GS_EXIT_OK = 0, GS_EXIT_REGRESSION = 1, GS_EXIT_BAD = 2 };

static void gs_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void gs_err(const char *fmt, ...)
{
	va_list ap;
	fputs("graphshim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *gs_xalloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		gs_err("out of memory");
		exit(GS_EXIT_BAD);
	}
	return q;
}

static char *gs_xstrdup(const char *s)
{
	char *d = gs_xalloc(NULL, strlen(s) + 1);
	strcpy(d, s);
	return d;
}

/* ------------------------------------------------------------------ help */

static const char gs_usage_main[] =
	"Usage: graphshim COMMAND [ARGS...]\n"
	"\n"
	"Run GPU programs under libgraphshim.so and read what it reports.\n"
	"\n"
	"Commands:\n"
	"  run [OPTIONS] -- PROGRAM [ARGS...]       run PROGRAM with the shim preloaded\n"
	"  trace summarize FILE... [--check STATS]  summarize traces (GRAPHSHIM_TRACE)\n"
	"  compare BASE.json NEW.json [LIMITS]      compare two runs' statistics (CI)\n"
	"\n"
	"  graphshim COMMAND --help   options of one command\n"
	"  graphshim --version        print the version\n"
	"\n"
	"See graphshim(1) and graphshim(7).\n";

static const char gs_usage_run[] =
	"Usage: graphshim run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM with libgraphshim.so prepended to LD_PRELOAD.\n"
	"\n"
	"Options (each sets the GRAPHSHIM_* variable shown):\n"
	"  --stats FILE      write statistics JSON at exit (GRAPHSHIM_STATS; %p: pid)\n"
	"  --trace FILE      write a Chrome trace-event file (GRAPHSHIM_TRACE; %p: pid)\n"
	"  --trace-max N     trace events written at most (GRAPHSHIM_TRACE_MAX)\n"
	"  --steps N         steps PROGRAM runs, for per-step comparisons (GRAPHSHIM_STEPS)\n"
	"  --log LEVEL       off, error, warn, info, debug or 0-4 (GRAPHSHIM_LOG)\n"
	"  --summary         one-line summary on stderr at exit (GRAPHSHIM_SUMMARY=1)\n"
	"  --overwrite       replace the stats/trace files of an earlier run\n"
	"                    (removed before PROGRAM starts; GRAPHSHIM_OVERWRITE=1)\n"
	"  --disable         load the shim as a pure pass-through (GRAPHSHIM_ENABLE=0);\n"
	"                    it writes no statistics and no trace\n"
	"  --lib PATH        preload this library instead of searching\n"
	"  -h, --help        this help\n"
	"\n"
	"Relative FILE names are taken from the directory graphshim run starts in.\n"
	"Before PROGRAM starts, each output is checked: an existing file (of an\n"
	"earlier run) is refused unless --overwrite, and so is a name whose\n"
	"directory is missing or not writable.  Several processes of PROGRAM's\n"
	"run under one name: the first to finish gets it, the others FILE.PID.json\n"
	"beside it (noted in the first; compare and trace summarize read them\n"
	"together).  SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are\n"
	"passed on to PROGRAM.\n"
	"\n"
	"The library is the first of: --lib PATH; $GRAPHSHIM_LIB; the build tree\n"
	"next to this program (../.libs/ or ../shim/.libs/); ../lib/ or ../lib64/ next\n"
	"to this program (an installation moved as a whole); " GS_LIBDIR "/.\n"
	"\n"
	"Exit status: PROGRAM's own (a PROGRAM ended by a signal ends graphshim by\n"
	"the same signal); 127 when PROGRAM is not found, 126 when it cannot be\n"
	"executed, 2 for bad options, a refused output, or when the library is not\n"
	"found.\n";

static const char gs_usage_trace[] =
	"Usage: graphshim trace summarize FILE... [--check STATS.json] [--single]\n"
	"\n"
	"Print tables from traces written with GRAPHSHIM_TRACE: launches by state,\n"
	"sequences (id, stream, length, replays, eager passes, share of launches\n"
	"covered, the gate's last choice with the eager and replay medians it\n"
	"compared, the first kernel), mismatch reasons with the most common field\n"
	"and kernel, flush reasons with the API that caused them most, and\n"
	"fallbacks.  The files of one run are taken together: each FILE with the\n"
	"files of the run's other processes it notes (--single: FILE alone).  A\n"
	"trace left by a process that died (NAME.PID.part: no closing \"]\", a\n"
	"trailing comma) is repaired before parsing.\n"
	"\n"
	"--check STATS.json: compare every figure the trace and the statistics\n"
	"of the same run share (launches by state, replayed launches, graph\n"
	"launches, mismatches, flushes, coverage; per sequence its length,\n"
	"replays, eager passes, mismatches, patches and the gate's choice).\n"
	"\n"
	"Exit status: 0; 1 when --check finds a figure that differs; 2 when a FILE\n"
	"cannot be read or is not a trace.\n";

static const char gs_usage_compare[] =
	"Usage: graphshim compare BASE.json NEW.json [LIMITS] [--single]\n"
	"\n"
	"Compare two runs' statistics (GRAPHSHIM_STATS) and report a regression.\n"
	"Each file is taken with the files of its run's other processes that it\n"
	"notes (--single: the file alone); a name with * or ? that is no file is\n"
	"a pattern, and the files it matches are one run.\n"
	"\n"
	"Limits:\n"
	"  --max-coverage-drop P       coverage may fall by P percentage points (1.0)\n"
	"  --max-launches-increase P   launches per step may grow by P percent (5.0)\n"
	"  --max-mismatch-increase N   mismatches (per step) may grow by N (0)\n"
	"\n"
	"Steps: the files' \"steps\" (graphshim run --steps N, GRAPHSHIM_STEPS), or\n"
	"else the sightings of each run's main sequence; totals when neither.\n"
	"A coverage change that comes from the gate (eager chosen by timing) is\n"
	"named as such.\n"
	"\n"
	"Exit status: 0 within limits, 1 regression, 2 bad input (missing or\n"
	"malformed file, missing key, wrong type) or bad usage.\n";

static bool gs_is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

/*
 * "--name VALUE" or "--name=VALUE" at argv[*i]; advances *i past the value.
 * Returns NULL when argv[*i] is not this option; exits when VALUE is missing.
 */
static const char *gs_opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		gs_err("%s needs a value", name);
		exit(GS_EXIT_BAD);
	}
	return argv[++*i];
}

/* ------------------------------------------------------ files of one run */

typedef struct gs_files {
	char **v;
	size_t n, cap;
} gs_files_t;

static bool gs_files_has(const gs_files_t *f, const char *path)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i], path))
			return true;
	return false;
}

static void gs_files_add(gs_files_t *f, const char *path)
{
	if (gs_files_has(f, path))
		return;
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 8;
		f->v = gs_xalloc(f->v, f->cap * sizeof(*f->v));
	}
	f->v[f->n++] = gs_xstrdup(path);
}

static void gs_files_free(gs_files_t *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/*
 * An argument: a file, or (when it is none and has * or ?) a pattern whose
 * matches are one run.  A pattern that matches nothing is kept as it is,
 * so that the reader says the file is missing.
 */
static void gs_files_arg(gs_files_t *f, const char *arg)
{
	struct stat st;
	glob_t g;
	if (stat(arg, &st) && strpbrk(arg, "*?[") && !glob(arg, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			gs_files_add(f, g.gl_pathv[i]);
		globfree(&g);
		return;
	}
	gs_files_add(f, arg);
}

/* A file noted in `of` (a bare name, beside it), as a path. */
static char *gs_beside_of(const char *of, const char *name)
{
	if (name[0] == '/' || !strchr(of, '/'))
		return gs_xstrdup(name);
	size_t d = (size_t)(strrchr(of, '/') - of);
	char *p = gs_xalloc(NULL, d + strlen(name) + 2);
	memcpy(p, of, d);
	p[d] = '/';
	strcpy(p + d + 1, name);
	return p;
}

/* The files a statistics file notes ("process_files"), added to f. */
static void gs_stats_noted(const char *path, gs_files_t *f)
{
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);
	json_t *pf = json_object_get(j, "process_files");
	size_t i;
	json_t *v;
	json_array_foreach(pf, i, v) {
		if (!json_is_string(v))
			continue;
		char *p = gs_beside_of(path, json_string_value(v));
		gs_files_add(f, p);
		free(p);
	}
	json_decref(j);
}

/* The files a trace notes (its last "graphshim_process_file" events), added to f. */
static void gs_trace_noted(const char *path, gs_files_t *f)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return;
	/* The notes are at the end: the last 1 MiB holds thousands. */
	if (fseek(fp, -(1L << 20), SEEK_END))
		rewind(fp);
	char line[8192];
	while (fgets(line, sizeof(line), fp)) {
		if (!strstr(line, "\"graphshim_process_file\""))
			continue;
		json_error_t jerr;
		size_t len = strlen(line);
		while (len && strchr(",\n\r ]", line[len - 1]))
			len--;
		json_t *ev = json_loadb(line, len, 0, &jerr);
		const char *name = json_string_value(json_object_get(json_object_get(ev, "args"), "file"));
		if (name) {
			char *p = gs_beside_of(path, name);
			gs_files_add(f, p);
			free(p);
		}
		json_decref(ev);
	}
	fclose(fp);
}

/* ------------------------------------------------------------------- run */

static bool gs_readable(const char *p)
{
	return access(p, R_OK) == 0;
}

/* Absolute path of the library to preload, or NULL (message printed). */
static char *gs_find_lib(const char *opt_lib)
{
	const char *given = opt_lib ? opt_lib : getenv("GRAPHSHIM_LIB");
	const char *what = opt_lib ? "--lib" : "GRAPHSHIM_LIB";
	if (given && *given) {
		/* A library named explicitly must exist: never fall back silently. */
		char *abs = realpath(given, NULL);
		if (!abs || !gs_readable(abs)) {
			gs_err("%s %s: %s", what, given, strerror(errno ? errno : EACCES));
			free(abs);
			return NULL;
		}
		return abs;
	}

	/* The build tree, then an installation moved (or DESTDIR-staged) as a
	 * whole: the library beside bin/ in lib/ or lib64/. */
	static const char *const rel[] = {"/../.libs/" GS_LIBNAME, "/../shim/.libs/" GS_LIBNAME,
					  "/.libs/" GS_LIBNAME, "/../lib/" GS_LIBNAME,
					  "/../lib64/" GS_LIBNAME};
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char cand[PATH_MAX + 64];
			snprintf(cand, sizeof(cand), "%s%s", exe, rel[i]);
			if (gs_readable(cand))
				return realpath(cand, NULL);
		}
	}
	const char *inst = GS_LIBDIR "/" GS_LIBNAME;
	if (gs_readable(inst))
		return realpath(inst, NULL);
	gs_err("cannot find %s: looked for $GRAPHSHIM_LIB, the build tree and ../lib next to %s, and %s "
	       "(set GRAPHSHIM_LIB or use --lib)",
	       GS_LIBNAME, n > 0 ? exe : "this program", inst);
	return NULL;
}

/* LD_PRELOAD with lib first (once); the result is allocated. */
static char *gs_preload_value(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return strdup(lib);
	/* ld.so separates entries with spaces or colons; drop earlier copies of lib. */
	size_t cap = strlen(lib) + strlen(old) + 2;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	strcpy(out, lib);
	char *copy = strdup(old);
	if (!copy) {
		free(out);
		return NULL;
	}
	char *save = NULL;
	for (char *tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		if (!strcmp(tok, lib))
			continue;
		strcat(out, ":");
		strcat(out, tok);
	}
	free(copy);
	return out;
}

static bool gs_log_level_ok(const char *v)
{
	static const char *const names[] = {"off", "error", "warn", "info", "debug",
					    "0",   "1",     "2",    "3",    "4"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(v, names[i]))
			return true;
	return false;
}

static bool gs_positive_int(const char *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	return *v && !*end && !errno && x >= 1 && x <= 1000000000;
}

static void gs_setenv(const char *name, const char *value)
{
	if (setenv(name, value, 1)) {
		gs_err("setenv %s: %s", name, strerror(errno));
		exit(GS_EXIT_BAD);
	}
}


/* Whole numbers from 1 to max. */
static bool gs_count_arg(const char *v, long long max)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	return *v && !*end && !errno && x >= 1 && x <= max;
}

/* An output of the program's: where it goes and what it is. */
typedef struct gs_output {
	const char *var;  /* GRAPHSHIM_STATS, GRAPHSHIM_TRACE */
	const char *opt;  /* --stats, --trace */
	const char *what; /* "statistics", "trace" */
	bool trace;
	char *path;       /* made absolute (%p kept); NULL when not asked for */
	bool from_env;    /* named by the environment, not by an option */
} gs_output_t;

/* p made absolute against the directory graphshim was started in (%p kept). */
static char *gs_abs_path(const char *p)
{
	char cwd[PATH_MAX];
	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return gs_xstrdup(p);
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	char *out = gs_xalloc(NULL, strlen(cwd) + strlen(p) + 2);
	sprintf(out, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", p);
	return out;
}

static const char *gs_out_label(const gs_output_t *o)
{
	return o->from_env ? o->var : o->opt;
}

/* The files an output at path notes (its run's other processes). */
static void gs_output_noted(const gs_output_t *o, const char *path, gs_files_t *f)
{
	if (o->trace)
		gs_trace_noted(path, f);
	else
		gs_stats_noted(path, f);
}

/*
 * Check an output before the program runs: its directory must exist and
 * be writable, and its name must be free (a file there is an earlier
 * run's, which would pass for this one's): with --overwrite such a file is
 * removed now, with the files of its run's other processes that it notes.
 * True when refused (the reason printed).
 */
static bool gs_output_check(gs_output_t *o, bool overwrite)
{
	const char *p = o->path;
	bool per_pid = strstr(p, "%p") != NULL;
	const char *slash = strrchr(p, '/');
	char *dir = gs_xalloc(NULL, strlen(p) + 2);
	if (!slash)
		strcpy(dir, "."); /* still relative: getcwd failed */
	else if (slash == p)
		strcpy(dir, "/");
	else {
		memcpy(dir, p, (size_t)(slash - p));
		dir[slash - p] = '\0';
	}
	struct stat st;
	bool bad = false;
	if (!strstr(dir, "%p")) {
		if (stat(dir, &st)) {
			gs_err("run: %s %s: the directory %s %s", gs_out_label(o), p, dir,
			       errno == ENOENT ? "does not exist" : strerror(errno));
			bad = true;
		} else if (!S_ISDIR(st.st_mode)) {
			gs_err("run: %s %s: %s is not a directory", gs_out_label(o), p, dir);
			bad = true;
		} else if (access(dir, W_OK | X_OK)) {
			gs_err("run: %s %s: the directory %s is not writable (%s)", gs_out_label(o), p,
			       dir, strerror(errno));
			bad = true;
		}
	}
	free(dir);
	if (bad || per_pid || lstat(p, &st))
		return bad; /* a name per process, or a free one */
	if (S_ISLNK(st.st_mode)) {
		gs_err("run: %s %s: is a symbolic link, which graphshim never writes through; "
		       "choose another name", gs_out_label(o), p);
		return true;
	}
	if (S_ISDIR(st.st_mode)) {
		gs_err("run: %s %s: is a directory; name a file", gs_out_label(o), p);
		return true;
	}
	if (!S_ISREG(st.st_mode)) {
		gs_err("run: %s %s: exists and is not a regular file", gs_out_label(o), p);
		return true;
	}
	if (!overwrite) {
		gs_err("run: %s %s: exists: the %s of an earlier run would pass for this "
		       "run's; remove it, choose another name, or give --overwrite to replace it",
		       gs_out_label(o), p, o->what);
		return true;
	}
	gs_files_t noted = {0};
	gs_output_noted(o, p, &noted);
	if (unlink(p)) {
		gs_err("run: --overwrite: cannot remove %s: %s", p, strerror(errno));
		gs_files_free(&noted);
		return true;
	}
	for (size_t i = 0; i < noted.n; i++)
		if (unlink(noted.v[i]) && errno != ENOENT)
			gs_err("run: --overwrite: cannot remove %s (noted in %s): %s", noted.v[i], p,
			       strerror(errno));
	gs_files_free(&noted);
	return false;
}

/* "NAME.*.part": what processes that were killed left unfinished. */
static void gs_output_parts(const gs_output_t *o, const char *pattern_base)
{
	char *pat = gs_xalloc(NULL, strlen(pattern_base) + 16);
	sprintf(pat, "%s.*.part", pattern_base);
	glob_t g;
	if (!glob(pat, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			gs_err("%s left unfinished in %s by a process that was killed before it could "
			       "finish it%s", o->what, g.gl_pathv[i],
			       o->trace ? " (graphshim trace summarize reads it)" : "");
		globfree(&g);
	}
	free(pat);
}

/* After the program: where the outputs went, or why there are none. */
static void gs_output_report(const gs_output_t *o, int status)
{
	const char *p = o->path;
	if (strstr(p, "%p")) {
		/* One file per process: say so only when there is none at all. */
		char *pat = gs_xstrdup(p);
		for (char *c = strstr(pat, "%p"); c; c = strstr(c, "%p")) {
			c[0] = '*';
			memmove(c + 1, c + 2, strlen(c + 2) + 1);
		}
		glob_t g;
		bool none = glob(pat, 0, NULL, &g) != 0;
		if (!none)
			globfree(&g);
		if (none)
			gs_err("no %s were written (%s): no process made a GPU call under graphshim, "
			       "or the reason is above", o->what, p);
		free(pat);
		return;
	}
	gs_output_parts(o, p);
	struct stat st;
	if (stat(p, &st)) {
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			gs_err("no %s at %s: the program was killed by SIGKILL, which no process can "
			       "catch", o->what, p);
		else
			gs_err("no %s at %s: no process made a GPU call under graphshim (a launch, a "
			       "copy or a synchronization), or the reason is above", o->what, p);
		return;
	}
	gs_files_t noted = {0};
	gs_output_noted(o, p, &noted);
	if (noted.n) {
		fprintf(stderr, "graphshim: the %s of %zu processes: %s", o->what, noted.n + 1, p);
		for (size_t i = 0; i < noted.n; i++)
			fprintf(stderr, ", %s", noted.v[i]);
		fprintf(stderr, " (graphshim %s reads them together)\n",
			o->trace ? "trace summarize" : "compare");
	}
	gs_files_free(&noted);
}

/* The program being run, for the forwarding handler. */
static volatile pid_t gs_run_child;

/*
 * Pass a signal on to the program.  One the terminal sent (Ctrl-C) went to
 * the whole foreground process group, the program included: not twice.
 */
static void gs_run_forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int e = errno;
	if (!(si && (si->si_code == SI_KERNEL || si->si_pid == gs_run_child)) && gs_run_child > 0)
		kill(gs_run_child, sig);
	errno = e;
}

static const int gs_run_fwd[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define GS_RUN_NFWD (sizeof(gs_run_fwd) / sizeof(gs_run_fwd[0]))

/* Run argv as a child, passing signals on; its wait status, or -1 (it could not start). */
static int gs_run_child_wait(char **argv, int *exec_errno)
{
	sigset_t fwd, old;
	sigemptyset(&fwd);
	for (size_t i = 0; i < GS_RUN_NFWD; i++)
		sigaddset(&fwd, gs_run_fwd[i]);
	sigprocmask(SIG_BLOCK, &fwd, &old);
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		gs_err("run: pipe: %s", strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		gs_err("run: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		/* graphshim run itself killed outright: the program is asked to end (and writes its files). */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(pfd[1], &e, sizeof(e));
		(void)w;
		_exit(e == ENOENT ? 127 : 126);
	}
	close(pfd[1]);
	gs_run_child = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = gs_run_forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < GS_RUN_NFWD; i++) {
		/* A signal ignored here (a background job's SIGINT) stays so: the
		 * program inherited that, and nothing is to be passed on. */
		struct sigaction cur;
		if (!sigaction(gs_run_fwd[i], NULL, &cur) && cur.sa_handler == SIG_IGN)
			continue;
		sigaction(gs_run_fwd[i], &sa, NULL);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	int e = 0;
	ssize_t n;
	do
		n = read(pfd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	*exec_errno = n == (ssize_t)sizeof(e) ? e : 0;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			gs_err("run: waitpid: %s", strerror(errno));
			return -1;
		}
	gs_run_child = 0;
	return status;
}

static int gs_cmd_run(int argc, char **argv)
{
	const char *lib = NULL;
	bool overwrite = false, disable = false;
	gs_output_t outs[2] = {
		{.var = "GRAPHSHIM_STATS", .opt = "--stats", .what = "statistics", .from_env = true},
		{.var = "GRAPHSHIM_TRACE", .opt = "--trace", .what = "trace", .trace = true,
		 .from_env = true},
	};
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (gs_is_help(a)) {
			fputs(gs_usage_run, stdout);
			return GS_EXIT_OK;
		} else if ((v = gs_opt_value(argc, argv, &i, "--stats"))) {
			gs_setenv("GRAPHSHIM_STATS", v);
			outs[0].from_env = false;
		} else if ((v = gs_opt_value(argc, argv, &i, "--trace-max"))) {
			if (!gs_positive_int(v)) {
				gs_err("--trace-max %s: expected an integer from 1 to 1000000000", v);
				return GS_EXIT_BAD;
			}
			gs_setenv("GRAPHSHIM_TRACE_MAX", v);
		} else if ((v = gs_opt_value(argc, argv, &i, "--trace"))) {
			gs_setenv("GRAPHSHIM_TRACE", v);
			outs[1].from_env = false;
		} else if ((v = gs_opt_value(argc, argv, &i, "--steps"))) {
			if (!gs_count_arg(v, 1000000000000LL)) {
				gs_err("--steps %s: expected an integer from 1 to 1000000000000", v);
				return GS_EXIT_BAD;
			}
			gs_setenv("GRAPHSHIM_STEPS", v);
		} else if ((v = gs_opt_value(argc, argv, &i, "--log"))) {
			if (!gs_log_level_ok(v)) {
				gs_err("--log %s: expected off, error, warn, info, debug or 0-4", v);
				return GS_EXIT_BAD;
			}
			gs_setenv("GRAPHSHIM_LOG", v);
		} else if ((v = gs_opt_value(argc, argv, &i, "--lib"))) {
			lib = v;
		} else if (!strcmp(a, "--summary")) {
			gs_setenv("GRAPHSHIM_SUMMARY", "1");
		} else if (!strcmp(a, "--overwrite")) {
			overwrite = true;
			gs_setenv("GRAPHSHIM_OVERWRITE", "1");
		} else if (!strcmp(a, "--disable")) {
			disable = true;
			gs_setenv("GRAPHSHIM_ENABLE", "0");
		} else {
			gs_err("run: unknown option %s (see graphshim run --help)", a);
			return GS_EXIT_BAD;
		}
	}
	if (i >= argc) {
		gs_err("run: no program given (graphshim run [OPTIONS] -- PROGRAM [ARGS...])");
		return GS_EXIT_BAD;
	}
	char *path = gs_find_lib(lib);
	if (!path)
		return GS_EXIT_BAD;

	/*
	 * The outputs, from the options or the environment: absolute (the
	 * program may change directory), checked before anything runs.
	 */
	bool refused = false;
	for (size_t k = 0; k < 2; k++) {
		gs_output_t *o = &outs[k];
		const char *v = getenv(o->var);
		if (!v || !*v)
			continue;
		o->path = gs_abs_path(v);
		gs_setenv(o->var, o->path);
		if (disable)
			continue;
		refused |= gs_output_check(o, overwrite);
	}
	if (refused) {
		free(path);
		for (size_t k = 0; k < 2; k++)
			free(outs[k].path);
		return GS_EXIT_BAD;
	}
	if (disable && (outs[0].path || outs[1].path))
		gs_err("run: --disable: the shim passes every call through and writes no statistics "
		       "or trace");
	char *pre = gs_preload_value(path);
	if (!pre) {
		gs_err("out of memory");
		exit(GS_EXIT_BAD);
	}
	gs_setenv("LD_PRELOAD", pre);
	free(pre);
	free(path);

	int exec_errno = 0;
	int status = gs_run_child_wait(&argv[i], &exec_errno);
	for (size_t k = 0; k < 2; k++) {
		if (status >= 0 && !exec_errno && outs[k].path && !disable)
			gs_output_report(&outs[k], status);
		free(outs[k].path);
	}
	if (status < 0)
		return GS_EXIT_BAD;
	if (exec_errno) {
		if (exec_errno == ENOENT) {
			gs_err("%s: command not found", argv[i]);
			return 127;
		}
		gs_err("%s: %s", argv[i], strerror(exec_errno));
		return 126;
	}
	if (WIFSIGNALED(status)) {
		/* End as the program ended, so that the caller sees the same. */
		int sig = WTERMSIG(status);
		struct rlimit nocore = {0, 0};
		setrlimit(RLIMIT_CORE, &nocore); /* the program dumped its own, if any */
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		fflush(NULL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : GS_EXIT_BAD;
}

/* --------------------------------------------------- a small string table */

/*
 * Counts keyed by string: enough for the summaries here (keys are sequence
 * ids, reasons, API names), with an open-addressed index so that a trace
 * of a million events is read in linear time.
 */
/* A sequence's figures (gs_ent_t.v), as the trace gives them. */
enum {
	GS_SQ_LENGTH,   /* launches in the sequence */
	GS_SQ_REPLAYS,  /* passes replayed ("pass" events) */
	GS_SQ_EAGER,    /* passes sent eagerly by the gate */
	GS_SQ_GRAPHS,   /* graph launches ("replay" events: one per chunk) */
	GS_SQ_REPLAYED, /* launches those covered */
	GS_SQ_MISMATCH,
	GS_SQ_PATCHES,
	GS_SQ_VARIANTS, /* variants built ("variant" events with status 0) */
	GS_SQ_VREPLAYS, /* graph launches of a variant ("replay" events that say so) */
	GS_SQ_PID,
	GS_SQ_N
};

typedef struct gs_ent {
	char *key;
	long long n;     /* events */
	long long aux;   /* a second figure (held launches) */
	long long v[GS_SQ_N]; /* sequences */
	char *s1, *s2;   /* stream, how (sequences) */
	char *gate;      /* sequences: the gate's last choice and its medians */
	char *choice;    /* sequences: the gate's last choice ("eager", "replay") */
	char *kernel;    /* sequences: the first kernel's name */
	double ms;       /* build time */
	int state;       /* sequences: 0 learned, 1 built, 2 build failed, 3 retired */
	struct gs_tab *sub; /* per-key breakdown (fields, APIs, statuses) */
	struct gs_tab *sub2; /* a second one (kernels) */
} gs_ent_t;

typedef struct gs_tab {
	gs_ent_t *e;
	size_t n, cap;
	size_t *idx; /* slot -> entry index + 1 */
	size_t icap;
} gs_tab_t;

static size_t gs_strhash(const char *s)
{
	size_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static gs_ent_t *gs_tab_get(gs_tab_t *t, const char *key)
{
	if (t->icap == 0 || t->n * 2 >= t->icap) {
		size_t icap = t->icap ? t->icap * 2 : 64;
		size_t *idx = gs_xalloc(NULL, icap * sizeof(*idx));
		memset(idx, 0, icap * sizeof(*idx));
		for (size_t k = 0; k < t->n; k++) {
			size_t s = gs_strhash(t->e[k].key) & (icap - 1);
			while (idx[s])
				s = (s + 1) & (icap - 1);
			idx[s] = k + 1;
		}
		free(t->idx);
		t->idx = idx;
		t->icap = icap;
	}
	size_t s = gs_strhash(key) & (t->icap - 1);
	while (t->idx[s]) {
		gs_ent_t *e = &t->e[t->idx[s] - 1];
		if (!strcmp(e->key, key))
			return e;
		s = (s + 1) & (t->icap - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->e = gs_xalloc(t->e, t->cap * sizeof(*t->e));
	}
	gs_ent_t *e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->key = gs_xalloc(NULL, strlen(key) + 1);
	strcpy(e->key, key);
	t->idx[s] = ++t->n;
	return e;
}

static void gs_tab_free(gs_tab_t *t)
{
	for (size_t k = 0; k < t->n; k++) {
		free(t->e[k].key);
		free(t->e[k].s1);
		free(t->e[k].s2);
		free(t->e[k].gate);
		free(t->e[k].choice);
		free(t->e[k].kernel);
		if (t->e[k].sub) {
			gs_tab_free(t->e[k].sub);
			free(t->e[k].sub);
		}
		if (t->e[k].sub2) {
			gs_tab_free(t->e[k].sub2);
			free(t->e[k].sub2);
		}
	}
	free(t->e);
	free(t->idx);
	memset(t, 0, sizeof(*t));
}

static void gs_count_in(struct gs_tab **t, const char *key)
{
	if (!*t) {
		*t = gs_xalloc(NULL, sizeof(**t));
		memset(*t, 0, sizeof(**t));
	}
	gs_tab_get(*t, key)->n++;
}

static void gs_count_sub(gs_ent_t *e, const char *key)
{
	gs_count_in(&e->sub, key);
}

/* The most frequent key of a breakdown (first seen wins ties). */
static const gs_ent_t *gs_tab_top(const gs_tab_t *t)
{
	const gs_ent_t *best = NULL;
	for (size_t k = 0; t && k < t->n; k++)
		if (!best || t->e[k].n > best->n)
			best = &t->e[k];
	return best;
}

static int gs_ent_cmp_n(const void *a, const void *b)
{
	const gs_ent_t *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->key, y->key);
}

/* Set *dst to v once (the first value wins). */
static void gs_setstr(char **dst, const char *v)
{
	if (*dst || !v)
		return;
	*dst = gs_xstrdup(v);
}

/* Set *dst to v (the last value wins). */
static void gs_putstr(char **dst, const char *v)
{
	if (!v)
		return;
	free(*dst);
	*dst = gs_xstrdup(v);
}

/* -------------------------------------------------------- trace summarize */

/* Launch states as the trace names them; the last, "other", anything else. */
static const char *const gs_states[] = {"eager",    "held",     "released", "gated",
					"replayed", "boundary", "other"};
enum { GS_ST_EAGER, GS_ST_HELD, GS_ST_RELEASED, GS_ST_GATED, GS_ST_N = 7 };

typedef struct gs_summary {
	long long events, meta, ignored;
	long long launches; /* launches that arrived: eager and held (a launch is traced once then) */
	long long graphs, replayed; /* graph launches (replay events), and launches they covered */
	long long variants, variant_replays; /* variants built, and graph launches of one */
	long long shared;   /* graph launches made while several steps still matched */
	long long passes;   /* pass events: traces of this version have them */
	long long mismatches, flushes;
	long long forgiven; /* mismatches not charged toward retirement (forgiven events) */
	long long gate_kept; /* watched moves that kept a decision (gate_kept events) */
	long long gate_inherited; /* sequences that took a like one's verdict (gate_inherited events) */
	long long gate_trusted; /* sequences that replayed without a first trial (gate_trusted events) */
	long long cuts;     /* chunks ended where the program waited without a call (cut events) */
	long long idle_eager; /* sequences sent eager by waits for the idle watchdog (idle_eager events) */
	long long by_state[GS_ST_N];
	long long cap, dropped;
	int files, closed, repaired; /* files read; closed ones; repaired ones */
	char *ended_by;     /* a signal's name when a process was ended by one */
	gs_tab_t seqs, mism, flush, fallback, pids;
	gs_files_t noted;   /* the run's other files that the traces note */
} gs_summary_t;

static const char *gs_jstr(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

static long long gs_jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? (long long)json_number_value(v) : 0;
}

static void gs_summary_free(gs_summary_t *S)
{
	gs_tab_free(&S->seqs);
	gs_tab_free(&S->mism);
	gs_tab_free(&S->flush);
	gs_tab_free(&S->fallback);
	gs_tab_free(&S->pids);
	gs_files_free(&S->noted);
	free(S->ended_by);
	memset(S, 0, sizeof(*S));
}

/* The sequence an event is about: "pid id stream" (one shape on two streams is two). */
static gs_ent_t *gs_summary_seq(gs_summary_t *S, json_t *ev, json_t *args)
{
	char key[200];
	snprintf(key, sizeof(key), "%lld %.60s %.60s", gs_jint(ev, "pid"), gs_jstr(args, "id", "?"),
		 gs_jstr(args, "stream", "?"));
	gs_ent_t *s = gs_tab_get(&S->seqs, key);
	s->v[GS_SQ_PID] = gs_jint(ev, "pid");
	gs_setstr(&s->s1, gs_jstr(args, "stream", NULL));
	return s;
}

static void gs_summary_event(gs_summary_t *S, json_t *ev, const char *path)
{
	const char *name = gs_jstr(ev, "name", NULL), *ph = gs_jstr(ev, "ph", NULL);
	if (!json_is_object(ev) || !name || !ph) {
		S->ignored++;
		return;
	}
	json_t *args = json_object_get(ev, "args");
	if (!strcmp(ph, "M")) {
		S->meta++;
		if (!strcmp(name, "graphshim_trace")) {
			S->closed++;
			S->cap = gs_jint(args, "cap");
			S->dropped += gs_jint(args, "dropped");
			const char *by = gs_jstr(args, "ended_by", "exit");
			if (strcmp(by, "exit"))
				gs_setstr(&S->ended_by, by);
		} else if (!strcmp(name, "graphshim_process_file")) {
			const char *f = gs_jstr(args, "file", NULL);
			if (f) {
				char *p = gs_beside_of(path, f);
				gs_files_add(&S->noted, p);
				free(p);
			}
		} else if (!strcmp(name, "process_name")) {
			char pid[32];
			snprintf(pid, sizeof(pid), "%lld", gs_jint(ev, "pid"));
			gs_tab_get(&S->pids, pid);
		}
		return;
	}
	S->events++;
	const char *cat = gs_jstr(ev, "cat", "");
	if (!strcmp(cat, "launch")) {
		const char *st = gs_jstr(args, "state", "other");
		size_t k = 0;
		while (k < GS_ST_N - 1 && strcmp(gs_states[k], st))
			k++;
		S->by_state[k]++;
		/* A released or gated launch was traced once already, when it was held. */
		if (k != GS_ST_RELEASED && k != GS_ST_GATED)
			S->launches++;
		return;
	}
	if (!strcmp(name, "learned") || !strcmp(name, "built") || !strcmp(name, "replay") ||
	    !strcmp(name, "variant") || !strcmp(name, "pass") || !strcmp(name, "retired") ||
	    !strcmp(name, "gate") || (!strcmp(name, "mismatch") && json_object_get(args, "id"))) {
		gs_ent_t *s = gs_summary_seq(S, ev, args);
		/* A replay's or a variant's own length is its chunk's; the sequence's is seq_length. */
		if (!strcmp(name, "replay") || !strcmp(name, "variant")) {
			if (json_object_get(args, "seq_length"))
				s->v[GS_SQ_LENGTH] = gs_jint(args, "seq_length");
		} else if (json_object_get(args, "length")) {
			s->v[GS_SQ_LENGTH] = gs_jint(args, "length");
		}
		if (!strcmp(name, "learned"))
			gs_setstr(&s->s2, gs_jstr(args, "how", NULL));
		else if (!strcmp(name, "built")) {
			s->ms += json_number_value(json_object_get(args, "build_ms"));
			if (s->state < 3)
				s->state = gs_jint(args, "status") ? 2 : 1;
			gs_setstr(&s->kernel, gs_jstr(args, "kernel", NULL));
		} else if (!strcmp(name, "replay")) {
			s->v[GS_SQ_GRAPHS]++;
			s->v[GS_SQ_REPLAYED] += gs_jint(args, "length");
			s->v[GS_SQ_PATCHES] += gs_jint(args, "patches");
			S->graphs++;
			S->replayed += gs_jint(args, "length");
			if (json_is_true(json_object_get(args, "variant"))) {
				s->v[GS_SQ_VREPLAYS]++;
				S->variant_replays++;
			}
			if (json_is_true(json_object_get(args, "shared")))
				S->shared++;
		} else if (!strcmp(name, "variant")) {
			if (!gs_jint(args, "status")) {
				s->v[GS_SQ_VARIANTS]++;
				S->variants++;
			}
		} else if (!strcmp(name, "pass")) {
			S->passes++;
			s->v[strcmp(gs_jstr(args, "how", ""), "eager") ? GS_SQ_REPLAYS : GS_SQ_EAGER]++;
		} else if (!strcmp(name, "mismatch")) {
			s->v[GS_SQ_MISMATCH]++;
		} else if (!strcmp(name, "retired")) {
			s->state = 3;
		} else if (!strcmp(name, "gate")) {
			char g[96];
			snprintf(g, sizeof(g), "%.8s %.0f/%.0f", gs_jstr(args, "choice", "?"),
				 json_number_value(json_object_get(args, "eager_us")),
				 json_number_value(json_object_get(args, "replay_us")));
			gs_putstr(&s->gate, g);
			gs_putstr(&s->choice, gs_jstr(args, "choice", NULL));
		}
	}
	if (!strcmp(name, "mismatch")) {
		S->mismatches++;
		gs_ent_t *m = gs_tab_get(&S->mism, gs_jstr(args, "reason", "?"));
		m->n++;
		gs_count_sub(m, gs_jstr(args, "field", "(none)"));
		gs_count_in(&m->sub2, gs_jstr(args, "kernel", "(unnamed)"));
	} else if (!strcmp(name, "forgiven")) {
		S->forgiven++;
	} else if (!strcmp(name, "gate_kept")) {
		S->gate_kept++;
	} else if (!strcmp(name, "gate_inherited")) {
		S->gate_inherited++;
	} else if (!strcmp(name, "gate_trusted")) {
		S->gate_trusted++;
	} else if (!strcmp(name, "cut")) {
		S->cuts++;
	} else if (!strcmp(name, "idle_eager")) {
		S->idle_eager++;
	} else if (!strcmp(name, "flush")) {
		S->flushes++;
		gs_ent_t *f = gs_tab_get(&S->flush, gs_jstr(args, "reason", "?"));
		f->n++;
		f->aux += gs_jint(args, "nheld");
		gs_count_sub(f, gs_jstr(args, "api", "(none)"));
		if (gs_jint(args, "nheld"))
			gs_count_in(&f->sub2, gs_jstr(args, "kernel", "(unnamed)"));
	} else if (!strcmp(name, "fallback")) {
		gs_ent_t *f = gs_tab_get(&S->fallback, gs_jstr(args, "what", "?"));
		char st[32];
		f->n++;
		snprintf(st, sizeof(st), "%lld", gs_jint(args, "status"));
		gs_count_sub(f, st);
	}
}

/* A note under a table: "  (N what)" where N is not 0. */
static void gs_note_count(long long n, const char *what)
{
	if (n)
		printf("  (%lld %s)\n", n, what);
}

/* Add the breakdown `from` into *to. */
static void gs_tab_merge_sub(struct gs_tab **to, const gs_tab_t *from)
{
	for (size_t k = 0; from && k < from->n; k++) {
		if (!*to) {
			*to = gs_xalloc(NULL, sizeof(**to));
			memset(*to, 0, sizeof(**to));
		}
		gs_tab_get(*to, from->e[k].key)->n += from->e[k].n;
	}
}

static void gs_tab_merge(gs_tab_t *to, const gs_tab_t *from)
{
	for (size_t k = 0; k < from->n; k++) {
		const gs_ent_t *f = &from->e[k];
		gs_ent_t *t = gs_tab_get(to, f->key);
		t->n += f->n;
		t->aux += f->aux;
		for (int i = 0; i < GS_SQ_N; i++)
			t->v[i] = i == GS_SQ_LENGTH || i == GS_SQ_PID ? (f->v[i] ? f->v[i] : t->v[i])
								     : t->v[i] + f->v[i];
		gs_setstr(&t->s1, f->s1);
		gs_setstr(&t->s2, f->s2);
		gs_putstr(&t->gate, f->gate);
		gs_putstr(&t->choice, f->choice);
		gs_setstr(&t->kernel, f->kernel);
		t->ms += f->ms;
		if (f->state > t->state)
			t->state = f->state;
		gs_tab_merge_sub(&t->sub, f->sub);
		gs_tab_merge_sub(&t->sub2, f->sub2);
	}
}

/* One file's summary into the run's. */
static void gs_summary_merge(gs_summary_t *S, gs_summary_t *F)
{
	S->events += F->events;
	S->meta += F->meta;
	S->ignored += F->ignored;
	S->launches += F->launches;
	S->graphs += F->graphs;
	S->replayed += F->replayed;
	S->variants += F->variants;
	S->variant_replays += F->variant_replays;
	S->shared += F->shared;
	S->passes += F->passes;
	S->mismatches += F->mismatches;
	S->forgiven += F->forgiven;
	S->gate_kept += F->gate_kept;
	S->gate_inherited += F->gate_inherited;
	S->gate_trusted += F->gate_trusted;
	S->cuts += F->cuts;
	S->idle_eager += F->idle_eager;
	S->flushes += F->flushes;
	for (int k = 0; k < GS_ST_N; k++)
		S->by_state[k] += F->by_state[k];
	if (F->cap > S->cap)
		S->cap = F->cap;
	S->dropped += F->dropped;
	S->files++;
	S->closed += F->closed;
	gs_setstr(&S->ended_by, F->ended_by);
	gs_tab_merge(&S->seqs, &F->seqs);
	gs_tab_merge(&S->mism, &F->mism);
	gs_tab_merge(&S->flush, &F->flush);
	gs_tab_merge(&S->fallback, &F->fallback);
	gs_tab_merge(&S->pids, &F->pids);
	for (size_t i = 0; i < F->noted.n; i++)
		gs_files_add(&S->noted, F->noted.v[i]);
}

/* The file into memory, NUL-terminated, with room for a repair. */
static char *gs_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		gs_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *b = gs_xalloc(NULL, cap);
	for (;;) {
		if (cap - n < 8)
			b = gs_xalloc(b, cap *= 2);
		size_t r = fread(b + n, 1, cap - n - 4, f);
		n += r;
		if (r == 0)
			break;
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		gs_err("%s: read error", path);
		free(b);
		return NULL;
	}
	b[n] = '\0';
	*len = n;
	return b;
}

/*
 * Repair a trace left by a process that did not close it: drop trailing
 * white space and a trailing comma, and close the array.  Returns true when
 * something was repaired.
 */
static bool gs_trace_repair(char *b, size_t *len)
{
	size_t n = *len;
	while (n && strchr(" \t\r\n", b[n - 1]))
		n--;
	size_t start = 0;
	while (start < n && strchr(" \t\r\n", b[start]))
		start++;
	if (start == n || b[start] != '[' || b[n - 1] == ']')
		return false;
	if (b[n - 1] == ',')
		n--;
	b[n++] = ']';
	b[n] = '\0';
	*len = n;
	return true;
}

/*
 * Parse the trace into S.  Traces written by graphshim hold one event per
 * line, so they are parsed line by line (memory stays small for a million
 * events); anything else, or a line that is not a whole event, is parsed
 * as one repaired document, which also gives a precise error position.
 */
static bool gs_trace_load(const char *path, gs_summary_t *S, bool *repaired)
{
	size_t len;
	char *b = gs_slurp(path, &len);
	if (!b)
		return true;
	*repaired = false;
	size_t p = 0;
	while (p < len && strchr(" \t\r\n", b[p]))
		p++;
	if (p == len) {
		gs_err("%s: empty file, not a trace", path);
		free(b);
		return true;
	}

	/* Line mode: "[" alone on the first line. */
	char *nl = strchr(b + p, '\n');
	bool linemode = nl && b[p] == '[';
	for (char *q = b + p + 1; linemode && q < nl; q++)
		if (!strchr(" \t\r", *q))
			linemode = false;
	if (linemode) {
		gs_summary_t L = {0};
		bool ended = false, ok = true;
		for (char *line = nl + 1; ok && line < b + len;) {
			char *end = strchr(line, '\n');
			if (!end)
				end = b + len;
			char *e = end;
			while (e > line && strchr(" \t\r", e[-1]))
				e--;
			char *s = line;
			while (s < e && strchr(" \t", *s))
				s++;
			line = end + 1;
			if (s == e)
				continue;
			if (ended) {
				ok = false; /* text after the closing bracket */
				break;
			}
			if (e[-1] == ']' && e - s == 1) {
				ended = true;
				continue;
			}
			if (e[-1] == ',')
				e--;
			json_error_t jerr;
			json_t *ev = json_loadb(s, (size_t)(e - s), 0, &jerr);
			if (!ev || !json_is_object(ev)) {
				json_decref(ev);
				ok = false;
				break;
			}
			gs_summary_event(&L, ev, path);
			json_decref(ev);
		}
		if (ok) {
			*S = L;
			*repaired = !ended;
			free(b);
			return false;
		}
		gs_summary_free(&L);
	}

	*repaired = gs_trace_repair(b, &len);
	json_error_t jerr;
	json_t *doc = json_loadb(b, len, 0, &jerr);
	free(b);
	if (!doc) {
		gs_err("%s: not valid JSON%s at line %d, column %d: %s", path,
		       *repaired ? " (even after closing the array)" : "", jerr.line, jerr.column,
		       jerr.text);
		return true;
	}
	json_t *arr = doc;
	if (json_is_object(doc))
		arr = json_object_get(doc, "traceEvents"); /* the object form */
	if (!json_is_array(arr)) {
		gs_err("%s: not a trace: expected a JSON array of events or an object with "
		       "\"traceEvents\"",
		       path);
		json_decref(doc);
		return true;
	}
	size_t i;
	json_t *ev;
	json_array_foreach(arr, i, ev) gs_summary_event(S, ev, path);
	json_decref(doc);
	return false;
}


static void gs_print_rule(int n)
{
	while (n-- > 0)
		putchar('-');
	putchar('\n');
}

/* A statistics file of a run, read for --check and compare. */
static json_t *gs_json_file(const char *file)
{
	json_error_t jerr;
	json_t *j = json_load_file(file, 0, &jerr);
	if (!j)
		gs_err("%s: %s", file,
		       access(file, F_OK) ? strerror(errno) : jerr.text);
	return j;
}

static long long gs_jcount(json_t *c, const char *key)
{
	json_t *v = json_object_get(c, key);
	return json_is_integer(v) ? json_integer_value(v) : 0;
}

/*
 * --check: every figure the trace and the statistics of the same run
 * share.  0 when all agree, 1 when one differs, 2 when they cannot be
 * compared (the message says why).
 */
static int gs_summary_check(const gs_summary_t *S, const char *arg, bool single)
{
	if (S->dropped) {
		gs_err("--check: the trace dropped %lld events at its cap: its figures cannot agree "
		       "(raise GRAPHSHIM_TRACE_MAX)", S->dropped);
		return GS_EXIT_BAD;
	}
	if (S->closed < S->files) {
		gs_err("--check: a trace was not finished (its process was killed?): its figures "
		       "stop where it does");
		return GS_EXIT_BAD;
	}
	gs_files_t files = {0};
	gs_files_arg(&files, arg);
	for (size_t i = 0; !single && i < files.n; i++)
		gs_stats_noted(files.v[i], &files);
	enum { C_LAUNCHES, C_PASSED, C_HELD, C_RELEASED, C_GATED, C_REPLAYED, C_REPLAYS,
	       C_VARIANTS, C_VARIANT_REPLAYS, C_MISMATCHES, C_FLUSHES, C_N };
	static const char *const cname[C_N] = {"launches", "passed",     "held",
					       "released", "gated",      "replayed",
					       "replays",  "variants",   "variant_replays",
					       "mismatches", "flushes"};
	long long stat[C_N] = {0};
	gs_tab_t seqs = {0}, pids = {0};
	bool truncated = false;
	char *signalled = NULL; /* a process of the statistics was ended by a signal */
	int rc = GS_EXIT_OK;
	for (size_t i = 0; i < files.n; i++) {
		json_t *j = gs_json_file(files.v[i]);
		json_t *c = json_object_get(j, "counters");
		if (!j || !json_is_object(c)) {
			if (j)
				gs_err("%s: not a statistics file (no counters)", files.v[i]);
			json_decref(j);
			rc = GS_EXIT_BAD;
			continue;
		}
		for (int k = 0; k < C_N; k++)
			stat[k] += gs_jcount(c, cname[k]);
		char pid[32];
		snprintf(pid, sizeof(pid), "%lld", gs_jint(j, "pid"));
		gs_tab_get(&pids, pid);
		truncated |= json_is_true(json_object_get(j, "sequences_truncated"));
		if (strcmp(gs_jstr(j, "ended_by", "exit"), "exit"))
			gs_setstr(&signalled, gs_jstr(j, "ended_by", NULL));
		size_t k;
		json_t *q;
		json_array_foreach(json_object_get(j, "sequences"), k, q) {
			char key[200];
			snprintf(key, sizeof(key), "%s %.60s %.60s", pid, gs_jstr(q, "id", "?"),
				 gs_jstr(q, "stream", "?"));
			/* A stream handle used again can hold the same shape twice (one gone). */
			gs_ent_t *e = gs_tab_get(&seqs, key);
			e->n++;
			e->v[GS_SQ_LENGTH] = gs_jint(q, "length");
			e->v[GS_SQ_REPLAYS] += gs_jint(q, "replays");
			e->v[GS_SQ_EAGER] += gs_jint(q, "eager_passes");
			e->v[GS_SQ_MISMATCH] += gs_jint(q, "mismatches");
			e->v[GS_SQ_PATCHES] += gs_jint(q, "patches");
			if (!json_is_true(json_object_get(q, "gone")) || !e->choice)
				gs_putstr(&e->choice, gs_jstr(q, "gate", NULL));
		}
		json_decref(j);
	}
	if (rc) {
		gs_files_free(&files);
		gs_tab_free(&seqs);
		gs_tab_free(&pids);
		return rc;
	}
	/* The same processes on both sides. */
	bool same = pids.n == S->pids.n;
	for (size_t k = 0; same && k < pids.n; k++) {
		bool found = false;
		for (size_t m = 0; m < S->pids.n && !found; m++)
			found = !strcmp(pids.e[k].key, S->pids.e[m].key);
		same = found;
	}
	if (!same) {
		gs_err("--check: %s and the trace are not of the same processes (%zu and %zu "
		       "processes, or other pids): give the statistics of this run", arg, pids.n,
		       S->pids.n);
		gs_files_free(&files);
		gs_tab_free(&seqs);
		gs_tab_free(&pids);
		return GS_EXIT_BAD;
	}
	long long tr[C_N] = {S->launches,
			     S->by_state[GS_ST_EAGER],
			     S->by_state[GS_ST_HELD],
			     S->by_state[GS_ST_RELEASED],
			     S->by_state[GS_ST_GATED],
			     S->replayed,
			     S->graphs,
			     S->variants,
			     S->variant_replays,
			     S->mismatches,
			     S->flushes};
	int agree = 0, differ = 0, inflight = 0;
	printf("\ncheck against %s", files.v[0]);
	for (size_t i = 1; i < files.n; i++)
		printf("%s%s", i == 1 ? " (+ " : ", ", files.v[i]);
	printf("%s\n", files.n > 1 ? ")" : "");
	/*
	 * A process ended by a signal wrote its figures at that moment, while
	 * its other threads went on and the interrupted one was in the middle
	 * of a call (counted, not yet traced): there the figures may differ by
	 * what was in flight, a few launches, which is said and allowed.
	 */
	for (int k = 0; k < C_N; k++) {
		long long d = tr[k] > stat[k] ? tr[k] - stat[k] : stat[k] - tr[k];
		if (!d) {
			agree++;
			continue;
		}
		if (signalled && d <= 2 + stat[k] / 1000) {
			inflight++;
			printf("  in flight %-27s trace %lld, statistics %lld\n", cname[k], tr[k], stat[k]);
			continue;
		}
		differ++;
		printf("  DIFFERS  %-28s trace %lld, statistics %lld\n", cname[k], tr[k], stat[k]);
	}
	double ct = S->launches ? (double)S->replayed / (double)S->launches : 0;
	double cs = stat[C_LAUNCHES] ? (double)stat[C_REPLAYED] / (double)stat[C_LAUNCHES] : 0;
	if (fabs(ct - cs) < 5e-7)
		agree++;
	else if (signalled && fabs(ct - cs) < 2e-3)
		inflight++;
	else {
		differ++;
		printf("  DIFFERS  %-28s trace %.4f%%, statistics %.4f%%\n", "coverage", 100 * ct,
		       100 * cs);
	}
	size_t matched = 0;
	for (size_t k = 0; !truncated && k < seqs.n; k++) {
		const gs_ent_t *e = &seqs.e[k], *t = NULL;
		for (size_t m = 0; m < S->seqs.n && !t; m++)
			if (!strcmp(S->seqs.e[m].key, e->key))
				t = &S->seqs.e[m];
		if (!t)
			continue; /* never more than learning: the trace has no event of it */
		matched++;
		static const struct {
			int i;
			const char *what;
		} f[] = {{GS_SQ_LENGTH, "length"}, {GS_SQ_REPLAYS, "replays"},
			 {GS_SQ_EAGER, "eager passes"}, {GS_SQ_MISMATCH, "mismatches"},
			 {GS_SQ_PATCHES, "patches"}};
		char id[80];
		snprintf(id, sizeof(id), "%s", strchr(e->key, ' ') + 1);
		for (size_t x = 0; x < sizeof(f) / sizeof(f[0]); x++) {
			if (t->v[f[x].i] == e->v[f[x].i]) {
				agree++;
				continue;
			}
			differ++;
			printf("  DIFFERS  sequence %s: %s: trace %lld, statistics %lld\n", id, f[x].what,
			       t->v[f[x].i], e->v[f[x].i]);
		}
		/* The gate's choice, where both say one. */
		if (e->choice && t->choice && (!strcmp(e->choice, "eager") || !strcmp(e->choice, "replay"))) {
			if (!strcmp(e->choice, t->choice))
				agree++;
			else {
				differ++;
				printf("  DIFFERS  sequence %s: gate: trace %s, statistics %s\n", id,
				       t->choice, e->choice);
			}
		}
	}
	if (truncated)
		printf("  (the statistics list part of the sequences only: per-sequence figures not "
		       "checked)\n");
	if (inflight)
		printf("  (%s ended a process: %d figure%s differ%s by what was in flight then)\n",
		       signalled, inflight, inflight > 1 ? "s" : "", inflight > 1 ? "" : "s");
	if (differ)
		printf("check: %d of %d figures differ\n", differ, agree + differ + inflight);
	else
		printf("check: all %d figures agree (totals, and %zu sequences)%s\n", agree, matched,
		       inflight ? ", the rest within what was in flight" : "");
	free(signalled);
	gs_files_free(&files);
	gs_tab_free(&seqs);
	gs_tab_free(&pids);
	return differ ? GS_EXIT_REGRESSION : GS_EXIT_OK;
}

static int gs_cmd_trace(int argc, char **argv)
{
	if (argc < 2 || gs_is_help(argv[1])) {
		fputs(gs_usage_trace, argc < 2 ? stderr : stdout);
		return argc < 2 ? GS_EXIT_BAD : GS_EXIT_OK;
	}
	if (strcmp(argv[1], "summarize")) {
		gs_err("trace: unknown subcommand %s (only `summarize`)", argv[1]);
		return GS_EXIT_BAD;
	}
	gs_files_t files = {0};
	const char *check = NULL;
	bool single = false;
	for (int i = 2; i < argc; i++) {
		const char *v;
		if (gs_is_help(argv[i])) {
			fputs(gs_usage_trace, stdout);
			gs_files_free(&files);
			return GS_EXIT_OK;
		}
		if ((v = gs_opt_value(argc, argv, &i, "--check"))) {
			check = v;
			continue;
		}
		if (!strcmp(argv[i], "--single")) {
			single = true;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			gs_err("trace summarize: unknown option %s", argv[i]);
			gs_files_free(&files);
			return GS_EXIT_BAD;
		}
		gs_files_arg(&files, argv[i]);
	}
	if (!files.n) {
		gs_err("trace summarize: no FILE given");
		return GS_EXIT_BAD;
	}
	size_t given = files.n;
	gs_summary_t S = {0};
	for (size_t f = 0; f < files.n; f++) {
		gs_summary_t F = {0};
		bool repaired;
		if (gs_trace_load(files.v[f], &F, &repaired)) {
			gs_summary_free(&S);
			gs_files_free(&files);
			return GS_EXIT_BAD;
		}
		if (F.events == 0 && F.meta == 0) {
			gs_err("%s: no trace events found", files.v[f]);
			gs_summary_free(&F);
			gs_summary_free(&S);
			gs_files_free(&files);
			return GS_EXIT_BAD;
		}
		S.repaired += repaired;
		gs_summary_merge(&S, &F);
		for (size_t i = 0; !single && i < F.noted.n; i++)
			gs_files_add(&files, F.noted.v[i]);
		gs_summary_free(&F);
	}

	printf("trace %s", files.v[0]);
	for (size_t i = 1; i < files.n; i++)
		printf("%s%s", i == 1 ? " (+ " : ", ", files.v[i]);
	printf("%s\n", files.n > 1 ? ")" : "");
	if (files.n > given)
		printf("  with the files of the run's other processes that it notes (--single: "
		       "without)\n");
	if (S.pids.n > 1)
		printf("  processes %zu\n", S.pids.n);
	printf("  events %lld", S.events);
	if (S.closed)
		printf(" (cap %lld, dropped %lld)", S.cap, S.dropped);
	printf("\n");
	if (S.repaired)
		printf("  the trace was not closed (the process died?): repaired, the last "
		       "events may be missing\n");
	if (S.ended_by)
		printf("  a process was ended by %s: its trace stops there\n", S.ended_by);
	if (S.dropped)
		printf("  %lld events were dropped at the cap: raise GRAPHSHIM_TRACE_MAX for "
		       "the whole picture\n",
		       S.dropped);
	if (S.ignored)
		printf("  %lld entries were not events and were ignored\n", S.ignored);
	printf("  launches %lld (", S.launches);
	for (int k = 0, first = 1; k < GS_ST_N; k++)
		if (S.by_state[k]) {
			printf("%s%s %lld", first ? "" : ", ", gs_states[k], S.by_state[k]);
			first = 0;
		}
	printf(")\n");
	printf("  replayed %lld launches in %lld graph launches", S.replayed, S.graphs);
	if (S.launches)
		printf(" (%.1f%% of launches)", 100.0 * (double)S.replayed / (double)S.launches);
	printf("\n");
	if (S.variants || S.variant_replays)
		printf("  variants %lld built, %lld of the graph launches were of one\n", S.variants,
		       S.variant_replays);
	if (S.shared)
		printf("  %lld of the graph launches went while several steps still matched (shared chunks)\n",
		       S.shared);

	bool old = !S.passes && S.graphs; /* a trace of an earlier version: no pass events */
	printf("\nsequences (%zu)\n", S.seqs.n);
	if (S.seqs.n) {
		for (size_t k = 0; k < S.seqs.n; k++) {
			gs_ent_t *e = &S.seqs.e[k];
			if (old)
				e->v[GS_SQ_REPLAYS] = e->v[GS_SQ_GRAPHS];
			e->n = e->v[GS_SQ_REPLAYED]; /* sorted by what they covered */
		}
		qsort(S.seqs.e, S.seqs.n, sizeof(gs_ent_t), gs_ent_cmp_n);
		static const char *const st[] = {"learned", "built", "failed", "retired"};
		bool pid = S.pids.n > 1;
		printf("  %-18s  %-14s  %s%6s  %-8s  %-7s  %8s  %8s  %6s  %10s  %8s  %8s  %-22s  %s\n",
		       "id", "stream", pid ? "   pid  " : "", "length", "how", "state", "build ms",
		       "replays", "eager", "mismatches", "variants", "coverage",
		       "gate (eager/replay us)", "first kernel");
		printf("  ");
		gs_print_rule(160);
		for (size_t k = 0; k < S.seqs.n; k++) {
			const gs_ent_t *e = &S.seqs.e[k];
			char cov[16] = "-";
			if (S.launches)
				snprintf(cov, sizeof(cov), "%.1f%%",
					 100.0 * (double)e->v[GS_SQ_REPLAYED] / (double)S.launches);
			char id[80], pidc[16] = "";
			snprintf(id, sizeof(id), "%s", strchr(e->key, ' ') + 1);
			id[strcspn(id, " ")] = '\0';
			if (pid)
				snprintf(pidc, sizeof(pidc), "%6lld  ", e->v[GS_SQ_PID]);
			printf("  %-18s  %-14s  %s%6lld  %-8s  %-7s  %8.3f  %8lld  %6lld  %10lld  %8lld  %8s  "
			       "%-22s  %s\n",
			       id, e->s1 ? e->s1 : "?", pidc, e->v[GS_SQ_LENGTH], e->s2 ? e->s2 : "?",
			       st[e->state], e->ms, e->v[GS_SQ_REPLAYS], e->v[GS_SQ_EAGER],
			       e->v[GS_SQ_MISMATCH], e->v[GS_SQ_VARIANTS], cov, e->gate ? e->gate : "-",
			       e->kernel ? e->kernel : "-");
		}
		printf("  (replays: passes replayed whole; eager: passes the gate sent eagerly;\n"
		       "   variants: more graphs of its chunks built for recurring operands;\n"
		       "   coverage: launches replayed from the sequence's graphs over all launches)\n");
		if (old)
			printf("  (a trace of an earlier graphshim: replays are graph launches)\n");
		gs_note_count(S.gate_kept, "time(s) the gate kept its choice when replayed passes got over "
			      "twice as short: what replay saved still beat the margin");
		gs_note_count(S.gate_inherited, "sequence(s) took a like sequence's verdict of replay on "
			      "their stream, no trial of their own");
		gs_note_count(S.gate_trusted, "long sequence(s) that patched little replayed without a "
			      "first trial (GRAPHSHIM_GATE_TRUST)");
	}

	printf("\nmismatch reasons\n");
	if (!S.mism.n)
		printf("  none\n");
	else {
		qsort(S.mism.e, S.mism.n, sizeof(gs_ent_t), gs_ent_cmp_n);
		printf("  %-14s  %8s  %-24s  %s\n", "reason", "count", "most common field",
		       "most common kernel");
		for (size_t k = 0; k < S.mism.n; k++) {
			const gs_ent_t *top = gs_tab_top(S.mism.e[k].sub);
			const gs_ent_t *kt = gs_tab_top(S.mism.e[k].sub2);
			char field[64];
			snprintf(field, sizeof(field), "%s (%lld)", top ? top->key : "-", top ? top->n : 0);
			printf("  %-14s  %8lld  %-24s  %s (%lld)\n", S.mism.e[k].key, S.mism.e[k].n, field,
			       kt ? kt->key : "-", kt ? kt->n : 0);
		}
		if (S.forgiven)
			printf("  (%lld not charged toward retirement: the segment they ended was a step of its own)\n",
			       S.forgiven);
	}

	printf("\nflush reasons\n");
	if (!S.flush.n)
		printf("  none\n");
	else {
		qsort(S.flush.e, S.flush.n, sizeof(gs_ent_t), gs_ent_cmp_n);
		printf("  %-10s  %8s  %12s  %-24s  %s\n", "reason", "count", "held flushed",
		       "most common api", "last held kernel, most often");
		for (size_t k = 0; k < S.flush.n; k++) {
			const gs_ent_t *top = gs_tab_top(S.flush.e[k].sub);
			const gs_ent_t *kt = gs_tab_top(S.flush.e[k].sub2);
			char api[64];
			snprintf(api, sizeof(api), "%s (%lld)", top ? top->key : "-", top ? top->n : 0);
			printf("  %-10s  %8lld  %12lld  %-24s  ", S.flush.e[k].key, S.flush.e[k].n,
			       S.flush.e[k].aux, api);
			if (kt)
				printf("%s (%lld)\n", kt->key, kt->n);
			else
				printf("-\n");
		}
	}
	gs_note_count(S.cuts, "place(s) where the program waited without a call in four replayed "
		      "passes in a row:\n   a chunk ends there now, and its IDLE flushes stop; cut events");
	gs_note_count(S.idle_eager, "time(s) a sequence went eager until its re-check: its replayed "
		      "passes kept\n   waiting for the idle watchdog at places no cut took away; "
		      "idle_eager events");

	printf("\nfallbacks\n");
	if (!S.fallback.n)
		printf("  none\n");
	else {
		qsort(S.fallback.e, S.fallback.n, sizeof(gs_ent_t), gs_ent_cmp_n);
		printf("  %-24s  %8s  %s\n", "what", "count", "most common status");
		for (size_t k = 0; k < S.fallback.n; k++) {
			const gs_ent_t *top = gs_tab_top(S.fallback.e[k].sub);
			printf("  %-24s  %8lld  %s\n", S.fallback.e[k].key, S.fallback.e[k].n,
			       top ? top->key : "-");
		}
	}
	int rc = check ? gs_summary_check(&S, check, single) : GS_EXIT_OK;
	gs_summary_free(&S);
	gs_files_free(&files);
	return rc;
}

/* --------------------------------------------------------------- compare */

/* A sequence the gate sent eager, for the explanation of a coverage change. */
typedef struct gs_gated_seq {
	char id[40];
	long long length, eager_passes;
	double eager_us, replay_us;
	double eager_host_us, replay_host_us; /* 0 in statistics that have none */
} gs_gated_seq_t;

/* One run's figures: its files summed (coverage recomputed from the sums). */
typedef struct gs_figs {
	gs_files_t files;
	double coverage;
	long long launches, replayed, graphs, mismatches, fallbacks, build_ns;
	long long gated, gate_eager;
	long long order_errors; /* records submitted out of order or twice: a bug */
	long long steps;     /* given steps (the largest of the files'), 0 when none */
	long long main_seen; /* sightings of the main sequence, 0 when none */
	long long main_len;
	int main_procs;      /* processes whose main sequence it is */
	char main_id[40];
	/* Each file's main sequence, grouped by id into the run's (gs_figs_main). */
	struct {
		char id[40];
		long long seen, len;
	} mains[64];
	int nmains;
	json_t *config;      /* the first file's configuration (a reference), or NULL */
	char *ended_by;      /* a signal's name when a process was ended by one */
	gs_gated_seq_t gated_seqs[8];
	int ngated_seqs;
} gs_figs_t;

/* A non-negative integer at obj.key; true on failure (message printed). */
static bool gs_get_count(const char *file, json_t *obj, const char *where, const char *key,
			 long long *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		gs_err("%s: missing key %s%s", file, where, key);
		return true;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		gs_err("%s: %s%s: expected a non-negative integer", file, where, key);
		return true;
	}
	*out = json_integer_value(v);
	return false;
}

/* One statistics file into f (summed); true when it is bad (message printed). */
static bool gs_load_one(const char *file, gs_figs_t *f)
{
	json_error_t jerr;
	if (access(file, F_OK)) {
		gs_err("%s: %s", file, strerror(errno));
		return true;
	}
	FILE *probe = fopen(file, "rb");
	if (!probe) {
		gs_err("%s: %s", file, strerror(errno));
		return true;
	}
	int first = fgetc(probe);
	fclose(probe);
	if (first == EOF) {
		gs_err("%s: empty file, not a statistics file", file);
		return true;
	}
	json_t *j = json_load_file(file, 0, &jerr);
	if (!j) {
		gs_err("%s: not a valid statistics file: line %d, column %d: %s", file, jerr.line,
		       jerr.column, jerr.text);
		return true;
	}
	bool bad = true;
	json_t *c = json_object_get(j, "counters");
	json_t *cov = json_object_get(j, "coverage");
	long long launches, replayed, graphs, mismatches, fallbacks, build_ns, steps = 0;
	if (!json_is_object(j))
		gs_err("%s: expected a JSON object (a GRAPHSHIM_STATS file)", file);
	else if (!c)
		gs_err("%s: missing key counters", file);
	else if (!json_is_object(c))
		gs_err("%s: counters: expected an object", file);
	else if (!cov)
		gs_err("%s: missing key coverage", file);
	else if (!json_is_number(cov) || json_number_value(cov) < 0 ||
		 json_number_value(cov) > 1)
		gs_err("%s: coverage: expected a number from 0 to 1", file);
	else if (!gs_get_count(file, c, "counters.", "launches", &launches) &&
		 !gs_get_count(file, c, "counters.", "replayed", &replayed) &&
		 !gs_get_count(file, c, "counters.", "graphs", &graphs) &&
		 !gs_get_count(file, c, "counters.", "mismatches", &mismatches) &&
		 !gs_get_count(file, c, "counters.", "fallbacks", &fallbacks) &&
		 !gs_get_count(file, c, "counters.", "build_ns", &build_ns)) {
		bad = false;
		/* Steps are optional: GRAPHSHIM_STEPS, or a benchmark's own. */
		json_t *obj = json_object_get(j, "steps") ? j : c;
		const char *where = obj == j ? "" : "counters.";
		if (json_object_get(obj, "steps") && gs_get_count(file, obj, where, "steps", &steps))
			bad = true;
	}
	if (bad) {
		json_decref(j);
		return true;
	}
	f->launches += launches;
	f->replayed += replayed;
	f->graphs += graphs;
	f->mismatches += mismatches;
	f->fallbacks += fallbacks;
	f->build_ns += build_ns;
	/* Sent eagerly by the gate's choice: matched (gated), or passed by a
	 * stream gone quiet because the gate keeps its steps eager. */
	f->gated += gs_jcount(c, "gated") + gs_jcount(c, "cold_quiet_passed");
	f->gate_eager += gs_jcount(c, "gate_eager");
	f->order_errors += gs_jcount(c, "order_errors");
	/* The processes of a run inherit the program's steps: not a sum. */
	if (steps > f->steps)
		f->steps = steps;
	json_t *m = json_object_get(j, "main_sequence");
	if (json_is_object(m) && f->nmains < (int)(sizeof(f->mains) / sizeof(f->mains[0]))) {
		snprintf(f->mains[f->nmains].id, sizeof(f->mains[0].id), "%s", gs_jstr(m, "id", "?"));
		f->mains[f->nmains].seen = gs_jint(m, "seen");
		f->mains[f->nmains++].len = gs_jint(m, "length");
	}
	if (!f->config && json_is_object(json_object_get(j, "config")))
		f->config = json_incref(json_object_get(j, "config"));
	const char *by = gs_jstr(j, "ended_by", "exit");
	if (strcmp(by, "exit"))
		gs_setstr(&f->ended_by, by);
	size_t i;
	json_t *q;
	json_array_foreach(json_object_get(j, "sequences"), i, q) {
		if (f->ngated_seqs == 8 || (strcmp(gs_jstr(q, "gate", ""), "eager") &&
					    !gs_jint(q, "eager_passes")))
			continue;
		gs_gated_seq_t *g = &f->gated_seqs[f->ngated_seqs++];
		snprintf(g->id, sizeof(g->id), "%s", gs_jstr(q, "id", "?"));
		g->length = gs_jint(q, "length");
		g->eager_passes = gs_jint(q, "eager_passes");
		g->eager_us = json_number_value(json_object_get(q, "eager_us"));
		g->replay_us = json_number_value(json_object_get(q, "replay_us"));
		g->eager_host_us = json_number_value(json_object_get(q, "eager_host_us"));
		g->replay_host_us = json_number_value(json_object_get(q, "replay_host_us"));
	}
	json_decref(j);
	return false;
}

/*
 * The run's main sequence: of the files' main sequences, those of one
 * length that took the most launches together; their sightings are
 * summed, so that two processes stepping the same program make the steps
 * of both (two decode workers of 100 and 150 steps: 250).  By length, not
 * by id: the id hashes function handles, which differ between processes.
 * A helper process's main sequence is of another length, and not counted.
 */
static void gs_figs_main(gs_figs_t *f)
{
	double best = 0;
	for (int i = 0; i < f->nmains; i++) {
		long long seen = 0;
		int procs = 0;
		for (int k = 0; k < f->nmains; k++)
			if (f->mains[k].len == f->mains[i].len) {
				seen += f->mains[k].seen;
				procs++;
			}
		if ((double)seen * f->mains[i].len > best) {
			best = (double)seen * f->mains[i].len;
			f->main_seen = seen;
			f->main_len = f->mains[i].len;
			f->main_procs = procs;
			snprintf(f->main_id, sizeof(f->main_id), "%s", f->mains[i].id);
		}
	}
}

/* A run's statistics: the argument's files and (unless single) those they note. */
static bool gs_load_stats(const char *arg, gs_figs_t *f, bool single)
{
	memset(f, 0, sizeof(*f));
	gs_files_arg(&f->files, arg);
	bool bad = false;
	for (size_t i = 0; i < f->files.n; i++) {
		if (gs_load_one(f->files.v[i], f)) {
			bad = true;
			continue;
		}
		if (!single)
			gs_stats_noted(f->files.v[i], &f->files);
	}
	gs_figs_main(f);
	f->coverage = f->launches ? (double)f->replayed / (double)f->launches : 0;
	if (f->files.n == 1 && !bad) {
		/* One file: its own coverage, as it says (it is the same figure). */
		json_error_t jerr;
		json_t *j = json_load_file(f->files.v[0], 0, &jerr);
		f->coverage = json_number_value(json_object_get(j, "coverage"));
		json_decref(j);
	}
	return bad;
}

static void gs_figs_free(gs_figs_t *f)
{
	gs_files_free(&f->files);
	json_decref(f->config);
	free(f->ended_by);
}

/* Relative change in percent; +inf when growing from zero. */
static double gs_pct(double base, double now)
{
	if (base == 0)
		return now == 0 ? 0.0 : INFINITY;
	return 100.0 * (now - base) / base;
}

static void gs_row_count(const char *what, long long a, long long b, const char *verdict)
{
	char chg[32];
	double p = gs_pct((double)a, (double)b);
	if (isinf(p))
		snprintf(chg, sizeof(chg), "new");
	else
		snprintf(chg, sizeof(chg), "%+.1f%%", p);
	printf("  %-16s %14lld %14lld %10s%s%s\n", what, a, b, chg, *verdict ? "  " : "", verdict);
}

static bool gs_parse_limit(const char *opt, const char *v, double *out, bool integer)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (!*v || *end || errno || !(x >= 0) || isinf(x) || (integer && x != floor(x))) {
		gs_err("compare: %s %s: expected a non-negative %s", opt, v,
		       integer ? "integer" : "number");
		return true;
	}
	*out = x;
	return false;
}

/* A configuration value as text ("auto", "2", "true"). */
static void gs_cfg_text(json_t *v, char *out, size_t len)
{
	if (json_is_string(v))
		snprintf(out, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(out, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(out, len, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(out, len, "%s", json_is_true(v) ? "1" : "0");
	else
		snprintf(out, len, "(unset)");
}

/* The files of a run, as a list for the report. */
static void gs_print_run(const char *label, const gs_figs_t *f)
{
	if (f->files.n < 2)
		return;
	printf("  %s: %zu processes: %s", label, f->files.n, f->files.v[0]);
	for (size_t i = 1; i < f->files.n; i++)
		printf(", %s", f->files.v[i]);
	printf("\n");
}

static int gs_cmd_compare(int argc, char **argv)
{
	double max_cov_drop = 1.0, max_launch_inc = 5.0, max_mm_inc = 0;
	const char *files[2];
	int nfiles = 0;
	bool single = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (gs_is_help(a)) {
			fputs(gs_usage_compare, stdout);
			return GS_EXIT_OK;
		} else if ((v = gs_opt_value(argc, argv, &i, "--max-coverage-drop"))) {
			if (gs_parse_limit("--max-coverage-drop", v, &max_cov_drop, false))
				return GS_EXIT_BAD;
		} else if ((v = gs_opt_value(argc, argv, &i, "--max-launches-increase"))) {
			if (gs_parse_limit("--max-launches-increase", v, &max_launch_inc, false))
				return GS_EXIT_BAD;
		} else if ((v = gs_opt_value(argc, argv, &i, "--max-mismatch-increase"))) {
			if (gs_parse_limit("--max-mismatch-increase", v, &max_mm_inc, true))
				return GS_EXIT_BAD;
		} else if (!strcmp(a, "--single")) {
			single = true;
		} else if (a[0] == '-' && a[1]) {
			gs_err("compare: unknown option %s (see graphshim compare --help)", a);
			return GS_EXIT_BAD;
		} else if (nfiles < 2) {
			files[nfiles++] = a;
		} else {
			gs_err("compare: two files expected, got a third: %s", a);
			return GS_EXIT_BAD;
		}
	}
	if (nfiles != 2) {
		gs_err("compare: two files expected (graphshim compare BASE.json NEW.json)");
		return GS_EXIT_BAD;
	}
	gs_figs_t A, B;
	/* Check both runs so that one call reports every bad input. */
	bool bad = gs_load_stats(files[0], &A, single);
	bad |= gs_load_stats(files[1], &B, single);
	if (bad) {
		gs_figs_free(&A);
		gs_figs_free(&B);
		return GS_EXIT_BAD;
	}

	int regressions = 0;
	bool gate_cov = false;
	char verdict[128];
	printf("graphshim compare: %s -> %s\n", files[0], files[1]);
	gs_print_run("base", &A);
	gs_print_run("new", &B);
	printf("  %-16s %14s %14s %10s  %s\n", "metric", "base", "new", "change", "verdict");

	/*
	 * Steps, to compare runs of different lengths: the files' own, or else
	 * the sightings of each run's main sequence (a decode step, an
	 * iteration: the sequence that took the most launches).
	 */
	bool given = A.steps > 0 && B.steps > 0;
	bool estimated = !given && A.main_seen > 0 && B.main_seen > 0;
	double sa = given ? (double)A.steps : estimated ? (double)A.main_seen : 1;
	double sb = given ? (double)B.steps : estimated ? (double)B.main_seen : 1;
	bool per_step = given || estimated;

	double drop = 100.0 * (A.coverage - B.coverage);
	if (fabs(drop) < 0.05)
		drop = 0; /* print 0.0, not -0.0 */
	bool reg = drop > max_cov_drop + 1e-9;
	/* The gate's share: launches matched, then sent eagerly by its choice. */
	double la_cov = A.launches ? (double)(A.replayed + A.gated) / (double)A.launches : 0;
	double lb_cov = B.launches ? (double)(B.replayed + B.gated) / (double)B.launches : 0;
	double gdrop = 100.0 * (la_cov - lb_cov);
	bool from_gate = reg && gdrop <= max_cov_drop + 1e-9;
	gate_cov = from_gate;
	regressions += reg;
	snprintf(verdict, sizeof(verdict), "%s (limit -%.1f pp)%s", reg ? "REGRESSION" : "ok",
		 max_cov_drop, from_gate ? ": the gate chose eager" : "");
	printf("  %-16s %13.1f%% %13.1f%% %+7.1f pp  %s\n", "coverage", 100.0 * A.coverage,
	       100.0 * B.coverage, 0.0 - drop, verdict); /* 0.0 - 0.0 is +0.0, -0.0 would print "-0.0" */
	if (A.gated || B.gated) {
		char chg[32];
		snprintf(chg, sizeof(chg), "%+.1f pp", 100.0 * (lb_cov - la_cov));
		printf("  %-16s %13.1f%% %13.1f%% %10s  (replayed or sent eagerly by the gate)\n",
		       "matched", 100.0 * la_cov, 100.0 * lb_cov, chg);
	}

	/* Launches are gated per step when the steps are known. */
	double la = (double)A.launches / sa, lb = (double)B.launches / sb;
	double inc = gs_pct(la, lb);
	reg = inc > max_launch_inc + 1e-9;
	regressions += reg;
	snprintf(verdict, sizeof(verdict), "%s (limit +%.1f%%)", reg ? "REGRESSION" : "ok",
		 max_launch_inc);
	gs_row_count("launches", A.launches, B.launches, per_step ? "" : verdict);
	if (per_step) {
		char chg[32];
		snprintf(chg, sizeof(chg), isinf(inc) ? "new" : "%+.1f%%", inc);
		printf("  %-16s %14.1f %14.1f %10s  %s\n", "launches/step", la, lb, chg, verdict);
	}
	gs_row_count("replayed", A.replayed, B.replayed, "");
	gs_row_count("graphs", A.graphs, B.graphs, "");

	/* Mismatches: per step too (a run twice as long may mismatch twice as often). */
	double expect = (double)A.mismatches * (per_step ? sb / sa : 1.0);
	reg = (double)B.mismatches - expect > max_mm_inc + 1e-9;
	regressions += reg;
	if (per_step && A.mismatches && sa != sb)
		snprintf(verdict, sizeof(verdict), "%s (limit +%.0f over %.1f, the base's per step)",
			 reg ? "REGRESSION" : "ok", max_mm_inc, expect);
	else
		snprintf(verdict, sizeof(verdict), "%s (limit +%.0f)", reg ? "REGRESSION" : "ok",
			 max_mm_inc);
	gs_row_count("mismatches", A.mismatches, B.mismatches, verdict);
	gs_row_count("fallbacks", A.fallbacks, B.fallbacks, B.fallbacks > A.fallbacks ? "(more)" : "");
	if (A.order_errors || B.order_errors) {
		/* A record sent out of its stream's order or twice: a bug whatever the limits. */
		regressions += B.order_errors > 0;
		gs_row_count("order errors", A.order_errors, B.order_errors,
			     B.order_errors ? "REGRESSION (graphshim broke a stream's order: a bug)" : "");
	}
	{
		double ma = (double)A.build_ns / 1e6, mb = (double)B.build_ns / 1e6;
		double p = gs_pct(ma, mb);
		char chg[32];
		snprintf(chg, sizeof(chg), isinf(p) ? "new" : "%+.1f%%", p);
		printf("  %-16s %14.3f %14.3f %10s\n", "build ms", ma, mb, chg);
	}

	/* What the figures rest on. */
	if (given)
		printf("  steps: %lld and %lld (\"steps\" in the files)\n", A.steps, B.steps);
	else if (estimated) {
		char pa[40] = "", pb[40] = "";
		if (A.main_procs > 1)
			snprintf(pa, sizeof(pa), ", in %d processes", A.main_procs);
		if (B.main_procs > 1)
			snprintf(pb, sizeof(pb), ", in %d processes", B.main_procs);
		printf("  steps: %lld and %lld, estimated: the sightings of each run's main sequence "
		       "(%s, %lld launches%s; %s, %lld%s);\n"
		       "    give them with graphshim run --steps N (GRAPHSHIM_STEPS) for an exact "
		       "figure\n",
		       A.main_seen, B.main_seen, A.main_id, A.main_len, pa, B.main_id, B.main_len, pb);
	} else
		printf("  steps: unknown (%s): launches and mismatches compared in total, so a run of "
		       "another length\n    compares as a change; give them with graphshim run --steps N\n",
		       A.steps || B.steps ? "only one run says them" : "neither run says them");
	/* More launches sent eagerly by the gate, per step when the steps are known. */
	bool more_gated = (double)B.gated / sb > (double)A.gated / sa;
	if (from_gate || (reg && more_gated) || B.ngated_seqs) {
		const gs_figs_t *g = &B;
		if (from_gate || more_gated) {
			printf("  the gate (GRAPHSHIM_GATE, timing each sequence on the GPU and the host) "
			       "sent %lld of the new run's launches eagerly (base: %lld):\n", B.gated,
			       A.gated);
			for (int k = 0; k < g->ngated_seqs; k++) {
				const gs_gated_seq_t *q = &g->gated_seqs[k];
				char host[96] = "";
				if (q->eager_host_us > 0 && q->replay_host_us > 0)
					snprintf(host, sizeof(host), ", %.1f and %.1f us on the host",
						 q->eager_host_us, q->replay_host_us);
				printf("    sequence %s (%lld launches): eager %.1f us, replay %.1f us a pass "
				       "on the GPU%s; %lld passes eager\n", q->id, q->length, q->eager_us,
				       q->replay_us, host, q->eager_passes);
			}
			printf("    for coverage that follows the learner alone, pin GRAPHSHIM_GATE=replay "
			       "in both runs\n");
		}
	}
	/*
	 * Runs of different configurations compare different things: say which.
	 * Not the variables that only shape the outputs (the steps have their
	 * own line): a base made without --overwrite is no other configuration.
	 */
	static const char *const outputs_only[] = {"GRAPHSHIM_OVERWRITE", "GRAPHSHIM_SUMMARY",
						   "GRAPHSHIM_LOG", "GRAPHSHIM_TRACE_MAX",
						   "GRAPHSHIM_STEPS"};
	if (A.config && B.config) {
		const char *k;
		json_t *v;
		json_object_foreach(B.config, k, v) {
			bool skip = false;
			for (size_t i = 0; i < sizeof(outputs_only) / sizeof(outputs_only[0]); i++)
				skip |= !strcmp(k, outputs_only[i]);
			if (skip)
				continue;
			char a[64], b[64];
			gs_cfg_text(json_object_get(A.config, k), a, sizeof(a));
			gs_cfg_text(v, b, sizeof(b));
			if (strcmp(a, b))
				printf("  configuration differs: %s %s -> %s\n", k, a, b);
		}
	}
	if (A.ended_by)
		printf("  base: a process was ended by %s: its figures are those of that moment\n",
		       A.ended_by);
	if (B.ended_by)
		printf("  new: a process was ended by %s: its figures are those of that moment\n",
		       B.ended_by);
	if (regressions)
		printf("verdict: REGRESSION (%d limit%s exceeded%s)\n", regressions,
		       regressions > 1 ? "s" : "",
		       gate_cov ? "; the coverage change comes from the gate's choice" : "");
	else
		printf("verdict: ok\n");
	gs_figs_free(&A);
	gs_figs_free(&B);
	return regressions ? GS_EXIT_REGRESSION : GS_EXIT_OK;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(gs_usage_main, stderr);
		return GS_EXIT_BAD;
	}
	const char *cmd = argv[1];
	if (gs_is_help(cmd) || !strcmp(cmd, "help")) {
		fputs(gs_usage_main, stdout);
		return GS_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("graphshim %s\n", PACKAGE_VERSION);
		return GS_EXIT_OK;
	}
	if (!strcmp(cmd, "run"))
		return gs_cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "trace"))
		return gs_cmd_trace(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return gs_cmd_compare(argc - 1, argv + 1);
	gs_err("unknown command %s (see graphshim --help)", cmd);
	return GS_EXIT_BAD;
}
