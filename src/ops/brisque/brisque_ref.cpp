// The reference BRISQUE statistics: the MSCN map row by row (brisque_math.hpp's mscn_row), the
// five sets' sums in one pass (upres/brisque.hpp).
#include <cmath>
#include <vector>

#include "ops/brisque/brisque_backends.hpp"

namespace upres::brisque_math {

SetMoments moments_of_rows(const double* m, int w, int h, std::ptrdiff_t stride, int y0, int y1) {
    SetMoments s;
    for (int y = y0; y < y1; ++y) {
        const double* r = m + y * stride;
        const double* d = y + 1 < h ? r + stride : nullptr;  // the row below
        for (int x = 0; x < w; ++x) {
            s[0].add(r[x]);
            if (x + 1 < w) s[1].add(r[x] * r[x + 1]);
            if (d) {
                s[2].add(r[x] * d[x]);
                if (x + 1 < w) {
                    s[3].add(r[x] * d[x + 1]);
                    s[4].add(d[x] * r[x + 1]);
                }
            }
        }
    }
    return s;
}

}  // namespace upres::brisque_math

namespace upres::ref {

brisque_math::SetMoments brisque_moments(Span2D<const double> gray) {
    const int w = gray.width, h = gray.height;
    std::vector<double> m(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y)
        brisque_math::mscn_row(gray.data, w, h, gray.stride, y,
                               m.data() + static_cast<std::size_t>(y) * w);
    return brisque_math::moments_of_rows(m.data(), w, h, w, 0, h);
}

}  // namespace upres::ref
