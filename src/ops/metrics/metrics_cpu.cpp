// Cpu backend of upres metrics: the reference's sums as a schedule. SSIM filters separably as
// scipy.ndimage does (axis 0 then axis 1, 'reflect' border): for each output row the vertical
// 11-tap sums of the five products go into a row buffer padded by reflection, then the
// horizontal 11-tap sums give the moments. Rows run over OpenMP threads (static schedule);
// per-row partial sums are added in row order, so results are run-to-run identical.
// Memory: one (width + 10) x 5 buffer per row in flight, no full-size temporaries.
#include <vector>

#include "core/parallel.hpp"
#include "ops/metrics/metrics_backends.hpp"
#include "ops/metrics/metrics_math.hpp"

namespace upres::cpu {

namespace {

using namespace metrics;

// SSIM of row y at columns [x0, x1) into out[x - x0].
void ssim_row(Plane a, Plane b, const double* w, double c1, double c2, int y, int x0, int x1,
              double* out) {
    const int width = a.width;
    const int padded = width + 2 * kSsimRadius;
    std::vector<double> buf(static_cast<std::size_t>(padded) * 5);
    double* vx = buf.data();
    double* vy = vx + padded;
    double* vxx = vy + padded;
    double* vyy = vxx + padded;
    double* vxy = vyy + padded;
    const double* ra[kSsimWindow];
    const double* rb[kSsimWindow];
    for (int i = 0; i < kSsimWindow; ++i) {
        const int yy = reflect_index(y + i - kSsimRadius, a.height);
        ra[i] = a.row(yy);
        rb[i] = b.row(yy);
    }
    // Vertical pass (axis 0) into the padded buffer; the pads repeat columns by reflection.
    for (int t = 0; t < padded; ++t) {
        const int x = reflect_index(t - kSsimRadius, width);
        double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
        for (int i = 0; i < kSsimWindow; ++i) {
            const double va = ra[i][x], vb = rb[i][x];
            sx += w[i] * va;
            sy += w[i] * vb;
            sxx += w[i] * (va * va);
            syy += w[i] * (vb * vb);
            sxy += w[i] * (va * vb);
        }
        vx[t] = sx, vy[t] = sy, vxx[t] = sxx, vyy[t] = syy, vxy[t] = sxy;
    }
    // Horizontal pass (axis 1): output x uses padded [x, x + 11).
    for (int x = x0; x < x1; ++x) {
        double ux = 0, uy = 0, uxx = 0, uyy = 0, uxy = 0;
        for (int j = 0; j < kSsimWindow; ++j) {
            ux += w[j] * vx[x + j];
            uy += w[j] * vy[x + j];
            uxx += w[j] * vxx[x + j];
            uyy += w[j] * vyy[x + j];
            uxy += w[j] * vxy[x + j];
        }
        out[x - x0] = ssim_from_moments(ux, uy, uxx, uyy, uxy, c1, c2);
    }
}

}  // namespace

double sum_squared_error(Plane a, Plane b, int threads) {
    std::vector<double> rows(static_cast<std::size_t>(a.height));
    parallel_for(0, a.height, threads, [&](int y) {
        const double* pa = a.row(y);
        const double* pb = b.row(y);
        double s = 0.0;
        for (int x = 0; x < a.width; ++x) {
            const double d = pa[x] - pb[x];
            s += d * d;
        }
        rows[static_cast<std::size_t>(y)] = s;
    });
    double sum = 0.0;
    for (double s : rows) sum += s;
    return sum;
}

void ssim_map(Plane a, Plane b, double data_range, Span2D<double> out, int threads) {
    double w[kSsimWindow];
    gaussian_window(w);
    const double c1 = ssim_c1(data_range), c2 = ssim_c2(data_range);
    parallel_for(0, a.height, threads,
                 [&](int y) { ssim_row(a, b, w, c1, c2, y, 0, a.width, out.row(y)); });
}

double ssim_mean(Plane a, Plane b, double data_range, int threads) {
    double w[kSsimWindow];
    gaussian_window(w);
    const double c1 = ssim_c1(data_range), c2 = ssim_c2(data_range);
    const int x0 = kSsimRadius, x1 = a.width - kSsimRadius;
    const int y0 = kSsimRadius, y1 = a.height - kSsimRadius;
    std::vector<double> rows(static_cast<std::size_t>(y1 - y0));
    parallel_for(y0, y1, threads, [&](int y) {
        std::vector<double> s(static_cast<std::size_t>(x1 - x0));
        ssim_row(a, b, w, c1, c2, y, x0, x1, s.data());
        double sum = 0.0;
        for (double v : s) sum += v;
        rows[static_cast<std::size_t>(y - y0)] = sum;
    });
    double sum = 0.0;
    for (double s : rows) sum += s;
    return sum / (double(x1 - x0) * double(y1 - y0));
}

}  // namespace upres::cpu
