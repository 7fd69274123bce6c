# tools: the `graphshim` command, its man page, and the tests of the tools
# and of the diagnostics writers (gs_stats.c, gs_trace.c) in tests/tools/.

if HAVE_JANSSON
bin_PROGRAMS += tools/graphshim
tools_graphshim_SOURCES = tools/graphshim.c
# GS_LIBDIR: where `make install` puts libgraphshim.so, the last place
# `graphshim run` looks (see tools/graphshim.1.in).
tools_graphshim_CPPFLAGS = -I$(top_builddir) -DGS_LIBDIR='"$(libdir)"'
tools_graphshim_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tools_graphshim_LDADD = $(JANSSON_LIBS) -lm
endif
# The manual page, tools/graphshim.1, is made with graphshim(7) (docs/local.mk).

# Unit tests of the writers on their own: the modules they call, and no
# engine (the statistics are handed their per-sequence figures).
GS_TOOLS_TEST_SRC = shim/core/gs_stats.c shim/core/gs_trace.c shim/core/gs_names.c shim/core/gs_out.c \
	shim/core/gs_flush.c shim/core/gs_rec.c shim/core/gs_fmt.c shim/core/gs_sig.c \
	shim/core/gs_config.c shim/core/gs_log.c
if HAVE_CRITERION
if HAVE_JANSSON
check_PROGRAMS += tests/tools/test_stats tests/tools/test_trace
TESTS += tests/tools/test_stats tests/tools/test_trace
tests_tools_test_stats_SOURCES = tests/tools/test_stats.c $(GS_TOOLS_TEST_SRC)
tests_tools_test_stats_CPPFLAGS = $(CORE_CPPFLAGS) -I$(top_srcdir)/tests/tools
tests_tools_test_stats_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(JANSSON_CFLAGS)
tests_tools_test_stats_LDADD = $(CRITERION_LIBS) $(JANSSON_LIBS)
tests_tools_test_trace_SOURCES = tests/tools/test_trace.c $(GS_TOOLS_TEST_SRC)
tests_tools_test_trace_CPPFLAGS = $(CORE_CPPFLAGS) -I$(top_srcdir)/tests/tools
tests_tools_test_trace_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(JANSSON_CFLAGS)
tests_tools_test_trace_LDADD = $(CRITERION_LIBS) $(JANSSON_LIBS)

# End to end: the real engine on the recording test backend of tests/unit,
# writing stats and trace files that the command then reads.
check_PROGRAMS += tests/tools/test_e2e
TESTS += tests/tools/test_e2e
tests_tools_test_e2e_SOURCES = tests/tools/test_e2e.c \
	tests/unit/gs_testbe.h tests/unit/gs_testbe.c
tests_tools_test_e2e_CPPFLAGS = $(CORE_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_tools_test_e2e_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(JANSSON_CFLAGS)
tests_tools_test_e2e_LDADD = libgscore.la $(CRITERION_LIBS) $(JANSSON_LIBS)
endif
endif

# The output files end to end on the simulator (t-outputs.sh): a program
# that handles signals as applications do, and the kernels/ workloads.
if HAVE_CUDA
check_PROGRAMS += tests/tools/sig_app
tests_tools_sig_app_SOURCES = tests/tools/sig_app.c
tests_tools_sig_app_CPPFLAGS = $(SIM_T_CPPFLAGS) -I$(srcdir)/tests/reliability
tests_tools_sig_app_LDFLAGS = $(SIM_T_LDFLAGS)
tests_tools_sig_app_LDADD = $(SIM_T_LIBS)
EXTRA_tests_tools_sig_app_DEPENDENCIES = $(SIM_T_DEPS)
TESTS += tests/tools/t-outputs.sh
endif
EXTRA_DIST += tests/tools/t-outputs.sh

# gen_trace writes sample traces for the command-line tests.
check_PROGRAMS += tests/tools/gen_trace
tests_tools_gen_trace_SOURCES = tests/tools/gen_trace.c $(GS_TOOLS_TEST_SRC)
tests_tools_gen_trace_CPPFLAGS = $(CORE_CPPFLAGS) -I$(top_srcdir)/tests/tools

# The command-line tests (exit 77, skipped, when the command is not built).
TESTS += tests/tools/test_cli.sh tests/tools/test_docs.sh tests/tools/test_timeline.sh tests/tools/test_gate_trials.sh \
	tests/tools/test_losses.sh tests/tools/test_real_dry.sh
EXTRA_DIST += tests/tools/test_cli.sh tests/tools/test_docs.sh tests/tools/test_timeline.sh tests/tools/test_gate_trials.sh \
	tests/tools/test_losses.sh tests/tools/test_real_dry.sh \
	tests/tools/py_lib.sh \
	tests/tools/data/base.json tests/tools/data/same.json \
	tests/tools/data/regress.json tests/tools/data/steps_base.json \
	tests/tools/data/steps_new.json tests/tools/data/missing_key.json \
	tests/tools/data/wrong_type.json tests/tools/data/malformed.json \
	tests/tools/data/empty.json tests/tools/data/bad_trace.json \
	tests/tools/data/object_form.json tests/tools/data/forgiven.json tests/tools/data/gate_kept.json tests/tools/data/steps200.json \
	tests/tools/data/steps400.json tests/tools/data/gate_new.json \
	tests/tools/data/procs.json tests/tools/data/procs.4242.json \
	tests/tools/data/order_errors.json
