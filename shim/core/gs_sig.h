/*
 * Termination signals (SIGINT, SIGTERM, SIGHUP): the statistics and the
 * trace are written when one of them ends the process, as they are at exit.
 *
 * Once the engine runs, graphshim's handler is installed for each of them
 * (unless the application ignores it), and the application's own handlers
 * are kept behind it: the library's sigaction and signal (gs_main.c) record
 * what the application asks for and answer with what it asked for before,
 * while the kernel keeps calling graphshim's handler.  The handler then
 *   - calls the application's handler when it has one (the application
 *     decides; if it exits, the files are written at exit as usual);
 *   - does nothing when the application ignores the signal;
 *   - when the application's disposition is the default (terminate):
 *     calls the engine back to write the files (async-signal-safe: no
 *     locks waited on, no allocation, no vendor call), puts the default
 *     disposition back and raises the signal again, so that the process
 *     ends as it would have, with the same status.
 * The engine may answer that it cannot write now: the signal arrived on a
 * thread that is inside graphshim's trace lock (or in the middle of the
 * exit-time writing); nor does the handler write while its thread holds a
 * stream (gs_sig_hold).  Then the signal is deferred: gs_sig_deferred is set,
 * and that code raises it again as it leaves (gs_sig_resume).  Nothing in
 * the handler ever waits on a lock the interrupted code may hold.  The
 * deferral is the thread's own: only the thread the signal interrupted
 * raises it again.  (It was one flag for the process once, and the idle
 * watchdog, which blocks every signal and holds streams too, took a
 * SIGTERM deferred on the application's thread and raised it on itself,
 * where it stayed pending for ever: the program ran on.)
 *
 * An ignored signal stays ignored in the kernel (so that it stays ignored
 * across exec, as the application expects).  A forked child keeps the
 * handler but writes nothing (gs_sig_child).
 */
#ifndef GS_SIG_H
#define GS_SIG_H

#include <signal.h>

#include "gs_common.h"

/* Non-zero while a signal waits for this thread's code inside graphshim to finish. */
extern __thread volatile sig_atomic_t gs_sig_deferred GS_TLS_IE;

/* Raise the deferred signal again (the handler then runs outside graphshim). */
void gs_sig_resume(void);

/*
 * Sections of this thread that a terminating signal waits for: while it
 * holds a stream's lock or the stream table's, the handler could not read
 * that stream's sequences (they are left out of the statistics, which say
 * "sequences_truncated"), so the signal is deferred to the end of the
 * section, microseconds later.  Nested; a forked child starts with none.
 */
extern __thread int gs_sig_holds GS_TLS_IE;

static inline void gs_sig_hold(void)
{
	gs_sig_holds++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void gs_sig_release(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!--gs_sig_holds && GS_UNLIKELY(gs_sig_deferred))
		gs_sig_resume();
}

/*
 * Install the handlers; on_term(sig) writes the files when a signal is to
 * end the process, and returns true when it cannot now (the signal is then
 * deferred).  Idempotent: a second call only changes on_term.
 */
void gs_sig_install(bool (*on_term)(int sig));

/* In a forked child: the handler no longer writes anything. */
void gs_sig_child(void);

/*
 * The real C library functions, for the library's interposed sigaction
 * (gs_main.c resolves them); unset, gs_sig calls sigaction directly.
 */
typedef int (*gs_sig_sigaction_fn)(int sig, const struct sigaction *act, struct sigaction *old);
void gs_sig_set_real(gs_sig_sigaction_fn real);

/* What gs_sig_app_sigaction answers for a signal it does not keep. */
#define GS_SIG_PASS (-2)

/*
 * The application's sigaction(sig, act, old): for a kept signal, records
 * act as the application's, gives back the previous one, and sets the
 * kernel's disposition (graphshim's handler, or SIG_IGN); returns 0 (or -1
 * with errno EINVAL).  GS_SIG_PASS for any other signal (the caller calls
 * the C library).  Async-signal-safe, as sigaction is.
 */
int gs_sig_app_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Whether gs_sig_app_sigaction keeps sig now (graphshim handles it). */
bool gs_sig_keeps(int sig);

/* "SIGINT", "SIGTERM", "SIGHUP", or "signal". */
const char *gs_sig_name(int sig);

#endif /* GS_SIG_H */
