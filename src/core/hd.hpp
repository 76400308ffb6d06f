// UPRES_HD marks functions callable from host and device code (math headers, span types).
// Internal header: public headers stay plain C++.
#pragma once

#if defined(__CUDACC__)
#define UPRES_HD __host__ __device__ __forceinline__
#else
#define UPRES_HD inline
#endif
