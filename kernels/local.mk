# kernels: the GPU workloads graphshim is measured on.  Each workload is one
# host program (C, CUDA driver API through gs_gpu.h) plus its kernels twice:
# kernels/<w>.cu, built by nvcc into kernels/<w>.cubin for the GPU, and
# kernels/<w>_sim.c, built into kernels/<w>.sim.so for the CPU simulator
# (tests/sim), whose cuModuleLoad("<w>.cubin") loads "<w>.sim.so" instead.
# Programs find both in $GS_KERNEL_DIR, by default this build directory.
GS_WL_NAMES = tiny decode nrepeat hostwork fwstep
GS_WL_SIMSO = $(GS_WL_NAMES:%=kernels/%.sim.so)
GS_WL_CUBINS =
NVCC_FLAGS = -cubin -arch=sm_90 -O3

EXTRA_DIST += $(GS_WL_NAMES:%=kernels/%.cu) $(GS_WL_NAMES:%=kernels/%_sim.c) \
	kernels/gs_sim_args.h kernels/python/decode.py kernels/README.md \
	tests/sim/gs_sim_kernel.h \
	tools/gpu/check-gpu.sh tools/gpu/bench.sh tools/gpu/all.sh tools/gpu/sim-demo.sh \
	tools/gpu/common.sh tools/gpu/prepare-carry.sh tools/gpu/visibility.sh
CLEANFILES += $(GS_WL_SIMSO) $(GS_WL_NAMES:%=kernels/%.cubin)

# The real-program suite (kernels/real/README.md) and its CUPTI kernel
# counter: built and run by tools/gpu/real.sh on a GPU machine (the Python
# programs need their frameworks, the counter a driver), never by make check.
GS_REAL_FILES = kernels/real/README.md kernels/real/real_common.h \
	kernels/real/cublas_bias.cu kernels/real/launch_ex.cu kernels/real/thrust_cg.cu \
	kernels/real/solver_hostfn.cu \
	kernels/real/torch_nn_decode.py kernels/real/torch_infer.py \
	kernels/real/torch_train.py kernels/real/torch_compile.py \
	kernels/real/hf_generate.py kernels/real/jax_decode.py \
	kernels/real/cupy_solver.py kernels/real/triton_loop.py
EXTRA_DIST += $(GS_REAL_FILES) tools/cupti/gs_cupti.c tools/gpu/real.sh \
	tools/gpu/cupti-matrix.sh tools/gpu/segv-report.c

if HAVE_NVCC
GS_WL_CUBINS += $(GS_WL_NAMES:%=kernels/%.cubin)
kernels/%.cubin: kernels/%.cu
	@$(MKDIR_P) kernels
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) -o $@ $<
endif

# The same kernels as HIP code objects (<w>.hsaco, what gs_gpu.h's HIP
# mapping loads), for AMD GPUs of GS_HIP_ARCH.  hipcc is looked for when make
# runs (configure does not check for it): without one, nothing below is
# built and tests/hip/test_hip_kernels skips.  `make HIPCC=` turns it off.
# gs_hip_device.h is force-included so the .cu files stay plain CUDA C.
# HIP_PLATFORM=amd: hipcc would otherwise pick nvcc on a machine that has no
# clang++ in PATH but has CUDA.
GS_HIP_ARCH = gfx90a
HIPCC_FLAGS = --genco --offload-arch=$(GS_HIP_ARCH) -O3
GS_HIPCC_FOUND := $(shell command -v hipcc 2>/dev/null)
HIPCC = $(GS_HIPCC_FOUND)
GS_WL_HSACOS = $(if $(HIPCC),$(GS_WL_NAMES:%=kernels/%.hsaco))
EXTRA_DIST += kernels/gs_hip_device.h
CLEANFILES += $(GS_WL_NAMES:%=kernels/%.hsaco)
kernels/%.hsaco: kernels/%.cu $(srcdir)/kernels/gs_hip_device.h
	@$(if $(HIPCC),:,echo "$@: no hipcc (apt-get install hipcc, or make HIPCC=/path/to/hipcc)" >&2; exit 1)
	@$(MKDIR_P) kernels
	$(AM_V_GEN)HIP_PLATFORM=amd $(HIPCC) $(HIPCC_FLAGS) \
		-include $(srcdir)/kernels/gs_hip_device.h -o $@ $<
# `make hip-kernels`: just the code objects.
hip-kernels: $(GS_WL_HSACOS)
.PHONY: hip-kernels

# A simulator module: plain C, no sanitizers (it is dlopened into whatever
# process the simulator runs in).
kernels/%.sim.so: kernels/%_sim.c $(srcdir)/tests/sim/gs_sim_kernel.h $(srcdir)/kernels/gs_sim_args.h
	@$(MKDIR_P) kernels
	$(AM_V_CCLD)$(CC) -std=c11 -O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC -shared \
		-I$(srcdir)/tests/sim -I$(srcdir)/kernels -o $@ $< -lm

GS_WL_COMMON = kernels/gs_wl.c kernels/gs_wl.h kernels/gs_gpu.h
GS_WL_TINY_SRC = kernels/tiny.c $(GS_WL_COMMON)
GS_WL_DECODE_SRC = kernels/decode.c kernels/decode.h kernels/decode_ref.c $(GS_WL_COMMON)
GS_WL_NREPEAT_SRC = kernels/nrepeat.c $(GS_WL_COMMON)
GS_WL_HOSTWORK_SRC = kernels/hostwork.c $(GS_WL_COMMON)
GS_WL_FWSTEP_SRC = kernels/fwstep.c $(GS_WL_COMMON)

if HAVE_CUDA
GS_WL_CPPFLAGS = $(CUDA_CPPFLAGS) -I$(srcdir)/kernels \
	-DGS_KERNEL_DIR_DEFAULT='"$(abs_top_builddir)/kernels"'
# The stub libcuda only supplies the link; at run time libcuda.so.1 is the
# driver's, or the simulator's through LD_LIBRARY_PATH.
GS_WL_LDADD = -L$(CUDA_DIR)/lib64/stubs -lcuda -lm

noinst_PROGRAMS += kernels/tiny kernels/decode kernels/nrepeat kernels/twodev kernels/hostwork \
	kernels/fwstep

kernels_fwstep_SOURCES = $(GS_WL_FWSTEP_SRC)
kernels_fwstep_CPPFLAGS = $(GS_WL_CPPFLAGS)
kernels_fwstep_LDADD = $(GS_WL_LDADD)
EXTRA_kernels_fwstep_DEPENDENCIES = kernels/fwstep.sim.so $(GS_WL_CUBINS)

kernels_hostwork_SOURCES = $(GS_WL_HOSTWORK_SRC)
kernels_hostwork_CPPFLAGS = $(GS_WL_CPPFLAGS)
kernels_hostwork_LDADD = $(GS_WL_LDADD)
EXTRA_kernels_hostwork_DEPENDENCIES = kernels/hostwork.sim.so $(GS_WL_CUBINS)

kernels_twodev_SOURCES = kernels/twodev.c $(GS_WL_COMMON)
kernels_twodev_CPPFLAGS = $(GS_WL_CPPFLAGS)
kernels_twodev_LDADD = $(GS_WL_LDADD)
EXTRA_kernels_twodev_DEPENDENCIES = kernels/tiny.sim.so $(GS_WL_CUBINS)

kernels_tiny_SOURCES = $(GS_WL_TINY_SRC)
kernels_tiny_CPPFLAGS = $(GS_WL_CPPFLAGS)
kernels_tiny_LDADD = $(GS_WL_LDADD)
EXTRA_kernels_tiny_DEPENDENCIES = kernels/tiny.sim.so $(GS_WL_CUBINS)

kernels_decode_SOURCES = $(GS_WL_DECODE_SRC)
kernels_decode_CPPFLAGS = $(GS_WL_CPPFLAGS)
kernels_decode_LDADD = $(GS_WL_LDADD)
EXTRA_kernels_decode_DEPENDENCIES = kernels/decode.sim.so $(GS_WL_CUBINS)

kernels_nrepeat_SOURCES = $(GS_WL_NREPEAT_SRC)
kernels_nrepeat_CPPFLAGS = $(GS_WL_CPPFLAGS)
kernels_nrepeat_LDADD = $(GS_WL_LDADD)
EXTRA_kernels_nrepeat_DEPENDENCIES = kernels/nrepeat.sim.so $(GS_WL_CUBINS)
endif

# The same host programs built for HIP (-DGS_USE_HIP), so the mapping in
# gs_gpu.h keeps compiling; they load the HIP code objects (<w>.hsaco) built
# above when hipcc is present.
if HAVE_HIP
GS_WL_HIP_CPPFLAGS = $(HIP_CPPFLAGS) -DGS_USE_HIP -I$(srcdir)/kernels \
	-DGS_KERNEL_DIR_DEFAULT='"$(abs_top_builddir)/kernels"'
noinst_PROGRAMS += kernels/tiny-hip kernels/decode-hip kernels/nrepeat-hip kernels/hostwork-hip \
	kernels/fwstep-hip
kernels_fwstep_hip_SOURCES = $(GS_WL_FWSTEP_SRC)
kernels_fwstep_hip_CPPFLAGS = $(GS_WL_HIP_CPPFLAGS)
kernels_fwstep_hip_LDADD = -lamdhip64 -lm
EXTRA_kernels_fwstep_hip_DEPENDENCIES = $(GS_WL_HSACOS)
kernels_hostwork_hip_SOURCES = $(GS_WL_HOSTWORK_SRC)
kernels_hostwork_hip_CPPFLAGS = $(GS_WL_HIP_CPPFLAGS)
kernels_hostwork_hip_LDADD = -lamdhip64 -lm
EXTRA_kernels_hostwork_hip_DEPENDENCIES = $(GS_WL_HSACOS)
kernels_tiny_hip_SOURCES = $(GS_WL_TINY_SRC)
kernels_tiny_hip_CPPFLAGS = $(GS_WL_HIP_CPPFLAGS)
kernels_tiny_hip_LDADD = -lamdhip64 -lm
EXTRA_kernels_tiny_hip_DEPENDENCIES = $(GS_WL_HSACOS)
kernels_decode_hip_SOURCES = $(GS_WL_DECODE_SRC)
kernels_decode_hip_CPPFLAGS = $(GS_WL_HIP_CPPFLAGS)
kernels_decode_hip_LDADD = -lamdhip64 -lm
EXTRA_kernels_decode_hip_DEPENDENCIES = $(GS_WL_HSACOS)
kernels_nrepeat_hip_SOURCES = $(GS_WL_NREPEAT_SRC)
kernels_nrepeat_hip_CPPFLAGS = $(GS_WL_HIP_CPPFLAGS)
kernels_nrepeat_hip_LDADD = -lamdhip64 -lm
EXTRA_kernels_nrepeat_hip_DEPENDENCIES = $(GS_WL_HSACOS)
endif

# GPU checks (tools/gpu/check-gpu.sh): where no GPU is present the script
# says so and exits 77, which this target reports as a skip, not a failure.
check-gpu: all
	@GS_BUILD=$(abs_top_builddir) GS_SRC=$(abs_top_srcdir) \
		$(SHELL) $(srcdir)/tools/gpu/check-gpu.sh; rc=$$?; \
		if test $$rc -eq 77; then echo "check-gpu: SKIPPED (no GPU)"; rc=0; fi; exit $$rc
bench-gpu: all
	@GS_BUILD=$(abs_top_builddir) GS_SRC=$(abs_top_srcdir) \
		$(SHELL) $(srcdir)/tools/gpu/bench.sh
real-gpu: all
	@GS_BUILD=$(abs_top_builddir) GS_SRC=$(abs_top_srcdir) \
		bash $(srcdir)/tools/gpu/real.sh
sim-demo: all
	@GS_BUILD=$(abs_top_builddir) GS_SRC=$(abs_top_srcdir) \
		$(SHELL) $(srcdir)/tools/gpu/sim-demo.sh
.PHONY: check-gpu bench-gpu real-gpu sim-demo
