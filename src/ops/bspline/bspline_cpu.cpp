// Optimized CPU backend of the cubic B-spline prefilter (float, OpenMP).
//
// Both passes work on "strips" of `lanes` independent lines, sample i of line l at
// p[i * step + l], so every recursion step and every FIR tap is a contiguous, vectorizable loop
// over the lanes (fixed at compile time for the common strips: 8 rows of 1 channel, 64
// columns). Rows are gathered 8 at a time (x 1-4 channels, a small transpose) into an
// interleaved buffer; the IIR column pass runs in place on the image rows, 64 floats wide (one
// 256-byte segment per row; a 2048-row strip, 512 KiB, stays in L2 between the causal and the
// anticausal sweeps); the FIR column pass copies its strip (it needs the unfiltered input) and
// writes straight to the image. The gain is folded into the causal recursion and the FIR uses
// its symmetry (K + 1 multiplications per sample). The math (pole, start-ups, taps, border
// extension) is bspline_math.hpp, shared with the reference and the CUDA kernels.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/parallel.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/bspline/bspline_cpu_simd.hpp"
#include "ops/bspline/bspline_math.hpp"

namespace upres::cpu {

namespace {

constexpr int kRowBlock = 8;   // rows per strip in the row pass
constexpr int kColBlock = 64;  // floats per strip in the column pass
constexpr int kMaxLanes = kColBlock > kRowBlock * 4 ? kColBlock : kRowBlock * 4;

// Exact IIR, in place, on `lanes` lines of n samples: sample i of line l at p[i * step + l]
// (step >= lanes). Row pass: an interleaved strip buffer (step = lanes); column pass: the image
// rows themselves (step = stride), so every recursion step is a contiguous loop over the lanes.
// LC > 0 fixes the lane count at compile time (fully vectorised loops). The gain is folded
// into the causal recursion: c+(i) = g x(i) + z c+(i - 1).
template <int LC>
void iir_lines(float* p, std::ptrdiff_t step, int n, int lanes_rt, Border first, Border last_end) {
    const int lanes = LC > 0 ? LC : lanes_rt;
    if (n == 1) return;
    const float z = static_cast<float>(bspline::kPole);
    const float g = static_cast<float>(bspline::kGain);
    float init[kMaxLanes];
    for (int l = 0; l < lanes; ++l) {
        const auto x = [&](int i) { return g * p[i * step + l]; };
        init[l] = bspline::causal_init<float>(x, n, first, bspline::kFloatHorizon);
    }
    for (int l = 0; l < lanes; ++l) p[l] = init[l];
    for (int i = 1; i < n; ++i) {
        float* cur = p + i * step;
        const float* prev = cur - step;
#pragma omp simd
        for (int l = 0; l < lanes; ++l) cur[l] = g * cur[l] + z * prev[l];
    }
    float* last = p + (n - 1) * step;
    for (int l = 0; l < lanes; ++l) {
        const auto cp = [&](int i) { return p[i * step + l]; };
        init[l] = bspline::anticausal_init<float>(cp, n, last_end, bspline::kFloatHorizon);
    }
    for (int l = 0; l < lanes; ++l) last[l] = init[l];
    for (int i = n - 2; i >= 0; --i) {
        float* cur = p + i * step;
        const float* next = cur + step;
#pragma omp simd
        for (int l = 0; l < lanes; ++l) cur[l] = z * (next[l] - cur[l]);
    }
}

// Symmetric FIR (taps[K - k] == taps[K + k]) from an extended strip ext[(i + K) * lanes + l],
// i in [-K, n + K), into out[i * ostep + l].
template <int LC>
void fir_lines(const float* ext, float* out, std::ptrdiff_t ostep, int n, int lanes_rt,
               const float* taps, int K) {
    const int lanes = LC > 0 ? LC : lanes_rt;
    const float tc = taps[K];
    for (int i = 0; i < n; ++i) {
        float* o = out + i * ostep;
        const float* e = ext + std::ptrdiff_t{i + K} * lanes;  // sample i
        float acc[kMaxLanes];
#pragma omp simd
        for (int l = 0; l < lanes; ++l) acc[l] = tc * e[l];
        for (int k = 1; k <= K; ++k) {
            const float t = taps[K + k];
            const float* em = e - std::ptrdiff_t{k} * lanes;
            const float* ep = e + std::ptrdiff_t{k} * lanes;
#pragma omp simd
            for (int l = 0; l < lanes; ++l) acc[l] += t * (em[l] + ep[l]);
        }
#pragma omp simd
        for (int l = 0; l < lanes; ++l) o[l] = acc[l];
    }
}

struct Filter {
    Border border;
    // The column pass's start-up at the first and the last row, the row pass's at the first and
    // the last column: `border`, or Reflect at a band's open end (BandEnds): the IIR then
    // starts from a one-sided extension there.
    Border top, bottom, left, right;
    int K;  // FIR radius; -1 for the exact IIR
    std::array<float, bspline::kMaxFirLength> taps{};
};

// Fills the 2K border rows of an extended strip (rows K .. K + n - 1 hold the line).
void extend_strip(float* a, int n, int lanes, int K, Border border) {
    for (int i = -K; i < 0; ++i)
        std::copy_n(a + std::ptrdiff_t{bspline::prefilter_index(i, n, border) + K} * lanes, lanes,
                    a + std::ptrdiff_t{i + K} * lanes);
    for (int i = n; i < n + K; ++i)
        std::copy_n(a + std::ptrdiff_t{bspline::prefilter_index(i, n, border) + K} * lanes, lanes,
                    a + std::ptrdiff_t{i + K} * lanes);
}

bool avx2_ok() { return simd::bspline_avx2_compiled() && cpu_avx2_fma(); }

// IIR row pass of 8 rows of 1 to 4 channels with the AVX2 kernels (bspline_cpu_avx2.cpp): the
// start values come from bspline_math.hpp here, the recursions and transposes run there. Lane
// c * 8 + r of the strip is channel c of row r.
void row_strip8_iir_avx2(const Filter& f, Span2D<const float> src, Span2D<float> dst, int y0,
                         std::vector<float>& a) {
    const int w = src.width, nc = src.channels, n = w * nc;
    const float z = static_cast<float>(bspline::kPole);
    const float g = static_cast<float>(bspline::kGain);
    const float* in[kRowBlock];
    float* out[kRowBlock];
    float c0[kRowBlock * 4], a0[kRowBlock * 4];
    for (int r = 0; r < kRowBlock; ++r) {
        in[r] = src.row(y0 + r);
        out[r] = dst.row(y0 + r);
        for (int c = 0; c < nc; ++c) {
            const auto x = [&](int i) { return g * in[r][i * nc + c]; };
            c0[c * kRowBlock + r] =
                bspline::causal_init<float>(x, w, f.left, bspline::kFloatHorizon);
        }
    }
    a.resize(static_cast<std::size_t>(n) * kRowBlock);
    simd::iir_rows8_causal_avx2(in, n, nc, z, g, c0, a.data());
    for (int r = 0; r < kRowBlock; ++r)
        for (int c = 0; c < nc; ++c) {
            const auto cp = [&](int i) {
                return a[(static_cast<std::size_t>(i) * nc + c) * kRowBlock + r];
            };
            a0[c * kRowBlock + r] =
                bspline::anticausal_init<float>(cp, w, f.right, bspline::kFloatHorizon);
        }
    simd::iir_rows8_anticausal_avx2(a.data(), n, nc, z, a0, out);
}

// Row pass of rows [y0, y0 + nr): gathered into an interleaved strip (lanes = nr x channels),
// filtered, scattered to dst.
// avx2 (nr == 8): the strip is built by 8x8 transposes of the rows' elements (lane c * 8 + r,
// bspline_cpu_avx2.cpp), for 1 to 4 channels.
template <int LC>
void row_strip(const Filter& f, Span2D<const float> src, Span2D<float> dst, int y0, int nr,
               std::vector<float>& a, std::vector<float>& b, bool avx2) {
    const int w = src.width, nc = src.channels, lanes = LC > 0 ? LC : nr * nc;
    const int K = f.K < 0 ? 0 : f.K;
    a.resize(static_cast<std::size_t>(w + 2 * K) * lanes);
    float* line = a.data() + std::ptrdiff_t{K} * lanes;
    const float* rin[kRowBlock];
    float* rout[kRowBlock];
    for (int r = 0; r < nr; ++r) rin[r] = src.row(y0 + r), rout[r] = dst.row(y0 + r);
    avx2 = avx2 && nr == kRowBlock;
    if (avx2) {
        simd::rows8_to_strip_avx2(rin, w * nc, line);
    } else {
        for (int r = 0; r < nr; ++r) {
            const float* in = rin[r];
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < nc; ++c) line[x * lanes + r * nc + c] = in[x * nc + c];
        }
    }
    const float* res = line;
    if (f.K < 0) {
        iir_lines<LC>(line, lanes, w, lanes, f.left, f.right);
    } else {
        extend_strip(a.data(), w, lanes, K, f.border);
        b.resize(static_cast<std::size_t>(w) * lanes);
        if (avx2)
            simd::fir_avx2(a.data(), b.data(), lanes, w, lanes, f.taps.data(), K);
        else
            fir_lines<LC>(a.data(), b.data(), lanes, w, lanes, f.taps.data(), K);
        res = b.data();
    }
    if (avx2) return simd::strip_to_rows8_avx2(res, w * nc, rout);
    for (int r = 0; r < nr; ++r) {
        float* out = rout[r];
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < nc; ++c) out[x * nc + c] = res[x * lanes + r * nc + c];
    }
}

// Column pass of element columns [j0, j0 + lanes) of dst, in place.
template <int LC>
void col_strip(const Filter& f, Span2D<float> dst, int j0, int lanes_rt, std::vector<float>& a,
               bool avx2) {
    const int h = dst.height, lanes = LC > 0 ? LC : lanes_rt;
    float* p = dst.row(0) + j0;
    if (f.K < 0 && LC == 64 && avx2 && h >= 2) {  // AVX2 recursions, start values here
        const float z = static_cast<float>(bspline::kPole);
        const float g = static_cast<float>(bspline::kGain);
        const std::ptrdiff_t st = dst.stride;
        float init[64];
        for (int l = 0; l < 64; ++l) {
            const auto x = [&](int i) { return g * p[i * st + l]; };
            init[l] = bspline::causal_init<float>(x, h, f.top, bspline::kFloatHorizon);
        }
        simd::iir_cols64_causal_avx2(p, st, h, z, g, init);
        for (int l = 0; l < 64; ++l) {
            const auto cp = [&](int i) { return p[i * st + l]; };
            init[l] = bspline::anticausal_init<float>(cp, h, f.bottom, bspline::kFloatHorizon);
        }
        return simd::iir_cols64_anticausal_avx2(p, st, h, z, init);
    }
    if (f.K < 0) return iir_lines<LC>(p, dst.stride, h, lanes, f.top, f.bottom);
    const int K = f.K;
    a.resize(static_cast<std::size_t>(h + 2 * K) * lanes);
    for (int y = 0; y < h; ++y) std::copy_n(p + y * dst.stride, lanes, a.data() + (y + K) * lanes);
    extend_strip(a.data(), h, lanes, K, f.border);
    if (avx2 && LC == 64)
        simd::fir_avx2(a.data(), p, dst.stride, h, lanes, f.taps.data(), K);
    else
        fir_lines<LC>(a.data(), p, dst.stride, h, lanes, f.taps.data(), K);
}

}  // namespace

void bspline_prefilter(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts,
                       int threads) {
    bspline_prefilter_band(src, dst, opts, threads, BandEnds{});
}

void bspline_prefilter_band(Span2D<const float> src, Span2D<float> dst,
                            const PrefilterOptions& opts, int threads, BandEnds ends) {
    Filter f;
    f.border = opts.border;
    f.top = ends.open_top ? Border::Reflect : opts.border;
    f.bottom = ends.open_bottom ? Border::Reflect : opts.border;
    f.left = ends.open_left ? Border::Reflect : opts.border;
    f.right = ends.open_right ? Border::Reflect : opts.border;
    f.K = opts.fir_length > 0 ? (opts.fir_length - 1) / 2 : -1;
    if (f.K >= 0) {
        std::array<double, bspline::kMaxFirLength> t{};
        bspline::fir_taps(opts.fir_length, t.data());
        for (int k = 0; k < opts.fir_length; ++k) f.taps[k] = static_cast<float>(t[k]);
    }
    const int w = src.width, h = src.height, nc = src.channels;
    const int rs = w * nc;

    // Row pass: src -> dst, kRowBlock rows per strip (lanes = rows x channels).
    // Never more threads than strips: tiny images stay on one thread (no idle team).
    const int nt = resolve_threads(threads);
    const int row_blocks = (h + kRowBlock - 1) / kRowBlock;
    const bool avx2 = avx2_ok();  // ISA dispatch: AVX2 row pass (bspline_cpu_simd.hpp)
    parallel_for(0, row_blocks, std::min(nt, row_blocks), [&](int blk) {
        thread_local std::vector<float> a, b;
        const int y0 = blk * kRowBlock, nr = std::min(kRowBlock, h - y0);
        if (opts.axes == PrefilterAxes::Y) {  // columns only: the rows are copied as they are
            if (src.data != dst.data)
                for (int y = y0; y < y0 + nr; ++y)
                    std::copy(src.row(y), src.row(y) + rs, dst.row(y));
        } else if (nr == kRowBlock && f.K < 0 && w >= 16 && avx2) {
            row_strip8_iir_avx2(f, src, dst, y0, a);
        } else if (nr == kRowBlock && nc == 1) {
            row_strip<kRowBlock>(f, src, dst, y0, nr, a, b, avx2);
        } else {
            row_strip<0>(f, src, dst, y0, nr, a, b, avx2);
        }
    });
    if (opts.axes == PrefilterAxes::X) return;

    // Column pass: dst -> dst in place, kColBlock floats (element columns) per strip.
    const int col_blocks = (rs + kColBlock - 1) / kColBlock;
    parallel_for(0, col_blocks, std::min(nt, col_blocks), [&](int blk) {
        thread_local std::vector<float> a;
        const int j0 = blk * kColBlock, lanes = std::min(kColBlock, rs - j0);
        if (lanes == kColBlock)
            col_strip<kColBlock>(f, dst, j0, lanes, a, avx2);
        else
            col_strip<0>(f, dst, j0, lanes, a, false);
    });
}

}  // namespace upres::cpu
