# tests/cuda: the CUDA backend without a GPU.  test-cu-classified checks the
# hook list against the installed cuda.h; test_cuda unit-tests the backend
# against stub driver functions and a stub engine (cu_engine_stub.c, which
# stands in for the core and is never linked into libgraphshim).
EXTRA_DIST += tests/cuda/test-cu-classified

if HAVE_CUDA
TESTS += tests/cuda/test-cu-classified

if HAVE_CRITERION
check_PROGRAMS += tests/cuda/test_cuda
TESTS += tests/cuda/test_cuda
tests_cuda_test_cuda_SOURCES = tests/cuda/test_cuda.c \
	tests/cuda/cu_engine_stub.c tests/cuda/cu_engine_stub.h \
	shim/core/gs_hash.c shim/core/gs_fmt.c shim/core/gs_adopt.c shim/core/gs_self.c \
	$(GS_CUDA_SOURCES)
tests_cuda_test_cuda_CPPFLAGS = $(CUDA_CPPFLAGS) $(CORE_CPPFLAGS) \
	-I$(top_srcdir)/shim/cuda
tests_cuda_test_cuda_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_cuda_test_cuda_LDADD = $(CRITERION_LIBS)
endif
endif

# Interposition through dlsym and cuGetProcAddress, end to end, against a
# fake libcuda.so.1 (test-only; never installed).
EXTRA_DIST += tests/cuda/test-cu-preload
if HAVE_CUDA
check_LTLIBRARIES += tests/cuda/libfakecuda.la
tests_cuda_libfakecuda_la_SOURCES = tests/cuda/fake_libcuda.c
tests_cuda_libfakecuda_la_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_cuda_libfakecuda_la_CFLAGS = $(AM_CFLAGS) -Wno-missing-prototypes
tests_cuda_libfakecuda_la_LDFLAGS = -module -avoid-version -rpath /nowhere \
	-Wl,-soname,libcuda.so.1 -Wl,--version-script=$(srcdir)/tests/cuda/fake_libcuda.map
EXTRA_DIST += tests/cuda/fake_libcuda.map
check_PROGRAMS += tests/cuda/test_procaddr
tests_cuda_test_procaddr_SOURCES = tests/cuda/test_procaddr.c
tests_cuda_test_procaddr_CPPFLAGS = $(CUDA_CPPFLAGS)
TESTS += tests/cuda/test-cu-preload
endif

# The pass-through cost of a hooked launch (tools/bench-hook.sh); not a test.
if HAVE_CUDA
noinst_PROGRAMS += tests/cuda/bench_hook
tests_cuda_bench_hook_SOURCES = tests/cuda/bench_hook.c
tests_cuda_bench_hook_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_cuda_bench_hook_CFLAGS = $(AM_CFLAGS) -O2
endif
