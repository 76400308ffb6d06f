// The post-filters (stereo_backends.hpp): the median of both maps with the left-right check, or
// of the left map alone; speckle removal (OpenCV's filterSpeckles rule on float disparities).
// Host memory, one thread: a few operations per pixel against the matcher's hundreds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_math.hpp"

namespace upres {

namespace {

// The median of the valid values in the 3 x 3 window (the lower middle for an even count), for
// each valid pixel (ok(x, y)); invalid pixels stay as they are.
template <class Ok>
void median3(Span2D<float> d, Ok ok) {
    const int W = d.width, H = d.height;
    std::vector<float> out(static_cast<std::size_t>(W) * H);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            if (!ok(x, y)) continue;
            float v[9];
            int m = 0;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int xx = x + dx, yy = y + dy;
                    if (xx >= 0 && xx < W && yy >= 0 && yy < H && ok(xx, yy))
                        v[m++] = d.row(yy)[xx];
                }
            std::nth_element(v, v + (m - 1) / 2, v + m);
            out[static_cast<std::size_t>(y) * W + x] = v[(m - 1) / 2];
        }
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            if (ok(x, y)) d.row(y)[x] = out[static_cast<std::size_t>(y) * W + x];
}

}  // namespace

void stereo_median_check(Span2D<float> disparity, Span2D<std::uint8_t> valid, Span2D<float> right,
                         int lr_check, float invalid) {
    const int W = disparity.width, H = disparity.height;
    median3(disparity, [&](int x, int y) { return valid.row(y)[x] != 0; });
    median3(right, [&](int x, int y) { return !std::isnan(right.row(y)[x]); });
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            float& d = disparity.row(y)[x];
            if (valid.row(y)[x]) {
                const long xr = x - std::lrint(d);
                const bool ok = xr >= 0 && xr < W && !std::isnan(right.row(y)[xr]) &&
                                stereo::filtered_agree(d, right.row(y)[xr], lr_check);
                if (!ok) valid.row(y)[x] = 0;
            }
            if (!valid.row(y)[x]) d = invalid;
        }
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            if (std::isnan(right.row(y)[x])) right.row(y)[x] = invalid;
}

void stereo_post_filter(Span2D<float> disparity, Span2D<std::uint8_t> valid, bool median,
                        int speckle_size, double speckle_range, float invalid) {
    const int W = disparity.width, H = disparity.height;
    const std::size_t n = static_cast<std::size_t>(W) * H;
    auto ok = [&](int x, int y) { return valid.row(y)[x] != 0; };
    if (median) median3(disparity, ok);
    if (speckle_size > 0) {
        // 4-connected regions of valid pixels whose neighbours differ by at most speckle_range;
        // a region of at most speckle_size pixels is invalidated.
        std::vector<std::uint8_t> seen(n, 0);
        std::vector<int> stack, region;
        for (int y0 = 0; y0 < H; ++y0)
            for (int x0 = 0; x0 < W; ++x0) {
                const std::size_t i0 = static_cast<std::size_t>(y0) * W + x0;
                if (seen[i0] || !ok(x0, y0)) continue;
                seen[i0] = 1;
                stack.assign(1, static_cast<int>(i0));
                region.clear();
                while (!stack.empty()) {
                    const int i = stack.back();
                    stack.pop_back();
                    region.push_back(i);
                    const int x = i % W, y = i / W;
                    const float d = disparity.row(y)[x];
                    const int nx[4] = {x - 1, x + 1, x, x}, ny[4] = {y, y, y - 1, y + 1};
                    for (int k = 0; k < 4; ++k) {
                        if (nx[k] < 0 || nx[k] >= W || ny[k] < 0 || ny[k] >= H) continue;
                        const std::size_t j = static_cast<std::size_t>(ny[k]) * W + nx[k];
                        if (seen[j] || !ok(nx[k], ny[k])) continue;
                        if (std::abs(double(disparity.row(ny[k])[nx[k]]) - d) > speckle_range)
                            continue;
                        seen[j] = 1;
                        stack.push_back(static_cast<int>(j));
                    }
                }
                if (static_cast<int>(region.size()) <= speckle_size)
                    for (const int i : region) {
                        valid.row(i / W)[i % W] = 0;
                        disparity.row(i / W)[i % W] = invalid;
                    }
            }
    }
}

}  // namespace upres
