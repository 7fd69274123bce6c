/*
 * Text formatting that is async-signal-safe: no stdio, no locale, no
 * allocation.  The statistics file, the end of the trace and the messages
 * about output files are written with it, because each of them may be
 * written from a signal handler (gs_sig.h) as well as at exit; printf may
 * take locks or allocate there.
 *
 * A gs_fmt_t is a caller's buffer and a length.  Every append stops at the
 * buffer's end and sets `full` instead of overrunning; the text is always
 * NUL-terminated.  With `flush` set, a full buffer is handed to it (to be
 * written out) and the append goes on in the emptied buffer.
 */
#ifndef GS_FMT_H
#define GS_FMT_H

#include "gs_common.h"

typedef struct gs_fmt {
	char *buf;
	size_t cap; /* bytes of buf, the NUL included */
	size_t len;
	bool full;  /* something did not fit (and was not flushed) */
	/* Optional: write out buf[0..len) and return true on failure. */
	bool (*flush)(struct gs_fmt *f);
	void *arg;  /* for flush */
	bool err;   /* flush failed; the first failure sticks */
} gs_fmt_t;

/* A formatter over buf (cap bytes, cap >= 1), empty. */
void gs_fmt_init(gs_fmt_t *f, char *buf, size_t cap);

void gs_fmt_str(gs_fmt_t *f, const char *s);
/* At most n bytes of s. */
void gs_fmt_strn(gs_fmt_t *f, const char *s, size_t n);
void gs_fmt_char(gs_fmt_t *f, char c);
void gs_fmt_u64(gs_fmt_t *f, uint64_t v);
void gs_fmt_i64(gs_fmt_t *f, int64_t v);
/* Lower-case hexadecimal, at least `width` digits (zero padded), no "0x". */
void gs_fmt_hex(gs_fmt_t *f, uint64_t v, int width);
/*
 * A number with `decimals` digits after the point (0 to 9), rounded half
 * away from zero; NaN and infinities are written as 0 (JSON has neither).
 */
void gs_fmt_fixed(gs_fmt_t *f, double v, int decimals);
/* s as a JSON string, quotes included; NULL becomes null. */
void gs_fmt_json(gs_fmt_t *f, const char *s);
/* Hand what is buffered to flush (when set); true when it failed. */
bool gs_fmt_flush(gs_fmt_t *f);

/*
 * The description of an error number ("No such file or directory"), from a
 * static table: strerror may format into a buffer or take the locale's
 * lock.  Never NULL.
 */
const char *gs_fmt_strerror(int err);

#endif /* GS_FMT_H */
