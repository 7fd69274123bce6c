/*
 * What the CUDA C kernels (kernels/<w>.cu) need to compile with hipcc as
 * HIP device code.  The rule that builds kernels/<w>.hsaco force-includes
 * this header (-include); nvcc never sees it, so the .cu files stay plain
 * CUDA C and the cubins are built from exactly the same text.  Only spellings are mapped
 * here, never the math.
 */
#ifndef GS_HIP_DEVICE_H
#define GS_HIP_DEVICE_H

/* nvcc includes the CUDA runtime implicitly; hipcc needs it named. */
#include <hip/hip_runtime.h>

/*
 * The kernels reduce over CUDA's 32-lane warps (lane = threadIdx.x & 31,
 * shuffle offsets 16..1, block sizes a multiple of 32).  An AMD wavefront has
 * 64 lanes; a shuffle of width 32 works on each half on its own, exactly as
 * two CUDA warps would, so every reduction sums the same values in the same
 * order.  HIP 5.2 has no __shfl_down_sync; newer HIP declares one taking a
 * 64-bit mask, which this macro (defined after the header) also replaces.
 */
#undef __shfl_down_sync
#define __shfl_down_sync(mask, v, delta) __shfl_down((v), (delta), 32)

#endif /* GS_HIP_DEVICE_H */
