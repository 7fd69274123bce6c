/*
 * Reading kernel parameters in a simulator module (tests/sim/gs_sim_kernel.h):
 * params[i] points at parameter i; a device pointer is a CUdeviceptr (64-bit)
 * holding a host address in the simulator.
 */
#ifndef GS_SIM_ARGS_H
#define GS_SIM_ARGS_H

#include <stdint.h>

#include "gs_sim_kernel.h"

#define GS_SIM_PTR(type, i) ((type *)(uintptr_t)(*(const uint64_t *)params[(i)]))
#define GS_SIM_INT(i) (*(const int *)params[(i)])
#define GS_SIM_FLOAT(i) (*(const float *)params[(i)])

#endif /* GS_SIM_ARGS_H */
