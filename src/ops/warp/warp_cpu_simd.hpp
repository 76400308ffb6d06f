// ISA-specific hot loops of the CPU warp backend (warp_cpu.cpp). The AVX2+FMA versions live in
// warp_cpu_avx2.cpp, the only file compiled with -mavx2 -mfma (CMakeLists.txt); they are called
// only when the running CPU has both (cpu_has_avx2_fma(), checked once at run time), otherwise
// warp_cpu.cpp runs its portable scalar/SSE code. This is an ISA dispatch inside the Cpu
// backend, not a backend fallback: both paths compute the same math (warp_math.hpp) within the
// Cpu-vs-Reference tolerance.
#pragma once

#include <cstddef>
#include <cstdint>

namespace upres::cpu::simd {

// True when warp_cpu_avx2.cpp was built with AVX2 + FMA (CMake flags) and the CPU supports both
// (evaluated once; defined in warp_cpu.cpp).
bool cpu_has_avx2_fma();
// True when warp_cpu_avx2.cpp was compiled with -mavx2 -mfma (false: its functions are stubs).
bool warp_avx2_compiled();

// One row segment of a 4x4-tap (Keys cubic or B-spline) affine warp of a 1-channel float source
// (w x h samples, stride in elements; the caller checks (h - 1) * stride + w < 2^31: 32-bit
// element offsets). Output pixel x in [x0, x1) samples the source at
// u = ub + m0 x, v = vb + m3 x. poly[4][4]: cubic_weight_poly (w_k = ((p0k t + p1k) t + p2k) t +
// p3k). border: 1 = Border::Mirror (coordinates within one reflection are mirrored first, as
// map_coord), 2 = Border::Constant (coordinates outside [0, w-1] x [0, h-1] give `fill`), 0 =
// any other border (no mapping). Pixels whose (mapped) 4x4 footprint lies inside the source
// (1 <= u < w - 2 and likewise v), or that get the fill, are written to out[x - x0]; the others
// get flag[x - x0] = 1 (0 otherwise) and are left for the caller's border path. Returns the
// number of flagged pixels.
int cubic_affine_row_c1_avx2(const float* src, std::ptrdiff_t stride, int w, int h, double ub,
                             double vb, double m0, double m3, int x0, int x1,
                             const float poly[4][4], int border, float fill, float* out,
                             std::uint8_t* flag);

}  // namespace upres::cpu::simd
