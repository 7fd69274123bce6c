/*
 * Output files: the rules of gs_out.h.  From gs_out_begin() on, only
 * async-signal-safe calls: open, read, pread, pwrite, write, close,
 * lstat, link, rename(at2), unlink, flock, nanosleep; text through gs_fmt.
 */
#include "gs_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gs_fmt.h"
#include "gs_log.h"

static char gs_out_cwd[GS_OUT_PATH_MAX];
static char gs_out_run[48];

void gs_out_note_cwd(void)
{
	if (!getcwd(gs_out_cwd, sizeof(gs_out_cwd)))
		gs_out_cwd[0] = '\0'; /* relative names stay relative */
}

/* ---- the run ------------------------------------------------------------- */

/* The parent and start time (clock ticks since boot) of pid, from /proc. */
static bool gs_out_proc_stat(long pid, long *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold anything, even ") ". */
	char *p = strrchr(buf, ')'), *save = NULL;
	if (!p)
		return false;
	int field = 2;
	bool have_ppid = false;
	for (char *t = strtok_r(p + 1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 4) {
			*ppid = strtol(t, NULL, 10);
			have_ppid = true;
		} else if (field == 22) {
			*start = strtoull(t, NULL, 10);
			return have_ppid;
		}
	}
	return false;
}

/* Whether the environment pid started with holds entry (NAME=value) exactly. */
static bool gs_out_environ_has(long pid, const char *entry)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len = strlen(entry), at = 0;
	bool same = true, found = false;
	char buf[4096];
	ssize_t n;
	while (!found && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\0') {
				if (same && at == len) {
					found = true;
					break;
				}
				at = 0;
				same = true;
			} else if (same && at < len && buf[i] == entry[at]) {
				at++;
			} else {
				same = false;
			}
		}
	}
	close(fd);
	return found;
}

void gs_out_prepare(const char *stats_value, const char *trace_value)
{
	if (!gs_out_cwd[0])
		gs_out_note_cwd();
	char entry[2][GS_OUT_PATH_MAX + 32];
	int nentries = 0;
	if (stats_value && *stats_value)
		snprintf(entry[nentries++], sizeof(entry[0]), "GRAPHSHIM_STATS=%s", stats_value);
	if (trace_value && *trace_value)
		snprintf(entry[nentries++], sizeof(entry[0]), "GRAPHSHIM_TRACE=%s", trace_value);
	long root = (long)getpid(), ppid = 0;
	unsigned long long start = 0, pstart = 0;
	if (!gs_out_proc_stat(root, &ppid, &start))
		start = 0;
	/* Up the ancestors while they were started with the same outputs. */
	for (int depth = 0; depth < 64 && nentries && ppid > 1; depth++) {
		bool same = false;
		for (int i = 0; i < nentries && !same; i++)
			same = gs_out_environ_has(ppid, entry[i]);
		long next = 0;
		if (!same || !gs_out_proc_stat(ppid, &next, &pstart))
			break;
		root = ppid;
		start = pstart;
		ppid = next;
	}
	snprintf(gs_out_run, sizeof(gs_out_run), "%ld-%llu", root, start);
}

const char *gs_out_run_id(void)
{
	if (!gs_out_run[0]) {
		gs_fmt_t f;
		gs_fmt_init(&f, gs_out_run, sizeof(gs_out_run));
		gs_fmt_i64(&f, (int64_t)getpid());
		gs_fmt_str(&f, "-0");
	}
	return gs_out_run;
}

/* ---- names --------------------------------------------------------------- */

bool gs_out_expand(const char *path, char *out, size_t len)
{
	if (!path || !*path) {
		errno = EINVAL;
		return true;
	}
	gs_fmt_t f;
	gs_fmt_init(&f, out, len);
	if (path[0] != '/' && gs_out_cwd[0]) {
		gs_fmt_str(&f, gs_out_cwd);
		if (strcmp(gs_out_cwd, "/"))
			gs_fmt_char(&f, '/');
	}
	for (const char *p = path; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			gs_fmt_i64(&f, (int64_t)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			gs_fmt_char(&f, '%');
			p++;
		} else {
			gs_fmt_char(&f, *p);
		}
	}
	if (f.full) {
		errno = ENAMETOOLONG;
		return true;
	}
	return false;
}

bool gs_out_beside(const char *path, long pid, char *out, size_t len)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	if (!dot || dot == base) /* no extension, or a hidden file's only dot */
		dot = base + strlen(base);
	gs_fmt_t f;
	gs_fmt_init(&f, out, len);
	gs_fmt_strn(&f, path, (size_t)(dot - path));
	gs_fmt_char(&f, '.');
	gs_fmt_i64(&f, pid);
	gs_fmt_str(&f, dot);
	return f.full;
}

/* ---- messages ------------------------------------------------------------ */

static void gs_out_say(int level, gs_fmt_t *f)
{
	gs_log_str(level, f->buf);
}

/* "cannot write the <what> to <path>: <reason>[ (<detail>)]" */
static void gs_out_fail(const gs_out_t *o, int err, const char *detail)
{
	char buf[GS_OUT_NAME_MAX * 2 + 160];
	gs_fmt_t f;
	gs_fmt_init(&f, buf, sizeof(buf));
	gs_fmt_str(&f, "cannot write the ");
	gs_fmt_str(&f, o->what);
	gs_fmt_str(&f, " to ");
	gs_fmt_str(&f, o->path[0] ? o->path : "(no name)");
	gs_fmt_str(&f, ": ");
	gs_fmt_str(&f, gs_fmt_strerror(err));
	if (detail) {
		gs_fmt_str(&f, " (");
		gs_fmt_str(&f, detail);
		gs_fmt_char(&f, ')');
	}
	gs_out_say(GS_LOG_ERROR, &f);
}

/* A more precise reason for a failure to create path: which part is wrong. */
static const char *gs_out_why_create(const char *path, int err, char *buf, size_t len)
{
	char dir[GS_OUT_NAME_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	if (n >= sizeof(dir))
		return NULL;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (!n)
		memcpy(dir, "/", 2);
	struct stat st;
	gs_fmt_t f;
	gs_fmt_init(&f, buf, len);
	if ((err == ENOENT || err == ENOTDIR) && stat(dir, &st)) {
		gs_fmt_str(&f, "the directory ");
		gs_fmt_str(&f, dir);
		gs_fmt_str(&f, " does not exist");
	} else if (err == ENOTDIR || (!stat(dir, &st) && !S_ISDIR(st.st_mode))) {
		gs_fmt_str(&f, dir);
		gs_fmt_str(&f, " is not a directory");
	} else if (err == EACCES || err == EROFS || err == EPERM) {
		gs_fmt_str(&f, "the directory ");
		gs_fmt_str(&f, dir);
		gs_fmt_str(&f, " is not writable");
	} else {
		return NULL;
	}
	return buf;
}

/* ---- writing ------------------------------------------------------------- */

bool gs_out_write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return true;
		}
		if (w == 0) {
			errno = EIO;
			return true;
		}
		buf += w;
		n -= (size_t)w;
	}
	return false;
}

int gs_out_begin(gs_out_t *o, const char *path, bool overwrite, gs_out_kind_t kind,
		 const char *what)
{
	o->fd = -1;
	o->kind = kind;
	o->overwrite = overwrite;
	o->what = what;
	o->path[0] = o->tmp[0] = o->done[0] = '\0';
	if (gs_out_expand(path, o->path, sizeof(o->path))) {
		int e = errno;
		gs_out_fail(o, e, e == EINVAL ? "an empty name" : "the name is too long");
		return e;
	}
	gs_fmt_t f;
	gs_fmt_init(&f, o->tmp, sizeof(o->tmp));
	gs_fmt_str(&f, o->path);
	gs_fmt_char(&f, '.');
	gs_fmt_i64(&f, (int64_t)getpid());
	gs_fmt_str(&f, ".part");
	if (f.full) {
		gs_out_fail(o, ENAMETOOLONG, NULL);
		return ENAMETOOLONG;
	}
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	for (int attempt = 0; attempt < 2; attempt++) {
		do
			o->fd = open(o->tmp, flags, 0644);
		while (o->fd < 0 && errno == EINTR);
		/* A .part of this pid is a dead process's (pids are reused): ours now. */
		if (o->fd >= 0 || errno != EEXIST || unlink(o->tmp))
			break;
	}
	if (o->fd < 0) {
		int e = errno;
		char why[GS_OUT_NAME_MAX + 64];
		gs_out_fail(o, e, gs_out_why_create(o->tmp, e, why, sizeof(why)));
		return e;
	}
	return 0;
}

void gs_out_abort(gs_out_t *o)
{
	if (o->fd >= 0) {
		close(o->fd);
		o->fd = -1;
		unlink(o->tmp);
	}
}

/*
 * Put tmp at dst unless something is there: 0, or the errno (EEXIST when
 * dst exists).  renameat2(RENAME_NOREPLACE), or link() where a file system
 * lacks it; where neither works, a check then a rename (which could race
 * with another process, on such file systems only).
 */
static int gs_out_place(const char *tmp, const char *dst)
{
	if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, RENAME_NOREPLACE))
		return 0;
	int e = errno;
	if (e != EINVAL && e != ENOSYS && e != ENOTSUP)
		return e;
	if (!link(tmp, dst)) {
		unlink(tmp);
		return 0;
	}
	e = errno;
	if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP)
		return e;
	struct stat st;
	if (!lstat(dst, &st))
		return EEXIST;
	return rename(tmp, dst) ? errno : 0;
}

/* The run id written in the file at path into out ("" when none); false when unreadable. */
static bool gs_out_file_run(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[2048];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	const char *p = strstr(buf, "\"run\":");
	if (!p)
		return true;
	p += 6;
	while (*p == ' ')
		p++;
	if (*p != '"')
		return true;
	p++;
	size_t k = 0;
	while (p[k] && p[k] != '"' && k + 1 < len) {
		out[k] = p[k];
		k++;
	}
	out[k] = '\0';
	return true;
}

/*
 * Add the note "this run's process `pid` wrote `file`" to the end of the
 * first file, in place, under an advisory lock that other processes of the
 * run take too.  0, or the errno.
 */
static int gs_out_note(const gs_out_t *o, const char *file)
{
	int fd = open(o->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int rc = 0;
	/* Wait up to a second for another process's note; never forever. */
	for (int i = 0; flock(fd, LOCK_EX | LOCK_NB); i++) {
		if (i == 200 || (errno != EWOULDBLOCK && errno != EINTR)) {
			rc = errno == EWOULDBLOCK ? ETIMEDOUT : errno;
			close(fd);
			return rc;
		}
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	struct stat st;
	char tail[8];
	const char *want = o->kind == GS_OUT_STATS ? "]\n}\n" : "}\n]\n";
	if (fstat(fd, &st) || st.st_size < 8 || pread(fd, tail, 4, st.st_size - 4) != 4 ||
	    memcmp(tail, want, 4)) {
		rc = EILSEQ; /* not a file this version of graphshim finished */
	} else {
		char buf[GS_OUT_NAME_MAX + 256];
		gs_fmt_t f;
		gs_fmt_init(&f, buf, sizeof(buf));
		off_t at;
		if (o->kind == GS_OUT_STATS) {
			/* ... "process_files": [ "a" ]\n}\n: the list is the last key. */
			char prev = '[';
			for (off_t i = st.st_size - 5; i > 0; i--) {
				if (pread(fd, &prev, 1, i) != 1)
					break;
				if (prev != ' ' && prev != '\n')
					break;
			}
			if (prev != '[')
				gs_fmt_str(&f, ", ");
			gs_fmt_json(&f, file);
			gs_fmt_str(&f, "]\n}\n");
			at = st.st_size - 4;
		} else {
			gs_fmt_str(&f, ",\n{\"name\":\"graphshim_process_file\",\"ph\":\"M\",\"ts\":0,\"pid\":");
			gs_fmt_i64(&f, (int64_t)getpid());
			gs_fmt_str(&f, ",\"tid\":0,\"args\":{\"file\":");
			gs_fmt_json(&f, file);
			gs_fmt_str(&f, ",\"pid\":");
			gs_fmt_i64(&f, (int64_t)getpid());
			gs_fmt_str(&f, "}}\n]\n");
			at = st.st_size - 3;
		}
		if (f.full)
			rc = ENAMETOOLONG;
		else if (pwrite(fd, buf, f.len, at) != (ssize_t)f.len)
			rc = errno ? errno : EIO;
	}
	flock(fd, LOCK_UN);
	close(fd);
	return rc;
}

static const char *gs_out_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int gs_out_commit(gs_out_t *o)
{
	if (o->fd < 0)
		return EBADF;
	int e = 0;
	if (close(o->fd) && errno != EINTR)
		e = errno;
	o->fd = -1;
	if (e) {
		gs_out_fail(o, e, "closing the file");
		unlink(o->tmp);
		return e;
	}
	/* The name itself, when it is free. */
	e = gs_out_place(o->tmp, o->path);
	if (!e) {
		memcpy(o->done, o->path, sizeof(o->done));
		return 0;
	}
	if (e != EEXIST) {
		char why[GS_OUT_NAME_MAX + 64];
		gs_out_fail(o, e, gs_out_why_create(o->path, e, why, sizeof(why)));
		unlink(o->tmp);
		return e;
	}

	/* Taken: by this run, by an earlier one, or by something else. */
	struct stat st;
	char run[sizeof(gs_out_run)];
	bool regular = !lstat(o->path, &st) && S_ISREG(st.st_mode);
	bool ours = regular && gs_out_file_run(o->path, run, sizeof(run)) &&
		    !strcmp(run, gs_out_run_id());
	if (regular && !ours && o->overwrite) {
		if (!rename(o->tmp, o->path)) {
			memcpy(o->done, o->path, sizeof(o->done));
			return 0;
		}
		e = errno;
		gs_out_fail(o, e, "replacing the file");
		unlink(o->tmp);
		return e;
	}
	char beside[GS_OUT_NAME_MAX];
	if (gs_out_beside(o->path, (long)getpid(), beside, sizeof(beside))) {
		gs_out_fail(o, EEXIST, "and a name beside it would be too long");
		unlink(o->tmp);
		return EEXIST;
	}
	e = gs_out_place(o->tmp, beside);
	if (e == EEXIST && o->overwrite && !lstat(beside, &st) && S_ISREG(st.st_mode))
		e = rename(o->tmp, beside) ? errno : 0;
	if (e) {
		char why[GS_OUT_NAME_MAX + 64];
		gs_fmt_t f;
		gs_fmt_init(&f, why, sizeof(why));
		gs_fmt_str(&f, "the name is taken, and so is ");
		gs_fmt_str(&f, beside);
		gs_out_fail(o, EEXIST, why);
		unlink(o->tmp);
		return e;
	}
	memcpy(o->done, beside, sizeof(o->done));

	/* Say where it went, and why; note it in this run's first file. */
	char buf[GS_OUT_NAME_MAX * 2 + 256];
	gs_fmt_t f;
	gs_fmt_init(&f, buf, sizeof(buf));
	/* Warn even when it was noted: a user who named one file should know. */
	int level = GS_LOG_WARN;
	gs_fmt_str(&f, "the ");
	gs_fmt_str(&f, o->what);
	gs_fmt_str(&f, " of process ");
	gs_fmt_i64(&f, (int64_t)getpid());
	gs_fmt_str(&f, " went to ");
	gs_fmt_str(&f, beside);
	gs_fmt_str(&f, ": ");
	gs_fmt_str(&f, o->path);
	if (ours) {
		int ne = gs_out_note(o, gs_out_base(beside));
		gs_fmt_str(&f, " holds another process's of this run");
		if (ne) {
			gs_fmt_str(&f, " (and the note of this file could not be added there: ");
			gs_fmt_str(&f, ne == EILSEQ ? "it does not end as graphshim ends it"
					       : gs_fmt_strerror(ne));
			gs_fmt_char(&f, ')');
		} else {
			gs_fmt_str(&f, ", which lists this file; the graphshim command reads them together");
		}
	} else if (regular) {
		gs_fmt_str(&f, " exists and is not from this run (GRAPHSHIM_OVERWRITE=1 replaces such a file)");
	} else if (!lstat(o->path, &st) && S_ISLNK(st.st_mode)) {
		gs_fmt_str(&f, " is a symbolic link, which graphshim never writes through");
	} else if (S_ISDIR(st.st_mode)) {
		gs_fmt_str(&f, " is a directory");
	} else {
		gs_fmt_str(&f, " exists and is not a regular file");
	}
	gs_out_say(level, &f);
	return 0;
}
