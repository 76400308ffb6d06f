// AVX2 + FMA version of the SRCNN CPU backend's hot loop (declared in srcnn_cpu_simd.hpp). This
// file alone is compiled with -mavx2 -mfma (CMakeLists.txt) and called only after a run-time CPU
// check.
//
// Like warp_cpu_avx2.cpp, it must not instantiate any inline function or template shared with
// other translation units (the linker keeps one copy, which could then be this AVX2 one): only
// <immintrin.h> and plain code, templates in an unnamed namespace.
#include "ops/srcnn/srcnn_cpu_simd.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace upres::srcnn::simd {

namespace {  // internal linkage: never merged with a baseline copy

// J output channels x V vectors of 8 columns: J * V accumulators in ymm registers. Per tap: V
// unaligned loads of the tap's row (held in registers and reused by the J channels), J
// broadcasts of the tap's weights, J * V FMAs. J = 4, V = 3 (12 accumulators) keeps the two FMA
// pipes of Zen 3 / Skylake busy (latency 4, 8+ independent chains) with 8 loads per 12 FMAs;
// J = 1 (the sum of the last layer's partial planes) uses V = 8, the row vectors as memory
// operands.
template <int J, int V>
inline void block(const ConvRow& a, const float* w, const float* bias, int o0, int u) {
    __m256 acc[J][V];
#pragma GCC unroll 16
    for (int j = 0; j < J; ++j) {
        const __m256 b = _mm256_set1_ps(bias[j]);
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[j][v] = b;
    }
    const int x = u - a.shift;
    const float* const* taps = a.taps;
    for (int t = 0, n = a.ntaps; t < n; ++t, w += J) {
        const float* p = taps[t] + x;
        __m256 in[V];
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) in[v] = _mm256_loadu_ps(p + 8 * v);
#pragma GCC unroll 16
        for (int j = 0; j < J; ++j) {
            const __m256 wj = _mm256_broadcast_ss(w + j);
#pragma GCC unroll 16
            for (int v = 0; v < V; ++v) acc[j][v] = _mm256_fmadd_ps(wj, in[v], acc[j][v]);
        }
    }
    const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 16
    for (int j = 0; j < J; ++j) {
        float* o = a.out + (o0 + j) * a.out_plane + u;
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) {
            // max(acc, 0) returns the second operand (0) for NaN, as relu(): v > 0 ? v : 0.
            const __m256 r = a.relu ? _mm256_max_ps(acc[j][v], zero) : acc[j][v];
            _mm256_storeu_ps(o + 8 * v, r);
        }
    }
}

// The last rest < VMAX vectors of a row: one block of exactly `rest` vectors.
template <int J, int V>
inline void tail(const ConvRow& a, const float* w, const float* bias, int o0, int u, int rest) {
    if (rest == V) return block<J, V>(a, w, bias, o0, u);
    if constexpr (V > 1) tail<J, V - 1>(a, w, bias, o0, u, rest);
}

// Columns [u0, u0 + count) of output channels [o0, o0 + J): strips of VMAX vectors, then one
// narrower block for the rest.
template <int J, int VMAX>
inline void strip(const ConvRow& a, const float* w, const float* bias, int o0, int u) {
    const int rest = (a.u0 + a.count - u) / 8;
    if (rest >= VMAX)
        block<J, VMAX>(a, w, bias, o0, u);
    else if (rest > 0)
        tail<J, VMAX - 1>(a, w, bias, o0, u, rest);
}

}  // namespace

bool srcnn_avx2_compiled() { return true; }

// Strips of columns outside, channel blocks inside: a strip's input rows (and the layer's
// packed weights) stay in L1 while every output channel block consumes them.
void conv_row_avx2(const ConvRow& a) {
    const int end = a.u0 + a.count;
    if (a.n_out == 1) {
        for (int u = a.u0; u < end; u += 64) strip<1, 8>(a, a.weights, a.bias, 0, u);
        return;
    }
    for (int u = a.u0; u < end; u += 24) {
        int o = 0;
        for (; o + kBlock <= a.n_out; o += kBlock)
            strip<4, 3>(a, a.weights + o * a.ntaps, a.bias + o, o, u);
        const float* w = a.weights + o * a.ntaps;
        switch (a.n_out - o) {
            case 3:
                strip<3, 3>(a, w, a.bias + o, o, u);
                break;
            case 2:
                strip<2, 3>(a, w, a.bias + o, o, u);
                break;
            case 1:
                strip<1, 3>(a, w, a.bias + o, o, u);
                break;
            default:
                break;
        }
    }
}

}  // namespace upres::srcnn::simd

#else  // not x86-64 with AVX2 flags: never called (avx2_fma_usable() is false)

namespace upres::srcnn::simd {
bool srcnn_avx2_compiled() { return false; }
void conv_row_avx2(const ConvRow&) {}
}  // namespace upres::srcnn::simd

#endif
