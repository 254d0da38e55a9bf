/*
 * inject.cu: test builds' GPU faults (make INJECTION_POINTS=1); nothing of it
 * is compiled otherwise.
 */
#ifdef GS_INJECTION_POINTS

#include <cuda_runtime.h>
#include <unistd.h>

#include "gpusort.h"

/* Spins until flag changes, which nothing does: a kernel that never ends. */
__global__ void
gs_hang_kernel(volatile int *flag)
{
	while (*flag == 0)
		__nanosleep(1000);
}

extern "C" void
gs_inject_hang(void)
{
	int		   *flag = NULL;

	if (cudaMalloc(&flag, sizeof(int)) == cudaSuccess &&
		cudaMemset(flag, 0, sizeof(int)) == cudaSuccess)
	{
		gs_hang_kernel<<<1, 1>>>(flag);
		(void) cudaDeviceSynchronize();
	}
	/* the launch failed, or the device ended it: hang on the host instead */
	for (;;)
		pause();
}

#endif							/* GS_INJECTION_POINTS */
