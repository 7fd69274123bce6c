/*
 * The packed `extra` form of hipModuleLaunchKernel: an array of
 * (key, value) pairs, HIP_LAUNCH_PARAM_BUFFER_POINTER -> the argument
 * buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE -> a size_t*, ended by
 * HIP_LAUNCH_PARAM_END.  The record keeps the buffer as an opaque image;
 * submitting re-packs an array of exactly that shape around the image.
 * Also the grid of hipExtModuleLaunchKernel, whose sizes are global.
 */
#include "hip_internal.h"

bool gs_hip_extra_parse(void **extra, const void **image, size_t *size)
{
	const void *buf = NULL;
	const size_t *sz = NULL;
	for (int i = 0; i < 16; i += 2) {
		if (extra[i] == HIP_LAUNCH_PARAM_END) {
			if (!buf || !sz || *sz > (1u << 20))
				return true;
			*image = buf;
			*size = *sz;
			return false;
		}
		if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[i + 1];
		else if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_SIZE)
			sz = extra[i + 1];
		else
			return true; /* a key we do not know: leave the call alone */
	}
	return true;
}

void gs_hip_extra_pack(gs_hip_extra_t *e, const void *image, size_t size)
{
	e->size = size;
	e->v[0] = HIP_LAUNCH_PARAM_BUFFER_POINTER;
	e->v[1] = (void *)image;
	e->v[2] = HIP_LAUNCH_PARAM_BUFFER_SIZE;
	e->v[3] = &e->size;
	e->v[4] = HIP_LAUNCH_PARAM_END;
}

/* hipExtModuleLaunchKernel sizes are work-items: grid = global / local, exactly. */
bool gs_hip_ext_grid(const uint32_t global[3], const uint32_t local[3], uint32_t grid[3])
{
	for (int i = 0; i < 3; i++) {
		if (!local[i] || global[i] % local[i])
			return true;
		grid[i] = global[i] / local[i];
	}
	return false;
}
