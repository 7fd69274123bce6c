/*
 * Constructor order (run by t-threads.sh): libr_ctor.so's constructor used
 * the driver before main (and, under LD_PRELOAD, before graphshim had
 * initialised); here main checks that it worked, then carries on with the
 * same stream and step, which graphshim has learned by now.
 */
#include "r_common.h"

extern int r_ctor_status;
extern CUdeviceptr r_ctor_buf;
extern CUstream r_ctor_stream;
extern CUfunction r_ctor_add;

int main(void)
{
	if (r_ctor_status != 0) {
		fprintf(stderr, "FAIL: the library constructor's driver calls failed (%d)\n",
			r_ctor_status);
		return 1;
	}
	for (int i = 0; i < 10; i++) {
		r_launches(r_ctor_add, r_ctor_stream, r_ctor_buf, 4, R_STEP);
		CHECK(cuStreamSynchronize(r_ctor_stream));
	}
	int v;
	CHECK(cuMemcpyDtoH(&v, r_ctor_buf, sizeof(v)));
	EXPECT(v == 20 * R_STEP);
	printf("ok ctor: constructor and main both right (%d)\n", v);
	return 0;
}
