# HIP backend tests (CPU only): classification completeness against the
# installed headers, code-object metadata, `extra` packing, ext grids, and a
# program on the real libamdhip64 run with and without the preload.
if HAVE_HIP
TESTS += tests/hip/test-hip-complete
check_PROGRAMS += tests/hip/hip_rc
tests_hip_hip_rc_SOURCES = tests/hip/hip_rc.c
tests_hip_hip_rc_CPPFLAGS = $(HIP_CPPFLAGS)
tests_hip_hip_rc_LDADD = -lamdhip64
TESTS += tests/hip/test-hip-preload
if HAVE_CRITERION
check_PROGRAMS += tests/hip/test_hip
tests_hip_test_hip_SOURCES = tests/hip/test_hip.c \
	shim/hip/hip_codeobj.c shim/hip/hip_extra.c
tests_hip_test_hip_CPPFLAGS = $(HIP_CPPFLAGS) $(CORE_CPPFLAGS) -I$(top_srcdir)/shim/hip
tests_hip_test_hip_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) -Wno-missing-prototypes
tests_hip_test_hip_LDADD = $(CRITERION_LIBS) -lelf -lmsgpackc
TESTS += tests/hip/test_hip
endif
# The metadata parser on the code objects hipcc builds from kernels/*.cu
# (kernels/local.mk), checked against the kernels' source signatures; skips
# (77) when hipcc is absent and nothing was built.
check_PROGRAMS += tests/hip/test_hip_kernels
tests_hip_test_hip_kernels_SOURCES = tests/hip/test_hip_kernels.c shim/hip/hip_codeobj.c
tests_hip_test_hip_kernels_CPPFLAGS = $(CORE_CPPFLAGS) -I$(top_srcdir)/shim/hip
tests_hip_test_hip_kernels_LDADD = -lelf -lmsgpackc
EXTRA_tests_hip_test_hip_kernels_DEPENDENCIES = $(GS_WL_HSACOS) $(GS_HIP_T_HIDDEN)
TESTS += tests/hip/test_hip_kernels
endif
# decode.cu once more at -O0, where the compiler keeps the hidden arguments
# (.value_kind hidden_*) that -O3 drops: the parser must leave them out of
# the layout, and this is the only real code object that has them.
GS_HIP_T_HIDDEN = $(if $(HIPCC),tests/hip/decode-O0.hsaco)
CLEANFILES += tests/hip/decode-O0.hsaco
tests/hip/decode-O0.hsaco: kernels/decode.cu $(srcdir)/kernels/gs_hip_device.h
	@$(MKDIR_P) tests/hip
	$(AM_V_GEN)HIP_PLATFORM=amd $(HIPCC) $(HIPCC_FLAGS) -O0 \
		-include $(srcdir)/kernels/gs_hip_device.h -o $@ $<
EXTRA_DIST += tests/hip/test-hip-complete tests/hip/test-hip-preload \
	tests/hip/data/kernels.hip tests/hip/data/kernels.co \
	tests/hip/data/kernels-gfx90a.elf tests/hip/data/unbundle

# The backend end to end against a recording fake runtime.
if HAVE_HIP
check_LTLIBRARIES += tests/hip/libfakehip.la
tests_hip_libfakehip_la_SOURCES = tests/hip/fake_hip.c
tests_hip_libfakehip_la_CPPFLAGS = $(HIP_CPPFLAGS)
tests_hip_libfakehip_la_CFLAGS = $(AM_CFLAGS) -Wno-missing-prototypes
tests_hip_libfakehip_la_LDFLAGS = -module -shared -avoid-version -rpath /nowhere
check_PROGRAMS += tests/hip/hip_fake_app
tests_hip_hip_fake_app_SOURCES = tests/hip/hip_fake_app.c
tests_hip_hip_fake_app_CPPFLAGS = $(HIP_CPPFLAGS)
tests_hip_hip_fake_app_LDADD = tests/hip/libfakehip.la
TESTS += tests/hip/test-hip-fake
endif
EXTRA_DIST += tests/hip/test-hip-fake
