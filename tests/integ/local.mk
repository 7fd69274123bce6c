# Integration: the kernels/ workloads on the CPU simulator, with and without
# graphshim (needs the CUDA headers for the simulator and the workloads).
if HAVE_CUDA
TESTS += tests/integ/t-workloads.sh tests/integ/t-gate.sh
endif
EXTRA_DIST += tests/integ/t-workloads.sh tests/integ/t-gate.sh
