# tests/reliability: process lifecycle, threads, constructor order, secure
# mode and bounded memory, on the CPU simulator under LD_PRELOAD (see
# docs/reliability.md).  The programs link against the simulator's
# libcuda.so.1 like tests/sim/t_*.c; the t-*.sh scripts run them with and
# without libgraphshim.so.
#
# Sanitizer builds (configure --enable-sanitizers=...): a sanitized
# libgraphshim.so can only be preloaded behind its sanitizer runtime, so
# every test script puts $GS_TEST_PRELOAD_PREFIX in front of the library in
# LD_PRELOAD.  It is derived here from SAN_CFLAGS for `make check` (an
# explicit value in the environment wins).
GS_SAN_RUNTIME = $(if $(findstring address,$(SAN_CFLAGS)),$(shell $(CC) -print-file-name=libasan.so),$(if $(findstring thread,$(SAN_CFLAGS)),$(shell $(CC) -print-file-name=libtsan.so),$(if $(findstring undefined,$(SAN_CFLAGS)),$(shell $(CC) -print-file-name=libubsan.so))))
AM_TESTS_ENVIRONMENT += GS_TEST_PRELOAD_PREFIX=$${GS_TEST_PRELOAD_PREFIX-$(GS_SAN_RUNTIME)}; \
	GS_TEST_SANITIZERS='$(SAN_CFLAGS)'; export GS_TEST_PRELOAD_PREFIX GS_TEST_SANITIZERS;

if HAVE_CUDA
REL_CPPFLAGS = $(SIM_T_CPPFLAGS) -I$(srcdir)/tests/reliability
REL_LDFLAGS = $(SIM_T_LDFLAGS)
REL_LIBS = $(SIM_T_LIBS)
REL_PROGS = tests/reliability/r_lifecycle
check_PROGRAMS += $(REL_PROGS)
REL_TESTS = tests/reliability/t-lifecycle.sh
TESTS += $(REL_TESTS)

tests_reliability_r_lifecycle_SOURCES = tests/reliability/r_lifecycle.c tests/reliability/r_common.h
tests_reliability_r_lifecycle_CPPFLAGS = $(REL_CPPFLAGS)
tests_reliability_r_lifecycle_LDFLAGS = $(REL_LDFLAGS)
tests_reliability_r_lifecycle_LDADD = $(REL_LIBS)
EXTRA_tests_reliability_r_lifecycle_DEPENDENCIES = $(SIM_T_DEPS)
endif
EXTRA_DIST += tests/reliability/t-lifecycle.sh tests/reliability/r_common.h
