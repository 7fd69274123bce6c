/*
 * Process lifecycle under graphshim (run by t-lifecycle.sh, preloaded):
 * work graphshim holds must reach the device at exit, before fork returns,
 * before a module unload and before a context destroy, and every graph it
 * made must be destroyed at teardown.
 *
 * Each mode learns a step of R_STEP launches on a stream (a sync after
 * each step is the boundary), then issues only part of the next step, so
 * graphshim holds those launches waiting for the rest.  The program checks
 * that they are really held (the counter does not move), then performs the
 * operation under test and watches device memory directly, with no driver
 * call that could itself submit the held work.
 *
 *   r_lifecycle exit|exit-call|fork|unload|ctx-destroy
 *
 * exit: the first thing main does is register an exit handler, before
 * graphshim (initialised at the first driver call) registers its own, so
 * ours runs after graphshim's; there graphshim is finished and a sync no
 * longer goes through it.  If graphshim's exit path lost the held launches,
 * the counter is short.  The same handler checks that no graph or
 * executable graph is left alive in the simulator.
 */
#include "r_common.h"

#include <sys/wait.h>

#define LEARN 6                 /* steps before the partial one */
#define PART (R_STEP - 3)       /* launches of the partial step */
#define WANT (LEARN * R_STEP + PART)

static CUdeviceptr r_buf;
static int r_graphs_seen;
static pid_t r_pid;

/* Learn the step on s, then hold PART launches of the next one. */
static void r_learn_and_hold(CUfunction add, CUstream s, CUdeviceptr p)
{
	for (int i = 0; i < LEARN; i++) {
		r_launches(add, s, p, 4, R_STEP);
		CHECK(cuStreamSynchronize(s));
	}
	r_launches(add, s, p, 4, PART);
	if (r_shimmed()) {
		/* The partial step must really be held: otherwise the test below
		 * proves nothing. */
		int got = r_poll(p, WANT, 200);
		if (got == WANT) {
			fprintf(stderr, "FAIL: the partial step was not held (graphshim did not "
				"learn the step)\n");
			exit(1);
		}
		r_graphs_seen = r_count(GS_SIM_H_EXEC);
		EXPECT(r_graphs_seen > 0);
	}
}

/* Poll after the operation under test: the held launches must have gone. */
static void r_expect_done(const char *what, CUdeviceptr p)
{
	int got = r_poll(p, WANT, 3000);
	if (got != WANT) {
		fprintf(stderr, "FAIL %s: counter %d, want %d: held work was not submitted\n",
			what, got, WANT);
		exit(1);
	}
}

/* Registered before graphshim's handler, so it runs after it. */
static void r_after_graphshim(void)
{
	if (getpid() != r_pid || !r_buf)
		return;
	CUresult rc = cuCtxSynchronize();
	int got = *(volatile int *)(uintptr_t)r_buf;
	int graphs = r_count(GS_SIM_H_GRAPH), execs = r_count(GS_SIM_H_EXEC);
	if (rc != CUDA_SUCCESS || got != WANT) {
		fprintf(stderr, "FAIL exit: counter %d, want %d (sync %d): held work lost at exit\n",
			got, WANT, (int)rc);
		_exit(1);
	}
	if (graphs || execs) {
		fprintf(stderr, "FAIL exit: %d graphs and %d executable graphs left alive "
			"(%d existed)\n", graphs, execs, r_graphs_seen);
		_exit(1);
	}
	printf("ok exit: counter %d, %d executable graphs destroyed\n", got, r_graphs_seen);
	fflush(stdout);
}

static int r_exit(bool call_exit)
{
	CUcontext ctx = t_setup();
	(void)ctx;
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&r_buf, 64));
	CHECK(cuMemsetD32(r_buf, 0, 16));
	r_learn_and_hold(t_func("add_scalar"), s, r_buf);
	/* No sync, no stream destroy: only graphshim's exit path submits. */
	if (call_exit)
		exit(0);
	return 0;
}

static int r_fork(void)
{
	t_setup();
	CUstream s;
	CUdeviceptr p;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 64));
	CHECK(cuMemsetD32(p, 0, 16));
	r_learn_and_hold(t_func("add_scalar"), s, p);
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		/* A GPU context does not survive fork; the child only makes calls
		 * that need none, which graphshim must pass through, and exits
		 * through graphshim's exit handler and destructor. */
		alarm(20);
		int v = 0, n = 0;
		CHECK(cuDriverGetVersion(&v));
		CHECK(cuDeviceGetCount(&n));
		EXPECT(v > 0 && n == 1);
		exit(0);
	}
	r_expect_done("fork", p);
	int st;
	EXPECT(waitpid(child, &st, 0) == child);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "FAIL fork: the child ended with status 0x%x\n", st);
		return 1;
	}
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(p, 0) == WANT);
	printf("ok fork: held work submitted before fork returned; child exited 0\n");
	return 0;
}

static int r_unload(void)
{
	t_setup();
	CUstream s;
	CUdeviceptr p;
	CUmodule other;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 64));
	CHECK(cuMemsetD32(p, 0, 16));
	CHECK(cuModuleLoad(&other, GS_SIM_TESTKERN));
	r_learn_and_hold(t_func("add_scalar"), s, p);
	/* Unloading any module may invalidate functions graphshim holds or
	 * baked into graphs: everything held must go first. */
	CHECK(cuModuleUnload(other));
	r_expect_done("unload", p);
	/* The step is learned again and replays after the unload. */
	for (int i = 0; i < LEARN; i++) {
		r_launches(t_func("add_scalar"), s, p, 4, R_STEP);
		CHECK(cuStreamSynchronize(s));
	}
	EXPECT(t_read_int(p, 0) == WANT + LEARN * R_STEP);
	printf("ok unload: held work submitted before cuModuleUnload\n");
	return 0;
}

static int r_ctx_destroy(void)
{
	CUcontext primary = t_setup(), other;
	CUdevice dev;
	CUdeviceptr p;
	CUstream s;
	CUmodule mod;
	CUfunction add;
	CHECK(cuMemAlloc(&p, 64)); /* in the primary context: outlives the other */
	CHECK(cuMemsetD32(p, 0, 16));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuCtxCreate(&other, NULL, 0, dev));
	CHECK(cuModuleLoad(&mod, GS_SIM_TESTKERN));
	CHECK(cuModuleGetFunction(&add, mod, "add_scalar"));
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	r_learn_and_hold(add, s, p);
	CHECK(cuCtxDestroy(other));
	r_expect_done("ctx-destroy", p);
	CHECK(cuCtxSetCurrent(primary));
	EXPECT(t_read_int(p, 0) == WANT);
	printf("ok ctx-destroy: held work submitted before cuCtxDestroy\n");
	return 0;
}

int main(int argc, char **argv)
{
	r_pid = getpid();
	/* Before any driver call, hence before graphshim's own handler. */
	atexit(r_after_graphshim);
	const char *mode = argc > 1 ? argv[1] : "exit";
	if (!strcmp(mode, "exit"))
		return r_exit(false);
	if (!strcmp(mode, "exit-call"))
		return r_exit(true);
	r_buf = 0; /* the exit check is for the exit modes only */
	if (!strcmp(mode, "fork"))
		return r_fork();
	if (!strcmp(mode, "unload"))
		return r_unload();
	if (!strcmp(mode, "ctx-destroy"))
		return r_ctx_destroy();
	fprintf(stderr, "usage: %s exit|exit-call|fork|unload|ctx-destroy\n", argv[0]);
	return 2;
}
