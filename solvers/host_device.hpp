#pragma once
// Point functions shared by the CPU loops and the CUDA kernels (AMReX *_K.H style):
// one definition of the numerics, compiled for both sides.
#if defined(__CUDACC__)
#define ADI3D_HD __host__ __device__ __forceinline__
#else
#define ADI3D_HD inline
#endif
