// upres::stereo_disparity on the cuda backend: every variant (stream, cube1, cube2) and the
// semi-global matcher equal the reference bit for bit on random data (pixel types, channels,
// awkward sizes, sub-views, ranges, costs, windows, checks) and the cpu backend on a real pair;
// device-resident and staged host data; the stream variant's device memory against the cube's
// (GPU suite; skips visibly without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include <upres/stereo.hpp>
#include "stereo_test_util.hpp"
#include "test_util.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/device_temp.hpp"
#endif

namespace upres {
namespace {

using test::ctx_of;
using test::random_image;
using test::same;
using U8 = std::uint8_t;

const StereoVariant kVariants[] = {StereoVariant::Stream, StereoVariant::Cube1,
                                   StereoVariant::Cube2};

using test::Maps;

// The maps of a cuda run on device copies of the inputs, back on the host.
template <class T>
Maps run_device(ImageView<const T> l, ImageView<const T> r, const StereoOptions& o) {
    const int w = l.width(), h = l.height();
    const Image<T> dl = clone(l, Location::Device), dr = clone(r, Location::Device);
    Image<float> d(w, h, 1, Location::Device), drr(w, h, 1, Location::Device);
    Image<U8> m(w, h, 1, Location::Device);
    stereo_disparity(dl.view(), dr.view(), d.view(), o, {}, drr.view(), m.view());
    return {clone(d.view()), clone(drr.view()), clone(m.view())};
}

TEST(StereoCuda, EveryVariantEqualsTheReference) {
    UPRES_REQUIRE_GPU();
    std::uint32_t seed = 900;
    struct Size {
        int w, h, c;
    };
    for (const Size s : {Size{37, 23, 1}, Size{50, 41, 3}, Size{13, 70, 1}, Size{96, 9, 1}}) {
        for (int k = 0; k < 5; ++k) {
            const StereoOptions o = test::window_case(k, s.w);
            if (o.aggregation == StereoAggregation::Gauss13 && (s.w < 13 || s.h < 13)) continue;
            test::for_each_pixel_type([&](auto tag, const char* type) {
                const auto p = test::subview_pair<decltype(tag)>(s.w, s.h, s.c, seed);
                const Maps want = test::host_maps(p.l, p.r, o, ctx_of(Backend::Reference));
                for (StereoVariant v : kVariants) {
                    StereoOptions ov = o;
                    ov.variant = v;
                    test::expect_same_maps(
                        run_device(p.l, p.r, ov), want,
                        test::case_name(type, s.w, s.h, s.c, k) + " " + to_string(v));
                }
            });
        }
    }
}

// The semi-global matcher on the device equals the reference bit for bit: 4 and 8 paths, both
// costs, pixel types, sub-views, ranges that use 1, 2 and 4 disparities per lane, the window
// mean, uniqueness, checks, the median, the right map and the mask.
TEST(StereoCuda, SgmEqualsTheReference) {
    UPRES_REQUIRE_GPU();
    std::uint32_t seed = 1900;
    struct Size {
        int w, h, c;
    };
    for (const Size s : {Size{37, 23, 1}, Size{30, 19, 3}, Size{120, 9, 1}}) {
        for (int k = 0; k < 5; ++k) {
            const StereoOptions o = test::sgm_case(k, s.w);
            test::for_each_pixel_type([&](auto tag, const char* type) {
                const auto p = test::subview_pair<decltype(tag)>(s.w, s.h, s.c, seed);
                test::expect_same_maps(run_device(p.l, p.r, o),
                                       test::host_maps(p.l, p.r, o, ctx_of(Backend::Reference)),
                                       test::case_name(type, s.w, s.h, s.c, k));
            });
        }
    }
    // The Aloe crop, census, 8 paths, 128 disparities (4 per lane), against the cpu backend.
    const Image<U8> l = std::move(read_image(test::sample_path("aloeL.jpg")).as<U8>());
    const Image<U8> r = std::move(read_image(test::sample_path("aloeR.jpg")).as<U8>());
    const ImageView<const U8> lv = ImageView<const U8>(l.view()).sub(100, 200, 640, 480);
    const ImageView<const U8> rv = ImageView<const U8>(r.view()).sub(100, 200, 640, 480);
    StereoOptions o;
    o.num_disparities = 128;
    o.cost = StereoCost::Census;
    o.aggregation = StereoAggregation::Sgm8;
    o.lr_check = 1;
    o.median = true;
    Image<float> a(640, 480, 1), b(640, 480, 1);
    stereo_disparity(lv, rv, a.view(), o, ctx_of(Backend::Cpu));
    stereo_disparity(lv, rv, b.view(), o, ctx_of(Backend::Cuda));
    EXPECT_TRUE(same(b.view(), a.view())) << "Aloe crop, sgm8";
}

// The census matcher's two device layouts (stereo_cuda.cu): whole bits in bytes when the
// truncation and penalties are whole bits and max C + P2 fits a byte, else 16-bit units; both
// equal the reference bit for bit with uniqueness, a truncation that bites, ranges of 8, 16 and
// 32 disparities per lane, negative ranges, the right map and the mask.
TEST(StereoCuda, SgmCensusLayoutsEqualTheReference) {
    UPRES_REQUIRE_GPU();
    struct Case {
        int w, h, min_d, num_d, paths;
        double max_cost, p1, p2;
        int uniqueness;
        const char* layout;
    };
    const Case cases[] = {
        {140, 13, 0, 130, 8, 255.0, 10.0, 120.0, 10, "bytes, 8 a lane"},
        {300, 9, -5, 260, 4, 30.0, 7.0, 200.0, 5, "bytes, 16 a lane, truncated at 30 bits"},
        {620, 5, 3, 600, 4, 255.0, 10.0, 120.0, 0, "bytes, 32 a lane"},
        {230, 14, 0, 200, 4, 255.0, 10.0, 120.0, 0, "bytes, 8 a lane, 4 paths (16 lanes a line)"},
        {70, 17, 2, 20, 4, 255.0, 10.0, 120.0, 0, "bytes, 2 a lane, 4 paths (16 lanes a line)"},
        {100, 15, -3, 64, 8, 255.0, 10.0, 120.0, 5, "bytes, 2 a lane, 8 paths"},
        {150, 11, -4, 140, 8, 255.0, 10.0, 240.0, 15, "words: 64 + 240 bits"},
        {90, 12, 0, 70, 4, 255.0, 10.5, 120.0, 5, "words: P1 not whole"},
    };
    std::uint32_t seed = 2700;
    for (const Case& c : cases) {
        StereoOptions o;
        o.cost = StereoCost::Census;
        o.aggregation = c.paths == 8 ? StereoAggregation::Sgm8 : StereoAggregation::Sgm4;
        o.min_disparity = c.min_d;
        o.num_disparities = c.num_d;
        o.max_cost = c.max_cost;
        o.p1 = c.p1;
        o.p2 = c.p2;
        o.uniqueness = c.uniqueness;
        o.lr_check = 1;
        const auto p = test::subview_pair<U8>(c.w, c.h, 1, seed);
        test::expect_same_maps(run_device(p.l, p.r, o),
                               test::host_maps(p.l, p.r, o, ctx_of(Backend::Reference)), c.layout);
    }
}

// Wider than one block's columns (the stream variant splits the row; right pixels need sums
// beyond their block), and host data staged through the device.
TEST(StereoCuda, WideImagesAndHostData) {
    UPRES_REQUIRE_GPU();
    const int w = 1500, h = 11;
    const Image<U8> l = random_image<U8>(w, h, 1, 31), r = random_image<U8>(w, h, 1, 32);
    for (int min_d : {-20, 0, 30}) {
        StereoOptions o;
        o.min_disparity = min_d;
        o.num_disparities = 40;
        o.lr_check = 1;
        Image<float> a(w, h, 1), ar(w, h, 1), b(w, h, 1), br(w, h, 1);
        stereo_disparity(l.view(), r.view(), a.view(), o, ctx_of(Backend::Cpu), ar.view());
        stereo_disparity(l.view(), r.view(), b.view(), o, ctx_of(Backend::Cuda), br.view());
        EXPECT_TRUE(same(b.view(), a.view())) << "min_d " << min_d;
        EXPECT_TRUE(same(br.view(), ar.view())) << "min_d " << min_d << " right map";
    }
}

// A real pair (Aloe, a quarter of its area) against the cpu backend, which equals the reference
// (stereo_test.cpp): the default matcher, census with LR check, the 13 x 13 window.
TEST(StereoCuda, RealPairEqualsCpu) {
    UPRES_REQUIRE_GPU();
    const Image<U8> l = std::move(read_image(test::sample_path("aloeL.jpg")).as<U8>());
    const Image<U8> r = std::move(read_image(test::sample_path("aloeR.jpg")).as<U8>());
    const ImageView<const U8> lv = ImageView<const U8>(l.view()).sub(100, 200, 640, 480);
    const ImageView<const U8> rv = ImageView<const U8>(r.view()).sub(100, 200, 640, 480);
    for (int k = 0; k < 3; ++k) {
        StereoOptions o;
        o.num_disparities = 96;
        o.cost = k == 1 ? StereoCost::Census : StereoCost::AbsDiff;
        o.aggregation = k == 2 ? StereoAggregation::Gauss13 : StereoAggregation::Gauss7;
        o.lr_check = k == 0 ? -1 : 1;
        Image<float> a(640, 480, 1), b(640, 480, 1);
        stereo_disparity(lv, rv, a.view(), o, ctx_of(Backend::Cpu));
        for (StereoVariant v : kVariants) {
            o.variant = v;
            stereo_disparity(lv, rv, b.view(), o, ctx_of(Backend::Cuda));
            EXPECT_TRUE(same(b.view(), a.view())) << "case " << k << " " << to_string(v);
        }
    }
}

// Stripes beyond a whole number of waves (one block of 384 threads per SM at 1120 columns) run
// as disparity chunks whose states merge afterwards: an Aloe crop with 1 / 8 of a wave left
// over, against the cpu backend (both maps, sub-pixel), every variant.
TEST(StereoCuda, StreamTailChunksEqualCpu) {
    UPRES_REQUIRE_GPU();
    int sms = 0;
#if UPRES_HAVE_CUDA
    int dev = 0;
    ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
#endif
    const int w = 1120, h = std::min(1110, 4 * (sms + std::max(1, sms / 8)));
    const Image<U8> l = std::move(read_image(test::sample_path("aloeL.jpg")).as<U8>());
    const Image<U8> r = std::move(read_image(test::sample_path("aloeR.jpg")).as<U8>());
    const ImageView<const U8> lv = ImageView<const U8>(l.view()).sub(80, 0, w, h);
    const ImageView<const U8> rv = ImageView<const U8>(r.view()).sub(80, 0, w, h);
    for (int k = 0; k < 3; ++k) {
        StereoOptions o;
        o.num_disparities = k == 2 ? 37 : 96;
        o.min_disparity = k == 2 ? 5 : 0;
        o.cost = k == 1 ? StereoCost::Census : StereoCost::AbsDiff;
        o.aggregation = k == 2 ? StereoAggregation::Gauss7 : StereoAggregation::Gauss13;
        o.lr_check = k == 0 ? -1 : 1;
        Image<float> a(w, h, 1), ar(w, h, 1), b(w, h, 1), br(w, h, 1);
        stereo_disparity(lv, rv, a.view(), o, ctx_of(Backend::Cpu), ar.view());
        for (StereoVariant v : kVariants) {
            o.variant = v;
            stereo_disparity(lv, rv, b.view(), o, ctx_of(Backend::Cuda), br.view());
            EXPECT_TRUE(same(b.view(), a.view())) << "case " << k << " " << to_string(v);
            EXPECT_TRUE(same(br.view(), ar.view()))
                << "case " << k << " " << to_string(v) << " right map";
        }
    }
}

// The stream variant's device memory is O(W x H): at most 1/20 of the cube's for the paper's
// 1120 x 1120 x 200 workload (the pool's high-water mark of bytes in use during each call).
TEST(StereoCuda, StreamVariantNeedsNoCube) {
    UPRES_REQUIRE_GPU();
#if !UPRES_HAVE_CUDA
    GTEST_SKIP() << "built without CUDA: skipped";
#else
    const int w = 1120, h = 1120;
    const Image<U8> l = random_image<U8>(w, h, 1, 41), r = random_image<U8>(w, h, 1, 42);
    const Image<U8> dl = clone(l.view(), Location::Device), dr = clone(r.view(), Location::Device);
    Image<float> d(w, h, 1, Location::Device);
    auto peak = [&](StereoVariant v) {
        synchronize({});
        cuda::temp_used_high_bytes(true);
        StereoOptions o;
        o.num_disparities = 200;
        o.aggregation = StereoAggregation::Gauss13;
        o.variant = v;
        stereo_disparity(dl.view(), dr.view(), d.view(), o);
        synchronize({});
        return cuda::temp_used_high_bytes(true);
    };
    const std::size_t stream = peak(StereoVariant::Stream), cube1 = peak(StereoVariant::Cube1),
                      cube2 = peak(StereoVariant::Cube2);
    EXPECT_GE(cube1, std::size_t{w} * h * 200 * 4);
    EXPECT_GE(cube2, std::size_t{w} * h * 200 * 6);
    EXPECT_LE(stream * 20, cube1) << stream << " vs " << cube1;
    std::printf("device memory: stream %zu bytes, cube1 %zu, cube2 %zu (1 : %.0f : %.0f)\n", stream,
                cube1, cube2, double(cube1) / stream, double(cube2) / stream);
#endif
}

}  // namespace
}  // namespace upres
