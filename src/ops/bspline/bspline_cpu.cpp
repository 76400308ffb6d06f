// Optimized CPU backend of the cubic B-spline prefilter (float, OpenMP).
//
// Both passes work on "strips": `lanes` independent lines stored interleaved in a small
// buffer, buf[i * lanes + l], so every recursion step and every FIR tap is a contiguous,
// vectorizable loop over the lanes. Rows are gathered 8 at a time (x 1-4 channels, a small
// transpose); columns are taken 64 floats wide straight from the image rows (cache-friendly:
// one 256-byte segment per row). The math (pole, start-ups, taps, border extension) is
// bspline_math.hpp, shared with the reference and the CUDA kernels.
#include <algorithm>
#include <array>
#include <vector>

#include "core/parallel.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/bspline/bspline_math.hpp"

namespace upres::cpu {

namespace {

constexpr int kRowBlock = 8;   // rows per strip in the row pass
constexpr int kColBlock = 64;  // floats per strip in the column pass

// Exact IIR on `lanes` lines of n samples, in place (buf[i * lanes + l]).
void iir_strip(float* buf, int n, int lanes, Border border) {
    if (n == 1) return;
    const float z = static_cast<float>(bspline::kPole);
    const float g = static_cast<float>(bspline::kGain);
    const std::ptrdiff_t total = std::ptrdiff_t{n} * lanes;
    for (std::ptrdiff_t i = 0; i < total; ++i) buf[i] *= g;
    for (int l = 0; l < lanes; ++l) {
        const auto x = [&](int i) { return buf[std::ptrdiff_t{i} * lanes + l]; };
        buf[l] = bspline::causal_init<float>(x, n, border, bspline::kFloatHorizon);
    }
    for (int i = 1; i < n; ++i) {
        float* cur = buf + std::ptrdiff_t{i} * lanes;
        const float* prev = cur - lanes;
#pragma omp simd
        for (int l = 0; l < lanes; ++l) cur[l] += z * prev[l];
    }
    float* last = buf + std::ptrdiff_t{n - 1} * lanes;
    for (int l = 0; l < lanes; ++l) {
        const auto cp = [&](int i) { return buf[std::ptrdiff_t{i} * lanes + l]; };
        const float v = bspline::anticausal_init<float>(cp, n, border, bspline::kFloatHorizon);
        last[l] = v;
    }
    for (int i = n - 2; i >= 0; --i) {
        float* cur = buf + std::ptrdiff_t{i} * lanes;
        const float* next = cur + lanes;
#pragma omp simd
        for (int l = 0; l < lanes; ++l) cur[l] = z * (next[l] - cur[l]);
    }
}

// FIR from an extended strip ext[(i + K) * lanes + l], i in [-K, n + K), into out.
void fir_strip(const float* ext, float* out, int n, int lanes, const float* taps, int K) {
    for (int i = 0; i < n; ++i) {
        float* o = out + std::ptrdiff_t{i} * lanes;
        const float* e = ext + std::ptrdiff_t{i} * lanes;  // row i - K of the signal
#pragma omp simd
        for (int l = 0; l < lanes; ++l) o[l] = taps[0] * e[l];
        for (int k = 1; k <= 2 * K; ++k) {
            const float t = taps[k];
            const float* ek = e + std::ptrdiff_t{k} * lanes;
#pragma omp simd
            for (int l = 0; l < lanes; ++l) o[l] += t * ek[l];
        }
    }
}

struct Filter {
    Border border;
    int K;  // FIR radius; -1 for the exact IIR
    std::array<float, bspline::kMaxFirLength> taps{};
};

// Filters a strip whose samples are fetched by load(i, dst_lane_ptr) and stored by store.
template <class Load, class Store>
void run_strip(const Filter& f, int n, int lanes, std::vector<float>& a, std::vector<float>& b,
               const Load& load, const Store& store) {
    if (f.K < 0) {
        a.resize(static_cast<std::size_t>(n) * lanes);
        for (int i = 0; i < n; ++i) load(i, a.data() + std::ptrdiff_t{i} * lanes);
        iir_strip(a.data(), n, lanes, f.border);
        for (int i = 0; i < n; ++i) store(i, a.data() + std::ptrdiff_t{i} * lanes);
        return;
    }
    const int K = f.K;
    a.resize(static_cast<std::size_t>(n + 2 * K) * lanes);
    b.resize(static_cast<std::size_t>(n) * lanes);
    for (int i = 0; i < n; ++i) load(i, a.data() + std::ptrdiff_t{i + K} * lanes);
    for (int i = -K; i < 0; ++i)
        std::copy_n(a.data() + std::ptrdiff_t{bspline::prefilter_index(i, n, f.border) + K} * lanes,
                    lanes, a.data() + std::ptrdiff_t{i + K} * lanes);
    for (int i = n; i < n + K; ++i)
        std::copy_n(a.data() + std::ptrdiff_t{bspline::prefilter_index(i, n, f.border) + K} * lanes,
                    lanes, a.data() + std::ptrdiff_t{i + K} * lanes);
    fir_strip(a.data(), b.data(), n, lanes, f.taps.data(), K);
    for (int i = 0; i < n; ++i) store(i, b.data() + std::ptrdiff_t{i} * lanes);
}

}  // namespace

void bspline_prefilter(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts,
                       int threads) {
    Filter f;
    f.border = opts.border;
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
    parallel_for(0, row_blocks, std::min(nt, row_blocks), [&](int blk) {
        thread_local std::vector<float> a, b;
        const int y0 = blk * kRowBlock, nr = std::min(kRowBlock, h - y0);
        const int lanes = nr * nc;
        const auto load = [&](int x, float* lane) {
            for (int r = 0; r < nr; ++r)
                for (int c = 0; c < nc; ++c) lane[r * nc + c] = src.row(y0 + r)[x * nc + c];
        };
        const auto store = [&](int x, const float* lane) {
            for (int r = 0; r < nr; ++r)
                for (int c = 0; c < nc; ++c) dst.row(y0 + r)[x * nc + c] = lane[r * nc + c];
        };
        run_strip(f, w, lanes, a, b, load, store);
    });

    // Column pass: dst -> dst in place, kColBlock floats (element columns) per strip.
    const int col_blocks = (rs + kColBlock - 1) / kColBlock;
    parallel_for(0, col_blocks, std::min(nt, col_blocks), [&](int blk) {
        thread_local std::vector<float> a, b;
        const int j0 = blk * kColBlock, lanes = std::min(kColBlock, rs - j0);
        const auto load = [&](int y, float* lane) { std::copy_n(dst.row(y) + j0, lanes, lane); };
        const auto store = [&](int y, const float* lane) {
            std::copy_n(lane, lanes, dst.row(y) + j0);
        };
        run_strip(f, h, lanes, a, b, load, store);
    });
}

}  // namespace upres::cpu
