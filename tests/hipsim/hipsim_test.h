/*
 * What the HIP simulator's test programs share: OK(call) stops the program
 * with status HIPSIM_OK_EXIT (2 unless the program defines it first) when
 * a HIP call fails, and ext_launch reaches hipExtModuleLaunchKernel, which
 * HIP 5.2 exports under its C++ name only.
 */
#ifndef HIPSIM_TEST_H
#define HIPSIM_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hip/hip_runtime_api.h>

#ifndef HIPSIM_OK_EXIT
#define HIPSIM_OK_EXIT 2
#endif

#define OK(call)                                                                   \
	do {                                                                       \
		hipError_t ok_r_ = (call);                                         \
		if (ok_r_ != hipSuccess) {                                         \
			fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, \
				hipGetErrorName(ok_r_));                           \
			exit(HIPSIM_OK_EXIT);                                      \
		}                                                                  \
	} while (0)

hipError_t ext_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
		      size_t, hipStream_t, void **, void **, hipEvent_t, hipEvent_t, uint32_t)
	__asm__("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j");

#endif /* HIPSIM_TEST_H */
