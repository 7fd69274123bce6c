/*
 * A GPU program for the tests of the output files (t-outputs.sh), on the
 * simulator: it runs steps of 8 add_scalar launches and a synchronize on a
 * stream until a signal ends the loop (or STEPS steps ran), handling
 * SIGINT and SIGTERM the way MODE says, as applications do:
 *
 *   plain    no handler: the signal's default disposition ends it
 *   before   a handler installed with sigaction before the first GPU call;
 *            the loop ends when it runs, and the program exits 0
 *   after    the same, installed after the first GPU call (when graphshim
 *            handles the signals already); prints "virtual=ok" when
 *            sigaction then gives back the handler it set
 *   signal   signal() after the first GPU call; exits 0
 *   python   as CPython does: a handler after the first call; when the
 *            loop ends, SIG_DFL is put back and the signal raised again,
 *            so the process ends by it (with no exit handlers run)
 *   nogpu    no GPU call: cuInit, a context, an allocation, then exits
 *   library  as plain, launching a CUkernel (cuLibraryLoadFromFile,
 *            cuLibraryGetKernel) instead of a module's CUfunction
 *
 * It starts with SIGINT and SIGTERM at their defaults, as a program run in
 * the foreground has them (a shell's background job ignores SIGINT), and
 * prints "ready" (flushed) once it has run 20 steps, so a test knows the
 * steps were learned before it sends a signal.
 * Usage: sig_app MODE [STEPS]   (STEPS 0 or absent: until a signal)
 */
#include "r_common.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t sig_app_got;

static void sig_app_handler(int sig)
{
	sig_app_got = sig;
}

static void sig_app_install(bool with_signal)
{
	if (with_signal) {
		signal(SIGINT, sig_app_handler);
		signal(SIGTERM, sig_app_handler);
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_app_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction back;
	sigaction(SIGTERM, NULL, &back);
	printf("virtual=%s\n", back.sa_handler == sig_app_handler ? "ok" : "bad");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	long steps = argc > 2 ? atol(argv[2]) : 0;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (!strcmp(mode, "before"))
		sig_app_install(false);
	t_setup();
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 64 * sizeof(int)));
	if (!strcmp(mode, "nogpu")) {
		printf("ready\n");
		return 0;
	}
	CUfunction add = t_func("add_scalar");
	if (!strcmp(mode, "library")) {
		/* A library's kernel is launched by its CUkernel handle, as cuBLAS and Triton do. */
		CUlibrary lib;
		CUkernel k;
		CHECK(cuLibraryLoadFromFile(&lib, GS_SIM_TESTKERN, NULL, NULL, 0, NULL, NULL, 0));
		CHECK(cuLibraryGetKernel(&k, lib, "add_scalar"));
		add = (CUfunction)k;
	}
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	bool installed = false;
	for (long i = 0; !steps || i < steps; i++) {
		r_launches(add, s, p, 64, R_STEP);
		CHECK(cuStreamSynchronize(s));
		if (!installed && (!strcmp(mode, "after") || !strcmp(mode, "python") ||
				   !strcmp(mode, "signal"))) {
			sig_app_install(!strcmp(mode, "signal"));
			installed = true;
		}
		if (i == 20) {
			printf("ready\n");
			fflush(stdout);
		}
		if (sig_app_got)
			break;
	}
	printf("handled=%d\n", (int)sig_app_got);
	fflush(stdout);
	if (sig_app_got && !strcmp(mode, "python")) {
		signal(sig_app_got, SIG_DFL);
		kill(getpid(), sig_app_got);
	}
	return 0;
}
