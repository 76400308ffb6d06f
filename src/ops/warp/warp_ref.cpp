// Reference backend of upres::warp: double precision, one output sample at a time, straight
// from warp_math.hpp. Slow on purpose; the oracle for the CPU and CUDA backends.
#include <cmath>
#include <vector>

#include "core/convert_math.hpp"
#include "ops/warp/warp_backends.hpp"

namespace upres::ref {
namespace {

// Input coordinate of output pixel (x, y), before the pad shift.
void input_point(const WarpPlan& p, int x, int y, double& u, double& v) {
    switch (p.kind) {
        case Transform::Kind::Remap:
            u = p.field(x, y, 0);
            v = p.field(x, y, 1);
            return;
        case Transform::Kind::Flow:
            u = x + static_cast<double>(p.field(x, y, 0));
            v = y + static_cast<double>(p.field(x, y, 1));
            return;
        default:
            map_matrix<double>(p.m, p.kind, x, y, u, v);
    }
}

// Taps and weights of one axis for the resize with antialias (scale < 1) or the plain kernel.
// Returns false when the output is the fill value.
bool axis_taps(double u, int n, double scale, const WarpPlan& p, std::vector<int>& idx,
               std::vector<double>& w) {
    idx.clear();
    w.clear();
    if (!map_coord(u, n, p.border)) return false;
    if (scale < 1.0) {
        long long lo, hi;
        resize_aa_range<double>(u, scale, p.interp, lo, hi);
        double sum = 0.0;
        for (long long k = lo; k <= hi; ++k) {
            const double wk = resize_aa_weight<double>(u, k, scale, p.interp, p.cubic_a);
            if (wk == 0.0) continue;
            idx.push_back(tap_index(k, n, p.border));
            w.push_back(wk);
            sum += wk;
        }
        for (double& wk : w) wk /= sum;
    } else {
        double wk[4];
        interp_weights<double>(u - std::floor(u), p.interp, p.cubic_a, wk);
        const long long k0 = first_tap(u, p.interp);
        for (int k = 0; k < interp_taps(p.interp); ++k) {
            idx.push_back(tap_index(k0 + k, n, p.border));
            w.push_back(wk[k]);
        }
    }
    return true;
}

template <class S, class D>
void warp_impl(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p) {
    const int ch = dst.channels;
    const bool aa = p.antialias && p.kind == Transform::Kind::Resize;
    // Resize scales dst / src (src without pad: antialias never has a pad).
    const double scale_x = 1.0 / p.m[0], scale_y = 1.0 / p.m[4];
    std::vector<int> ix, iy;
    std::vector<double> wx, wy;
    for (int y = 0; y < dst.height; ++y) {
        for (int x = 0; x < dst.width; ++x) {
            double u, v, out[4];
            input_point(p, x, y, u, v);
            bool inside;
            if (aa) {
                inside = axis_taps(u, src.width, scale_x, p, ix, wx) &&
                         axis_taps(v, src.height, scale_y, p, iy, wy);
                if (inside)
                    for (int c = 0; c < ch; ++c) {
                        double acc = 0.0;
                        for (std::size_t j = 0; j < iy.size(); ++j) {
                            double racc = 0.0;
                            for (std::size_t k = 0; k < ix.size(); ++k)
                                racc += wx[k] * static_cast<double>(src(ix[k], iy[j], c));
                            acc += wy[j] * racc;
                        }
                        out[c] = acc;
                    }
            } else {
                inside = sample_point<double, S>(src, u + p.pad, v + p.pad, p.interp, p.border,
                                                 p.cubic_a, out);
            }
            for (int c = 0; c < ch; ++c)
                dst(x, y, c) = saturate_from_float<D>(inside ? static_cast<float>(out[c]) : p.fill);
        }
    }
}

}  // namespace

void warp(Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst, const WarpPlan& plan) {
    warp_impl(src, dst, plan);
}
void warp(Span2D<const std::uint16_t> src, Span2D<std::uint16_t> dst, const WarpPlan& plan) {
    warp_impl(src, dst, plan);
}
void warp(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan) {
    warp_impl(src, dst, plan);
}
void warp(Span2D<const float> coeffs, Span2D<std::uint8_t> dst, const WarpPlan& plan) {
    warp_impl(coeffs, dst, plan);
}
void warp(Span2D<const float> coeffs, Span2D<std::uint16_t> dst, const WarpPlan& plan) {
    warp_impl(coeffs, dst, plan);
}

}  // namespace upres::ref
