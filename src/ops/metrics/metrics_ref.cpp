// Reference backend of upres metrics: double precision, direct loops, slow on purpose. The
// SSIM moments at every pixel are the 11 x 11 Gaussian-weighted sums with scipy's 'reflect'
// border, computed directly (no separable passes), then the map is averaged after cropping.
#include <vector>

#include "ops/metrics/metrics_backends.hpp"
#include "ops/metrics/metrics_math.hpp"

namespace upres::ref {

double sum_squared_error(Plane a, Plane b) {
    double sum = 0.0;
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x) {
            const double d = a(x, y) - b(x, y);
            sum += d * d;
        }
    return sum;
}

void ssim_map(Plane a, Plane b, double data_range, Span2D<double> out) {
    using namespace metrics;
    double w[kSsimWindow];
    gaussian_window(w);
    const double c1 = ssim_c1(data_range), c2 = ssim_c2(data_range);
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x) {
            double ux = 0, uy = 0, uxx = 0, uyy = 0, uxy = 0;
            for (int i = 0; i < kSsimWindow; ++i) {
                const int yy = reflect_index(y + i - kSsimRadius, a.height);
                double rx = 0, ry = 0, rxx = 0, ryy = 0, rxy = 0;
                for (int j = 0; j < kSsimWindow; ++j) {
                    const int xx = reflect_index(x + j - kSsimRadius, a.width);
                    const double va = a(xx, yy), vb = b(xx, yy);
                    rx += w[j] * va;
                    ry += w[j] * vb;
                    rxx += w[j] * (va * va);
                    ryy += w[j] * (vb * vb);
                    rxy += w[j] * (va * vb);
                }
                ux += w[i] * rx;
                uy += w[i] * ry;
                uxx += w[i] * rxx;
                uyy += w[i] * ryy;
                uxy += w[i] * rxy;
            }
            out(x, y) = ssim_from_moments(ux, uy, uxx, uyy, uxy, c1, c2);
        }
}

double ssim_mean(Plane a, Plane b, double data_range) {
    using metrics::kSsimRadius;
    std::vector<double> map(static_cast<std::size_t>(a.width) * a.height);
    Span2D<double> m{map.data(), a.width, a.height, 1, a.width};
    ssim_map(a, b, data_range, m);
    double sum = 0.0;
    for (int y = kSsimRadius; y < a.height - kSsimRadius; ++y)
        for (int x = kSsimRadius; x < a.width - kSsimRadius; ++x) sum += m(x, y);
    const double n = double(a.width - 2 * kSsimRadius) * double(a.height - 2 * kSsimRadius);
    return sum / n;
}

}  // namespace upres::ref
