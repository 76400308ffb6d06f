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

// Plain structs (no member functions: nothing inline is shared with the AVX2 file).

// The source of a row: w x h pixels of `channels` (1 to 4) samples of `type` (0: float,
// 1: uint8, 2: uint16), `stride` elements between rows. The caller checks that
// (h - 1) * stride + w * channels < 2^31 (32-bit element offsets).
struct RowSource {
    const void* data;
    int type;
    int channels;
    std::ptrdiff_t stride;
    int w, h;
};

// The interpolation: taps 4 (Keys cubic or B-spline; poly[4][4] = cubic_weight_poly,
// w_k = ((p0k t + p1k) t + p2k) t + p3k) or 2 (bilinear; poly unused). border: 1 =
// Border::Mirror (coordinates within one reflection are mirrored first, as map_coord), 2 =
// Border::Constant (coordinates outside [0, w-1] x [0, h-1] give `fill`), 0 = any other border
// (no mapping).
struct RowKernel {
    int taps;
    float poly[4][4];
    int border;
    float fill;
};

// Where output pixel x of row y samples the source, in double, with the scalar path's
// expressions (so the same coordinates):
//   Affine: u = ub + m0 x, v = vb + m3 x;
//   Remap: u = field[2x] + pad, v = field[2x + 1] + pad (field: the row of the 2-channel map);
//   Flow: u = (x + field[2x]) + pad, v = (y + field[2x + 1]) + pad;
//   Perspective: map_matrix(h, Perspective, x, y) + pad (w' = 0 gives NaN coordinates).
struct RowMap {
    enum Kind { Affine, Remap, Flow, Perspective };
    Kind kind;
    double ub, vb, m0, m3;  // Affine
    const float* field;     // Remap, Flow
    const double* h;        // Perspective: the 3 x 3 matrix, row-major
    double y, pad;
};

// Output pixels x in [x0, x1) of one row. Pixels whose (mapped) footprint lies inside the
// source (taps 4: 1 <= u < w - 2; taps 2: 0 <= u < w - 1; likewise v; with 2 or 3 channels
// also no 4-sample read past the last element), or that get the fill, are written to out; the
// others get flag[x - x0] = 1 (0 otherwise) and are left for the caller's border path. 1
// channel: out[x - x0]; 2 to 4 channels: out[4 (x - x0) + c], 4 floats per pixel (the lanes
// beyond the channels are scratch). Returns the number of flagged pixels. Bilinear sums are the
// scalar path's operations (the same bits); the 4-tap sums use FMA (within the Cpu tolerance of the
// reference).
int warp_row_avx2(const RowSource& src, const RowKernel& k, const RowMap& map, int x0, int x1,
                  float* out, std::uint8_t* flag);

// Nearest neighbour, output pixels x in [x0, x1) of one row. The source coordinates (u, v) in
// double with the scalar path's expressions (Affine: (h0 x + h1 y) + h2 + pad, as map_matrix with
// h = the 3 x 3 map; Remap, Flow and Perspective as above; ub, vb, m0, m3 unused); border as in
// RowKernel (1: Mirror, coordinates within one reflection mirrored first; 2: Constant). Per pixel
// flag[x - x0]: 0 where 0 <= u <= w - 1 and 0 <= v <= h - 1, with the element offset of pixel
// (floor(u + 0.5), floor(v + 0.5)) in ofs[x - x0]; 2 for Constant's fill; 3 when fout (1-channel
// float sources only, else null) got the sample at fout[x - x0]; 1 elsewhere, for the caller's
// border path. Returns the number of pixels flagged 1.
int nearest_row_avx2(const RowSource& src, const RowMap& map, int border, int x0, int x1, int* ofs,
                     std::uint8_t* flag, float* fout);

// Separable resize (warp_cpu.cpp resize_rows), the same operations as its portable passes (mul
// and add, no FMA, taps in order from the first product), so the same values.
// Pass 1 for 2 to 4 channels: out[C x + c] = sum_j w4[4 (k x + j)] in[ofs[k x + j] + c]; in is
// padded by 4 floats and out by 4 (a pixel is stored as 4 floats, x in order).
void resize_hpass_avx2(const float* in, float* out, int n_out, int channels, const int* ofs,
                       const float* w4, int k);
// Pass 2: out[i] = saturate(sum_j w[j] r[j][i]) for i < n; type 0: float, 1: uint8, 2: uint16
// (saturate_row_from_float's rounding and clamping).
void resize_vpass_avx2(const float* const* r, const float* w, int k, std::ptrdiff_t n, void* out,
                       int type);

}  // namespace upres::cpu::simd
