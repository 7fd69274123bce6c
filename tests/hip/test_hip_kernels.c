/*
 * The metadata parser (shim/hip/hip_codeobj.c) on the code objects that
 * hipcc builds from kernels/<w>.cu, checked against the kernels' own source.
 * The expected layouts are not written down anywhere: this program reads
 * every `extern "C" __global__ void name(...)` signature in kernels/<w>.cu,
 * lays the parameters out as the compiler must (each at the next multiple of
 * its alignment; sizes from a table of the types kernels use) and compares
 * every kernel's offsets, sizes and total with what the parser read from
 * kernels/<w>.hsaco.  A kernel in the source but not in the code object, one
 * in the code object but not in the source, a parameter type missing from
 * the table or any difference fails.  Adding a kernel or a workload keeps
 * the test honest without touching it.
 *
 * Exit 0 pass, 1 fail, 77 skip (no code object built: hipcc is absent).
 * Environment: top_srcdir (the .cu files), top_builddir (the .hsaco files).
 * Given arguments `SRC.cu CODEOBJ ...` it checks those pairs instead.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "hip_codeobj.h"

#define GS_T_MAXK 256  /* kernels in one source file */
#define GS_T_MAXA 64   /* parameters of one kernel */
#define GS_T_NAME 128

typedef struct gs_t_sig {
	char name[GS_T_NAME];
	uint32_t nargs, total;
	gs_arg_t arg[GS_T_MAXA];
	char type[GS_T_MAXA][GS_T_NAME];
} gs_t_sig_t;

static int gs_t_fails;
static bool gs_t_quiet; /* the self-test's expected failures print nothing */

static void gs_t_fail(const char *fmt, ...)
{
	va_list ap;
	gs_t_fails++;
	if (gs_t_quiet)
		return;
	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

/*
 * Sizes and alignments of the parameter types kernels use, as the AMDGPU
 * (and NVPTX) ABI lays them out: pointers and 64-bit scalars 8, vector types
 * aligned to their size.  A type not listed fails the test rather than
 * being guessed.
 */
static const struct {
	const char *type;
	uint32_t size, align;
} gs_t_types[] = {
	{"char", 1, 1}, {"signed char", 1, 1}, {"unsigned char", 1, 1}, {"bool", 1, 1},
	{"int8_t", 1, 1}, {"uint8_t", 1, 1},
	{"short", 2, 2}, {"short int", 2, 2}, {"unsigned short", 2, 2}, {"unsigned short int", 2, 2},
	{"int16_t", 2, 2}, {"uint16_t", 2, 2}, {"__half", 2, 2}, {"half", 2, 2},
	{"int", 4, 4}, {"signed", 4, 4}, {"signed int", 4, 4}, {"unsigned", 4, 4},
	{"unsigned int", 4, 4}, {"int32_t", 4, 4}, {"uint32_t", 4, 4}, {"float", 4, 4},
	{"long", 8, 8}, {"long int", 8, 8}, {"unsigned long", 8, 8}, {"unsigned long int", 8, 8},
	{"long long", 8, 8}, {"long long int", 8, 8}, {"unsigned long long", 8, 8},
	{"unsigned long long int", 8, 8}, {"int64_t", 8, 8}, {"uint64_t", 8, 8},
	{"size_t", 8, 8}, {"ptrdiff_t", 8, 8}, {"intptr_t", 8, 8}, {"uintptr_t", 8, 8},
	{"double", 8, 8},
	{"float2", 8, 8}, {"int2", 8, 8}, {"uint2", 8, 8},
	{"float4", 16, 16}, {"int4", 16, 16}, {"uint4", 16, 16}, {"double2", 16, 16},
	/* The workloads' own structs passed by value. */
	{"fw_wide", 768, 8}, /* fwstep.cu: 96 unsigned long long */
};

/* Words of a parameter that do not change its layout. */
static bool gs_t_qualifier(const char *w)
{
	static const char *const q[] = {"const", "volatile", "__restrict__", "__restrict", "restrict"};
	for (size_t i = 0; i < GS_ARRAY_SIZE(q); i++)
		if (!strcmp(w, q[i]))
			return true;
	return false;
}

/* Words that can only be part of a type, never a parameter's name. */
static bool gs_t_type_word(const char *w)
{
	static const char *const t[] = {"char", "short", "int", "long", "unsigned", "signed",
					"float", "double", "bool", "void"};
	for (size_t i = 0; i < GS_ARRAY_SIZE(t); i++)
		if (!strcmp(w, t[i]))
			return true;
	return false;
}

static bool gs_t_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * One parameter's text -> its type name (for messages), size and alignment.
 * Pointers (and arrays, which decay to pointers) are 8 bytes.  Returns true
 * when the type is not in the table.
 */
static bool gs_t_param(const char *p, size_t n, char *type, uint32_t *size, uint32_t *align)
{
	char words[16][GS_T_NAME];
	int nw = 0;
	bool ptr = false, ref = false;
	for (size_t i = 0; i < n;) {
		if (gs_t_ident(p[i])) {
			size_t s = i;
			while (i < n && gs_t_ident(p[i]))
				i++;
			if (nw < 16 && i - s < GS_T_NAME) {
				memcpy(words[nw], p + s, i - s);
				words[nw++][i - s] = '\0';
			}
			continue;
		}
		ptr |= p[i] == '*' || p[i] == '[';
		ref |= p[i] == '&';
		i++;
	}
	/* The last word is the name unless the parameter is unnamed. */
	if (nw > 1 && !gs_t_type_word(words[nw - 1]) && !gs_t_qualifier(words[nw - 1]))
		nw--;
	type[0] = '\0';
	for (int i = 0; i < nw; i++) {
		if (gs_t_qualifier(words[i]))
			continue;
		if (type[0] && strlen(type) + 1 < GS_T_NAME)
			strcat(type, " ");
		if (strlen(type) + strlen(words[i]) < GS_T_NAME)
			strcat(type, words[i]);
	}
	if (ref)
		return true; /* a kernel cannot take a reference */
	if (ptr) {
		if (strlen(type) + 2 < GS_T_NAME)
			strcat(type, " *");
		*size = *align = 8;
		return false;
	}
	for (size_t i = 0; i < GS_ARRAY_SIZE(gs_t_types); i++)
		if (!strcmp(type, gs_t_types[i].type)) {
			*size = gs_t_types[i].size;
			*align = gs_t_types[i].align;
			return false;
		}
	return true;
}

/* Blank out comments and preprocessor lines, keeping offsets. */
static void gs_t_strip(char *s)
{
	bool bol = true;
	for (char *p = s; *p;) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			e = e ? e + 2 : p + strlen(p);
			for (; p < e; p++)
				if (*p != '\n')
					*p = ' ';
			continue;
		}
		if ((p[0] == '/' && p[1] == '/') || (bol && *p == '#')) {
			/* A preprocessor line may continue with a backslash. */
			for (; *p && (*p != '\n' || (p > s && p[-1] == '\\')); p++)
				if (*p != '\n')
					*p = ' ';
			continue;
		}
		if (*p == '\n')
			bol = true;
		else if (*p != ' ' && *p != '\t')
			bol = false;
		p++;
	}
}

static const char *gs_t_skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* The word at p (identifier characters); its length. */
static size_t gs_t_word(const char *p)
{
	size_t n = 0;
	while (gs_t_ident(p[n]))
		n++;
	return n;
}

/*
 * Every __global__ kernel of a source text (comments already blanked).
 * `file` is for messages.  Returns the number found; failures are counted.
 */
static size_t gs_t_signatures(const char *file, const char *text, gs_t_sig_t *sig, size_t max)
{
	size_t n = 0;
	for (const char *at = text; (at = strstr(at, "__global__")) != NULL; at += 10) {
		if ((at > text && gs_t_ident(at[-1])) || gs_t_ident(at[10]))
			continue;
		/* Module loaders find kernels by their plain name: extern "C". */
		const char *b = at;
		while (b > text && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n'))
			b--;
		if (b - text < 10 || memcmp(b - 3, "\"C\"", 3)) {
			gs_t_fail("%s:%zu: a __global__ kernel without extern \"C\" (its name would be mangled)",
				  file, (size_t)(at - text));
			continue;
		}
		const char *p = gs_t_skip_ws(at + 10);
		size_t w = gs_t_word(p);
		if (w != 4 || memcmp(p, "void", 4)) {
			gs_t_fail("%s: a __global__ function not returning void", file);
			continue;
		}
		p = gs_t_skip_ws(p + 4);
		if (!strncmp(p, "__launch_bounds__", 17)) {
			p = strchr(p, ')');
			if (!p)
				break;
			p = gs_t_skip_ws(p + 1);
		}
		w = gs_t_word(p);
		const char *paren = gs_t_skip_ws(p + w);
		if (!w || w >= GS_T_NAME || *paren != '(') {
			gs_t_fail("%s: cannot read the kernel declared at offset %zu", file, (size_t)(at - text));
			continue;
		}
		if (n == max) {
			gs_t_fail("%s: more than %zu kernels", file, max);
			break;
		}
		gs_t_sig_t *s = &sig[n];
		memset(s, 0, sizeof(*s));
		memcpy(s->name, p, w);
		/* Parameters: split at commas outside brackets, up to the matching ')'. */
		const char *q = paren + 1, *start = q;
		int depth = 0;
		bool bad = false;
		for (;; q++) {
			if (!*q) {
				gs_t_fail("%s: %s: unterminated parameter list", file, s->name);
				return n;
			}
			if (*q == '(' || *q == '[' || *q == '<')
				depth++;
			else if ((*q == ')' || *q == ']' || *q == '>') && depth > 0)
				depth--;
			else if ((*q == ',' && depth == 0) || (*q == ')' && depth == 0)) {
				const char *e = q;
				const char *t = gs_t_skip_ws(start);
				bool empty = t == e;
				bool is_void = gs_t_word(t) == 4 && !memcmp(t, "void", 4) && gs_t_skip_ws(t + 4) == e;
				if (!(s->nargs == 0 && *q == ')' && (empty || is_void))) {
					uint32_t size = 0, align = 1;
					if (s->nargs == GS_T_MAXA) {
						gs_t_fail("%s: %s: more than %d parameters", file, s->name, GS_T_MAXA);
						bad = true;
						break;
					}
					char *type = s->type[s->nargs];
					if (gs_t_param(start, (size_t)(e - start), type, &size, &align)) {
						gs_t_fail("%s: %s: parameter %u has type '%s', whose size this test "
							  "does not know: add it to gs_t_types[]",
							  file, s->name, s->nargs, type);
						bad = true;
					}
					uint32_t off = (s->total + align - 1) / align * align;
					s->arg[s->nargs].off = off;
					s->arg[s->nargs].size = size;
					s->total = off + size;
					s->nargs++;
				}
				start = q + 1;
				if (*q == ')')
					break;
			}
		}
		if (!bad)
			n++;
	}
	return n;
}

static char *gs_t_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *b = NULL;
	long n;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (b = malloc((size_t)n + 1)) != NULL) {
		if (fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		} else {
			b[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return b;
}

/* Differences between a source signature and a parsed layout; 0 when equal. */
static int gs_t_compare(const char *what, const gs_t_sig_t *s, const gs_layout_t *l, bool quiet)
{
	int bad = 0;
	if (!l) {
		if (!quiet)
			gs_t_fail("%s: kernel %s is not in the code object's metadata", what, s->name);
		return 1;
	}
	if (l->nargs != s->nargs) {
		if (!quiet)
			gs_t_fail("%s: %s: %u arguments in the metadata, %u in the source", what, s->name,
				  l->nargs, s->nargs);
		return 1;
	}
	for (uint32_t i = 0; i < s->nargs; i++)
		if (l->arg[i].off != s->arg[i].off || l->arg[i].size != s->arg[i].size) {
			if (!quiet)
				gs_t_fail("%s: %s: argument %u (%s): offset %u size %u in the metadata, "
					  "offset %u size %u from the source",
					  what, s->name, i, s->type[i], l->arg[i].off, l->arg[i].size,
					  s->arg[i].off, s->arg[i].size);
			bad++;
		}
	if (!bad && l->total != s->total) {
		if (!quiet)
			gs_t_fail("%s: %s: total %u in the metadata, %u from the source", what, s->name,
				  l->total, s->total);
		bad++;
	}
	return bad;
}

/*
 * The signature reader on text with known answers, and the comparison on a
 * layout that differs: a reader that silently skipped parameters, or a
 * comparison that passed everything, would make the real check vacuous.
 */
static void gs_t_selftest(void)
{
	char text[] =
		"/* extern \"C\" __global__ void in_comment(int x) */\n"
		"#define K extern \"C\" __global__ void in_macro(int x)\n"
		"extern \"C\" __global__ void a(char c, double d, const int *__restrict__ p,\n"
		"\tfloat4 v, short s, unsigned long long q, float w[], unsigned u)\n{ }\n"
		"extern \"C\" __global__ void __launch_bounds__(256) b(void) { }\n"
		"extern \"C\" __global__ void c() { }\n";
	gs_t_strip(text);
	gs_t_sig_t sig[4];
	size_t n = gs_t_signatures("selftest", text, sig, 4);
	static const uint32_t off[] = {0, 8, 16, 32, 48, 56, 64, 72}, size[] = {1, 8, 8, 16, 2, 8, 8, 4};
	if (n != 3 || strcmp(sig[0].name, "a") || sig[0].nargs != 8 || sig[0].total != 76 ||
	    strcmp(sig[1].name, "b") || sig[1].nargs || strcmp(sig[2].name, "c") || sig[2].nargs) {
		gs_t_fail("selftest: the signature reader found %zu kernels, not a(8 args), b(), c()", n);
		return;
	}
	for (uint32_t i = 0; i < 8; i++)
		if (sig[0].arg[i].off != off[i] || sig[0].arg[i].size != size[i])
			gs_t_fail("selftest: a: argument %u at %u+%u, want %u+%u", i, sig[0].arg[i].off,
				  sig[0].arg[i].size, off[i], size[i]);
	struct {
		gs_layout_t l;
		gs_arg_t a[8];
	} wrong;
	memcpy(wrong.a, sig[0].arg, sizeof(wrong.a));
	wrong.l.nargs = 8;
	wrong.l.total = 76;
	if (gs_t_compare("selftest", &sig[0], &wrong.l, true))
		gs_t_fail("selftest: an equal layout compared unequal");
	wrong.a[5].off += 4;
	if (!gs_t_compare("selftest", &sig[0], &wrong.l, true))
		gs_t_fail("selftest: a moved argument compared equal");
	wrong.a[5].off -= 4;
	wrong.l.nargs = 7;
	if (!gs_t_compare("selftest", &sig[0], &wrong.l, true))
		gs_t_fail("selftest: a missing argument compared equal");
	char unknown[] = "extern \"C\" __global__ void u(struct foo f) { }";
	int before = gs_t_fails;
	gs_t_quiet = true;
	size_t got = gs_t_signatures("selftest", unknown, sig, 4);
	gs_t_quiet = false;
	bool caught = got == 0 && gs_t_fails == before + 1;
	gs_t_fails = before;
	if (!caught)
		gs_t_fail("selftest: an unknown parameter type was accepted");
}

/* Check one source file against one code object; counts kernels and arguments. */
static void gs_t_check(const char *src, const char *co_path, size_t *nk, size_t *na)
{
	size_t len;
	char *text = gs_t_slurp(src, &len);
	if (!text) {
		gs_t_fail("cannot read %s", src);
		return;
	}
	gs_t_strip(text);
	static gs_t_sig_t sig[GS_T_MAXK];
	size_t n = gs_t_signatures(src, text, sig, GS_T_MAXK);
	free(text);
	if (n == 0)
		gs_t_fail("%s: no extern \"C\" __global__ kernel found", src);

	/* The parser on the file (hipModuleLoad) and on the image (hipModuleLoadData,
	 * which gets no size: the span must cover the whole file). */
	gs_hip_codeobj_t co, co_mem;
	struct stat st;
	if (stat(co_path, &st)) {
		gs_t_fail("%s: missing (make hip-kernels builds it from %s)", co_path, src);
		return;
	}
	if (gs_hip_codeobj_parse_file(co_path, &co)) {
		gs_t_fail("%s: the metadata parser failed", co_path);
		return;
	}
	char *img = gs_t_slurp(co_path, &len);
	if (!img) {
		gs_t_fail("cannot read %s", co_path);
	} else {
		size_t span = gs_hip_codeobj_span(img);
		if (span != len)
			gs_t_fail("%s: span %zu, file %zu bytes", co_path, span, len);
		if (gs_hip_codeobj_parse(img, span, &co_mem)) {
			gs_t_fail("%s: the parser failed on the image of its span", co_path);
		} else {
			if (co_mem.n != co.n)
				gs_t_fail("%s: %zu kernels from the image, %zu from the file", co_path,
					  co_mem.n, co.n);
			/* Reported once, below, when the file's layouts are wrong too. */
			for (size_t i = 0; i < n; i++)
				if (gs_t_compare(co_path, &sig[i],
						 gs_hip_codeobj_find(&co_mem, sig[i].name), true) &&
				    !gs_t_compare(co_path, &sig[i],
						  gs_hip_codeobj_find(&co, sig[i].name), true))
					gs_t_fail("%s: %s: the image's layout differs from the file's",
						  co_path, sig[i].name);
			gs_hip_codeobj_free(&co_mem);
		}
		free(img);
	}

	for (size_t i = 0; i < n; i++) {
		const gs_layout_t *l = gs_hip_codeobj_find(&co, sig[i].name);
		if (gs_t_compare(co_path, &sig[i], l, false))
			continue;
		printf("ok %s %s(", strrchr(co_path, '/') ? strrchr(co_path, '/') + 1 : co_path,
		       sig[i].name);
		for (uint32_t a = 0; a < sig[i].nargs; a++)
			printf("%s%s @%u+%u", a ? ", " : "", sig[i].type[a], l->arg[a].off, l->arg[a].size);
		printf(") total %u\n", l->total);
		(*nk)++;
		*na += sig[i].nargs;
	}
	/* Nothing in the code object that the source does not declare. */
	for (size_t k = 0; k < co.n; k++) {
		bool known = false;
		for (size_t i = 0; i < n && !known; i++)
			known = !strcmp(co.k[k].name, sig[i].name);
		if (!known)
			gs_t_fail("%s: kernel %s in the metadata has no signature in %s", co_path,
				  co.k[k].name, src);
	}
	if (co.n != n)
		gs_t_fail("%s: %zu kernels in the metadata, %zu in %s", co_path, co.n, n, src);
	gs_hip_codeobj_free(&co);
}

static int gs_t_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	gs_t_selftest();
	size_t nk = 0, na = 0, nfiles = 0;
	if (argc > 1) {
		if (argc % 2 == 0) {
			fprintf(stderr, "usage: %s [SRC.cu CODEOBJ]...\n", argv[0]);
			return 2;
		}
		for (int i = 1; i + 1 < argc; i += 2, nfiles++)
			gs_t_check(argv[i], argv[i + 1], &nk, &na);
	} else {
		const char *src = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
		const char *bld = getenv("top_builddir") ? getenv("top_builddir") : ".";
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/kernels", src);
		DIR *d = opendir(dir);
		if (!d) {
			printf("FAIL: cannot open %s\n", dir);
			return 1;
		}
		char *names[256];
		size_t nn = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL && nn < GS_ARRAY_SIZE(names)) {
			size_t l = strlen(e->d_name);
			if (l > 3 && !strcmp(e->d_name + l - 3, ".cu"))
				names[nn++] = strndup(e->d_name, l - 3);
		}
		closedir(d);
		qsort(names, nn, sizeof(*names), gs_t_cmp_str);
		/* No code object at all: hipcc is absent, so nothing was built. */
		size_t present = 0;
		char (*cu)[4096] = calloc(nn ? nn : 1, sizeof(*cu));
		char (*co)[4096] = calloc(nn ? nn : 1, sizeof(*co));
		for (size_t i = 0; i < nn; i++) {
			struct stat st;
			if (snprintf(cu[i], sizeof(cu[i]), "%s/%s.cu", dir, names[i]) >= (int)sizeof(cu[i]) ||
			    snprintf(co[i], sizeof(co[i]), "%s/kernels/%s.hsaco", bld, names[i]) >=
				    (int)sizeof(co[i]))
				gs_t_fail("path too long for %s", names[i]);
			present += !stat(co[i], &st);
		}
		if (!present && !gs_t_fails) {
			printf("SKIP: no kernels/*.hsaco under %s (hipcc absent?)\n", bld);
			return 77;
		}
		if (nn == 0)
			gs_t_fail("no kernels/*.cu under %s", src);
		/* Some built but not all: every .cu must have its code object. */
		for (size_t i = 0; i < nn; i++, nfiles++)
			gs_t_check(cu[i], co[i], &nk, &na);
		/* decode.cu at -O0 (tests/hip/local.mk): hidden arguments present. */
		char o0[4096], o0_src[4096];
		if (snprintf(o0, sizeof(o0), "%s/tests/hip/decode-O0.hsaco", bld) < (int)sizeof(o0) &&
		    snprintf(o0_src, sizeof(o0_src), "%s/decode.cu", dir) < (int)sizeof(o0_src)) {
			size_t len;
			char *img = gs_t_slurp(o0, &len);
			if (!img) {
				gs_t_fail("%s: missing", o0);
			} else {
				if (!memmem(img, len, "hidden_", 7))
					gs_t_fail("%s: no hidden argument in the metadata", o0);
				free(img);
				gs_t_check(o0_src, o0, &nk, &na);
				nfiles++;
			}
		}
		for (size_t i = 0; i < nn; i++)
			free(names[i]);
		free(cu);
		free(co);
	}
	printf("%s: %zu kernels, %zu arguments in %zu code objects match their source signatures"
	       "; %d failure%s\n",
	       gs_t_fails ? "FAIL" : "PASS", nk, na, nfiles, gs_t_fails, gs_t_fails == 1 ? "" : "s");
	return gs_t_fails ? 1 : 0;
}
