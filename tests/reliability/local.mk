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

GS_REL_SH = tests/reliability/t-lifecycle.sh tests/reliability/t-threads.sh \
	tests/reliability/t-secure.sh tests/reliability/t-memory.sh tests/reliability/t-nomem.sh
if HAVE_CUDA
GS_REL_CPPFLAGS = $(SIM_T_CPPFLAGS) -I$(srcdir)/tests/reliability
GS_REL_LDF = $(SIM_T_LDFLAGS)
GS_REL_LIBS = $(SIM_T_LIBS)
GS_REL_PROGS = tests/reliability/r_lifecycle tests/reliability/r_stress tests/reliability/r_ctor \
	tests/reliability/r_memory
check_PROGRAMS += $(GS_REL_PROGS)
GS_REL_TESTS = $(GS_REL_SH)
TESTS += $(GS_REL_TESTS)

tests_reliability_r_lifecycle_SOURCES = tests/reliability/r_lifecycle.c tests/reliability/r_common.h
tests_reliability_r_lifecycle_CPPFLAGS = $(GS_REL_CPPFLAGS)
tests_reliability_r_lifecycle_LDFLAGS = $(GS_REL_LDF)
tests_reliability_r_lifecycle_LDADD = $(GS_REL_LIBS)
EXTRA_tests_reliability_r_lifecycle_DEPENDENCIES = $(SIM_T_DEPS)

tests_reliability_r_stress_SOURCES = tests/reliability/r_stress.c tests/reliability/r_common.h
tests_reliability_r_stress_CPPFLAGS = $(GS_REL_CPPFLAGS)
tests_reliability_r_stress_LDFLAGS = $(GS_REL_LDF)
tests_reliability_r_stress_LDADD = $(GS_REL_LIBS)
EXTRA_tests_reliability_r_stress_DEPENDENCIES = $(SIM_T_DEPS)

tests_reliability_r_memory_SOURCES = tests/reliability/r_memory.c tests/reliability/r_common.h
tests_reliability_r_memory_CPPFLAGS = $(GS_REL_CPPFLAGS)
tests_reliability_r_memory_LDFLAGS = $(GS_REL_LDF)
tests_reliability_r_memory_LDADD = $(GS_REL_LIBS)
EXTRA_tests_reliability_r_memory_DEPENDENCIES = $(SIM_T_DEPS)

# A library whose constructor calls the driver, linked by hand (not
# libtool) so the program finds it by rpath under its plain name.
check_PROGRAMS += tests/reliability/libr_ctor.so
tests_reliability_libr_ctor_so_SOURCES = tests/reliability/r_ctorlib.c tests/reliability/r_common.h
tests_reliability_libr_ctor_so_CPPFLAGS = $(GS_REL_CPPFLAGS)
tests_reliability_libr_ctor_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_reliability_libr_ctor_so_LDADD = $(GS_REL_LIBS)
tests_reliability_libr_ctor_so_LINK = $(CCLD) $(tests_reliability_libr_ctor_so_CFLAGS) $(CFLAGS) \
	$(AM_LDFLAGS) -shared $(GS_REL_LDF) $(LDFLAGS) -o $@
EXTRA_tests_reliability_libr_ctor_so_DEPENDENCIES = $(SIM_T_DEPS)

# Makes graphshim's own allocations fail (t-nomem.sh); plain C, no sanitizer
# (it replaces malloc, which a sanitizer runtime owns).
check_PROGRAMS += tests/reliability/libr_failmalloc.so
tests_reliability_libr_failmalloc_so_SOURCES = tests/reliability/r_failmalloc.c
tests_reliability_libr_failmalloc_so_CFLAGS = -O1 -fPIC
tests_reliability_libr_failmalloc_so_LINK = $(CCLD) $(tests_reliability_libr_failmalloc_so_CFLAGS) \
	-shared -o $@
# Linked against libgraphshim.so itself (setgid copies get no LD_PRELOAD).
check_PROGRAMS += tests/reliability/r_secure
tests_reliability_r_secure_SOURCES = tests/reliability/r_secure.c tests/reliability/r_common.h
tests_reliability_r_secure_CPPFLAGS = $(GS_REL_CPPFLAGS)
# Linked by hand: libtool would make a wrapper script of it.
tests_reliability_r_secure_LDADD = $(top_builddir)/.libs/libgraphshim.so $(GS_REL_LIBS)
tests_reliability_r_secure_LINK = $(CCLD) $(AM_CFLAGS) $(CFLAGS) $(AM_LDFLAGS) $(GS_REL_LDF) \
	-Wl,-rpath,$(abs_top_builddir)/.libs -Wl,--no-as-needed $(LDFLAGS) -o $@
EXTRA_tests_reliability_r_secure_DEPENDENCIES = libgraphshim.la $(SIM_T_DEPS)

# A stand-in HIP runtime whose constructor leaves a file ($R_MARKER): proof
# that a library GRAPHSHIM_HIP_LIBRARY names was loaded (t-secure.sh).
check_PROGRAMS += tests/reliability/libr_marker.so
tests_reliability_libr_marker_so_SOURCES = tests/reliability/r_marker.c
tests_reliability_libr_marker_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_reliability_libr_marker_so_LINK = $(CCLD) $(tests_reliability_libr_marker_so_CFLAGS) $(CFLAGS) \
	$(AM_LDFLAGS) -shared $(LDFLAGS) -o $@

tests_reliability_r_ctor_SOURCES = tests/reliability/r_ctor.c tests/reliability/r_common.h
tests_reliability_r_ctor_CPPFLAGS = $(GS_REL_CPPFLAGS)
tests_reliability_r_ctor_LDFLAGS = $(GS_REL_LDF) -Wl,-rpath,$(abs_top_builddir)/tests/reliability
tests_reliability_r_ctor_LDADD = tests/reliability/libr_ctor.so $(GS_REL_LIBS)
endif
EXTRA_DIST += $(GS_REL_SH) tests/reliability/r_common.h tests/reliability/r_lib.sh
# The reliability guarantees and how they are tested.
dist_doc_DATA += docs/reliability.md
