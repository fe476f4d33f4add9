// CEILING_HOST_DEVICE: __host__ __device__ under nvcc, nothing under a host compiler, for the small
// functions that CPU tests and kernels share (kernels/random.hpp, kernels/stencil_plan.hpp).
#pragma once

#ifdef __CUDACC__
#define CEILING_HOST_DEVICE __host__ __device__
#else
#define CEILING_HOST_DEVICE
#endif
