// AVX2 + FMA hot loops of the CPU B-spline prefilter (bspline_cpu.cpp), in bspline_cpu_avx2.cpp,
// the only file of this folder compiled with -mavx2 -mfma (CMakeLists.txt: *_avx2.cpp). Called
// only when the running CPU has both (checked once at run time in bspline_cpu.cpp); otherwise
// the portable loops of bspline_cpu.cpp run. An ISA dispatch inside the Cpu backend, not a
// backend fallback: same math (bspline_math.hpp), within the Cpu-vs-Reference tolerance.
#pragma once

#include <cstddef>

namespace upres::cpu::simd {

// True when bspline_cpu_avx2.cpp was compiled with -mavx2 -mfma (false: its functions are stubs).
bool bspline_avx2_compiled();

// Row pass of the exact IIR on 8 rows of n elements (w pixels of nc = 1..4 interleaved
// channels, n = w * nc >= 2 * nc), fused with the 8x8 transposes. Element e = x * nc + c
// follows element e - nc. Causal: buf[e * 8 + r] = c+(e) of row r, with c+(c) = c0[c * 8 + r]
// (the start values computed by the caller) and c+(e) = g rows[r][e] + z c+(e - nc).
void iir_rows8_causal_avx2(const float* const rows[8], int n, int nc, float z, float g,
                           const float* c0, float* buf);
// Anticausal: c(n - nc + c) = a0[c * 8 + r] (computed by the caller from buf),
// c(e) = z (c(e + nc) - c+(e)), written to rows[r][e]. rows may be the causal pass's input rows
// (in place).
void iir_rows8_anticausal_avx2(const float* buf, int n, int nc, float z, const float* a0,
                               float* const rows[8]);

// Column pass of the exact IIR on 64 adjacent element columns, in place on the image: sample i
// of column l at p[i * step + l], n >= 2. Causal: row 0 = c0[l], then c+(i) = g x(i) + z c+(i-1)
// (the same unfused multiply-add as the portable loop); the caller then computes the anticausal
// start a0 from the causal rows; anticausal: row n-1 = a0[l], c(i) = z (c(i+1) - c+(i)).
void iir_cols64_causal_avx2(float* p, std::ptrdiff_t step, int n, float z, float g,
                            const float* c0);
void iir_cols64_anticausal_avx2(float* p, std::ptrdiff_t step, int n, float z, const float* a0);

// Symmetric FIR (taps[K - k] == taps[K + k], 2K + 1 taps) over `lanes` (a multiple of 8)
// interleaved lines of an extended strip ext[(i + K) * lanes + l], i in [-K, n + K), into
// out[i * ostep + l].
void fir_avx2(const float* ext, float* out, std::ptrdiff_t ostep, int n, int lanes,
              const float* taps, int K);

// 8x8-block transposes between 8 rows of n elements and an interleaved strip buf[e * 8 + r]
// (for rows of w pixels of nc channels, n = w * nc: a strip of 8 * nc lanes, lane c * 8 + r).
void rows8_to_strip_avx2(const float* const rows[8], int n, float* buf);
void strip_to_rows8_avx2(const float* buf, int n, float* const rows[8]);

}  // namespace upres::cpu::simd
