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
	$(GS_CUDA_SOURCES)
tests_cuda_test_cuda_CPPFLAGS = $(CUDA_CPPFLAGS) $(CORE_CPPFLAGS) \
	-I$(top_srcdir)/shim/cuda
tests_cuda_test_cuda_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_cuda_test_cuda_LDADD = $(CRITERION_LIBS)
endif
endif
