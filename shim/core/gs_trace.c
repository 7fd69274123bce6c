/*
 * The trace dump: Chrome trace-event JSON in the array form, which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open.
 *
 * File layout: "[\n", then one event object per line, each followed by
 * ",\n"; gs_trace_close() ends with metadata events, the last one without a
 * comma, and "]\n", so a closed trace is strict JSON.  Events are formatted
 * into one buffer (allocated at open, guarded by a mutex) and written with
 * write(2) when 64 KiB have accumulated and at close.  Only whole events
 * are ever written, so a process that dies leaves a file that ends in
 * "},\n"; removing the trailing comma and appending "]" makes it strict JSON
 * again (the viewers accept it as it is; `graphshim trace summarize` does
 * that repair).
 *
 * Tracks: an event that concerns a stream (launch, flush, learned, built,
 * replay, mismatch, retired) carries as "tid" a synthetic track number for
 * that stream, GS_TRACE_STREAM_TID + the order in which the stream was
 * first seen, and the first such event is preceded by a "thread_name"
 * metadata event naming the track "stream 0x...".  Perfetto thus shows one
 * track per stream.  Synthetic numbers start at 2^24, above any Linux
 * thread id (pid_max is at most 2^22).  Events without a stream (fallback)
 * use the calling thread's id.  Every event also names its stream in args.
 *
 * Timestamps are CLOCK_MONOTONIC in microseconds, with nanosecond decimals.
 * The number of events is capped; metadata events are not counted, and
 * events past the cap are counted as dropped.  A forked child stops tracing
 * (its events would interleave with the parent's in one file); use %p in
 * the path and an exec'd child writes its own file.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gs_clock.h"
#include "gs_fmt.h"
#include "gs_log.h"
#include "gs_out.h"
#include "gs_sig.h"
#include "gs_trace.h"

#define GS_TRACE_FLUSH_AT (64u * 1024u)
#define GS_TRACE_EVENT_MAX 4096u /* one formatted event, strings bounded below */
#define GS_TRACE_BUF_SIZE (GS_TRACE_FLUSH_AT + 2u * GS_TRACE_EVENT_MAX)
#define GS_TRACE_STREAM_TID (1u << 24)
#define GS_TRACE_NSTREAMS 1024u /* tracks named; later streams share one */
#define GS_TRACE_STR_MAX 256u    /* escaped user-supplied strings, bytes */

bool gs_trace_on;

static pthread_mutex_t gs_trace_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t gs_trace_once = PTHREAD_ONCE_INIT;
static gs_out_t gs_trace_out = {.fd = -1};
#define gs_trace_fd gs_trace_out.fd
/*
 * Set by a thread around its time in gs_trace_mu (from before it asks for
 * the lock to after it released it): a signal handler that finds it set on
 * its own thread must not wait for the lock, and defers (gs_sig.h).
 */
static __thread volatile int gs_trace_busy GS_TLS_IE;
static char *gs_trace_buf;
static size_t gs_trace_len;
static long long gs_trace_max;
static long long gs_trace_count;
static long long gs_trace_dropped;
static bool gs_trace_err;
static long gs_trace_pid;

/* Open-addressed table of the streams seen: handle -> track index + 1. */
static struct {
	uintptr_t handle;
	uint32_t idx1;
} gs_trace_streams[GS_TRACE_NSTREAMS * 2];
static uint32_t gs_trace_nstreams;
static bool gs_trace_overflow_named;

/* Microseconds with three decimals, from nanoseconds, without floating point. */
static void gs_trace_fmt_us(gs_fmt_t *f, uint64_t ns)
{
	uint64_t r = ns % 1000;
	gs_fmt_u64(f, ns / 1000);
	gs_fmt_char(f, '.');
	gs_fmt_char(f, (char)('0' + r / 100));
	gs_fmt_char(f, (char)('0' + r / 10 % 10));
	gs_fmt_char(f, (char)('0' + r % 10));
}

static void gs_trace_us(char *out, size_t len, uint64_t ns)
{
	gs_fmt_t f;
	gs_fmt_init(&f, out, len);
	gs_trace_fmt_us(&f, ns);
}

/*
 * Quote s as a JSON string into out (at most GS_TRACE_STR_MAX bytes used),
 * truncating long input; NULL becomes null.  Bytes outside printable ASCII
 * are escaped or replaced by '?', so the output is valid JSON whatever the
 * input (the strings are entry-point names and diagnostics, all ASCII).
 */
static void gs_trace_quote(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	if (!s) {
		memcpy(out, "null", 5);
		return;
	}
	out[o++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		/* Room for the longest escape, the closing quote and the NUL. */
		if (o + 6 + 2 > GS_TRACE_STR_MAX)
			break;
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			out[o++] = '\\';
			out[o++] = 'u';
			out[o++] = '0';
			out[o++] = '0';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = c < 0x7f ? (char)c : '?';
		}
	}
	out[o++] = '"';
	out[o] = '\0';
}

/* r's kernel name as a JSON string, or null where it has none, into out (GS_TRACE_STR_MAX). */
static void gs_trace_kernel_quoted(const gs_rec_t *r, char *out)
{
	char kn[GS_TRACE_STR_MAX];
	gs_trace_kernel_name(r, kn, sizeof(kn));
	gs_trace_quote(out, kn[0] ? kn : NULL);
}

/* Append formatted text to the buffer; the caller holds the lock. */
static void gs_trace_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void gs_trace_append(const char *fmt, ...)
{
	va_list ap;
	size_t room = GS_TRACE_BUF_SIZE - gs_trace_len;
	va_start(ap, fmt);
	int n = vsnprintf(gs_trace_buf + gs_trace_len, room, fmt, ap);
	va_end(ap);
	/* Never keep a partial event: a too-long one is dropped whole. */
	if (n < 0 || (size_t)n >= room) {
		gs_trace_buf[gs_trace_len] = '\0';
		gs_trace_dropped++;
		return;
	}
	gs_trace_len += (size_t)n;
}

/* Write the buffer out; the caller holds the lock.  A failure stops tracing. */
static void gs_trace_flush_locked(void)
{
	if (!gs_trace_len || gs_trace_fd < 0)
		return;
	if (!gs_trace_err && gs_out_write_all(gs_trace_fd, gs_trace_buf, gs_trace_len)) {
		int e = errno;
		char msg[GS_OUT_NAME_MAX * 2 + 128];
		gs_fmt_t f;
		gs_fmt_init(&f, msg, sizeof(msg));
		gs_fmt_str(&f, "cannot write the trace to ");
		gs_fmt_str(&f, gs_trace_out.path);
		gs_fmt_str(&f, ": ");
		gs_fmt_str(&f, gs_fmt_strerror(e));
		gs_fmt_str(&f, "; tracing stopped, and no trace is kept");
		gs_trace_err = true;
		__atomic_store_n(&gs_trace_on, false, __ATOMIC_RELAXED);
		gs_log_str(GS_LOG_ERROR, msg);
	}
	gs_trace_len = 0;
}

static void gs_trace_lock(void)
{
	gs_trace_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&gs_trace_mu);
}

static void gs_trace_unlock(void)
{
	pthread_mutex_unlock(&gs_trace_mu);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	gs_trace_busy = 0;
	if (GS_UNLIKELY(gs_sig_deferred))
		gs_sig_resume(); /* a signal came while this thread held the trace */
}

bool gs_trace_busy_here(void)
{
	return gs_trace_busy != 0;
}

static long gs_trace_gettid(void)
{
	return (long)syscall(SYS_gettid);
}

/*
 * The track of a stream; names it with a metadata event the first time.
 * The caller holds the lock and has room in the buffer for two events.
 */
static unsigned long gs_trace_stream_tid(uintptr_t stream, const char *ts)
{
	size_t mask = GS_ARRAY_SIZE(gs_trace_streams) - 1;
	size_t i = (size_t)gs_mix64((uint64_t)stream) & mask;
	for (;; i = (i + 1) & mask) {
		if (gs_trace_streams[i].idx1 && gs_trace_streams[i].handle == stream)
			return GS_TRACE_STREAM_TID + gs_trace_streams[i].idx1 - 1;
		if (!gs_trace_streams[i].idx1)
			break;
	}
	/* The table is at most half full, so probing always ends at a hole. */
	if (gs_trace_nstreams >= GS_TRACE_NSTREAMS) {
		unsigned long tid = GS_TRACE_STREAM_TID + GS_TRACE_NSTREAMS;
		if (!gs_trace_overflow_named) {
			gs_trace_overflow_named = true;
			gs_trace_append("{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":%s,\"pid\":%ld,"
					"\"tid\":%lu,\"args\":{\"name\":\"other streams\"}},\n",
					ts, gs_trace_pid, tid);
		}
		return tid;
	}
	uint32_t idx = gs_trace_nstreams++;
	gs_trace_streams[i].handle = stream;
	gs_trace_streams[i].idx1 = idx + 1;
	unsigned long tid = GS_TRACE_STREAM_TID + idx;
	gs_trace_append("{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":%s,\"pid\":%ld,\"tid\":%lu,"
			"\"args\":{\"name\":\"stream 0x%llx\"}},\n"
			"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":%s,\"pid\":%ld,\"tid\":%lu,"
			"\"args\":{\"sort_index\":%u}},\n",
			ts, gs_trace_pid, tid, (unsigned long long)stream, ts, gs_trace_pid, tid, idx);
	return tid;
}

/*
 * Buffer one event whose args are formatted already: the body of its
 * "args" object.  name and cat are literal identifiers; ph is "i" (instant,
 * thread scope) or "X" (complete, with dur_ns).  has_stream selects the
 * stream's track.  Formatted with gs_fmt, not printf: a traced launch paid
 * about 4.5 us of printf on the development machine, four times what an
 * untraced run of tiny spent a launch on the simulator.
 */
static void gs_trace_event_args(const char *name_json, const char *cat, char ph, uint64_t ts_ns,
				uint64_t dur_ns, bool has_stream, uintptr_t stream, const char *args)
{
	char ts[32];
	gs_trace_us(ts, sizeof(ts), ts_ns);
	long tid = has_stream ? 0 : gs_trace_gettid();

	gs_trace_lock();
	if (gs_trace_fd < 0 || gs_trace_err) {
		gs_trace_unlock();
		return;
	}
	if (gs_trace_count >= gs_trace_max) {
		gs_trace_dropped++;
		gs_trace_unlock();
		return;
	}
	gs_trace_count++;
	unsigned long t = has_stream ? gs_trace_stream_tid(stream, ts) : (unsigned long)tid;
	gs_fmt_t f;
	gs_fmt_init(&f, gs_trace_buf + gs_trace_len, GS_TRACE_BUF_SIZE - gs_trace_len);
	gs_fmt_str(&f, "{\"name\":");
	gs_fmt_str(&f, name_json);
	gs_fmt_str(&f, ",\"cat\":\"");
	gs_fmt_str(&f, cat);
	gs_fmt_str(&f, "\",\"ph\":\"");
	gs_fmt_char(&f, ph);
	gs_fmt_str(&f, ph == 'i' ? "\",\"s\":\"t\",\"ts\":" : "\",\"ts\":");
	gs_fmt_str(&f, ts);
	if (ph == 'X') {
		gs_fmt_str(&f, ",\"dur\":");
		gs_trace_fmt_us(&f, dur_ns);
	}
	gs_fmt_str(&f, ",\"pid\":");
	gs_fmt_i64(&f, gs_trace_pid);
	gs_fmt_str(&f, ",\"tid\":");
	gs_fmt_u64(&f, t);
	gs_fmt_str(&f, ",\"args\":{");
	gs_fmt_str(&f, args);
	gs_fmt_str(&f, "}},\n");
	/* Never keep a partial event: a too-long one is dropped whole. */
	if (f.full) {
		gs_trace_buf[gs_trace_len] = '\0';
		gs_trace_dropped++;
	} else {
		gs_trace_len += f.len;
	}
	if (gs_trace_len >= GS_TRACE_FLUSH_AT)
		gs_trace_flush_locked();
	gs_trace_unlock();
}

/* The same, with args formatted from args_fmt (the rarer events). */
static void gs_trace_event(const char *name_json, const char *cat, char ph, uint64_t ts_ns,
			   uint64_t dur_ns, bool has_stream, uintptr_t stream, const char *args_fmt,
			   ...) __attribute__((format(printf, 8, 9)));

static void gs_trace_event(const char *name_json, const char *cat, char ph, uint64_t ts_ns,
			   uint64_t dur_ns, bool has_stream, uintptr_t stream, const char *args_fmt,
			   ...)
{
	char args[GS_TRACE_EVENT_MAX - 512];
	va_list ap;
	va_start(ap, args_fmt);
	int n = vsnprintf(args, sizeof(args), args_fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(args))
		args[0] = '\0';
	gs_trace_event_args(name_json, cat, ph, ts_ns, dur_ns, has_stream, stream, args);
}

static bool gs_trace_enabled(void)
{
	return __atomic_load_n(&gs_trace_on, __ATOMIC_RELAXED);
}

/*
 * fork: the buffer is written out before the fork (so the parent's events
 * are written once), and the child closes its copy of the file and stops.
 */
static void gs_trace_atfork_prepare(void)
{
	pthread_mutex_lock(&gs_trace_mu);
	gs_trace_flush_locked();
}

static void gs_trace_atfork_parent(void)
{
	pthread_mutex_unlock(&gs_trace_mu);
}

static void gs_trace_atfork_child(void)
{
	__atomic_store_n(&gs_trace_on, false, __ATOMIC_RELAXED);
	/* The file is the parent's: close this copy, never remove or finish it. */
	if (gs_trace_fd >= 0)
		close(gs_trace_fd);
	gs_trace_fd = -1;
	gs_trace_len = 0;
	free(gs_trace_buf);
	gs_trace_buf = NULL;
	pthread_mutex_unlock(&gs_trace_mu);
}

static void gs_trace_register_atfork(void)
{
	pthread_atfork(gs_trace_atfork_prepare, gs_trace_atfork_parent, gs_trace_atfork_child);
}

bool gs_trace_open(const char *path, long long max_events, bool overwrite)
{
	pthread_once(&gs_trace_once, gs_trace_register_atfork);

	gs_trace_lock();
	if (gs_trace_fd >= 0) {
		/* Already open: one trace per process. */
		gs_trace_unlock();
		errno = EBUSY;
		return true;
	}
	char *buf = malloc(GS_TRACE_BUF_SIZE);
	if (!buf) {
		gs_trace_unlock();
		gs_log(GS_LOG_ERROR, "cannot trace to %s: no memory for the trace's buffer", path);
		errno = ENOMEM;
		return true;
	}
	int e = gs_out_begin(&gs_trace_out, path, overwrite, GS_OUT_TRACE, "trace");
	if (e) {
		free(buf);
		gs_trace_unlock();
		errno = e;
		return true;
	}
	gs_trace_buf = buf;
	gs_trace_len = 0;
	gs_trace_max = max_events > 0 ? max_events : 0;
	gs_trace_count = 0;
	gs_trace_dropped = 0;
	gs_trace_err = false;
	gs_trace_pid = (long)getpid();
	memset(gs_trace_streams, 0, sizeof(gs_trace_streams));
	gs_trace_nstreams = 0;
	gs_trace_overflow_named = false;

	char ts[32];
	gs_trace_us(ts, sizeof(ts), gs_clock_ns());
	/* The process name first as well, so that a killed process's trace has
	 * it; with the run's id, which tells this run's files from others. */
	gs_trace_append("[\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":%s,\"pid\":%ld,\"tid\":0,"
			"\"args\":{\"name\":\"graphshim\",\"run\":\"%s\"}},\n",
			ts, gs_trace_pid, gs_out_run_id());
	gs_trace_flush_locked();
	bool err = gs_trace_err;
	if (!err)
		__atomic_store_n(&gs_trace_on, true, __ATOMIC_RELAXED);
	gs_trace_unlock();
	if (err)
		gs_trace_discard();
	return err;
}

/*
 * The end of the file: the closing metadata and "]", written whole, then
 * the file put in place.  The caller holds the lock.  Async-signal-safe.
 */
static void gs_trace_end_locked(const char *ended_by)
{
	if (!gs_trace_err) {
		if (gs_trace_len + GS_TRACE_EVENT_MAX > GS_TRACE_BUF_SIZE)
			gs_trace_flush_locked();
		char ts[32];
		gs_fmt_t t;
		gs_fmt_init(&t, ts, sizeof(ts));
		uint64_t now = gs_clock_ns();
		gs_fmt_u64(&t, now / 1000);
		gs_fmt_char(&t, '.');
		gs_fmt_u64(&t, now / 100 % 10);
		gs_fmt_u64(&t, now / 10 % 10);
		gs_fmt_u64(&t, now % 10);
		gs_fmt_t f;
		gs_fmt_init(&f, gs_trace_buf + gs_trace_len, GS_TRACE_BUF_SIZE - gs_trace_len);
		/* The last event has no trailing comma: a closed trace is strict JSON. */
		for (int i = 0; i < 2; i++) {
			gs_fmt_str(&f, i ? "{\"name\":\"graphshim_trace\"" : "{\"name\":\"process_name\"");
			gs_fmt_str(&f, ",\"ph\":\"M\",\"ts\":");
			gs_fmt_str(&f, ts);
			gs_fmt_str(&f, ",\"pid\":");
			gs_fmt_i64(&f, gs_trace_pid);
			gs_fmt_str(&f, ",\"tid\":0,\"args\":{");
			if (!i) {
				gs_fmt_str(&f, "\"name\":\"graphshim\"}},\n");
				continue;
			}
			gs_fmt_str(&f, "\"events\":");
			gs_fmt_i64(&f, gs_trace_count);
			gs_fmt_str(&f, ",\"dropped\":");
			gs_fmt_i64(&f, gs_trace_dropped);
			gs_fmt_str(&f, ",\"cap\":");
			gs_fmt_i64(&f, gs_trace_max);
			gs_fmt_str(&f, ",\"ended_by\":");
			gs_fmt_json(&f, ended_by);
			gs_fmt_str(&f, "}}\n]\n");
		}
		gs_trace_len += f.len;
		gs_trace_flush_locked();
	}
	if (!gs_trace_err)
		gs_out_commit(&gs_trace_out);
	else
		gs_out_abort(&gs_trace_out);
	gs_trace_len = 0;
}

void gs_trace_close(void)
{
	gs_trace_lock();
	__atomic_store_n(&gs_trace_on, false, __ATOMIC_RELAXED);
	if (gs_trace_fd < 0) {
		gs_trace_unlock();
		return;
	}
	gs_trace_end_locked("exit");
	free(gs_trace_buf);
	gs_trace_buf = NULL;
	gs_trace_unlock();
}

void gs_trace_discard(void)
{
	gs_trace_lock();
	__atomic_store_n(&gs_trace_on, false, __ATOMIC_RELAXED);
	gs_out_abort(&gs_trace_out);
	free(gs_trace_buf);
	gs_trace_buf = NULL;
	gs_trace_len = 0;
	gs_trace_unlock();
}

bool gs_trace_close_signal(const char *signame, bool discard)
{
	if (gs_trace_busy)
		return true; /* the caller defers: this thread is in the trace */
	/* Another thread in the trace leaves it within microseconds; never wait long. */
	for (int i = 0; pthread_mutex_trylock(&gs_trace_mu); i++) {
		if (i == 1000)
			return true;
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&gs_trace_on, false, __ATOMIC_RELAXED);
	if (gs_trace_fd >= 0) {
		if (discard)
			gs_out_abort(&gs_trace_out);
		else
			gs_trace_end_locked(signame);
	}
	/* The buffer is not freed: free() is not for signal handlers. */
	pthread_mutex_unlock(&gs_trace_mu);
	return false;
}

/* ---- events ------------------------------------------------------------------ */

void gs_trace_launch(const char *api, uintptr_t stream, const gs_rec_t *r, const char *state)
{
	if (!gs_trace_enabled())
		return;
	char name[GS_TRACE_STR_MAX], st[GS_TRACE_STR_MAX], a[GS_TRACE_STR_MAX];
	char kn[GS_TRACE_STR_MAX], kq[GS_TRACE_STR_MAX];
	uint64_t now = gs_clock_ns();
	gs_trace_quote(a, api ? api : "launch");
	gs_trace_quote(st, state);
	if (!r) {
		gs_trace_event(a, "launch", 'i', now, 0, true, stream,
			       "\"stream\":\"0x%llx\",\"state\":%s,\"api\":%s",
			       (unsigned long long)stream, st, a);
		return;
	}
	/* A kernel's event is named after the kernel, so a timeline shows it. */
	gs_trace_kernel_name(r, kn, sizeof(kn));
	gs_trace_quote(kq, kn[0] ? kn : NULL);
	memcpy(name, kn[0] ? kq : a, GS_TRACE_STR_MAX);
	/* The most frequent event: formatted without printf. */
	char args[GS_TRACE_EVENT_MAX - 512];
	gs_fmt_t f;
	gs_fmt_init(&f, args, sizeof(args));
	gs_fmt_str(&f, "\"stream\":\"0x");
	gs_fmt_hex(&f, stream, 0);
	gs_fmt_str(&f, "\",\"state\":");
	gs_fmt_str(&f, st);
	gs_fmt_str(&f, ",\"api\":");
	gs_fmt_str(&f, a);
	gs_fmt_str(&f, ",\"kind\":\"");
	gs_fmt_str(&f, gs_rec_kind_name(r->kind));
	gs_fmt_str(&f, "\",\"kernel\":");
	gs_fmt_str(&f, kq);
	gs_fmt_str(&f, ",\"func\":\"0x");
	gs_fmt_hex(&f, (uintptr_t)r->func, 0);
	for (int k = 0; k < 2; k++) {
		const uint32_t *d = k ? r->block : r->grid;
		gs_fmt_str(&f, k ? "],\"block\":[" : "\",\"grid\":[");
		for (int i = 0; i < 3; i++) {
			if (i)
				gs_fmt_char(&f, ',');
			gs_fmt_u64(&f, d[i]);
		}
	}
	gs_fmt_str(&f, "],\"shmem\":");
	gs_fmt_u64(&f, r->shmem);
	gs_fmt_str(&f, ",\"nbytes\":");
	gs_fmt_u64(&f, r->nbytes);
	gs_fmt_str(&f, ",\"hash\":\"");
	gs_fmt_hex(&f, r->hash, 16);
	gs_fmt_char(&f, '"');
	gs_trace_event_args(name, "launch", 'i', now, 0, true, stream, f.full ? "" : args);
}

void gs_trace_flush(uintptr_t stream, gs_flush_reason_t why, const char *api, uint32_t nheld,
		    const gs_rec_t *last)
{
	if (!gs_trace_enabled())
		return;
	char a[GS_TRACE_STR_MAX], kq[GS_TRACE_STR_MAX];
	gs_trace_quote(a, api);
	gs_trace_kernel_quoted(last, kq);
	gs_trace_event("\"flush\"", "flush", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"reason\":\"%s\",\"api\":%s,\"nheld\":%u,\"kernel\":%s",
		       (unsigned long long)stream, gs_flush_reason_name(why), a, nheld, kq);
}

void gs_trace_segment(uintptr_t stream, uint64_t len, uint64_t marks, gs_flush_reason_t why,
		      const char *api)
{
	if (!gs_trace_enabled())
		return;
	char a[GS_TRACE_STR_MAX];
	gs_trace_quote(a, api);
	gs_trace_event("\"segment\"", "segment", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"length\":%llu,\"marks\":%llu,\"reason\":\"%s\",\"api\":%s",
		       (unsigned long long)stream, (unsigned long long)len,
		       (unsigned long long)marks, gs_flush_reason_name(why), a);
}

void gs_trace_mark(uintptr_t stream, const char *api, uint64_t event, bool cold)
{
	if (!gs_trace_enabled())
		return;
	char a[GS_TRACE_STR_MAX];
	gs_trace_quote(a, api);
	gs_trace_event("\"mark\"", "mark", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"api\":%s,\"event\":\"0x%llx\",\"cold\":%s",
		       (unsigned long long)stream, a, (unsigned long long)event,
		       cold ? "true" : "false");
}

void gs_trace_learned(uintptr_t stream, uint64_t id, uint32_t length, const char *how)
{
	if (!gs_trace_enabled())
		return;
	char h[GS_TRACE_STR_MAX];
	gs_trace_quote(h, how);
	gs_trace_event("\"learned\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,\"how\":%s",
		       (unsigned long long)stream, (unsigned long long)id, length, h);
}

/*
 * A build, as a complete event that ends now and lasted as long as the
 * build.  chunks: "" for a sequence's graphs; for a variant, the fields
 * that say which chunk of which sequence it serves.
 */
static void gs_trace_build_event(const char *name_json, uintptr_t stream, uint64_t id,
				 uint32_t length, uint64_t ns, int status, const gs_rec_t *first,
				 const char *chunks)
{
	char kq[GS_TRACE_STR_MAX];
	gs_trace_kernel_quoted(first, kq);
	uint64_t now = gs_clock_ns();
	uint64_t start = ns < now ? now - ns : 0;
	gs_trace_event(name_json, "sequence", 'X', start, ns, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,%s\"status\":%d,"
		       "\"build_ms\":%.3f,\"kernel\":%s",
		       (unsigned long long)stream, (unsigned long long)id, length, chunks, status,
		       (double)ns / 1e6, kq);
}

void gs_trace_built(uintptr_t stream, uint64_t id, uint32_t length, uint64_t ns, int status,
		    const gs_rec_t *first)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_build_event("\"built\"", stream, id, length, ns, status, first, "");
}

void gs_trace_variant(uintptr_t stream, uint64_t id, uint32_t seq_length, uint32_t chunk,
		      uint32_t length, uint64_t ns, int status, const gs_rec_t *first)
{
	if (!gs_trace_enabled())
		return;
	char c[64];
	snprintf(c, sizeof(c), "\"seq_length\":%u,\"chunk\":%u,", seq_length, chunk);
	gs_trace_build_event("\"variant\"", stream, id, length, ns, status, first, c);
}

void gs_trace_replay(uintptr_t stream, uint64_t id, uint32_t seq_length, uint32_t length,
		     uint32_t patches, uint32_t chunk, uint32_t chunks, bool variant, bool shared)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"replay\"", "replay", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"seq_length\":%u,\"length\":%u,"
		       "\"patches\":%u,\"chunk\":%u,\"chunks\":%u,\"variant\":%s,\"shared\":%s",
		       (unsigned long long)stream, (unsigned long long)id, seq_length, length,
		       patches, chunk, chunks, variant ? "true" : "false", shared ? "true" : "false");
}

void gs_trace_pass(uintptr_t stream, uint64_t id, uint32_t length, bool eager)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"pass\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,\"how\":\"%s\"",
		       (unsigned long long)stream, (unsigned long long)id, length,
		       eager ? "eager" : "replayed");
}

void gs_trace_mismatch(uintptr_t stream, uint64_t id, uint32_t pos, gs_mismatch_reason_t why,
		       const char *field, const char *expected, const char *got, const gs_rec_t *r)
{
	if (!gs_trace_enabled())
		return;
	char f[GS_TRACE_STR_MAX], e[GS_TRACE_STR_MAX], g[GS_TRACE_STR_MAX], kq[GS_TRACE_STR_MAX];
	gs_trace_quote(f, field);
	gs_trace_quote(e, expected);
	gs_trace_quote(g, got);
	gs_trace_kernel_quoted(r, kq);
	gs_trace_event("\"mismatch\"", "mismatch", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"position\":%u,\"reason\":\"%s\","
		       "\"field\":%s,\"expected\":%s,\"got\":%s,\"kernel\":%s",
		       (unsigned long long)stream, (unsigned long long)id, pos,
		       gs_mismatch_reason_name(why), f, e, g, kq);
}

void gs_trace_retired(uintptr_t stream, uint64_t id, uint64_t mismatches)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"retired\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"mismatches\":%llu",
		       (unsigned long long)stream, (unsigned long long)id,
		       (unsigned long long)mismatches);
}

void gs_trace_cut(uintptr_t stream, uint64_t id, uint32_t length, uint32_t at, const gs_rec_t *r)
{
	if (!gs_trace_enabled())
		return;
	char kq[GS_TRACE_STR_MAX];
	gs_trace_kernel_quoted(r, kq);
	gs_trace_event("\"cut\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,\"position\":%u,"
		       "\"kernel\":%s",
		       (unsigned long long)stream, (unsigned long long)id, length, at, kq);
}

void gs_trace_idle_eager(uintptr_t stream, uint64_t id, uint32_t length, long long passes)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"idle_eager\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,\"passes\":%lld",
		       (unsigned long long)stream, (unsigned long long)id, length, passes);
}

void gs_trace_forgiven(uintptr_t stream, uint64_t id, uint64_t by)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"forgiven\"", "mismatch", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"by\":\"0x%016llx\"",
		       (unsigned long long)stream, (unsigned long long)id, (unsigned long long)by);
}

void gs_trace_gate(uintptr_t stream, uint64_t id, uint32_t length, uint64_t eager_ns,
		   uint64_t replay_ns, uint64_t eager_host_ns, uint64_t replay_host_ns, bool eager)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"gate\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,"
		       "\"eager_us\":%.1f,\"replay_us\":%.1f,\"choice\":\"%s\","
		       "\"eager_host_us\":%.1f,\"replay_host_us\":%.1f",
		       (unsigned long long)stream, (unsigned long long)id, length,
		       (double)eager_ns / 1e3, (double)replay_ns / 1e3, eager ? "eager" : "replay",
		       (double)eager_host_ns / 1e3, (double)replay_host_ns / 1e3);
}

void gs_trace_gate_kept(uintptr_t stream, uint64_t id, uint32_t length, uint64_t was_ns,
			uint64_t now_ns)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"gate_kept\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,"
		       "\"was_us\":%.1f,\"now_us\":%.1f",
		       (unsigned long long)stream, (unsigned long long)id, length,
		       (double)was_ns / 1e3, (double)now_ns / 1e3);
}

void gs_trace_gate_sample(uintptr_t stream, uint64_t id, bool eager, bool host, uint64_t ns)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"gate_sample\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"kind\":\"%s\","
		       "\"clock\":\"%s\",\"us\":%.1f",
		       (unsigned long long)stream, (unsigned long long)id, eager ? "eager" : "replay",
		       host ? "host" : "gpu", (double)ns / 1e3);
}

void gs_trace_gate_inherited(uintptr_t stream, uint64_t id, uint32_t length, uint32_t like)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"gate_inherited\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,\"like\":%u",
		       (unsigned long long)stream, (unsigned long long)id, length, like);
}

void gs_trace_gate_trusted(uintptr_t stream, uint64_t id, uint32_t length, uint64_t patches,
			   uint32_t chunks)
{
	if (!gs_trace_enabled())
		return;
	gs_trace_event("\"gate_trusted\"", "sequence", 'i', gs_clock_ns(), 0, true, stream,
		       "\"stream\":\"0x%llx\",\"id\":\"0x%016llx\",\"length\":%u,\"patches\":%llu,"
		       "\"chunks\":%u",
		       (unsigned long long)stream, (unsigned long long)id, length,
		       (unsigned long long)patches, chunks);
}

void gs_trace_fallback(const char *what, int status)
{
	if (!gs_trace_enabled())
		return;
	char w[GS_TRACE_STR_MAX];
	gs_trace_quote(w, what);
	gs_trace_event("\"fallback\"", "fallback", 'i', gs_clock_ns(), 0, false, 0,
		       "\"what\":%s,\"status\":%d", w, status);
}
