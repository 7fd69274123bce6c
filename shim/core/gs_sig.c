/*
 * Termination signals: the handler, the application's handlers kept behind
 * it, and the deferral (gs_sig.h).
 *
 * The application's dispositions live in a small table written under a
 * spin lock with every signal blocked (so that no handler can interrupt a
 * writer on its own thread) and read by the handler through a sequence
 * count (a handler on another thread retries while a write is under way).
 */
#include "gs_sig.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

static const int gs_sig_list[] = {SIGINT, SIGTERM, SIGHUP};
#define GS_SIG_N ((int)GS_ARRAY_SIZE(gs_sig_list))

__thread volatile sig_atomic_t gs_sig_deferred GS_TLS_IE;
__thread int gs_sig_holds GS_TLS_IE;

static gs_sig_sigaction_fn gs_sig_real;
static bool (*gs_sig_on_term)(int sig);
static int gs_sig_watching; /* the table is in force */
static int gs_sig_passive;  /* a forked child: write nothing */
static int gs_sig_spin;
static unsigned gs_sig_seq;
static struct sigaction gs_sig_app[GS_SIG_N];

static int gs_sig_index(int sig)
{
	for (int i = 0; i < GS_SIG_N; i++)
		if (gs_sig_list[i] == sig)
			return i;
	return -1;
}

const char *gs_sig_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	default: return "signal";
	}
}

void gs_sig_set_real(gs_sig_sigaction_fn real)
{
	__atomic_store_n(&gs_sig_real, real, __ATOMIC_RELEASE);
}

static int gs_sig_kernel(int sig, const struct sigaction *act, struct sigaction *old)
{
	gs_sig_sigaction_fn real = __atomic_load_n(&gs_sig_real, __ATOMIC_ACQUIRE);
	return real ? real(sig, act, old) : sigaction(sig, act, old);
}

/* The application's disposition of signal slot i, read consistently. */
static void gs_sig_app_get(int i, struct sigaction *out)
{
	for (;;) {
		unsigned s1 = __atomic_load_n(&gs_sig_seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue; /* a writer on another thread: it is quick */
		*out = gs_sig_app[i];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&gs_sig_seq, __ATOMIC_RELAXED) == s1)
			return;
	}
}

static void gs_sig_handler(int sig, siginfo_t *info, void *uc);

/* What the kernel runs for an application's disposition app. */
static void gs_sig_ours(const struct sigaction *app, struct sigaction *k)
{
	memset(k, 0, sizeof(*k));
	if (app->sa_handler == SIG_IGN) {
		k->sa_handler = SIG_IGN;
		sigemptyset(&k->sa_mask);
		return;
	}
	k->sa_sigaction = gs_sig_handler;
	k->sa_flags = SA_SIGINFO;
	if (app->sa_handler == SIG_DFL) {
		/* Writing the files may take a while: let interrupted calls go on. */
		k->sa_flags |= SA_RESTART;
		sigemptyset(&k->sa_mask);
	} else {
		/* The application's handler runs as it asked: its mask, its restarts. */
		k->sa_flags |= app->sa_flags & (SA_RESTART | SA_NODEFER | SA_ONSTACK);
		k->sa_mask = app->sa_mask;
	}
}

/* Block every signal and take the table (a writer). */
static void gs_sig_lock(sigset_t *saved)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
	while (__atomic_exchange_n(&gs_sig_spin, 1, __ATOMIC_ACQUIRE))
		;
	__atomic_fetch_add(&gs_sig_seq, 1, __ATOMIC_ACQ_REL);
}

static void gs_sig_unlock(const sigset_t *saved)
{
	__atomic_fetch_add(&gs_sig_seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&gs_sig_spin, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

void gs_sig_install(bool (*on_term)(int sig))
{
	__atomic_store_n(&gs_sig_on_term, on_term, __ATOMIC_RELEASE);
	__atomic_store_n(&gs_sig_passive, 0, __ATOMIC_RELEASE);
	sigset_t saved;
	gs_sig_lock(&saved);
	if (!gs_sig_watching) {
		for (int i = 0; i < GS_SIG_N; i++) {
			struct sigaction cur, k;
			if (gs_sig_kernel(gs_sig_list[i], NULL, &cur))
				continue;
			gs_sig_app[i] = cur;
			gs_sig_ours(&cur, &k);
			if (cur.sa_handler != SIG_IGN)
				gs_sig_kernel(gs_sig_list[i], &k, NULL);
		}
		__atomic_store_n(&gs_sig_watching, 1, __ATOMIC_RELEASE);
	}
	gs_sig_unlock(&saved);
}

void gs_sig_child(void)
{
	gs_sig_holds = 0; /* the parent's locks are not this process's */
	gs_sig_deferred = 0;
	__atomic_store_n(&gs_sig_passive, 1, __ATOMIC_RELEASE);
}

bool gs_sig_keeps(int sig)
{
	return gs_sig_index(sig) >= 0 && __atomic_load_n(&gs_sig_watching, __ATOMIC_ACQUIRE);
}

int gs_sig_app_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = gs_sig_index(sig);
	if (i < 0 || !__atomic_load_n(&gs_sig_watching, __ATOMIC_ACQUIRE))
		return GS_SIG_PASS;
	sigset_t saved;
	gs_sig_lock(&saved);
	struct sigaction prev = gs_sig_app[i];
	int rc = 0;
	if (act) {
		struct sigaction k;
		gs_sig_ours(act, &k);
		rc = gs_sig_kernel(sig, &k, NULL);
		if (!rc)
			gs_sig_app[i] = *act;
	}
	int e = errno;
	gs_sig_unlock(&saved);
	if (rc) {
		errno = e;
		return -1;
	}
	if (old)
		*old = prev;
	return 0;
}

void gs_sig_resume(void)
{
	int sig = __atomic_exchange_n((int *)&gs_sig_deferred, 0, __ATOMIC_ACQ_REL);
	if (sig)
		raise(sig);
}

static void gs_sig_handler(int sig, siginfo_t *info, void *uc)
{
	int saved_errno = errno;
	int i = gs_sig_index(sig);
	if (i < 0)
		return;
	struct sigaction app;
	gs_sig_app_get(i, &app);
	if (app.sa_handler == SIG_IGN)
		goto out;
	if (app.sa_handler != SIG_DFL) {
		if (app.sa_flags & SA_RESETHAND) {
			/* A one-shot handler: the next one is the default's. */
			struct sigaction dfl;
			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			gs_sig_app_sigaction(sig, &dfl, NULL);
		}
		errno = saved_errno;
		if (app.sa_flags & SA_SIGINFO)
			app.sa_sigaction(sig, info, uc);
		else
			app.sa_handler(sig);
		saved_errno = errno;
		goto out;
	}
	/* The default: the process ends, with its files written first. */
	bool (*on_term)(int) = __atomic_load_n(&gs_sig_on_term, __ATOMIC_ACQUIRE);
	if (on_term && !__atomic_load_n(&gs_sig_passive, __ATOMIC_ACQUIRE) &&
	    (gs_sig_holds || on_term(sig))) {
		gs_sig_deferred = sig;
		goto out;
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	gs_sig_kernel(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	/* Still here (the signal is blocked some other way): it ends the process on return. */
out:
	errno = saved_errno;
}
