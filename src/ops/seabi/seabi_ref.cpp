// SEABI reference backend: the algorithm of docs/ops/seabi.md step by step on whole-image
// buffers, one pixel at a time, with clamp-to-edge addressing. Slow on purpose; the oracle of
// the CPU and CUDA backends (and itself checked against tools/golden/seabi_model.py).
#include <cstdint>
#include <vector>

#include "ops/seabi/seabi_backends.hpp"
#include "ops/seabi/seabi_math.hpp"

namespace upres::seabi {

namespace {

int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// A whole int image with clamp-to-edge reads.
struct Plane {
    int w = 0, h = 0;
    std::vector<int> v;
    Plane(int w_, int h_) : w(w_), h(h_), v(static_cast<std::size_t>(w_) * h_) {}
    int& at(int x, int y) { return v[static_cast<std::size_t>(y) * w + x]; }
    int get(int x, int y) const {
        return v[static_cast<std::size_t>(clampi(y, 0, h - 1)) * w + clampi(x, 0, w - 1)];
    }
    void neighbourhood(int x, int y, int (&p)[4][4]) const {
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) p[r][c] = get(x + c - 1, y + r - 1);
    }
};

// Up-samples by 2 with the per-cell rule `cell` (co-sited: even positions copy the input).
template <class F>
Plane upsample(const Plane& lo, F cell) {
    Plane hi(2 * lo.w, 2 * lo.h);
    int p[4][4];
    for (int y = 0; y < lo.h; ++y)
        for (int x = 0; x < lo.w; ++x) {
            lo.neighbourhood(x, y, p);
            const Cell c = cell(p);
            hi.at(2 * x, 2 * y) = p[1][1];
            hi.at(2 * x + 1, 2 * y) = c.h;
            hi.at(2 * x, 2 * y + 1) = c.v;
            hi.at(2 * x + 1, 2 * y + 1) = c.d;
        }
    return hi;
}

// Centre-aligned lattice: block (kx, ky), kx in 0..W, ky in 0..H, reads input
// (kx + c - 2, ky + r - 2) and writes output (2 kx - 1 + i, 2 ky - 1 + j) where that is inside.
template <class F>
Plane upsample_centered(const Plane& lo, F quad) {
    Plane hi(2 * lo.w, 2 * lo.h);
    int p[4][4];
    for (int ky = 0; ky <= lo.h; ++ky)
        for (int kx = 0; kx <= lo.w; ++kx) {
            lo.neighbourhood(kx - 1, ky - 1, p);
            const Quad q = quad(p);
            const int v[2][2] = {{q.q00, q.q10}, {q.q01, q.q11}};
            for (int j = 0; j < 2; ++j)
                for (int i = 0; i < 2; ++i) {
                    const int x = 2 * kx - 1 + i, y = 2 * ky - 1 + j;
                    if (x >= 0 && x < hi.w && y >= 0 && y < hi.h) hi.at(x, y) = v[j][i];
                }
        }
    return hi;
}

// C5: centre-aligned blur and decimation: low-resolution (i, j) from output rows / columns
// 2i - 2 .. 2i + 3 (columns, rounded, then rows, rounded).
Plane blur_decimate_centered(const Plane& y, int lw, int lh) {
    Plane col(y.w, lh);
    for (int j = 0; j < lh; ++j)
        for (int x = 0; x < y.w; ++x)
            col.at(x, j) = cblur6(y.get(x, 2 * j - 2), y.get(x, 2 * j - 1), y.get(x, 2 * j),
                                  y.get(x, 2 * j + 1), y.get(x, 2 * j + 2), y.get(x, 2 * j + 3));
    Plane d(lw, lh);
    for (int j = 0; j < lh; ++j)
        for (int i = 0; i < lw; ++i)
            d.at(i, j) =
                cblur6(col.get(2 * i - 2, j), col.get(2 * i - 1, j), col.get(2 * i, j),
                       col.get(2 * i + 1, j), col.get(2 * i + 2, j), col.get(2 * i + 3, j));
    return d;
}

// R5: blur the HR image with the 5-tap Gaussian (columns, rounded, then rows, rounded) and keep
// the even positions.
Plane blur_decimate(const Plane& y, int lw, int lh) {
    Plane col(y.w, lh);  // vertical pass at the even rows
    for (int j = 0; j < lh; ++j)
        for (int x = 0; x < y.w; ++x)
            col.at(x, j) = blur5(y.get(x, 2 * j - 2), y.get(x, 2 * j - 1), y.get(x, 2 * j),
                                 y.get(x, 2 * j + 1), y.get(x, 2 * j + 2));
    Plane d(lw, lh);
    for (int j = 0; j < lh; ++j)
        for (int i = 0; i < lw; ++i)
            d.at(i, j) = blur5(col.get(2 * i - 2, j), col.get(2 * i - 1, j), col.get(2 * i, j),
                               col.get(2 * i + 1, j), col.get(2 * i + 2, j));
    return d;
}

}  // namespace

}  // namespace upres::seabi

namespace upres::ref {

using namespace seabi;  // the reference's helpers above

SeabiStats seabi_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                          const SeabiOptions& opts) {
    const int w = in.width, h = in.height;
    Plane lr(w, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) lr.at(x, y) = in(x, y);

    // R1: total variation and threshold.
    std::int64_t tv = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) tv += tv_term(lr.at(x, y), lr.get(x + 1, y), lr.get(x, y + 1));
    const Threshold th = make_threshold(tv, std::int64_t{w} * h);
    SeabiStats stats;
    stats.threshold = th.t;

    // R2-R4 (C2-C4): construction (L-SEAI).
    const bool centered = opts.lattice != Lattice::CoSited;
    Plane hr =
        centered
            ? upsample_centered(lr, [&](const int(&p)[4][4]) { return lseai_quad(p, th.tq, th.t); })
            : upsample(lr, [&](const int(&p)[4][4]) { return lseai_cell(p, th.tq, th.t); });

    const int iterations = opts.method == SeabiMethod::LSeai      ? 0
                           : opts.method == SeabiMethod::SilSeabi ? 1
                                                                  : opts.max_iterations;
    for (int it = 0; it < iterations; ++it) {
        // R5, R6: error image against the input and its l1 norm.
        const Plane dec = centered ? blur_decimate_centered(hr, w, h) : blur_decimate(hr, w, h);
        Plane err(w, h);
        std::int64_t l1 = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                err.at(x, y) = lr.get(x, y) - dec.get(x, y);
                l1 += iabs(err.at(x, y));
            }
        stats.last_l1 = l1;
        if (opts.method == SeabiMethod::LSeabi &&
            converged(l1, opts.max_error, std::int64_t{w} * h))
            break;
        // R7: edge-adaptive up-sampling of the error (C7: separable cubic).
        const Plane eh =
            centered ? upsample_centered(err, [](const int(&p)[4][4]) { return cubic_quad(p); })
                     : upsample(err, [](const int(&p)[4][4]) { return cxhd_cell(p); });
        // R8, R9: back-projection filter, add, clamp.
        Plane next(2 * w, 2 * h);
        for (int y = 0; y < 2 * h; ++y)
            for (int x = 0; x < 2 * w; ++x) {
                int acc = 0;
                for (int k = 0; k < 5; ++k)
                    for (int l = 0; l < 5; ++l)
                        acc += bp_coefficient(k, l) * eh.get(x + l - 2, y + k - 2);
                const int r = (acc + 32768) >> 16;
                next.at(x, y) = add_clamp(hr.at(x, y), r);
            }
        hr = std::move(next);
        ++stats.iterations;
    }
    for (int y = 0; y < 2 * h; ++y)
        for (int x = 0; x < 2 * w; ++x) out(x, y) = static_cast<std::uint8_t>(hr.at(x, y));
    return stats;
}

void tap_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f,
                  bool centered) {
    const int w = in.width, h = in.height, ch = in.channels;
    if (centered) {
        // Output X is block k = (X + 1) / 2's quarter sample: a quarter of the way from input
        // k - 1 to k (X odd) or from k to k - 1 (X even), taps input k - 3 .. k + 2.
        auto quarter = [&](auto get, int x) {
            const int k = (x + 1) / 2;
            int p[6];
            for (int j = 0; j < 6; ++j) p[j] = get(k - 3 + j);
            return tap_quarter(p, f == TapFilter::Tap6, x % 2 == 0);
        };
        std::vector<int> mid(static_cast<std::size_t>(2) * w * h * ch);
        auto m = [&](int x, int y, int c) -> int& {
            return mid[(static_cast<std::size_t>(y) * 2 * w + x) * ch + c];
        };
        for (int y = 0; y < h; ++y)
            for (int c = 0; c < ch; ++c)
                for (int x = 0; x < 2 * w; ++x)
                    m(x, y, c) = quarter(
                        [&](int i) { return static_cast<int>(in(clampi(i, 0, w - 1), y, c)); }, x);
        for (int x = 0; x < 2 * w; ++x)
            for (int c = 0; c < ch; ++c)
                for (int y = 0; y < 2 * h; ++y)
                    out(x, y, c) = static_cast<std::uint8_t>(
                        quarter([&](int j) { return m(x, clampi(j, 0, h - 1), c); }, y));
        return;
    }
    // Horizontal pass into a 2W x H buffer, then vertical; each rounded and clamped.
    std::vector<int> mid(static_cast<std::size_t>(2) * w * h * ch);
    auto m = [&](int x, int y, int c) -> int& {
        return mid[(static_cast<std::size_t>(y) * 2 * w + x) * ch + c];
    };
    auto interp = [&](auto get, int i) {
        if (f == TapFilter::Tap4) return clamp255(c4(get(i - 1), get(i), get(i + 1), get(i + 2)));
        return clamp255(c6(get(i - 2), get(i - 1), get(i), get(i + 1), get(i + 2), get(i + 3)));
    };
    for (int y = 0; y < h; ++y)
        for (int c = 0; c < ch; ++c) {
            auto get = [&](int x) { return static_cast<int>(in(clampi(x, 0, w - 1), y, c)); };
            for (int x = 0; x < w; ++x) {
                m(2 * x, y, c) = get(x);
                m(2 * x + 1, y, c) = interp(get, x);
            }
        }
    for (int x = 0; x < 2 * w; ++x)
        for (int c = 0; c < ch; ++c) {
            auto get = [&](int y) { return m(x, clampi(y, 0, h - 1), c); };
            for (int y = 0; y < h; ++y) {
                out(x, 2 * y, c) = static_cast<std::uint8_t>(get(y));
                out(x, 2 * y + 1, c) = static_cast<std::uint8_t>(interp(get, y));
            }
        }
}

}  // namespace upres::ref
