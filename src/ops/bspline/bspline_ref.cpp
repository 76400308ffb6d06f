// Reference cubic B-spline prefilter: scalar, double precision, scipy's exact start-ups
// (no truncation anywhere). The oracle for the CPU and CUDA backends; checked against
// scipy.ndimage.spline_filter on golden data (tests/ops/bspline_test.cpp).
#include <climits>
#include <vector>

#include "ops/bspline/bspline_backends.hpp"
#include "ops/bspline/bspline_math.hpp"

namespace upres::ref {

void bspline_prefilter_line(double* data, int n, std::ptrdiff_t step, Border border,
                            int fir_length) {
    if (n <= 0) return;
    std::vector<double> x(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) x[i] = data[i * step];
    if (fir_length > 0) {
        std::vector<double> taps(static_cast<std::size_t>(fir_length));
        bspline::fir_taps(fir_length, taps.data());
        const int K = (fir_length - 1) / 2;
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int k = -K; k <= K; ++k)
                s += taps[k + K] * x[bspline::prefilter_index(i + k, n, border)];
            data[i * step] = s;
        }
        return;
    }
    if (n == 1) return;  // scipy leaves a single sample unchanged (and so does the FIR)
    const double z = bspline::kPole;
    for (double& v : x) v *= bspline::kGain;
    std::vector<double> c(x);
    const auto xa = [&](int i) { return x[i]; };
    c[0] = bspline::causal_init<double>(xa, n, border, INT_MAX);
    for (int i = 1; i < n; ++i) c[i] = x[i] + z * c[i - 1];
    std::vector<double> cp(c);
    const auto ca = [&](int i) { return cp[i]; };
    c[n - 1] = bspline::anticausal_init<double>(ca, n, border, INT_MAX);
    for (int i = n - 2; i >= 0; --i) c[i] = z * (c[i + 1] - cp[i]);
    for (int i = 0; i < n; ++i) data[i * step] = c[i];
}

void bspline_prefilter(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts) {
    const int w = src.width, h = src.height, nc = src.channels;
    const std::ptrdiff_t rs = std::ptrdiff_t{w} * nc;
    std::vector<double> buf(static_cast<std::size_t>(rs) * h);
    for (int y = 0; y < h; ++y)
        for (std::ptrdiff_t i = 0; i < rs; ++i) buf[y * rs + i] = src.row(y)[i];
    // Columns (axis 0) then rows (axis 1), the order scipy.ndimage.spline_filter uses.
    if (opts.axes != PrefilterAxes::X)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < nc; ++c)
                bspline_prefilter_line(buf.data() + x * nc + c, h, rs, opts.border,
                                       opts.fir_length);
    if (opts.axes != PrefilterAxes::Y)
        for (int y = 0; y < h; ++y)
            for (int c = 0; c < nc; ++c)
                bspline_prefilter_line(buf.data() + y * rs + c, w, nc, opts.border,
                                       opts.fir_length);
    for (int y = 0; y < h; ++y)
        for (std::ptrdiff_t i = 0; i < rs; ++i) dst.row(y)[i] = static_cast<float>(buf[y * rs + i]);
}

}  // namespace upres::ref
