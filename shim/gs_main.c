/*
 * libgraphshim.so's own entry points.  The backends start the engine on
 * their first hook call; this file makes sure held work is submitted when
 * the library is unloaded or the process ends without exit handlers,
 * remembers where the process started (relative output names are taken
 * from there), and keeps the application's handlers of the termination
 * signals behind graphshim's (gs_sig.h): sigaction and the signal family
 * are interposed for SIGINT, SIGTERM and SIGHUP once graphshim handles
 * them, and passed straight to the C library otherwise.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>

#include "gs_common.h"
#include "gs_config.h"
#include "gs_engine.h"
#include "gs_out.h"
#include "gs_sig.h"

GS_EXPORT const char *graphshim_version(void);
/* Declared by <signal.h> only under some feature macros. */
__sighandler_t bsd_signal(int sig, __sighandler_t handler);

const char *graphshim_version(void)
{
	return PACKAGE_VERSION;
}

/*
 * The C library's sigaction: the next definition after this library's
 * (dlsym's RTLD_NEXT is relative to the caller, and graphshim's own dlsym
 * keeps it so).
 */
static gs_sig_sigaction_fn gs_main_real_sigaction(void)
{
	static gs_sig_sigaction_fn real;
	gs_sig_sigaction_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (gs_sig_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
		__atomic_store_n(&real, f, __ATOMIC_RELEASE);
		gs_sig_set_real(f);
	}
	return f;
}

__attribute__((constructor)) static void gs_main_init(void)
{
	if (gs_config_secure())
		return; /* nothing is written there: nothing to remember */
	gs_out_note_cwd();
	gs_main_real_sigaction();
}

__attribute__((destructor)) static void gs_main_fini(void)
{
	gs_engine_fini();
}

/* ---- the application's signal handlers ------------------------------------ */

#ifdef __SANITIZE_THREAD__
/*
 * ThreadSanitizer's runtime, preloaded first, takes this sigaction for the
 * C library's (the next definition after its own) and calls it while it
 * starts, for the signals it catches itself: before that, no instrumented
 * code may run.  Those never are graphshim's; they go to the C library
 * directly, in code left uninstrumented.
 */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
#define GS_MAIN_TSAN_EARLY(sig, act, old)                                     \
	do {                                                                  \
		if ((sig) != SIGINT && (sig) != SIGTERM && (sig) != SIGHUP)   \
			return __sigaction(sig, act, old);                    \
	} while (0)
#define GS_MAIN_UNINSTRUMENTED __attribute__((no_sanitize_thread))
#else
#define GS_MAIN_TSAN_EARLY(sig, act, old) ((void)0)
#define GS_MAIN_UNINSTRUMENTED
#endif

GS_EXPORT GS_MAIN_UNINSTRUMENTED int sigaction(int sig, const struct sigaction *act,
					       struct sigaction *old)
{
	GS_MAIN_TSAN_EARLY(sig, act, old);
	int rc = gs_sig_app_sigaction(sig, act, old);
	if (rc != GS_SIG_PASS)
		return rc;
	gs_sig_sigaction_fn real = gs_main_real_sigaction();
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(sig, act, old);
}

typedef __sighandler_t (*gs_main_signal_fn)(int, __sighandler_t);

/* The C library's function of that name (signal, bsd_signal, ...). */
static gs_main_signal_fn gs_main_real_signal(const char *name, gs_main_signal_fn *slot)
{
	gs_main_signal_fn f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (gs_main_signal_fn)dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

/*
 * signal() and its kin for a kept signal: through sigaction above, with
 * the flags the C library gives them (BSD semantics, or System V's
 * one-shot kind); any other signal goes to the C library's own.
 */
static __sighandler_t gs_main_signal(int sig, __sighandler_t handler, bool sysv, const char *name,
				     gs_main_signal_fn *slot)
{
	if (!gs_sig_keeps(sig)) {
		gs_main_signal_fn real = gs_main_real_signal(name, slot);
		if (!real) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real(sig, handler);
	}
	struct sigaction act, old;
	if (handler == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (sysv) {
		act.sa_flags = SA_RESETHAND | SA_NODEFER;
	} else {
		sigaddset(&act.sa_mask, sig);
		act.sa_flags = SA_RESTART;
	}
	if (gs_sig_app_sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

static gs_main_signal_fn gs_main_signal_real[4];

GS_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	return gs_main_signal(sig, handler, false, "signal", &gs_main_signal_real[0]);
}

GS_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler)
{
	return gs_main_signal(sig, handler, false, "bsd_signal", &gs_main_signal_real[1]);
}

GS_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t handler)
{
	return gs_main_signal(sig, handler, true, "sysv_signal", &gs_main_signal_real[2]);
}

GS_EXPORT __sighandler_t __sysv_signal(int sig, __sighandler_t handler)
{
	return gs_main_signal(sig, handler, true, "__sysv_signal", &gs_main_signal_real[3]);
}
