/*
 * graphshim: the command-line companion of libgraphshim.so.
 *
 *   graphshim run [OPTIONS] -- PROGRAM [ARGS...]   run a program under the shim
 *   graphshim trace summarize FILE                 tables from a trace dump
 *   graphshim compare BASE.json NEW.json [LIMITS]  CI verdict on two stats files
 *
 * Exit codes follow one rule across subcommands: 0 success (or no
 * regression), 1 regression (compare), 2 bad usage or bad input, 126/127 a
 * program that cannot be run (as the shell does).  Messages go to stderr
 * prefixed "graphshim:", and name the file and the problem.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/* ------------------------------------------------------------------ help */

static const char gs_usage_main[] =
	"Usage: graphshim COMMAND [ARGS...]\n"
	"\n"
	"Run GPU programs under libgraphshim.so and read what it reports.\n"
	"\n"
	"Commands:\n"
	"  run [OPTIONS] -- PROGRAM [ARGS...]   run PROGRAM with the shim preloaded\n"
	"  trace summarize FILE                 summarize a trace (GRAPHSHIM_TRACE)\n"
	"  compare BASE.json NEW.json [LIMITS]  compare two statistics files (CI)\n"
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
	"  --log LEVEL       off, error, warn, info, debug or 0-4 (GRAPHSHIM_LOG)\n"
	"  --summary         one-line summary on stderr at exit (GRAPHSHIM_SUMMARY=1)\n"
	"  --overwrite       replace existing stats/trace files (GRAPHSHIM_OVERWRITE=1)\n"
	"  --disable         load the shim as a pure pass-through (GRAPHSHIM_ENABLE=0)\n"
	"  --lib PATH        preload this library instead of searching\n"
	"  -h, --help        this help\n"
	"\n"
	"The library is the first of: --lib PATH; $GRAPHSHIM_LIB; the build tree\n"
	"next to this program (../.libs/ or ../shim/.libs/); ../lib/ or ../lib64/ next\n"
	"to this program (an installation moved as a whole); " GS_LIBDIR "/.\n"
	"\n"
	"Exit status: PROGRAM's own; 127 when PROGRAM is not found, 126 when it\n"
	"cannot be executed, 2 for bad options or when the library is not found.\n";

static const char gs_usage_trace[] =
	"Usage: graphshim trace summarize FILE\n"
	"\n"
	"Print tables from a trace written with GRAPHSHIM_TRACE: sequences (id,\n"
	"stream, length, replays, share of launches covered, the gate's last choice\n"
	"with the eager and replay medians it compared), mismatch reasons with\n"
	"the most common field, flush reasons with the API that caused them\n"
	"most, and fallbacks.  A trace left by a process that died (no closing\n"
	"\"]\", a trailing comma) is repaired before parsing.\n"
	"\n"
	"Exit status: 0, or 2 when FILE cannot be read or is not a trace.\n";

static const char gs_usage_compare[] =
	"Usage: graphshim compare BASE.json NEW.json [LIMITS]\n"
	"\n"
	"Compare two statistics files (GRAPHSHIM_STATS) and report a regression.\n"
	"\n"
	"Limits:\n"
	"  --max-coverage-drop P       coverage may fall by P percentage points (1.0)\n"
	"  --max-launches-increase P   launches (per step when both files have\n"
	"                              \"steps\") may grow by P percent (5.0)\n"
	"  --max-mismatch-increase N   mismatches may grow by N (0)\n"
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

static int gs_cmd_run(int argc, char **argv)
{
	const char *lib = NULL;
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
		} else if ((v = gs_opt_value(argc, argv, &i, "--trace-max"))) {
			if (!gs_positive_int(v)) {
				gs_err("--trace-max %s: expected an integer from 1 to 1000000000", v);
				return GS_EXIT_BAD;
			}
			gs_setenv("GRAPHSHIM_TRACE_MAX", v);
		} else if ((v = gs_opt_value(argc, argv, &i, "--trace"))) {
			gs_setenv("GRAPHSHIM_TRACE", v);
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
			gs_setenv("GRAPHSHIM_OVERWRITE", "1");
		} else if (!strcmp(a, "--disable")) {
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
	char *pre = gs_preload_value(path);
	if (!pre) {
		gs_err("out of memory");
		return GS_EXIT_BAD;
	}
	gs_setenv("LD_PRELOAD", pre);
	free(pre);
	free(path);

	fflush(NULL);
	execvp(argv[i], &argv[i]);
	int e = errno;
	if (e == ENOENT) {
		gs_err("%s: command not found", argv[i]);
		return 127;
	}
	gs_err("%s: %s", argv[i], strerror(e));
	return 126;
}

/* --------------------------------------------------- a small string table */

/*
 * Counts keyed by string: enough for the summaries here (keys are sequence
 * ids, reasons, API names), with an open-addressed index so that a trace
 * of a million events is read in linear time.
 */
typedef struct gs_ent {
	char *key;
	long long n;     /* events */
	long long aux;   /* a second figure (length, held launches) */
	long long aux2;  /* a third (replays, mismatches) */
	char *s1, *s2;   /* stream, how (sequences) */
	char *gate;      /* sequences: the gate's last choice and its medians */
	double ms;       /* build time */
	int state;       /* sequences: 0 learned, 1 built, 2 build failed, 3 retired */
	struct gs_tab *sub; /* per-key breakdown (fields, APIs, statuses) */
} gs_ent_t;

typedef struct gs_tab {
	gs_ent_t *e;
	size_t n, cap;
	size_t *idx; /* slot -> entry index + 1 */
	size_t icap;
} gs_tab_t;

static void *gs_xalloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		gs_err("out of memory");
		exit(GS_EXIT_BAD);
	}
	return q;
}

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
		if (t->e[k].sub) {
			gs_tab_free(t->e[k].sub);
			free(t->e[k].sub);
		}
	}
	free(t->e);
	free(t->idx);
	memset(t, 0, sizeof(*t));
}

static void gs_count_sub(gs_ent_t *e, const char *key)
{
	if (!e->sub) {
		e->sub = gs_xalloc(NULL, sizeof(*e->sub));
		memset(e->sub, 0, sizeof(*e->sub));
	}
	gs_tab_get(e->sub, key)->n++;
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

static void gs_setstr(char **dst, const char *v)
{
	if (*dst || !v)
		return;
	*dst = gs_xalloc(NULL, strlen(v) + 1);
	strcpy(*dst, v);
}

/* -------------------------------------------------------- trace summarize */

typedef struct gs_summary {
	long long events, meta, ignored;
	long long launches; /* launch events, less the second event of a released launch */
	long long replays, replayed; /* replay events, and launches they covered */
	long long by_state[6];
	long long cap, dropped;
	bool closed; /* a graphshim_trace end record was found */
	gs_tab_t seqs, mism, flush, fallback;
} gs_summary_t;

static const char *const gs_states[] = {"eager", "held", "replayed", "released", "boundary",
					"other"};

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

static void gs_summary_event(gs_summary_t *S, json_t *ev)
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
			S->closed = true;
			S->cap = gs_jint(args, "cap");
			S->dropped = gs_jint(args, "dropped");
		}
		return;
	}
	S->events++;
	const char *cat = gs_jstr(ev, "cat", "");
	if (!strcmp(cat, "launch")) {
		const char *st = gs_jstr(args, "state", "other");
		size_t k = 0;
		while (k < 5 && strcmp(gs_states[k], st))
			k++;
		S->by_state[k]++;
		/* A released launch was traced once already, when it was held. */
		if (k != 3)
			S->launches++;
	} else if (!strcmp(name, "learned") || !strcmp(name, "built") ||
		   !strcmp(name, "replay") || !strcmp(name, "retired") || !strcmp(name, "gate") ||
		   (!strcmp(name, "mismatch") && json_object_get(args, "id"))) {
		/* The same shape on two streams is two sequences. */
		char key[160];
		snprintf(key, sizeof(key), "%.60s %.60s", gs_jstr(args, "id", "?"),
			 gs_jstr(args, "stream", "?"));
		gs_ent_t *s = gs_tab_get(&S->seqs, key);
		gs_setstr(&s->s1, gs_jstr(args, "stream", NULL));
		if (json_object_get(args, "length"))
			s->aux = gs_jint(args, "length");
		if (!strcmp(name, "learned"))
			gs_setstr(&s->s2, gs_jstr(args, "how", NULL));
		else if (!strcmp(name, "built")) {
			s->ms += json_number_value(json_object_get(args, "build_ms"));
			if (s->state < 3)
				s->state = gs_jint(args, "status") ? 2 : 1;
		}
		else if (!strcmp(name, "replay")) {
			s->n++;
			S->replays++;
			S->replayed += gs_jint(args, "length");
		}
		else if (!strcmp(name, "mismatch"))
			s->aux2++;
		else if (!strcmp(name, "retired"))
			s->state = 3;
		else if (!strcmp(name, "gate")) {
			char g[96];
			snprintf(g, sizeof(g), "%.8s %.0f/%.0f", gs_jstr(args, "choice", "?"),
				 json_number_value(json_object_get(args, "eager_us")),
				 json_number_value(json_object_get(args, "replay_us")));
			gs_setstr(&s->gate, g);
		}
	}
	if (!strcmp(name, "mismatch")) {
		gs_ent_t *m = gs_tab_get(&S->mism, gs_jstr(args, "reason", "?"));
		m->n++;
		gs_count_sub(m, gs_jstr(args, "field", "(none)"));
	} else if (!strcmp(name, "flush")) {
		gs_ent_t *f = gs_tab_get(&S->flush, gs_jstr(args, "reason", "?"));
		f->n++;
		f->aux += gs_jint(args, "nheld");
		gs_count_sub(f, gs_jstr(args, "api", "(none)"));
	} else if (!strcmp(name, "fallback")) {
		gs_ent_t *f = gs_tab_get(&S->fallback, gs_jstr(args, "what", "?"));
		char st[32];
		f->n++;
		snprintf(st, sizeof(st), "%lld", gs_jint(args, "status"));
		gs_count_sub(f, st);
	}
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
			gs_summary_event(&L, ev);
			json_decref(ev);
		}
		if (ok) {
			*S = L;
			*repaired = !ended;
			free(b);
			return false;
		}
		gs_tab_free(&L.seqs);
		gs_tab_free(&L.mism);
		gs_tab_free(&L.flush);
		gs_tab_free(&L.fallback);
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
	json_array_foreach(arr, i, ev) gs_summary_event(S, ev);
	json_decref(doc);
	return false;
}

static void gs_print_rule(int n)
{
	while (n-- > 0)
		putchar('-');
	putchar('\n');
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
	const char *file = NULL;
	for (int i = 2; i < argc; i++) {
		if (gs_is_help(argv[i])) {
			fputs(gs_usage_trace, stdout);
			return GS_EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			gs_err("trace summarize: unknown option %s", argv[i]);
			return GS_EXIT_BAD;
		}
		if (file) {
			gs_err("trace summarize: one FILE only");
			return GS_EXIT_BAD;
		}
		file = argv[i];
	}
	if (!file) {
		gs_err("trace summarize: no FILE given");
		return GS_EXIT_BAD;
	}

	gs_summary_t S = {0};
	bool repaired;
	if (gs_trace_load(file, &S, &repaired))
		return GS_EXIT_BAD;
	if (S.events == 0 && S.meta == 0) {
		gs_err("%s: no trace events found", file);
		return GS_EXIT_BAD;
	}

	printf("trace %s\n", file);
	printf("  events %lld", S.events);
	if (S.closed)
		printf(" (cap %lld, dropped %lld)", S.cap, S.dropped);
	printf("\n");
	if (repaired)
		printf("  the trace was not closed (the process died?): repaired, the last "
		       "events may be missing\n");
	if (S.dropped)
		printf("  %lld events were dropped at the cap: raise GRAPHSHIM_TRACE_MAX for "
		       "the whole picture\n",
		       S.dropped);
	if (S.ignored)
		printf("  %lld entries were not events and were ignored\n", S.ignored);
	printf("  launches %lld (", S.launches);
	for (int k = 0, first = 1; k < 6; k++)
		if (S.by_state[k]) {
			printf("%s%s %lld", first ? "" : ", ", gs_states[k], S.by_state[k]);
			first = 0;
		}
	printf(")\n");
	printf("  replayed %lld launches in %lld graph replays", S.replayed, S.replays);
	if (S.launches)
		printf(" (%.1f%% of launches)", 100.0 * (double)S.replayed / (double)S.launches);
	printf("\n");

	printf("\nsequences (%zu)\n", S.seqs.n);
	if (S.seqs.n) {
		qsort(S.seqs.e, S.seqs.n, sizeof(gs_ent_t), gs_ent_cmp_n);
		static const char *const st[] = {"learned", "built", "failed", "retired"};
		printf("  %-18s  %-14s  %6s  %-8s  %-7s  %8s  %8s  %10s  %8s  %s\n", "id", "stream",
		       "length", "how", "state", "build ms", "replays", "mismatches", "coverage",
		       "gate (eager/replay us)");
		printf("  ");
		gs_print_rule(127);
		for (size_t k = 0; k < S.seqs.n; k++) {
			const gs_ent_t *e = &S.seqs.e[k];
			char cov[16] = "-";
			if (S.launches)
				snprintf(cov, sizeof(cov), "%.1f%%",
					 100.0 * (double)(e->n * e->aux) / (double)S.launches);
			char id[80];
			snprintf(id, sizeof(id), "%s", e->key);
			id[strcspn(id, " ")] = '\0';
			printf("  %-18s  %-14s  %6lld  %-8s  %-7s  %8.3f  %8lld  %10lld  %8s  %s\n",
			       id, e->s1 ? e->s1 : "?", e->aux, e->s2 ? e->s2 : "?",
			       st[e->state], e->ms, e->n, e->aux2, cov, e->gate ? e->gate : "-");
		}
		printf("  (coverage: replays x length over the launches in the trace)\n");
	}

	printf("\nmismatch reasons\n");
	if (!S.mism.n)
		printf("  none\n");
	else {
		qsort(S.mism.e, S.mism.n, sizeof(gs_ent_t), gs_ent_cmp_n);
		printf("  %-14s  %8s  %s\n", "reason", "count", "most common field");
		for (size_t k = 0; k < S.mism.n; k++) {
			const gs_ent_t *top = gs_tab_top(S.mism.e[k].sub);
			printf("  %-14s  %8lld  %s (%lld)\n", S.mism.e[k].key, S.mism.e[k].n,
			       top ? top->key : "-", top ? top->n : 0);
		}
	}

	printf("\nflush reasons\n");
	if (!S.flush.n)
		printf("  none\n");
	else {
		qsort(S.flush.e, S.flush.n, sizeof(gs_ent_t), gs_ent_cmp_n);
		printf("  %-10s  %8s  %12s  %s\n", "reason", "count", "held flushed",
		       "most common api");
		for (size_t k = 0; k < S.flush.n; k++) {
			const gs_ent_t *top = gs_tab_top(S.flush.e[k].sub);
			printf("  %-10s  %8lld  %12lld  %s (%lld)\n", S.flush.e[k].key,
			       S.flush.e[k].n, S.flush.e[k].aux, top ? top->key : "-",
			       top ? top->n : 0);
		}
	}

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
	gs_tab_free(&S.seqs);
	gs_tab_free(&S.mism);
	gs_tab_free(&S.flush);
	gs_tab_free(&S.fallback);
	return GS_EXIT_OK;
}

/* --------------------------------------------------------------- compare */

typedef struct gs_figs {
	double coverage;
	long long launches, replayed, graphs, mismatches, fallbacks, build_ns;
	long long steps; /* 0 when the file has none */
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

static bool gs_load_stats(const char *file, gs_figs_t *f)
{
	json_error_t jerr;
	memset(f, 0, sizeof(*f));
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
	else if (!gs_get_count(file, c, "counters.", "launches", &f->launches) &&
		 !gs_get_count(file, c, "counters.", "replayed", &f->replayed) &&
		 !gs_get_count(file, c, "counters.", "graphs", &f->graphs) &&
		 !gs_get_count(file, c, "counters.", "mismatches", &f->mismatches) &&
		 !gs_get_count(file, c, "counters.", "fallbacks", &f->fallbacks) &&
		 !gs_get_count(file, c, "counters.", "build_ns", &f->build_ns)) {
		f->coverage = json_number_value(cov);
		bad = false;
		/* Steps are optional: a benchmark or the engine may record them. */
		json_t *obj = json_object_get(j, "steps") ? j : c;
		const char *where = obj == j ? "" : "counters.";
		if (json_object_get(obj, "steps") &&
		    gs_get_count(file, obj, where, "steps", &f->steps))
			bad = true;
	}
	json_decref(j);
	return bad;
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

static int gs_cmd_compare(int argc, char **argv)
{
	double max_cov_drop = 1.0, max_launch_inc = 5.0, max_mm_inc = 0;
	const char *files[2];
	int nfiles = 0;
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
	/* Check both files so that one run reports every bad input. */
	bool bad = gs_load_stats(files[0], &A);
	bad |= gs_load_stats(files[1], &B);
	if (bad)
		return GS_EXIT_BAD;

	int regressions = 0;
	char verdict[96];
	printf("graphshim compare: %s -> %s\n", files[0], files[1]);
	printf("  %-16s %14s %14s %10s  %s\n", "metric", "base", "new", "change", "verdict");

	double drop = 100.0 * (A.coverage - B.coverage);
	if (fabs(drop) < 0.05)
		drop = 0; /* print 0.0, not -0.0 */
	bool reg = drop > max_cov_drop + 1e-9;
	regressions += reg;
	snprintf(verdict, sizeof(verdict), "%s (limit -%.1f pp)", reg ? "REGRESSION" : "ok",
		 max_cov_drop);
	printf("  %-16s %13.1f%% %13.1f%% %+7.1f pp  %s\n", "coverage", 100.0 * A.coverage,
	       100.0 * B.coverage, -drop, verdict);

	/* Launches are gated per step when both files say how many steps ran. */
	bool per_step = A.steps > 0 && B.steps > 0;
	double la = per_step ? (double)A.launches / (double)A.steps : (double)A.launches;
	double lb = per_step ? (double)B.launches / (double)B.steps : (double)B.launches;
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

	long long mm = B.mismatches - A.mismatches;
	reg = (double)mm > max_mm_inc;
	regressions += reg;
	snprintf(verdict, sizeof(verdict), "%s (limit +%.0f)", reg ? "REGRESSION" : "ok",
		 max_mm_inc);
	gs_row_count("mismatches", A.mismatches, B.mismatches, verdict);
	gs_row_count("fallbacks", A.fallbacks, B.fallbacks, B.fallbacks > A.fallbacks ? "(more)" : "");
	{
		double ma = (double)A.build_ns / 1e6, mb = (double)B.build_ns / 1e6;
		double p = gs_pct(ma, mb);
		char chg[32];
		snprintf(chg, sizeof(chg), isinf(p) ? "new" : "%+.1f%%", p);
		printf("  %-16s %14.3f %14.3f %10s\n", "build ms", ma, mb, chg);
	}
	if (!per_step && (A.steps || B.steps))
		printf("  (only one file has \"steps\": launches compared in total)\n");
	if (regressions)
		printf("verdict: REGRESSION (%d limit%s exceeded)\n", regressions,
		       regressions > 1 ? "s" : "");
	else
		printf("verdict: ok\n");
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
