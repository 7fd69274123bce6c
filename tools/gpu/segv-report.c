/*
 * A crash reporter for GPU-machine runs, which have no gdb: preloaded
 * (LD_PRELOAD=.../libsegvreport.so:...), it catches SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE and SIGABRT and writes to stderr the faulting thread's
 * frames (glibc's backtrace, which unwinds through the signal frame), the
 * faulting address and each frame's object and offset from /proc/self/maps
 * (resolve graphshim's with addr2line -f -i -e .libs/libgraphshim.so
 * OFFSET), then dies of the signal as it would have.  Build:
 *   cc -O1 -g -shared -fPIC -o libsegvreport.so tools/gpu/segv-report.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char alt[65536];

static void say(const char *s)
{
	ssize_t w = write(2, s, strlen(s));
	(void)w;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	char line[512];
	void *pcs[64];
	(void)uc;
	snprintf(line, sizeof(line), "segv-report: signal %d (%s) at address %p, thread %ld\n", sig,
		 strsignal(sig), si->si_addr, (long)gettid());
	say(line);
	int n = backtrace(pcs, 64);
	for (int i = 0; i < n; i++) {
		Dl_info d;
		if (dladdr(pcs[i], &d) && d.dli_fname) {
			snprintf(line, sizeof(line), "segv-report: #%d %p %s+0x%lx (%s)\n", i, pcs[i],
				 d.dli_fname, (unsigned long)((char *)pcs[i] - (char *)d.dli_fbase),
				 d.dli_sname ? d.dli_sname : "?");
		} else {
			snprintf(line, sizeof(line), "segv-report: #%d %p ?\n", i, pcs[i]);
		}
		say(line);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void segv_report_init(void)
{
	stack_t st = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
	struct sigaction sa;
	sigaltstack(&st, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
