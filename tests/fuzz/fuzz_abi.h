/*
 * What the fuzzer's runner and its kernel module (fuzzkern.c) share: the
 * struct parameter of structk.  Parameters sit at the next multiple of
 * min(size, 8), as the simulator's cuFuncGetParamInfo reports.
 */
#ifndef FUZZ_ABI_H
#define FUZZ_ABI_H

#include <stdint.h>

typedef struct fz_kstruct {
	int32_t a;
	int64_t b;
	unsigned char pad[120]; /* zero: a parameter block of kernel size, whose */
	int16_t c;              /* changing words lie 64-byte blocks apart */
} fz_kstruct_t; /* 144 bytes, 8-aligned */

#endif /* FUZZ_ABI_H */
