/*
 * Output files (the statistics and the trace), written by one set of rules:
 *
 *  - The name: %p expands to the pid, %% to a percent sign; a relative name
 *    is taken from the working directory the library was loaded in (not
 *    wherever the program has moved to since).
 *  - Whole or not at all: a file is written as NAME.PID.part in the same
 *    directory and renamed into place once complete, so a reader never sees
 *    half a file, and a process killed outright leaves only the .part.
 *  - Never over a file that is not this run's to replace: an existing NAME
 *    is replaced only with overwrite and only when it is not from this run
 *    (a file of an earlier run); a symbolic link is never written through
 *    nor replaced.  Otherwise the file goes beside it, as NAME.PID.EXT
 *    (stats.json -> stats.4242.json), with a line on stderr.
 *  - Several processes of one run under one name (a program and the helper
 *    processes it starts): the first to finish gets NAME; each later one
 *    writes NAME.PID.EXT and notes that file in NAME (the statistics'
 *    "process_files", a "graphshim_process_file" event of the trace), so
 *    the readers can take the run's files together.
 *
 * A run is the processes that share the topmost ancestor whose environment
 * has the same GRAPHSHIM_STATS (or GRAPHSHIM_TRACE) entry as this process
 * (gs_out_prepare); its id ("PID-STARTTIME" of that ancestor) is written
 * into every file.
 *
 * Everything from gs_out_begin() on is async-signal-safe (no stdio, no
 * allocation, no locks but an advisory file lock taken without waiting
 * forever): a file may be finished in a signal handler (gs_sig.h).
 * Failures are reported on stderr with the reason, by this module.
 */
#ifndef GS_OUT_H
#define GS_OUT_H

#include "gs_common.h"

#define GS_OUT_PATH_MAX 1024
#define GS_OUT_NAME_MAX (GS_OUT_PATH_MAX + 32) /* room for .PID.part */

/* How a file's end is laid out, for the note a later process adds. */
typedef enum gs_out_kind {
	GS_OUT_STATS, /* a JSON object ending with "process_files": [...] */
	GS_OUT_TRACE, /* a JSON array of events ending with "}\n]\n" */
} gs_out_kind_t;

typedef struct gs_out {
	int fd; /* the .part file while it is written; -1 otherwise */
	gs_out_kind_t kind;
	bool overwrite;
	const char *what;            /* "statistics", "trace": for messages */
	char path[GS_OUT_NAME_MAX];  /* the name asked for, expanded, absolute */
	char tmp[GS_OUT_NAME_MAX];   /* where it is written: path.PID.part */
	char done[GS_OUT_NAME_MAX];  /* where it went (after gs_out_commit) */
} gs_out_t;

/*
 * Remember the working directory for relative names (the library's
 * constructor calls it; gs_out_prepare does when nobody did).
 */
void gs_out_note_cwd(void);

/*
 * Once per process, while the engine starts: the working directory (unless
 * noted already) and this run's id, from the raw values of GRAPHSHIM_STATS
 * and GRAPHSHIM_TRACE (either may be NULL).  Reads /proc; not to be called
 * in secure-execution mode.
 */
void gs_out_prepare(const char *stats_value, const char *trace_value);

/* This run's id ("PID-STARTTIME"); the process's own before gs_out_prepare. */
const char *gs_out_run_id(void);

/*
 * The name as it will be asked for: %p expanded, made absolute.  True when
 * it does not fit (errno ENAMETOOLONG) or is empty (EINVAL).
 */
bool gs_out_expand(const char *path, char *out, size_t len);

/*
 * Start writing: the .part file is created.  Returns 0, or an errno value
 * (and the reason is on stderr).
 */
int gs_out_begin(gs_out_t *o, const char *path, bool overwrite, gs_out_kind_t kind,
		 const char *what);

/* Write n bytes, retrying partial and interrupted writes; true on failure. */
bool gs_out_write_all(int fd, const char *buf, size_t n);

/*
 * The file is complete: put it in place (o->done says where) as the rules
 * above say.  Returns 0, or an errno value (the reason is on stderr, and
 * the .part file is removed).
 */
int gs_out_commit(gs_out_t *o);

/* Give up: close and remove the .part file (a process that made no GPU call). */
void gs_out_abort(gs_out_t *o);

/*
 * Where this process's file goes when NAME is taken: NAME.PID.EXT (the pid
 * before the last extension of the file name, or at the end).  True when
 * it does not fit.
 */
bool gs_out_beside(const char *path, long pid, char *out, size_t len);

#endif /* GS_OUT_H */
