/* Async-signal-safe formatting: the rules of gs_fmt.h. */
#include "gs_fmt.h"

#include <errno.h>
#include <string.h>

void gs_fmt_init(gs_fmt_t *f, char *buf, size_t cap)
{
	memset(f, 0, sizeof(*f));
	f->buf = buf;
	f->cap = cap;
	if (cap)
		buf[0] = '\0';
}

bool gs_fmt_flush(gs_fmt_t *f)
{
	if (f->flush && f->len) {
		if (!f->err && f->flush(f))
			f->err = true;
		f->len = 0;
		f->buf[0] = '\0';
	}
	return f->err;
}

void gs_fmt_strn(gs_fmt_t *f, const char *s, size_t n)
{
	if (!f->cap)
		return;
	while (n) {
		size_t room = f->cap - 1 - f->len;
		if (!room) {
			if (!f->flush) {
				f->full = true;
				return;
			}
			gs_fmt_flush(f);
			room = f->cap - 1;
		}
		size_t k = n < room ? n : room;
		memcpy(f->buf + f->len, s, k);
		f->len += k;
		f->buf[f->len] = '\0';
		s += k;
		n -= k;
	}
}

void gs_fmt_str(gs_fmt_t *f, const char *s)
{
	gs_fmt_strn(f, s ? s : "(null)", strlen(s ? s : "(null)"));
}

void gs_fmt_char(gs_fmt_t *f, char c)
{
	gs_fmt_strn(f, &c, 1);
}

void gs_fmt_u64(gs_fmt_t *f, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	gs_fmt_strn(f, tmp + i, sizeof(tmp) - i);
}

void gs_fmt_i64(gs_fmt_t *f, int64_t v)
{
	if (v < 0) {
		gs_fmt_char(f, '-');
		gs_fmt_u64(f, (uint64_t)0 - (uint64_t)v);
	} else {
		gs_fmt_u64(f, (uint64_t)v);
	}
}

void gs_fmt_hex(gs_fmt_t *f, uint64_t v, int width)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int i = 16;
	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	while (16 - i < width && i > 0)
		tmp[--i] = '0';
	gs_fmt_strn(f, tmp + i, (size_t)(16 - i));
}

void gs_fmt_fixed(gs_fmt_t *f, double v, int decimals)
{
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	if (v != v || v > 1.8e19 || v < -1.8e19)
		v = 0; /* NaN, or past what a uint64_t holds: not a figure */
	uint64_t scale = 1;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	bool neg = v < 0;
	double a = neg ? -v : v;
	uint64_t ip = (uint64_t)a;
	double frac = (a - (double)ip) * (double)scale + 0.5;
	uint64_t fp = (uint64_t)frac;
	if (fp >= scale) { /* rounding carried into the integer part */
		ip++;
		fp -= scale;
	}
	if (neg && (ip || fp))
		gs_fmt_char(f, '-');
	gs_fmt_u64(f, ip);
	if (!decimals)
		return;
	char tmp[10];
	for (int i = decimals - 1; i >= 0; i--) {
		tmp[i] = (char)('0' + fp % 10);
		fp /= 10;
	}
	gs_fmt_char(f, '.');
	gs_fmt_strn(f, tmp, (size_t)decimals);
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t gs_fmt_utf8(const unsigned char *p)
{
	size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	if (p[0] >= 0xf8)
		n = 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void gs_fmt_json(gs_fmt_t *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	if (!s) {
		gs_fmt_str(f, "null");
		return;
	}
	gs_fmt_char(f, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			gs_fmt_strn(f, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			gs_fmt_strn(f, e, 6);
		} else if (c < 0x80) {
			gs_fmt_char(f, (char)c);
		} else {
			/* UTF-8 passes as it is (a path may be any name); a byte that
			 * is not part of a valid sequence becomes '?', so the file
			 * stays valid JSON. */
			size_t n = gs_fmt_utf8(p);
			if (n) {
				gs_fmt_strn(f, (const char *)p, n);
				p += n - 1;
			} else {
				gs_fmt_char(f, '?');
			}
		}
	}
	gs_fmt_char(f, '"');
}

const char *gs_fmt_strerror(int err)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	const char *s = strerrordesc_np(err);
	return s ? s : "Unknown error";
#else
	switch (err) {
	case ENOENT: return "No such file or directory";
	case EEXIST: return "File exists";
	case EISDIR: return "Is a directory";
	case ENOTDIR: return "Not a directory";
	case EACCES: return "Permission denied";
	case EPERM: return "Operation not permitted";
	case ENOSPC: return "No space left on device";
	case EROFS: return "Read-only file system";
	case ELOOP: return "Too many levels of symbolic links";
	case ENAMETOOLONG: return "File name too long";
	case EDQUOT: return "Disk quota exceeded";
	case EIO: return "Input/output error";
	case ENOMEM: return "Cannot allocate memory";
	default: return "Unknown error";
	}
#endif
}
