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

// One row segment of a warp of a 1-channel float source (w x h samples, stride in elements; the
// caller checks (h - 1) * stride + w < 2^31: 32-bit element offsets) with taps x taps taps: 4
// (Keys cubic or B-spline; poly[4][4] = cubic_weight_poly, w_k = ((p0k t + p1k) t + p2k) t + p3k)
// or 2 (bilinear; poly unused). Output pixel x in [x0, x1) samples the source at
//   affine_row_c1_avx2: u = ub + m0 x, v = vb + m3 x;
//   field_row_c1_avx2: field = the row of the 2-channel map or displacement field (element 2x is
//     pixel x's first channel); remap (flow false): u = field[2x] + pad, v = field[2x + 1] + pad;
//     flow: u = (x + field[2x]) + pad, v = (y + field[2x + 1]) + pad;
// in double, with the scalar path's expressions (so the same coordinates). border: 1 =
// Border::Mirror (coordinates within one reflection are mirrored first, as map_coord), 2 =
// Border::Constant (coordinates outside [0, w-1] x [0, h-1] give `fill`), 0 = any other border
// (no mapping). Pixels whose (mapped) footprint lies inside the source (taps 4: 1 <= u < w - 2;
// taps 2: 0 <= u < w - 1; likewise v), or that get the fill, are written to out[x - x0]; the
// others get flag[x - x0] = 1 (0 otherwise) and are left for the caller's border path. Returns
// the number of flagged pixels. Bilinear sums are the scalar path's operations (the same bits);
// the 4-tap sums use FMA (within the Cpu tolerance of the reference).
int affine_row_c1_avx2(const float* src, std::ptrdiff_t stride, int w, int h, int taps, double ub,
                       double vb, double m0, double m3, int x0, int x1, const float poly[4][4],
                       int border, float fill, float* out, std::uint8_t* flag);
int field_row_c1_avx2(const float* src, std::ptrdiff_t stride, int w, int h, int taps, bool flow,
                      const float* field, double y, double pad, int x0, int x1,
                      const float poly[4][4], int border, float fill, float* out,
                      std::uint8_t* flag);

}  // namespace upres::cpu::simd
