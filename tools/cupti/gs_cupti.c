/*
 * libgscupti.so: an independent count of the kernels a program really ran,
 * from CUPTI's activity records, to check graphshim's own statistics and to
 * see that a program under graphshim runs the same kernels as without it.
 *
 * Load it as a CUDA injection library (CUDA_INJECTION64_PATH=.../libgscupti.so:
 * the driver dlopens it in cuInit and calls InitializeInjection) or with
 * LD_PRELOAD (a constructor does the same setup at load time).  It enables
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (KIND_KERNEL would serialise the
 * program's kernels), MEMCPY and MEMSET, counts the records, and at exit
 * writes one line
 *     gs-cupti: pid=P kernels=N graph_kernels=G memcpy=C memset=S dropped=D own=O
 * to the file named by GS_CUPTI_OUT (%p becomes the pid; appended), or to
 * stderr when that is unset.  graph_kernels are the kernel records with a
 * graph id: those that ran as nodes of a CUDA graph, whoever built it.
 * own: graphshim's own kernels (its device updater, gs_du_*: a node of a
 * graph whose nodes it patches on the GPU, run where a launch patches
 * some), counted apart and left out of kernels and graph_kernels, so that
 * kernels is the program's with and without graphshim.  A
 * process that ran no kernel writes nothing (frameworks start helper
 * processes that inherit the environment).
 *
 * GS_CUPTI_TIMELINE=path (%p as above) also writes the GPU's timeline, one
 * line a record as CUPTI delivers them (not sorted):
 *     K start end stream graph name      a kernel
 *     C start end stream graph kind bytes a copy (CUPTI's copyKind: 1 HtoD, 2 DtoH, 8 DtoD)
 *     S start end stream graph bytes      a memset
 * times in ns on CUPTI's clock, graph 0 outside graphs: where a step's GPU
 * time goes, stream by stream, with and without graphshim.
 *
 * libcupti is opened at run time (one the process has already loaded, else
 * GS_CUPTI_LIB, else libcupti.so.13, else libcupti.so), so this library
 * links against libdl and libpthread only.
 * It only observes: kernels, arguments and results are the program's own.
 * Every CUPTI return code is checked; the first failure is reported on
 * stderr, prefixed "gs-cupti:", and counting stops where it cannot go on.
 */
#define _GNU_SOURCE
#include <cupti.h>
/* Where a newer CUPTI moves the kernel record used below among the
 * deprecated versions, it is still declared there. */
#if __has_include(<cupti_activity_deprecated.h>)
#include <cupti_activity_deprecated.h>
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GS_CUPTI_EXPORT __attribute__((visibility("default")))

/* Activity buffers: 8 MiB holds ~40k kernel records. */
#define GS_CUPTI_BUF_SIZE (8u << 20)
#define GS_CUPTI_BUF_ALIGN 8

/*
 * The CUPTI entry points used, typed from cupti.h itself so a header that
 * changes a signature fails to compile here.
 */
static struct {
	__typeof__(cuptiActivityRegisterCallbacks) *register_callbacks;
	__typeof__(cuptiActivityEnable) *enable;
	__typeof__(cuptiActivityFlushAll) *flush_all;
	__typeof__(cuptiActivityGetNextRecord) *next_record;
	__typeof__(cuptiActivityGetNumDroppedRecords) *dropped;
	__typeof__(cuptiGetResultString) *result_string;
} gs_cp;

static atomic_ullong gs_cp_kernels, gs_cp_graph_kernels, gs_cp_memcpy, gs_cp_memset, gs_cp_dropped,
	gs_cp_own;
static atomic_bool gs_cp_failed_once;
static pthread_mutex_t gs_cp_tl_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *gs_cp_tl;		/* the timeline, or NULL */
static char gs_cp_tl_path[PATH_MAX];
static pthread_once_t gs_cp_once = PTHREAD_ONCE_INIT;
static bool gs_cp_ok;
static pid_t gs_cp_pid;

/* The first failure only: one line on stderr, with CUPTI's name for it. */
static void gs_cp_fail(const char *what, CUptiResult r)
{
	const char *name = NULL;
	char line[512];
	int n;
	if (atomic_exchange(&gs_cp_failed_once, true))
		return;
	if (gs_cp.result_string && gs_cp.result_string(r, &name) != CUPTI_SUCCESS)
		name = NULL;
	n = snprintf(line, sizeof(line), "gs-cupti: pid=%ld: %s failed: %s (%d)\n", (long)getpid(), what,
		     name ? name : "unknown error", (int)r);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

static void gs_cp_fail_msg(const char *msg)
{
	char line[512];
	int n;
	if (atomic_exchange(&gs_cp_failed_once, true))
		return;
	n = snprintf(line, sizeof(line), "gs-cupti: pid=%ld: %s\n", (long)getpid(), msg);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

/* True on failure (reported). */
static bool gs_cp_check(const char *what, CUptiResult r)
{
	if (r == CUPTI_SUCCESS)
		return false;
	gs_cp_fail(what, r);
	return true;
}

static void CUPTIAPI gs_cp_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = aligned_alloc(GS_CUPTI_BUF_ALIGN, GS_CUPTI_BUF_SIZE);
	/* Without a buffer CUPTI drops the records and counts them dropped. */
	*buffer = p;
	*size = p ? GS_CUPTI_BUF_SIZE : 0;
	*max_records = 0;
}

/*
 * The kernel record's graph id.  Kernel records grew version by version
 * (CUpti_ActivityKernel4 ... 10) by appending fields; graphId has kept its
 * offset since it was added, so the newest layout this header knows reads
 * it from any record a newer CUPTI delivers.
 */
static uint32_t gs_cp_kernel_graph_id(const CUpti_Activity *rec)
{
	const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)(const void *)rec;
	return k->graphId;
}

/* Whether a kernel record is one of graphshim's own kernels (its device updater). */
static bool gs_cp_kernel_own(const CUpti_Activity *rec)
{
	const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)(const void *)rec;
	return k->name && !strncmp(k->name, "gs_du_", 6);
}

/* One timeline line (GS_CUPTI_TIMELINE); records of other kinds are skipped. */
static void gs_cp_timeline(const CUpti_Activity *rec)
{
	pthread_mutex_lock(&gs_cp_tl_lock);
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)(const void *)rec;
		fprintf(gs_cp_tl, "K %llu %llu %u %u %s\n", (unsigned long long)k->start,
			(unsigned long long)k->end, k->streamId, k->graphId, k->name ? k->name : "?");
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)(const void *)rec;
		fprintf(gs_cp_tl, "C %llu %llu %u %u %u %llu\n", (unsigned long long)c->start,
			(unsigned long long)c->end, c->streamId, c->graphId, (unsigned)c->copyKind,
			(unsigned long long)c->bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)(const void *)rec;
		fprintf(gs_cp_tl, "S %llu %llu %u %u %llu\n", (unsigned long long)m->start,
			(unsigned long long)m->end, m->streamId, m->graphId, (unsigned long long)m->bytes);
		break;
	}
	default:
		break;
	}
	pthread_mutex_unlock(&gs_cp_tl_lock);
}

static void CUPTIAPI gs_cp_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
					    size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	(void)size;
	if (buffer && valid) {
		for (;;) {
			CUptiResult r = gs_cp.next_record(buffer, valid, &rec);
			if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
				break;
			if (gs_cp_check("cuptiActivityGetNextRecord", r))
				break;
			if (gs_cp_tl)
				gs_cp_timeline(rec);
			switch (rec->kind) {
			case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			case CUPTI_ACTIVITY_KIND_KERNEL:
				if (gs_cp_kernel_own(rec)) {
					atomic_fetch_add(&gs_cp_own, 1);
					break;
				}
				atomic_fetch_add(&gs_cp_kernels, 1);
				if (gs_cp_kernel_graph_id(rec))
					atomic_fetch_add(&gs_cp_graph_kernels, 1);
				break;
			case CUPTI_ACTIVITY_KIND_MEMCPY:
				atomic_fetch_add(&gs_cp_memcpy, 1);
				break;
			case CUPTI_ACTIVITY_KIND_MEMSET:
				atomic_fetch_add(&gs_cp_memset, 1);
				break;
			default:
				break;
			}
		}
	}
	if (!gs_cp_check("cuptiActivityGetNumDroppedRecords", gs_cp.dropped(ctx, stream_id, &dropped)))
		atomic_fetch_add(&gs_cp_dropped, dropped);
	free(buffer);
}

/*
 * Expand %p to the pid and %% to a percent sign (the rule graphshim's
 * GRAPHSHIM_STATS follows).  True when the result does not fit.
 */
static bool gs_cp_expand(const char *path, char *out, size_t len)
{
	size_t o = 0;
	for (const char *p = path; *p; p++) {
		char tmp[24];
		const char *add = tmp;
		size_t n;
		if (p[0] == '%' && p[1] == 'p') {
			n = (size_t)snprintf(tmp, sizeof(tmp), "%ld", (long)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			tmp[0] = '%';
			n = 1;
			p++;
		} else {
			add = p;
			n = 1;
		}
		if (o + n >= len)
			return true;
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = '\0';
	return false;
}

/* At exit: deliver every record, then write the line (only with kernels). */
static void gs_cp_fini(void)
{
	char line[256], path[PATH_MAX];
	const char *env = getenv("GS_CUPTI_OUT");
	size_t dropped = 0;
	int fd = 2, n;
	/* A forked child inherits this handler but not CUPTI's threads. */
	if (!gs_cp_ok || getpid() != gs_cp_pid)
		return;
	gs_cp_check("cuptiActivityFlushAll", gs_cp.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	if (!gs_cp_check("cuptiActivityGetNumDroppedRecords", gs_cp.dropped(NULL, 0, &dropped)))
		atomic_fetch_add(&gs_cp_dropped, dropped);
	pthread_mutex_lock(&gs_cp_tl_lock);
	if (gs_cp_tl && fclose(gs_cp_tl))
		gs_cp_fail_msg("writing the timeline failed");
	if (gs_cp_tl && atomic_load(&gs_cp_kernels) == 0)
		unlink(gs_cp_tl_path); /* a helper process: nothing, as for the counts */
	gs_cp_tl = NULL;
	pthread_mutex_unlock(&gs_cp_tl_lock);
	if (atomic_load(&gs_cp_kernels) == 0)
		return;
	n = snprintf(line, sizeof(line),
		     "gs-cupti: pid=%ld kernels=%llu graph_kernels=%llu memcpy=%llu memset=%llu dropped=%llu "
		     "own=%llu\n",
		     (long)getpid(), (unsigned long long)atomic_load(&gs_cp_kernels),
		     (unsigned long long)atomic_load(&gs_cp_graph_kernels),
		     (unsigned long long)atomic_load(&gs_cp_memcpy),
		     (unsigned long long)atomic_load(&gs_cp_memset),
		     (unsigned long long)atomic_load(&gs_cp_dropped),
		     (unsigned long long)atomic_load(&gs_cp_own));
	if (n <= 0 || (size_t)n >= sizeof(line))
		return;
	if (env && *env) {
		if (gs_cp_expand(env, path, sizeof(path))) {
			gs_cp_fail_msg("GS_CUPTI_OUT is too long; writing to stderr");
		} else {
			fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
			if (fd < 0) {
				char msg[PATH_MAX + 64];
				snprintf(msg, sizeof(msg), "cannot open %s (%s); writing to stderr", path,
					 strerror(errno));
				gs_cp_fail_msg(msg);
				fd = 2;
			}
		}
	}
	/* One write of one short line: appends from several processes stay whole. */
	if (write(fd, line, (size_t)n) != n)
		gs_cp_fail_msg("writing the counts failed");
	if (fd != 2)
		close(fd);
}

static void *gs_cp_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		char msg[256];
		snprintf(msg, sizeof(msg), "libcupti has no %s", name);
		gs_cp_fail_msg(msg);
	}
	return p;
}

static void gs_cp_setup(void)
{
	const char *env = getenv("GS_CUPTI_LIB");
	const char *names[] = {env && *env ? env : NULL, "libcupti.so.13", "libcupti.so"};
	void *h = NULL;
	char msg[PATH_MAX + 128];

	/* A CUPTI the process has already loaded (libtorch_cuda links one)
	 * comes first: two copies of CUPTI in one process would fight over the
	 * driver's callbacks. */
	for (size_t i = 1; i < sizeof(names) / sizeof(names[0]) && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
		if (names[i])
			h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(msg, sizeof(msg), "cannot load libcupti (GS_CUPTI_LIB=%s): %s", env ? env : "",
			 dlerror());
		gs_cp_fail_msg(msg);
		return;
	}
	gs_cp.register_callbacks = gs_cp_sym(h, "cuptiActivityRegisterCallbacks");
	gs_cp.enable = gs_cp_sym(h, "cuptiActivityEnable");
	gs_cp.flush_all = gs_cp_sym(h, "cuptiActivityFlushAll");
	gs_cp.next_record = gs_cp_sym(h, "cuptiActivityGetNextRecord");
	gs_cp.dropped = gs_cp_sym(h, "cuptiActivityGetNumDroppedRecords");
	gs_cp.result_string = gs_cp_sym(h, "cuptiGetResultString");
	if (!gs_cp.register_callbacks || !gs_cp.enable || !gs_cp.flush_all || !gs_cp.next_record ||
	    !gs_cp.dropped || !gs_cp.result_string)
		return;

	if (gs_cp_check("cuptiActivityRegisterCallbacks",
			gs_cp.register_callbacks(gs_cp_buffer_requested, gs_cp_buffer_completed)))
		return;
	const char *tl = getenv("GS_CUPTI_TIMELINE");
	if (tl && *tl) {
		if (gs_cp_expand(tl, gs_cp_tl_path, sizeof(gs_cp_tl_path)))
			gs_cp_fail_msg("GS_CUPTI_TIMELINE is too long; no timeline");
		else if (!(gs_cp_tl = fopen(gs_cp_tl_path, "we"))) {
			snprintf(msg, sizeof(msg), "cannot open %s (%s); no timeline", gs_cp_tl_path,
				 strerror(errno));
			gs_cp_fail_msg(msg);
		}
	}
	/* Once callbacks are registered, anything enabled must be flushed at exit. */
	gs_cp_pid = getpid();
	gs_cp_ok = true;
	if (atexit(gs_cp_fini)) {
		gs_cp_fail_msg("atexit failed; no counts will be written");
		gs_cp_ok = false;
		return;
	}
	static const struct {
		CUpti_ActivityKind kind;
		const char *name;
	} kinds[] = {
		{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "cuptiActivityEnable(CONCURRENT_KERNEL)"},
		{CUPTI_ACTIVITY_KIND_MEMCPY, "cuptiActivityEnable(MEMCPY)"},
		{CUPTI_ACTIVITY_KIND_MEMSET, "cuptiActivityEnable(MEMSET)"},
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		gs_cp_check(kinds[i].name, gs_cp.enable(kinds[i].kind));
}

/* The driver calls this from cuInit when CUDA_INJECTION64_PATH names us. */
GS_CUPTI_EXPORT int InitializeInjection(void)
{
	pthread_once(&gs_cp_once, gs_cp_setup);
	return gs_cp_ok ? 1 : 0;
}

/*
 * Preloaded: set up at load.  Loaded by the driver as the injection library,
 * the constructor runs inside cuInit's dlopen, before InitializeInjection;
 * leave the setup to that call then (same result, at the point the driver
 * documents for it).
 */
__attribute__((constructor)) static void gs_cp_ctor(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	Dl_info info;
	if (inj && *inj && dladdr((void *)gs_cp_ctor, &info) && info.dli_fname) {
		char a[PATH_MAX], b[PATH_MAX];
		if (realpath(inj, a) && realpath(info.dli_fname, b) && !strcmp(a, b))
			return;
	}
	pthread_once(&gs_cp_once, gs_cp_setup);
}
