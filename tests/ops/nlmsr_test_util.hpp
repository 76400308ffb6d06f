// Shared helpers of the nlm_fuse tests (nlmsr_test.cpp, nlmsr_cuda_test.cpp): seeded frames,
// real-photo sequences, and the fusion's backend entry points on host planes.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <upres/image.hpp>
#include <upres/io.hpp>
#include <upres/nlmsr.hpp>
#include "test_util.hpp"

#include "ops/nlmsr/nlmsr_backends.hpp"

namespace upres::test {

// n seeded random planes (the 8-bit scale, never all zero), each a sub-view of a wider image.
struct Planes {
    std::vector<Image<float>> owners;
    std::vector<ImageView<const float>> views;
    std::vector<Span2D<const float>> spans() const {
        std::vector<Span2D<const float>> s;
        for (const auto& v : views) s.push_back(span_of(v));
        return s;
    }
};
inline Planes random_planes(int n, int w, int h, std::uint32_t seed) {
    Planes p;
    for (int i = 0; i < n; ++i) {
        p.owners.push_back(random_image<float>(w + 5, h + 2, 1, seed + i, 10.0, 245.0));
        p.views.push_back(ImageView<const float>(p.owners.back().view()).sub(3, 1, w, h));
    }
    return p;
}

inline NlmsrPlan plan_of(int patch, int search, double sigma) {
    NlmsrPlan p;
    p.patch_r = patch / 2;
    p.search_r = search / 2;
    p.neg_inv = -1.0 / (2.0 * sigma * sigma * patch * patch);
    return p;
}

// n frames of a real photo's gray crop (w x h at `scale` x the frames' size), each the photo
// shifted by whole pixels of the full-size image then box-averaged by `scale`, with seeded
// Gaussian noise (8-bit levels); truth: the reference's full-size crop.
struct Sequence {
    std::vector<Image<std::uint8_t>> frames;
    Image<std::uint8_t> truth;
    std::vector<ImageView<const std::uint8_t>> views() const {
        std::vector<ImageView<const std::uint8_t>> v;
        for (const auto& f : frames) v.push_back(f.view());
        return v;
    }
};
inline Sequence photo_sequence(const std::string& file, int n, int ref, int w, int h, int scale,
                               double noise, std::uint32_t seed) {
    const Image<std::uint8_t> img = std::move(read_image(sample_path(file)).as<std::uint8_t>());
    const int c = img.channels(), x0 = 40, y0 = 40;
    std::mt19937 rng(seed);
    std::normal_distribution<double> g(0.0, noise);
    Sequence s;
    for (int i = 0; i < n; ++i) {
        const int dx = (i * 5) % 7 - 3, dy = (i * 3) % 5 - 2;  // whole pixels, full size
        Image<std::uint8_t> f(w, h, 1);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                double acc = 0.0;
                for (int j = 0; j < scale; ++j)
                    for (int k = 0; k < scale; ++k) {
                        const std::uint8_t* p =
                            &img.view()(x0 + dx + scale * x + k, y0 + dy + scale * y + j, 0);
                        acc += c == 1 ? p[0] : 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
                    }
                const double v = acc / (scale * scale) + g(rng);
                f.view().row(y)[x] =
                    static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 255.0)));
            }
        if (i == ref) {
            s.truth = Image<std::uint8_t>(scale * w, scale * h, 1);
            for (int y = 0; y < scale * h; ++y)
                for (int x = 0; x < scale * w; ++x) {
                    const std::uint8_t* p = &img.view()(x0 + dx + x, y0 + dy + y, 0);
                    const double v = c == 1 ? p[0] : 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
                    s.truth.view().row(y)[x] = static_cast<std::uint8_t>(std::lround(v));
                }
        }
        s.frames.push_back(std::move(f));
    }
    return s;
}

// An RGB frame made from a gray one (each channel a different affine map of it, so Y, Cb and
// Cr all vary).
inline Image<std::uint8_t> rgb_of(const Image<std::uint8_t>& g) {
    Image<std::uint8_t> c(g.width(), g.height(), 3);
    for (int y = 0; y < g.height(); ++y)
        for (int x = 0; x < g.width(); ++x)
            for (int k = 0; k < 3; ++k)
                c.view()(x, y, k) =
                    static_cast<std::uint8_t>(g.view()(x, y) * (k + 2) / 4 + 20 * k);
    return c;
}

// The sequence's gray frames as f32 on [0, 1] and as colour (rgb_of).
struct TypedFrames {
    std::vector<AnyImage> f32, rgb;
};
inline TypedFrames typed_frames(const Sequence& s) {
    TypedFrames t;
    for (const auto& f : s.frames) {
        Image<float> v(f.width(), f.height(), 1);
        convert(ImageView<const std::uint8_t>(f.view()), v.view());
        t.f32.emplace_back(std::move(v));
        t.rgb.emplace_back(rgb_of(f));
    }
    return t;
}

}  // namespace upres::test
