# Criterion unit tests of the core against the recording test backend.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_core
tests_unit_test_core_SOURCES = \
	tests/unit/gs_testbe.h tests/unit/gs_testbe.c \
	tests/unit/test_rec.c tests/unit/test_config.c tests/unit/test_period.c \
	tests/unit/test_learn.c tests/unit/test_match.c tests/unit/test_replay.c \
	tests/unit/test_cache.c tests/unit/test_order.c tests/unit/test_faults.c \
	tests/unit/test_chunks.c tests/unit/test_build.c tests/unit/test_gate.c \
	tests/unit/test_cold.c tests/unit/test_names.c tests/unit/test_variant.c \
	tests/unit/test_marks.c tests/unit/test_idle.c tests/unit/test_submit.c \
	tests/unit/test_thrift.c tests/unit/test_self.c
tests_unit_test_core_CPPFLAGS = $(CORE_CPPFLAGS)
tests_unit_test_core_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) -Wno-missing-prototypes
tests_unit_test_core_LDADD = libgscore.la $(CRITERION_LIBS)
TESTS += tests/unit/test_core
endif
