# tests/hipsim: the CPU simulator's HIP flavour (tests/sim/hiplib/
# libamdhip64.so.5) and the kernels/ workloads' HIP builds on it, with and
# without graphshim.
#   t_hip_api            the HIP front call by call (rpath to the simulator)
#   t-hip-workloads.sh   kernels/*-hip and t_hip_forms eager vs under
#                        graphshim: identical outputs, replay coverage,
#                        injected faults
#   t-hip-stubs.sh       t_hip_stubs (fat binary, host stubs,
#                        hipLaunchKernel) eager vs under graphshim:
#                        identical outputs, hipLaunchKernel replayed
# tests/hipsim/testkern.sim.so: tests/sim/testkern.c built for t_hip_api, which
# loads it as "testkern.hsaco".
if HAVE_HIP
noinst_PROGRAMS += tests/hipsim/testkern.sim.so
tests_hipsim_testkern_sim_so_SOURCES = tests/sim/testkern.c tests/sim/gs_sim_kernel.h
tests_hipsim_testkern_sim_so_CPPFLAGS = -I$(srcdir)/tests/sim
tests_hipsim_testkern_sim_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_hipsim_testkern_sim_so_LINK = $(CCLD) $(tests_hipsim_testkern_sim_so_CFLAGS) $(CFLAGS) \
	$(AM_LDFLAGS) -shared $(LDFLAGS) -o $@

check_PROGRAMS += tests/hipsim/t_hip_api
tests_hipsim_t_hip_api_SOURCES = tests/hipsim/t_hip_api.c tests/hipsim/hipsim_test.h
tests_hipsim_t_hip_api_CPPFLAGS = $(HIP_CPPFLAGS) -I$(srcdir)/tests/sim \
	-DGS_HIP_TESTKERN_DIR='"$(abs_top_builddir)/tests/hipsim"'
tests_hipsim_t_hip_api_LDFLAGS = -L$(top_builddir)/tests/sim/hiplib \
	-Wl,-rpath,$(abs_top_builddir)/tests/sim/hiplib
tests_hipsim_t_hip_api_LDADD = -lamdhip64 -ldl
# The workload script needs the kernels' simulator modules, which only the
# CUDA programs depend on otherwise: building them here makes them exist
# before the tests run.
EXTRA_tests_hipsim_t_hip_api_DEPENDENCIES = tests/sim/hiplib/libamdhip64.so.5 \
	tests/hipsim/testkern.sim.so $(GS_WL_SIMSO)

# Every launch and transfer form of graphshim's HIP backend in one repeating
# step; run by t-hip-workloads.sh (needs --out), not a test on its own.
check_PROGRAMS += tests/hipsim/t_hip_forms
tests_hipsim_t_hip_forms_SOURCES = tests/hipsim/t_hip_forms.c tests/hipsim/hipsim_test.h
tests_hipsim_t_hip_forms_CPPFLAGS = $(tests_hipsim_t_hip_api_CPPFLAGS)
tests_hipsim_t_hip_forms_LDFLAGS = $(tests_hipsim_t_hip_api_LDFLAGS)
tests_hipsim_t_hip_forms_LDADD = -lamdhip64
EXTRA_tests_hipsim_t_hip_forms_DEPENDENCIES = $(EXTRA_tests_hipsim_t_hip_api_DEPENDENCIES)

# Host stubs from a fat binary launched through hipLaunchKernel(_spt); the
# fat binary wraps the committed hipcc code object; run by t-hip-stubs.sh.
check_PROGRAMS += tests/hipsim/t_hip_stubs
tests_hipsim_t_hip_stubs_SOURCES = tests/hipsim/t_hip_stubs.c tests/hipsim/hipsim_test.h
tests_hipsim_t_hip_stubs_CPPFLAGS = $(tests_hipsim_t_hip_api_CPPFLAGS) \
	-DGS_HIP_CODEOBJ='"$(abs_top_srcdir)/tests/hip/data/kernels-gfx90a.elf"'
tests_hipsim_t_hip_stubs_LDFLAGS = $(tests_hipsim_t_hip_api_LDFLAGS)
tests_hipsim_t_hip_stubs_LDADD = -lamdhip64
EXTRA_tests_hipsim_t_hip_stubs_DEPENDENCIES = tests/sim/hiplib/libamdhip64.so.5
TESTS += tests/hipsim/t_hip_api tests/hipsim/t-hip-workloads.sh tests/hipsim/t-hip-stubs.sh
endif
EXTRA_DIST += tests/hipsim/t-hip-workloads.sh tests/hipsim/t-hip-stubs.sh
