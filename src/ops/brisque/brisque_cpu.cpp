// The CPU BRISQUE statistics (upres/brisque.hpp): the reference's arithmetic (mscn_row, the
// exact order the fit needs) with OpenMP over rows; the five sets' sums per band of rows, added
// in band order (deterministic for any thread count).
#include <algorithm>
#include <vector>

#include "core/parallel.hpp"
#include "ops/brisque/brisque_backends.hpp"

namespace upres::cpu {

brisque_math::SetMoments brisque_moments(Span2D<const double> gray, int threads) {
    const int w = gray.width, h = gray.height;
    std::vector<double> m(static_cast<std::size_t>(w) * h);
    parallel_for(0, h, threads, [&](int y) {
        brisque_math::mscn_row(gray.data, w, h, gray.stride, y,
                               m.data() + static_cast<std::size_t>(y) * w);
    });
    constexpr int kBand = 64;
    const int bands = (h + kBand - 1) / kBand;
    std::vector<brisque_math::SetMoments> part(bands);
    parallel_for(0, bands, threads, [&](int b) {
        part[b] = brisque_math::moments_of_rows(m.data(), w, h, w, b * kBand,
                                                std::min(h, (b + 1) * kBand));
    });
    brisque_math::SetMoments s;
    for (const auto& p : part)
        for (int k = 0; k < 5; ++k) s[k].merge(p[k]);
    return s;
}

}  // namespace upres::cpu
