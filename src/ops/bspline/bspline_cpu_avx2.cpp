// AVX2 + FMA row pass of the CPU B-spline IIR prefilter (declared in bspline_cpu_simd.hpp).
// This file alone is compiled with -mavx2 -mfma (CMakeLists.txt) and called only after a
// run-time CPU check. Like src/ops/warp/warp_cpu_avx2.cpp it instantiates no inline function or
// template shared with other translation units (the linker could keep the AVX2 copy for the
// baseline callers): only <immintrin.h> and plain code.
#include "ops/bspline/bspline_cpu_simd.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace upres::cpu::simd {

namespace {

// In-register transpose of an 8x8 float block.
inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

}  // namespace

bool bspline_avx2_compiled() { return true; }

namespace {

// The row recursions on NC interleaved channels: element e = i * NC + c of a row, so element e
// follows element e - NC. p[j] / q[j] hold the NC most recent results (a register rotation the
// compiler resolves at compile time).
template <int NC>
void iir_rows8_causal_nc(const float* const rows[8], int n, float z, float g, const float* c0,
                         float* buf) {
    const __m256 vz = _mm256_set1_ps(z), vg = _mm256_set1_ps(g);
    __m256 p[NC];  // p[j]: element e - NC + j
    for (int j = 0; j < NC; ++j) _mm256_storeu_ps(buf + 8 * j, p[j] = _mm256_loadu_ps(c0 + 8 * j));
    const auto step = [&](int e, __m256 x) {
        const __m256 v = _mm256_fmadd_ps(vz, p[0], _mm256_mul_ps(vg, x));
        for (int j = 0; j + 1 < NC; ++j) p[j] = p[j + 1];
        p[NC - 1] = v;
        _mm256_storeu_ps(buf + 8 * e, v);
    };
    // Scalar-gathered samples up to the first multiple of 8, then 8x8 blocks, then the tail.
    const auto column = [&](int x) {
        return _mm256_setr_ps(rows[0][x], rows[1][x], rows[2][x], rows[3][x], rows[4][x],
                              rows[5][x], rows[6][x], rows[7][x]);
    };
    int i = NC;
    for (; i < n && (i & 7) != 0; ++i) step(i, column(i));
    for (; i + 8 <= n; i += 8) {
        __m256 r[8];
        for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(rows[k] + i);
        transpose8(r);
        for (int k = 0; k < 8; ++k) step(i + k, r[k]);
    }
    for (; i < n; ++i) step(i, column(i));
}

template <int NC>
void iir_rows8_anticausal_nc(const float* buf, int n, float z, const float* a0,
                             float* const rows[8]) {
    const __m256 vz = _mm256_set1_ps(z);
    const auto put = [&](int x, __m256 v) {
        alignas(32) float t[8];
        _mm256_store_ps(t, v);
        for (int k = 0; k < 8; ++k) rows[k][x] = t[k];
    };
    __m256 q[NC];  // q[j]: element e + 1 + j
    for (int j = 0; j < NC; ++j) put(n - NC + j, q[j] = _mm256_loadu_ps(a0 + 8 * j));
    const auto step = [&](int e) {
        const __m256 v = _mm256_mul_ps(vz, _mm256_sub_ps(q[NC - 1], _mm256_loadu_ps(buf + 8 * e)));
        for (int j = NC - 1; j > 0; --j) q[j] = q[j - 1];
        q[0] = v;
        return v;
    };
    int i = n - NC - 1;
    // Tail down to a multiple of 8 (blocks [8b, 8b + 8) below it), then blocks, then the head.
    for (; i >= 0 && ((i + 1) & 7) != 0; --i) put(i, step(i));
    for (; i >= 7; i -= 8) {  // block [i - 7, i]
        __m256 r[8];
        for (int k = 7; k >= 0; --k) r[k] = step(i - 7 + k);
        transpose8(r);
        for (int k = 0; k < 8; ++k) _mm256_storeu_ps(rows[k] + i - 7, r[k]);
    }
    for (; i >= 0; --i) put(i, step(i));
}

}  // namespace

void iir_rows8_causal_avx2(const float* const rows[8], int n, int nc, float z, float g,
                           const float* c0, float* buf) {
    switch (nc) {
        case 1:
            return iir_rows8_causal_nc<1>(rows, n, z, g, c0, buf);
        case 2:
            return iir_rows8_causal_nc<2>(rows, n, z, g, c0, buf);
        case 3:
            return iir_rows8_causal_nc<3>(rows, n, z, g, c0, buf);
        default:
            return iir_rows8_causal_nc<4>(rows, n, z, g, c0, buf);
    }
}

void iir_rows8_anticausal_avx2(const float* buf, int n, int nc, float z, const float* a0,
                               float* const rows[8]) {
    switch (nc) {
        case 1:
            return iir_rows8_anticausal_nc<1>(buf, n, z, a0, rows);
        case 2:
            return iir_rows8_anticausal_nc<2>(buf, n, z, a0, rows);
        case 3:
            return iir_rows8_anticausal_nc<3>(buf, n, z, a0, rows);
        default:
            return iir_rows8_anticausal_nc<4>(buf, n, z, a0, rows);
    }
}

void iir_cols64_causal_avx2(float* p, std::ptrdiff_t step, int n, float z, float g,
                            const float* c0) {
    const __m256 vz = _mm256_set1_ps(z), vg = _mm256_set1_ps(g);
    __m256 prev[8];
    for (int k = 0; k < 8; ++k) _mm256_storeu_ps(p + 8 * k, prev[k] = _mm256_loadu_ps(c0 + 8 * k));
    for (int i = 1; i < n; ++i) {
        float* cur = p + i * step;
        for (int k = 0; k < 8; ++k) {
            prev[k] = _mm256_add_ps(_mm256_mul_ps(vg, _mm256_loadu_ps(cur + 8 * k)),
                                    _mm256_mul_ps(vz, prev[k]));
            _mm256_storeu_ps(cur + 8 * k, prev[k]);
        }
    }
}

void iir_cols64_anticausal_avx2(float* p, std::ptrdiff_t step, int n, float z, const float* a0) {
    const __m256 vz = _mm256_set1_ps(z);
    __m256 next[8];
    float* last = p + (n - 1) * step;
    for (int k = 0; k < 8; ++k)
        _mm256_storeu_ps(last + 8 * k, next[k] = _mm256_loadu_ps(a0 + 8 * k));
    for (int i = n - 2; i >= 0; --i) {
        float* cur = p + i * step;
        for (int k = 0; k < 8; ++k) {
            next[k] = _mm256_mul_ps(vz, _mm256_sub_ps(next[k], _mm256_loadu_ps(cur + 8 * k)));
            _mm256_storeu_ps(cur + 8 * k, next[k]);
        }
    }
}

void fir_avx2(const float* ext, float* out, std::ptrdiff_t ostep, int n, int lanes,
              const float* taps, int K) {
    const __m256 tc = _mm256_set1_ps(taps[K]);
    for (int i = 0; i < n; ++i) {
        float* o = out + i * ostep;
        const float* e = ext + static_cast<std::ptrdiff_t>(i + K) * lanes;
        for (int l = 0; l < lanes; l += 8) {
            __m256 acc = _mm256_mul_ps(tc, _mm256_loadu_ps(e + l));
            for (int k = 1; k <= K; ++k) {
                const std::ptrdiff_t d = static_cast<std::ptrdiff_t>(k) * lanes;
                acc = _mm256_fmadd_ps(
                    _mm256_set1_ps(taps[K + k]),
                    _mm256_add_ps(_mm256_loadu_ps(e + l - d), _mm256_loadu_ps(e + l + d)), acc);
            }
            _mm256_storeu_ps(o + l, acc);
        }
    }
}

void rows8_to_strip_avx2(const float* const rows[8], int n, float* buf) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 r[8];
        for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(rows[k] + i);
        transpose8(r);
        for (int k = 0; k < 8; ++k) _mm256_storeu_ps(buf + 8 * (i + k), r[k]);
    }
    for (; i < n; ++i)
        for (int k = 0; k < 8; ++k) buf[8 * i + k] = rows[k][i];
}

void strip_to_rows8_avx2(const float* buf, int n, float* const rows[8]) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 r[8];
        for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(buf + 8 * (i + k));
        transpose8(r);
        for (int k = 0; k < 8; ++k) _mm256_storeu_ps(rows[k] + i, r[k]);
    }
    for (; i < n; ++i)
        for (int k = 0; k < 8; ++k) rows[k][i] = buf[8 * i + k];
}

}  // namespace upres::cpu::simd

#else  // not x86-64 with AVX2 flags: never called (cpu_has_avx2_fma() is false)

namespace upres::cpu::simd {
bool bspline_avx2_compiled() { return false; }
void iir_rows8_causal_avx2(const float* const[8], int, int, float, float, const float*, float*) {}
void iir_rows8_anticausal_avx2(const float*, int, int, float, const float*, float* const[8]) {}
void rows8_to_strip_avx2(const float* const[8], int, float*) {}
void fir_avx2(const float*, float*, std::ptrdiff_t, int, int, const float*, int) {}
void iir_cols64_causal_avx2(float*, std::ptrdiff_t, int, float, float, const float*) {}
void iir_cols64_anticausal_avx2(float*, std::ptrdiff_t, int, float, const float*) {}
void strip_to_rows8_avx2(const float*, int, float* const[8]) {}
}  // namespace upres::cpu::simd

#endif
