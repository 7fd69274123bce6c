# tests/fuzz: the differential fuzzer.  fuzz_run generates random programs
# over 3 streams and 2 host threads from seeds and runs them on the CPU
# simulator; fuzz.sh runs it plainly and under LD_PRELOAD=libgraphshim.so
# over the same seeds and compares digests; fuzz-ci.sh is the `make check`
# sample.  See tests/fuzz/README.
# The kernels need neither vendor's headers: built for both flavours.
noinst_PROGRAMS += tests/fuzz/fuzzkern.sim.so
tests_fuzz_fuzzkern_sim_so_SOURCES = tests/fuzz/fuzzkern.c tests/fuzz/fuzz_abi.h
tests_fuzz_fuzzkern_sim_so_CPPFLAGS = -I$(srcdir)/tests/sim -I$(srcdir)/tests/fuzz
tests_fuzz_fuzzkern_sim_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_fuzz_fuzzkern_sim_so_LINK = $(CCLD) $(tests_fuzz_fuzzkern_sim_so_CFLAGS) $(CFLAGS) \
	$(AM_LDFLAGS) -shared $(LDFLAGS) -o $@

if HAVE_CUDA
check_PROGRAMS += tests/fuzz/fuzz_run
tests_fuzz_fuzz_run_SOURCES = tests/fuzz/fuzz_run.c tests/fuzz/fuzz_gen.c \
	tests/fuzz/fuzz_gen.h tests/fuzz/fuzz_abi.h
tests_fuzz_fuzz_run_CPPFLAGS = $(CUDA_CPPFLAGS) -I$(srcdir)/tests/fuzz \
	-DGS_FUZZ_KERN='"$(abs_top_builddir)/tests/fuzz/fuzzkern.cubin"'
tests_fuzz_fuzz_run_LDFLAGS = -L$(top_builddir)/$(SIM_LIBDIR) \
	-Wl,-rpath,$(abs_top_builddir)/$(SIM_LIBDIR)
tests_fuzz_fuzz_run_LDADD = -lcuda -ldl -lpthread
EXTRA_tests_fuzz_fuzz_run_DEPENDENCIES = tests/sim/lib/libcuda.so.1 \
	tests/fuzz/fuzzkern.sim.so

TESTS += tests/fuzz/fuzz-ci.sh
endif
EXTRA_DIST += tests/fuzz/fuzz.sh tests/fuzz/fuzz-ci.sh tests/fuzz/README tests/fuzz/lsan.supp

# The same runner on the simulator's HIP flavour (fuzz_api.h maps the
# names; the generator leaves out what HIP lacks); fuzz-ci-hip.sh compares
# it plainly and under graphshim's HIP backend.
if HAVE_HIP
check_PROGRAMS += tests/fuzz/fuzz_run_hip
tests_fuzz_fuzz_run_hip_SOURCES = tests/fuzz/fuzz_run.c tests/fuzz/fuzz_gen.c \
	tests/fuzz/fuzz_gen.h tests/fuzz/fuzz_abi.h tests/fuzz/fuzz_api.h
tests_fuzz_fuzz_run_hip_CPPFLAGS = $(HIP_CPPFLAGS) -DFZ_HIP -I$(srcdir)/tests/fuzz \
	-DGS_FUZZ_KERN='"$(abs_top_builddir)/tests/fuzz/fuzzkern.hsaco"'
tests_fuzz_fuzz_run_hip_LDFLAGS = -L$(top_builddir)/$(SIM_HIPLIBDIR) \
	-Wl,-rpath,$(abs_top_builddir)/$(SIM_HIPLIBDIR)
tests_fuzz_fuzz_run_hip_LDADD = -lamdhip64 -ldl -lpthread
EXTRA_tests_fuzz_fuzz_run_hip_DEPENDENCIES = tests/sim/hiplib/libamdhip64.so.5 \
	tests/fuzz/fuzzkern.sim.so

TESTS += tests/fuzz/fuzz-ci-hip.sh
endif
EXTRA_DIST += tests/fuzz/fuzz-ci-hip.sh tests/fuzz/fuzz_api.h
