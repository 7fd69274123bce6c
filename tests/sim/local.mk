# tests/sim: the CPU simulator of the CUDA driver API and its tests.
#
# Products (paths relative to the build directory; stable, others rely on them):
#   tests/sim/lib/libcuda.so.1   the simulator, soname libcuda.so.1.  Run any
#                                program on it with
#                                LD_LIBRARY_PATH=$(abs_top_builddir)/tests/sim/lib
#   tests/sim/lib/libcuda.so     symlink, so -L$(top_builddir)/tests/sim/lib -lcuda links
#   tests/sim/testkern.sim.so    test kernels; cuModuleLoad(".../tests/sim/testkern.cubin")
#                                finds it (".cubin" -> ".sim.so")
# Both are built by `make` (noinst).  The library is linked by hand (not
# libtool) so its file name and soname are exactly the real driver's.
# Knobs (environment): GS_SIM_LAUNCH_US, GS_SIM_NODE_US, GS_SIM_FAIL_<KIND>=N|N+
# (see tests/sim/README).  The t_* programs are `make check` tests; they carry
# an rpath to tests/sim/lib, so they need no LD_LIBRARY_PATH.
# The vendor-neutral core and what the fronts share, in both flavours.
SIM_CORE_SOURCES = \
	tests/sim/gs_sim_kernel.h tests/sim/sim_core.h \
	tests/sim/sim_util.c tests/sim/sim_stream.c tests/sim/sim_mem.c \
	tests/sim/sim_module.c tests/sim/sim_graph.c tests/sim/sim_devupd.c \
	tests/sim/sim_front.h tests/sim/sim_front.c
if HAVE_CUDA
SIM_LIBDIR = tests/sim/lib
noinst_PROGRAMS += tests/sim/lib/libcuda.so.1 tests/sim/testkern.sim.so
tests_sim_lib_libcuda_so_1_SOURCES = $(SIM_CORE_SOURCES) \
	tests/sim/cuda_front.h tests/sim/cuda_errors.h tests/sim/cuda_syms.h \
	tests/sim/cuda_ctx.c tests/sim/cuda_stream.c tests/sim/cuda_mem.c \
	tests/sim/cuda_launch.c tests/sim/cuda_graph.c tests/sim/cuda_procaddr.c
tests_sim_lib_libcuda_so_1_CPPFLAGS = $(CUDA_CPPFLAGS) -I$(srcdir)/tests/sim
tests_sim_lib_libcuda_so_1_CFLAGS = $(AM_CFLAGS) -fPIC
tests_sim_lib_libcuda_so_1_LDFLAGS = -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic \
	-Wl,--version-script=$(srcdir)/tests/sim/libcuda.map -Wl,-z,defs
tests_sim_lib_libcuda_so_1_LDADD = -ldl -lpthread
tests_sim_lib_libcuda_so_1_LINK = $(CCLD) $(tests_sim_lib_libcuda_so_1_CFLAGS) $(CFLAGS) \
	$(AM_LDFLAGS) $(tests_sim_lib_libcuda_so_1_LDFLAGS) $(LDFLAGS) -o $@
EXTRA_tests_sim_lib_libcuda_so_1_DEPENDENCIES = $(SIM_LIBDIR)/libcuda.so \
	$(srcdir)/tests/sim/libcuda.map

# The link-time name; pointing at a file made later is fine for ln -s.
$(SIM_LIBDIR)/libcuda.so:
	$(AM_V_GEN)$(MKDIR_P) $(SIM_LIBDIR) && ln -sf libcuda.so.1 $@
CLEANFILES += $(SIM_LIBDIR)/libcuda.so

tests_sim_testkern_sim_so_SOURCES = tests/sim/testkern.c tests/sim/gs_sim_kernel.h
tests_sim_testkern_sim_so_CPPFLAGS = -I$(srcdir)/tests/sim
tests_sim_testkern_sim_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_sim_testkern_sim_so_LINK = $(CCLD) $(tests_sim_testkern_sim_so_CFLAGS) $(CFLAGS) \
	$(AM_LDFLAGS) -shared $(LDFLAGS) -o $@

# Test programs: linked with -lcuda against the simulator.
SIM_T_CPPFLAGS = $(CUDA_CPPFLAGS) -I$(srcdir)/tests/sim \
	-DGS_SIM_TESTKERN='"$(abs_top_builddir)/tests/sim/testkern.cubin"'
SIM_T_LDFLAGS = -L$(top_builddir)/$(SIM_LIBDIR) -Wl,-rpath,$(abs_top_builddir)/$(SIM_LIBDIR)
SIM_T_LIBS = -lcuda -ldl -lpthread
SIM_T_DEPS = tests/sim/lib/libcuda.so.1 tests/sim/testkern.sim.so
SIM_TESTS = \
	tests/sim/t_basic tests/sim/t_async tests/sim/t_legacy tests/sim/t_nonblocking \
	tests/sim/t_copy tests/sim/t_event tests/sim/t_graph tests/sim/t_capture \
	tests/sim/t_procaddr tests/sim/t_launch tests/sim/t_fault tests/sim/t_ptds \
	tests/sim/t_cost tests/sim/t_mem tests/sim/t_threads
check_PROGRAMS += $(SIM_TESTS)
TESTS += $(SIM_TESTS)
EXTRA_DIST += tests/sim/t_common.h tests/sim/libcuda.map tests/sim/README

tests_sim_t_basic_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_basic_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_basic_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_basic_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_async_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_async_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_async_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_async_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_legacy_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_legacy_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_legacy_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_legacy_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_nonblocking_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_nonblocking_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_nonblocking_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_nonblocking_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_copy_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_copy_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_copy_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_copy_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_event_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_event_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_event_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_event_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_graph_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_graph_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_graph_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_graph_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_capture_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_capture_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_capture_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_capture_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_procaddr_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_procaddr_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_procaddr_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_procaddr_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_launch_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_launch_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_launch_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_launch_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_fault_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_fault_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_fault_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_fault_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_ptds_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_ptds_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_ptds_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_ptds_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_cost_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_cost_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_cost_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_cost_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_mem_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_mem_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_mem_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_mem_DEPENDENCIES = $(SIM_T_DEPS)
tests_sim_t_threads_CPPFLAGS = $(SIM_T_CPPFLAGS)
tests_sim_t_threads_LDFLAGS = $(SIM_T_LDFLAGS)
tests_sim_t_threads_LDADD = $(SIM_T_LIBS)
EXTRA_tests_sim_t_threads_DEPENDENCIES = $(SIM_T_DEPS)
endif

# The HIP flavour: the same core under a HIP runtime front (hip_*.c),
# compiled against the real HIP headers, built as
#   tests/sim/hiplib/libamdhip64.so.5   soname libamdhip64.so.5, the version
#                                       nodes of Debian's 5.2 library
#                                       (libamdhip64.map), so programs linked
#                                       against the real one bind to it with
#                                       LD_LIBRARY_PATH=$(abs_top_builddir)/tests/sim/hiplib
#   tests/sim/hiplib/libamdhip64.so     symlink, for -L.. -lamdhip64
# hipModuleLoad("dir/k.hsaco") loads "dir/k.sim.so" (same modules as CUDA).
# Its tests live in tests/hipsim/.
if HAVE_HIP
SIM_HIPLIBDIR = tests/sim/hiplib
noinst_PROGRAMS += tests/sim/hiplib/libamdhip64.so.5
tests_sim_hiplib_libamdhip64_so_5_SOURCES = $(SIM_CORE_SOURCES) \
	tests/sim/hip_front.h tests/sim/hip_errors.h \
	tests/sim/hip_device.c tests/sim/hip_stream.c tests/sim/hip_mem.c \
	tests/sim/hip_launch.c tests/sim/hip_graph.c tests/sim/hip_fatbin.c
tests_sim_hiplib_libamdhip64_so_5_CPPFLAGS = $(HIP_CPPFLAGS) -I$(srcdir)/tests/sim
tests_sim_hiplib_libamdhip64_so_5_CFLAGS = $(AM_CFLAGS) -fPIC
tests_sim_hiplib_libamdhip64_so_5_LDFLAGS = -shared -Wl,-soname,libamdhip64.so.5 -Wl,-Bsymbolic \
	-Wl,--version-script=$(srcdir)/tests/sim/libamdhip64.map -Wl,-z,defs
tests_sim_hiplib_libamdhip64_so_5_LDADD = -ldl -lpthread
tests_sim_hiplib_libamdhip64_so_5_LINK = $(CCLD) $(tests_sim_hiplib_libamdhip64_so_5_CFLAGS) \
	$(CFLAGS) $(AM_LDFLAGS) $(tests_sim_hiplib_libamdhip64_so_5_LDFLAGS) $(LDFLAGS) -o $@
EXTRA_tests_sim_hiplib_libamdhip64_so_5_DEPENDENCIES = $(SIM_HIPLIBDIR)/libamdhip64.so \
	$(srcdir)/tests/sim/libamdhip64.map

$(SIM_HIPLIBDIR)/libamdhip64.so:
	$(AM_V_GEN)$(MKDIR_P) $(SIM_HIPLIBDIR) && ln -sf libamdhip64.so.5 $@
CLEANFILES += $(SIM_HIPLIBDIR)/libamdhip64.so
endif
EXTRA_DIST += tests/sim/libamdhip64.map
